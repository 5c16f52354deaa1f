/*-------------------------------------------------------------------------
 *
 * commit_groups.c
 *		Why each group commit closed: the reason of every commit-led WAL
 *		flush, counted by its leader.
 *
 * An observer of the commit path (commit_path.c).  A durable commit whose
 * backend did the WAL sync (commit timing's led_flush) led a group; at
 * COMMIT it files that flush under one reason:
 *
 *	count_reached	its commit_delay sleep was cut short, or never begun,
 *					by the gather's wake-up for a complete group (gather.c's
 *					handler tells us; it drops the commit's delay)
 *	woken_early		the sleep was cut short by another SIGUSR1 (a
 *					procsignal, a wake-up that no longer matched), or, with
 *					commit_siblings 0, the commit took less than the delay
 *	no_delay		no sleep: commit_delay 0 (gather drops it for a lone
 *					committer), fsync off, or commit_siblings not met
 *	delay_expired	slept the whole commit_delay
 *
 * PostgreSQL keeps no trace of its sleep, so "slept" is inferred: with
 * commit_siblings 0 the sleep is certain once commit_delay > 0; otherwise
 * the leader repeats XLogFlush's unlocked MinimumActiveBackends() test
 * just after its flush (only leaders pay it, and they already paid it
 * once).
 *
 * A follower (durable, flushed by someone else) adds itself to the
 * commits of the reason last published by a leader: the woken leader
 * publishes from its handler before it flushes, the others at COMMIT.
 * So the flushing rows' commits add up to the durable commits, and the
 * follower's attribution can be off by one group when the reasons
 * alternate.
 *
 * The no_delay row, the common case, is not counted here: it is commit
 * timing's flushes led and durable commits less the other rows' (readers
 * and the worker subtract), so a commit without a sleep writes nothing
 * but a changed last_reason.
 *
 * Same rules as commit timing: one padded slot per PGPROC
 * (backend_slots.c), written only by its backend (plain loads and
 * stores), summed by readers; nothing here takes a lock, allocates or can
 * fail in the commit path.  The handler part is async-signal-safe: memory
 * reads and writes, clock_gettime.
 *
 * IDENTIFICATION
 *	  src/instruments/commit_groups.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/memutils.h"

#include "backend_slots.h"
#include "instruments.h"

/*
 * A slot: the counters of WpGroupTotals, in its order (the groups
 * published).  The no_delay row is not counted here (below).
 */
#define GT(field)		WP_SLOT_INDEX(WpGroupTotals, field)

static void
groups_init_header(void *header)
{
	pg_atomic_init_u32(&((WpGroupsShared *) header)->last_reason,
					   WP_GROUP_NO_DELAY);
}

WpBackendSlots wp_commit_groups_slots = {
	.name = "walpilot commit groups",
	.header_size = sizeof(WpGroupsShared),
	.slot_size = sizeof(WpGroupTotals),
	.ncounters = (int) (sizeof(WpGroupTotals) / sizeof(uint64)),
	.npublish = WP_GROUP_NUM_REASONS,	/* groups[] */
	.ntracked = WP_GROUP_NUM_REASONS,
	.init_header = groups_init_header,
};

#define groups_shared	((WpGroupsShared *) wp_commit_groups_slots.header)

/* Wake-ups the handler saw in this backend's commit_delay sleep. */
#define WP_WOKEN_NONE		0
#define WP_WOKEN_GROUP		1
#define WP_WOKEN_OTHER		2

/*---- backend-local, PRE_COMMIT to COMMIT; the handler reads and writes ----*/
static volatile sig_atomic_t in_durable_commit = false;
static volatile sig_atomic_t woken = WP_WOKEN_NONE;
static volatile sig_atomic_t delay_in_force = 0;	/* commit_delay, us */
static uint64 woken_at_us;		/* monotonic; valid when woken */
static int	siblings_in_force;

/* Worker-local: no_delay groups the timeline got ahead of (< 0). */
static int64 no_delay_owed = 0;

static const char *const reason_names[WP_GROUP_NUM_REASONS] = {
	"count_reached",
	"delay_expired",
	"woken_early",
	"no_delay",
};

/* The view's name of a reason; "?" for none. */
const char *
wp_commit_group_reason_name(int reason)
{
	return (reason >= 0 && reason < WP_GROUP_NUM_REASONS) ?
		reason_names[reason] : "?";
}

/*
 * wp_commit_groups_pre_commit
 *		Commit-path observer at PRE_COMMIT of a timed durable commit that
 *		may sleep (commit_delay > 0 after the gather, which may have dropped
 *		it for this commit): note the delay and siblings XLogFlush will run
 *		with.  Without a delay nothing can sleep, and the commit path does
 *		not call us.
 */
void
wp_commit_groups_pre_commit(const WpCommitContext *ctx)
{
	Assert(ctx->timed && ctx->may_sleep);
	woken = WP_WOKEN_NONE;
	delay_in_force = CommitDelay;
	siblings_in_force = CommitSiblings;
	in_durable_commit = true;
}

/*
 * wp_commit_groups_note_wakeup
 *		Called from gather.c's SIGUSR1 handler.  group_complete: the
 *		gather's wake-up for this commit's complete group, which has set
 *		the commit's commit_delay to 0, so its sleep ends here whether it
 *		is running or has not begun (the sleep's argument is loaded after
 *		this).  Otherwise: any other SIGUSR1, which ends the sleep only if
 *		this backend is in it (the flush leader: WALWriteLock held, no wait
 *		event).  Records which and when, and publishes the group's reason
 *		before the flush, for its followers; the gather's wake-up wins over
 *		an earlier other one.  Async-signal-safe: memory reads and writes,
 *		one clock_gettime.
 */
void
wp_commit_groups_note_wakeup(bool group_complete)
{
	instr_time	now;

	if (!in_durable_commit || delay_in_force <= 0 || MyProc == NULL ||
		wp_commit_groups_slots.header == NULL)
		return;
	if (woken == WP_WOKEN_GROUP || (woken == WP_WOKEN_OTHER && !group_complete))
		return;
	if (!group_complete &&
		(!wp_wait_may_be_commit_delay(WP_READ_ONCE_U32(MyProc->wait_event_info)) ||
		 !LWLockHeldByMe(WALWriteLock)))
		return;
	INSTR_TIME_SET_CURRENT(now);
	woken_at_us = INSTR_TIME_GET_MICROSEC(now);
	woken = group_complete ? WP_WOKEN_GROUP : WP_WOKEN_OTHER;
	pg_atomic_write_u32(&groups_shared->last_reason,
						group_complete ? WP_GROUP_COUNT_REACHED :
						WP_GROUP_WOKEN_EARLY);
}

/*
 * classify_flush
 *		Why this leader's group closed, and how long it slept (us).
 */
static int
classify_flush(const WpCommitContext *ctx, uint64 *wait_us)
{
	uint64		delay = (uint64) Max(delay_in_force, 0);
	uint64		took = ctx->end_us > ctx->start_us ?
		ctx->end_us - ctx->start_us : 0;

	*wait_us = 0;
	if (woken != WP_WOKEN_NONE)
	{
		/* from the commit's start: includes its insert (and any lock wait) */
		*wait_us = woken_at_us > ctx->start_us ?
			Min(woken_at_us - ctx->start_us, delay) : 0;
		return woken == WP_WOKEN_GROUP ? WP_GROUP_COUNT_REACHED :
			WP_GROUP_WOKEN_EARLY;
	}
	if (delay == 0 || !enableFsync)
		return WP_GROUP_NO_DELAY;
	if (siblings_in_force > 0 && !MinimumActiveBackends(siblings_in_force))
		return WP_GROUP_NO_DELAY;
	if (took < delay)
	{
		/* the sleep cannot have run out; with siblings it likely never began */
		if (siblings_in_force > 0)
			return WP_GROUP_NO_DELAY;
		*wait_us = took;
		return WP_GROUP_WOKEN_EARLY;
	}
	*wait_us = delay;
	return WP_GROUP_DELAY_EXPIRED;
}

/*
 * wp_commit_groups_commit
 *		Commit-path observer at COMMIT of a timed durable commit, after
 *		commit timing (which set end_us and led_flush), when the gate
 *		(commit_gates.h) says there is work: a leader files its flush and
 *		gives its sleep to the observers after it (slept_us), a follower
 *		adds itself to the group last published.  A commit of the no_delay
 *		row (the common case: no sleep) writes nothing but a changed
 *		last_reason; readers take that row from commit timing.
 */
void
wp_commit_groups_commit(WpCommitContext *ctx)
{
	pg_atomic_uint64 *s;
	uint64		wait_us = 0;
	int			r;

	Assert(ctx->timed && ctx->durable && ctx->end_us != 0);
	if (ctx->led_flush)
	{
		/* no sleep to classify: classify_flush's first answer, inline */
		r = (woken == WP_WOKEN_NONE && delay_in_force <= 0) ?
			WP_GROUP_NO_DELAY : classify_flush(ctx, &wait_us);
		if (r != WP_GROUP_NO_DELAY)
		{
			s = wp_backend_slot_mine(&wp_commit_groups_slots);
			ctx->slept_us = wait_us;
			/* after commit timing's count, which readers read after ours */
			pg_write_barrier();
			wp_slot_add(&s[GT(commits) + r], 1);
			wp_slot_add(&s[GT(wait_us) + r], wait_us);
			/* last, so a reader that sees the group also sees its parts */
			pg_write_barrier();
			wp_slot_add(&s[GT(groups) + r], 1);
		}
		/* a shared line every leader would write: only when it changes */
		if (pg_atomic_read_u32(&groups_shared->last_reason) != (uint32) r)
			pg_atomic_write_u32(&groups_shared->last_reason, (uint32) r);
	}
	else
	{
		r = (int) pg_atomic_read_u32(&groups_shared->last_reason);
		if (r >= 0 && r < WP_GROUP_NUM_REASONS && r != WP_GROUP_NO_DELAY)
		{
			pg_write_barrier();
			s = wp_backend_slot_mine(&wp_commit_groups_slots);
			wp_slot_add(&s[GT(commits) + r], 1);
		}
	}
	wp_commit_groups_abort();
}

/*
 * wp_commit_groups_abort
 *		The commit ended (or ABORT: nothing was flushed): forget its sleep,
 *		so that the next commit, which may not run our PRE_COMMIT, starts
 *		from no delay.
 */
void
wp_commit_groups_abort(void)
{
	in_durable_commit = false;
	woken = WP_WOKEN_NONE;
	delay_in_force = 0;
}

/*
 * wp_commit_groups_totals
 *		Counters since the last walpilot.reset().  The no_delay row is what
 *		commit timing counted and the other rows did not: its flushes led
 *		and durable commits, less theirs (it has no wait).  Takes
 *		wp_shared->lock briefly (shared) to copy the baselines; never in the
 *		commit path.
 */
void
wp_commit_groups_totals(WpGroupTotals *out)
{
	WpCommitTotals t;
	uint64		groups = 0;
	uint64		commits = 0;
	int			r;

	wp_backend_slots_totals(&wp_commit_groups_slots, (uint64 *) out);
	if (wp_commit_groups_slots.header == NULL)
		return;
	/* ours first: a commit counted in them is in commit timing's too */
	pg_read_barrier();
	wp_commit_totals(&t);
	for (r = 0; r < WP_GROUP_NUM_REASONS; r++)
	{
		if (r == WP_GROUP_NO_DELAY)
			continue;
		groups += out->groups[r];
		commits += out->commits[r];
	}
	out->groups[WP_GROUP_NO_DELAY] =
		(t.led_flush > groups) ? t.led_flush - groups : 0;
	out->commits[WP_GROUP_NO_DELAY] =
		(t.durable > commits) ? t.durable - commits : 0;
	out->wait_us[WP_GROUP_NO_DELAY] = 0;
}

/*
 * wp_commit_groups_reset
 *		walpilot.reset(): make the current sums the new zero.
 */
void
wp_commit_groups_reset(void)
{
	wp_backend_slots_reset(&wp_commit_groups_slots);
}

/*
 * wp_commit_groups_take
 *		Worker only: groups closed per reason since the previous call (zeros
 *		at the first), for the timeline.  no_delay is the flushes commit
 *		timing saw led, less the other reasons'; a group our slots show
 *		before commit timing's scan does is taken off the next second.
 */
void
wp_commit_groups_take(uint32 *groups)
{
	uint64		own[WP_GROUP_NUM_REASONS];
	WpCommitSecond cs;
	int64		no_delay;
	bool		primed;
	int			r;

	memset(groups, 0, sizeof(uint32) * WP_GROUP_NUM_REASONS);
	if (wp_commit_groups_slots.header == NULL)
		return;
	primed = wp_backend_slots_delta(&wp_commit_groups_slots, own, NULL, NULL);
	wp_commit_take(WP_COMMIT_READER_GROUPS, &cs);
	if (!primed)
		return;
	no_delay = (int64) cs.led_flush + no_delay_owed;
	for (r = 0; r < WP_GROUP_NUM_REASONS; r++)
	{
		if (r == WP_GROUP_NO_DELAY)
			continue;
		groups[r] = (uint32) Min(own[r], PG_UINT32_MAX);
		no_delay -= (int64) own[r];
	}
	no_delay_owed = Min(no_delay, 0);
	groups[WP_GROUP_NO_DELAY] = (uint32) Min(Max(no_delay, 0), PG_UINT32_MAX);
}
