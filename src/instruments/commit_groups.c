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
 * Same rules as commit timing: one padded slot per PGPROC, written only by
 * its backend (plain loads and stores), summed by readers; nothing here
 * takes a lock, allocates or can fail in the commit path.  The handler
 * part is async-signal-safe: memory reads and writes, clock_gettime.
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

#include "instruments.h"

/* One backend's counters, per flushing reason; one writer (the owner). */
typedef struct WpGroupSlot
{
	pg_atomic_uint64 groups[WP_GROUP_NUM_REASONS];
	pg_atomic_uint64 commits[WP_GROUP_NUM_REASONS];
	pg_atomic_uint64 wait_us[WP_GROUP_NUM_REASONS];
} WpGroupSlot;

#define WP_GROUP_SLOT_STRIDE	TYPEALIGN(PG_CACHE_LINE_SIZE, sizeof(WpGroupSlot))

typedef struct WpGroupsShared
{
	int			nslots;
	pg_atomic_uint32 last_reason;	/* of the latest commit-led flush */
	WpGroupTotals baseline;		/* at the last reset; wp_shared->lock */
} WpGroupsShared;

static WpGroupsShared *groups_shared = NULL;
static char *group_slots = NULL;

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

/* Worker-local copy of each slot's group counts, for per-second deltas. */
static uint64 (*seen)[WP_GROUP_NUM_REASONS] = NULL;

static const char *const reason_names[WP_GROUP_NUM_REASONS] = {
	"count_reached",
	"delay_expired",
	"woken_early",
	"no_delay",
};

static inline WpGroupSlot *
group_slot(int i)
{
	return (WpGroupSlot *) (group_slots + (Size) i * WP_GROUP_SLOT_STRIDE);
}

/* One writer: a plain load and store, no locked instruction. */
static inline void
own_add(pg_atomic_uint64 *c, uint64 n)
{
	pg_atomic_write_u64(c, pg_atomic_read_u64(c) + n);
}

const char *
wp_commit_group_reason_name(int reason)
{
	Assert(reason >= 0 && reason < WP_GROUP_NUM_REASONS);
	return reason_names[reason];
}

Size
wp_commit_groups_shmem_size(void)
{
	return add_size(CACHELINEALIGN(sizeof(WpGroupsShared)),
					mul_size(wp_max_procs(), WP_GROUP_SLOT_STRIDE));
}

/*
 * wp_commit_groups_shmem_init
 *		Create or attach the region; caller holds AddinShmemInitLock.
 */
void
wp_commit_groups_shmem_init(void)
{
	bool		found;
	char	   *base;

	base = ShmemInitStruct("walpilot commit groups",
						   wp_commit_groups_shmem_size(), &found);
	groups_shared = (WpGroupsShared *) base;
	group_slots = base + CACHELINEALIGN(sizeof(WpGroupsShared));
	if (!found)
	{
		int			i,
					r;

		memset(groups_shared, 0, sizeof(WpGroupsShared));
		groups_shared->nslots = wp_max_procs();
		pg_atomic_init_u32(&groups_shared->last_reason, WP_GROUP_NO_DELAY);
		for (i = 0; i < groups_shared->nslots; i++)
		{
			WpGroupSlot *s = group_slot(i);

			for (r = 0; r < WP_GROUP_NUM_REASONS; r++)
			{
				pg_atomic_init_u64(&s->groups[r], 0);
				pg_atomic_init_u64(&s->commits[r], 0);
				pg_atomic_init_u64(&s->wait_us[r], 0);
			}
		}
	}
}

/*
 * wp_commit_groups_pre_commit
 *		Commit-path observer at PRE_COMMIT, after the gather (which may have
 *		dropped commit_delay for this commit): note the delay and siblings
 *		XLogFlush will run with.
 */
void
wp_commit_groups_pre_commit(const WpCommitContext *ctx)
{
	in_durable_commit = false;
	woken = WP_WOKEN_NONE;
	if (!ctx->has_xid || group_slots == NULL || MyProc == NULL ||
		wp_mode == WP_MODE_OFF)
		return;
	delay_in_force = CommitDelay;
	siblings_in_force = CommitSiblings;
	in_durable_commit = ctx->durable;
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
		groups_shared == NULL)
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
 *		Commit-path observer at COMMIT, after commit timing (which set
 *		end_us and led_flush): a leader files its flush and gives its sleep
 *		to the observers after it (slept_us), a follower adds itself to the
 *		group last published.
 */
void
wp_commit_groups_commit(WpCommitContext *ctx)
{
	WpGroupSlot *s;
	int			r;

	if (group_slots == NULL || MyProc == NULL || !ctx->durable ||
		ctx->end_us == 0)
	{
		in_durable_commit = false;
		woken = WP_WOKEN_NONE;
		return;
	}
	s = group_slot(wp_my_proc_number());
	if (ctx->led_flush)
	{
		uint64		wait_us;

		r = classify_flush(ctx, &wait_us);
		ctx->slept_us = wait_us;
		own_add(&s->commits[r], 1);
		own_add(&s->wait_us[r], wait_us);
		/* last, so a reader that sees the group also sees its parts */
		pg_write_barrier();
		own_add(&s->groups[r], 1);
		pg_atomic_write_u32(&groups_shared->last_reason, (uint32) r);
	}
	else
	{
		r = (int) pg_atomic_read_u32(&groups_shared->last_reason);
		if (r < 0 || r >= WP_GROUP_NUM_REASONS)
			r = WP_GROUP_NO_DELAY;
		own_add(&s->commits[r], 1);
	}
	in_durable_commit = false;
	woken = WP_WOKEN_NONE;
}

/*
 * wp_commit_groups_abort
 *		Commit-path observer at ABORT: nothing was flushed.
 */
void
wp_commit_groups_abort(void)
{
	in_durable_commit = false;
	woken = WP_WOKEN_NONE;
}

/*
 * groups_raw
 *		Every slot's counters summed, since shared memory was created.  No
 *		lock: each counter is read atomically; commits finishing meanwhile
 *		may tear the set.
 */
static void
groups_raw(WpGroupTotals *out)
{
	int			i,
				r;

	memset(out, 0, sizeof(WpGroupTotals));
	if (groups_shared == NULL)
		return;
	for (i = 0; i < groups_shared->nslots; i++)
	{
		WpGroupSlot *s = group_slot(i);

		for (r = 0; r < WP_GROUP_NUM_REASONS; r++)
		{
			uint64		g = pg_atomic_read_u64(&s->groups[r]);

			pg_read_barrier();
			out->groups[r] += g;
			out->commits[r] += pg_atomic_read_u64(&s->commits[r]);
			out->wait_us[r] += pg_atomic_read_u64(&s->wait_us[r]);
		}
	}
}

/*
 * wp_commit_groups_totals
 *		Counters since the last walpilot.reset().  Takes wp_shared->lock
 *		briefly (shared) to copy the baseline; never in the commit path.
 */
void
wp_commit_groups_totals(WpGroupTotals *out)
{
	WpGroupTotals base;
	int			r;

	groups_raw(out);
	if (groups_shared == NULL)
		return;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	memcpy(&base, &groups_shared->baseline, sizeof(base));
	LWLockRelease(wp_shared->lock);

#define WP_SUB(f) (out->f = (out->f > base.f) ? out->f - base.f : 0)
	for (r = 0; r < WP_GROUP_NUM_REASONS; r++)
	{
		WP_SUB(groups[r]);
		WP_SUB(commits[r]);
		WP_SUB(wait_us[r]);
	}
#undef WP_SUB
}

/*
 * wp_commit_groups_reset
 *		walpilot.reset(): make the current sums the new zero.
 */
void
wp_commit_groups_reset(void)
{
	WpGroupTotals now;

	if (groups_shared == NULL)
		return;
	groups_raw(&now);
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	memcpy(&groups_shared->baseline, &now, sizeof(now));
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_commit_groups_take
 *		Worker only: groups closed per reason since the previous call (zeros
 *		at the first), for the timeline.  Keeps a private copy of every
 *		slot's group counts.
 */
void
wp_commit_groups_take(uint32 *groups)
{
	bool		priming = false;
	int			i,
				r;

	memset(groups, 0, sizeof(uint32) * WP_GROUP_NUM_REASONS);
	if (groups_shared == NULL)
		return;
	if (seen == NULL)
	{
		seen = MemoryContextAllocZero(TopMemoryContext,
									  sizeof(*seen) * groups_shared->nslots);
		priming = true;
	}
	for (i = 0; i < groups_shared->nslots; i++)
	{
		WpGroupSlot *s = group_slot(i);

		for (r = 0; r < WP_GROUP_NUM_REASONS; r++)
		{
			uint64		g = pg_atomic_read_u64(&s->groups[r]);

			if (g == seen[i][r])
				continue;
			if (!priming)
				groups[r] += (uint32) Min(g - seen[i][r], PG_UINT32_MAX);
			seen[i][r] = g;
		}
	}
}
