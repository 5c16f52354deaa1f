/*-------------------------------------------------------------------------
 *
 * pilot_commit_delay.c
 *		The commit_delay / commit_siblings pilot: its backend side (the
 *		group gather) and its controller (engage, trial, keep or revert).
 *
 * Backend side.  At PRE_COMMIT of a durable commit a backend counts itself
 * "arriving" (an atomic counter and its own slot's arrival time); at COMMIT
 * or ABORT it leaves.  In gather mode the pilot publishes commit_delay as a
 * cap and commit_siblings = 0, and the group size G it expects (the number
 * of backends that committed recently).  Siblings 0, because the first
 * arrival after a group flush usually finds no other transaction with an
 * xid yet (the others are still running their next statement), so with
 * siblings 1 MinimumActiveBackends says no, that leader flushes alone and
 * the rest wait a whole flush for the next group (measured: 3.0 commits
 * per flush with 4 clients instead of 3.9).  The flush leader sleeps in
 * XLogFlush's pg_usleep(CommitDelay) holding WALWriteLock; in PostgreSQL
 * 15 that is a select(), which a signal cuts short.  The backend whose
 * arrival completes the group signals the earliest-arrived backend still
 * in commit whose wait event is empty -- the sleeping leader; followers
 * wait on LWLock:WALWrite.  Regular backends ignore SIGUSR2, so walpilot
 * installs a handler there that first waits (briefly) until the completing
 * arrival has queued behind the leader, i.e. its commit record is in; other
 * processes get SIGUSR1, whose procsignal handler only sets the latch.  So
 * the leader sleeps only as long as the group needs to arrive, never longer
 * than the cap (F/2): the count-bounded wait PostgreSQL lacks.  For a lone
 * committer (G < 2) the delay is dropped to
 * 0 for that commit.  None of this takes a lock, allocates or can throw.
 *
 * Controller (worker, once a second).  It engages only when commits are
 * flush-bound: enough durable commits, several concurrent committers, and
 * a slow WAL flush (the storage estimate).  It then runs on-line
 * trials: the candidate and the current setting alternate in one-second
 * windows (ABBA order, WP_TRIAL_PAIRS pairs, or WP_TRIAL_EARLY_PAIRS when
 * the verdict is already clear); a candidate is kept only if
 * its commits/s are higher with one-sided 95 % confidence (paired t-test
 * on log ratios) -- or, when throughput is unchanged (an open-loop load),
 * its median latency is lower -- and its p99 commit latency is no more
 * than walpilot.max_latency_regression above the configured setting's (or
 * the current choice's, if higher).  Candidates: gather, then
 * static delays of 1/4 and 1/8 of the flush time with siblings 1 (what the
 * benchmarks found best, the seeds' 1/2 rule being too long).  It re-checks
 * its choice against the DBA's setting every walpilot.tune_interval and at
 * once when throughput or latency shift, and falls back to the DBA's
 * setting when the load stops being flush-bound or a re-check fails.
 *
 * IDENTIFICATION
 *	  src/pilot_commit_delay.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <sched.h>
#include <signal.h>

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "walpilot.h"

/* GUC variables */
bool		wp_tune_commit_delay = true;
int			wp_commit_delay_max_us = 10000;
int			wp_max_latency_regression_pct = 10;
int			wp_tune_interval_s = 600;

/* Controller constants (see the header comment). */
#define WP_TRIAL_PAIRS			8
#define WP_TRIAL_EARLY_PAIRS	4	/* a clear verdict may end a trial here */
#define WP_ENGAGE_MIN_COMMITS	20		/* durable commits per second */
#define WP_ENGAGE_MIN_FLUSH_US	500		/* slower flushes: worth a trial */
#define WP_CONFIRM_MIN_FLUSH_US	400		/* ... if a probe confirms it */
#define WP_ENGAGE_SECONDS		3
#define WP_MIN_GAIN				1.02	/* geometric-mean ratio to keep */
#define WP_SHIFT_RATIO			1.35	/* a workload or storage shift */
#define WP_SHIFT_SECONDS		5
#define WP_IDLE_FALLBACK_S		10
#define WP_GATHER_MIN_CAP_US	50

/*
 * Regular backends ignore SIGUSR2; walpilot uses it to wake a sleeping
 * flush leader, and lets the leader wait in the handler, at most
 * WP_WAKE_SPIN_US, until the arrival that completed the group has written
 * its commit record (it then waits on LWLock:WALWrite).  Without that
 * wait, the woken leader usually flushes before the last arrival has
 * inserted its record, and that one commit misses the group.
 */
#define WP_WAKE_SIGNAL			SIGUSR2
#define WP_WAKE_SPIN_US			300

/* One per PGPROC, written only by its backend, padded against false sharing. */
typedef union WpPilotSlot
{
	struct
	{
		pg_atomic_uint32 wake_handler;	/* backend handles WP_WAKE_SIGNAL */
		pg_atomic_uint64 arrived_us;	/* 0 when not in a durable commit */
		pg_atomic_uint64 last_commit_at;	/* TimestampTz: end of its last
											 * durable commit */
	}			s;
	char		pad[PG_CACHE_LINE_SIZE];
} WpPilotSlot;

typedef struct WpPilotShared
{
	/* backend side, lock-free */
	pg_atomic_uint32 in_commit;
	pg_atomic_uint32 gather_on;
	pg_atomic_uint32 gather_group;	/* G */
	pg_atomic_uint32 min_slot;	/* lowest slot index that committed */
	pg_atomic_uint32 max_slot;	/* highest slot index that committed + 1 */
	pg_atomic_uint32 waker_slot;	/* the arrival that completed a group */
	pg_atomic_uint64 group_closed_us;	/* its arrival time: older arrivals
										 * belong to earlier groups */

	/* requests from SQL to the worker */
	pg_atomic_uint32 revert_requested;

	/* controller state for the views; protected by wp_shared->lock */
	char		state[64];
	char		current[64];
	char		candidate[64];
} WpPilotShared;

static WpPilotShared *pilot = NULL;
static WpPilotSlot *pilot_slots = NULL;	/* own cache-aligned region */

/* A setting the controller can choose. */
typedef struct WpChoice
{
	bool		gather;
	int			delay_us;
	int			siblings;
} WpChoice;

typedef enum WpPilotState
{
	WP_PS_IDLE,					/* DBA settings in force, watching */
	WP_PS_TRIAL,				/* alternating candidate and current */
	WP_PS_HOLD					/* a choice in force, watching for shifts */
} WpPilotState;

/* One second of measurement, from cumulative counters. */
typedef struct WpSecondStats
{
	double		commits;
	uint64		hist[WP_HIST_BUCKETS];
} WpSecondStats;

/*---- backend-local state ----*/
static bool commit_in_flight = false;	/* a durable commit, tune mode */
static bool commit_counted = false;	/* ... counted as a gather arrival */
static instr_time commit_started;
static int	saved_commit_delay = -1;

/*---- worker-local controller state ----*/
static WpPilotState state = WP_PS_IDLE;
static bool managing = false;
static WpChoice current;
static WpChoice candidate;
static WpChoice dba;
static int	engage_streak = 0;
static int	idle_streak = 0;
static int	shift_streak = 0;
static double level_commits = 0;
static double level_p50 = 0;
static TimestampTz recheck_from = 0;	/* 0: no hold-off */
static int	search_step = 0;
static double flush_estimate_us = 0;
static double configured_p99_us = 0;	/* the DBA's setting, this search */
static uint64 trial_decision = 0;
static bool trial_is_recheck = false;

/* trial windows: index 2*pair + (0 = current, 1 = candidate) */
static int	trial_window = 0;
static double trial_commits[2 * WP_TRIAL_PAIRS];
static uint64 trial_hist[2][WP_HIST_BUCKETS];

/* previous cumulative snapshot and the last seconds */
static uint64 prev_commits = 0;
static uint64 prev_hist[WP_HIST_BUCKETS];
static bool have_prev = false;
static TimestampTz last_second = 0;
static TimestampTz last_group_update = 0;
static double last_p50_us = 0;	/* commit p50 of the last second */

/*
 * recheck_due
 *		Is walpilot.tune_interval over since recheck_from?  The setting is
 *		read per call, so a reload that shortens it ends a running hold-off.
 */
static bool
recheck_due(void)
{
	return recheck_from == 0 ||
		GetCurrentTimestamp() >= recheck_from +
		(TimestampTz) wp_tune_interval_s * USECS_PER_SEC;
}

Size
wp_pilot_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(WpPilotShared)),
					add_size(PG_CACHE_LINE_SIZE,
							 mul_size(sizeof(WpPilotSlot), wp_max_procs())));
}

void
wp_pilot_shmem_init(void)
{
	bool		found;
	bool		slots_found;
	int			i;

	pilot = ShmemInitStruct("walpilot pilot", sizeof(WpPilotShared), &found);
	pilot_slots = ShmemInitStruct("walpilot pilot slots",
							mul_size(sizeof(WpPilotSlot), wp_max_procs()),
							&slots_found);
	if (!found)
	{
		memset(pilot, 0, sizeof(WpPilotShared));
		pg_atomic_init_u32(&pilot->in_commit, 0);
		pg_atomic_init_u32(&pilot->gather_on, 0);
		pg_atomic_init_u32(&pilot->gather_group, 0);
		pg_atomic_init_u32(&pilot->min_slot, (uint32) wp_max_procs());
		pg_atomic_init_u32(&pilot->max_slot, 0);
		pg_atomic_init_u32(&pilot->waker_slot, 0);
		pg_atomic_init_u64(&pilot->group_closed_us, 0);
		pg_atomic_init_u32(&pilot->revert_requested, 0);
		for (i = 0; i < wp_max_procs(); i++)
		{
			pg_atomic_init_u32(&pilot_slots[i].s.wake_handler, 0);
			pg_atomic_init_u64(&pilot_slots[i].s.arrived_us, 0);
			pg_atomic_init_u64(&pilot_slots[i].s.last_commit_at, 0);
		}
		strlcpy(pilot->state, "idle", sizeof(pilot->state));
	}
}

/*---- helpers ----*/

/*
 * hist_quantile
 *		Quantile q of a commit-timing histogram (interpolated in a bucket).
 */
static double
hist_quantile(const uint64 *hist, double q)
{
	uint64		total = 0;
	int			i;

	for (i = 0; i < WP_HIST_BUCKETS; i++)
		total += hist[i];
	return wp_hist_percentile(hist, total, q, 0);
}

/*---- backend side ----*/

/*
 * commit_delay_pinned
 *		Did the DBA set commit_delay for this session (file, role, SET)?
 */
static bool
commit_delay_pinned(void)
{
	return wp_settings_source(WP_KNOB_COMMIT_DELAY) > PGC_S_DYNAMIC_DEFAULT;
}

/*
 * wake_signal_handler
 *		WP_WAKE_SIGNAL in a backend sleeping in commit_delay: wait, briefly,
 *		until the arrival that completed the group is queued behind us,
 *		then return, which ends the sleep (select() fails with EINTR).
 *		Only async-signal-safe work: shared-memory reads, clock_gettime,
 *		sched_yield.
 */
static void
wake_signal_handler(SIGNAL_ARGS)
{
	int			save_errno = errno;
	uint32		slot = pg_atomic_read_u32(&pilot->waker_slot);
	PGPROC	   *waker;
	instr_time	start,
				now;

	if (slot < (uint32) wp_max_procs())
	{
		waker = &ProcGlobal->allProcs[slot];
		INSTR_TIME_SET_CURRENT(start);
		for (;;)
		{
			if (WP_READ_ONCE_U32(waker->wait_event_info) != 0 ||
				pg_atomic_read_u64(&pilot_slots[slot].s.arrived_us) == 0)
				break;
			INSTR_TIME_SET_CURRENT(now);
			INSTR_TIME_SUBTRACT(now, start);
			if (INSTR_TIME_GET_MICROSEC(now) > WP_WAKE_SPIN_US)
				break;
			sched_yield();
		}
	}
	errno = save_errno;
}

/*
 * install_wake_handler
 *		Once per regular backend: take over the (ignored) wake signal.
 */
static void
install_wake_handler(int slot)
{
	static bool installed = false;

	if (installed)
		return;
	installed = true;
	if (MyBackendType != B_BACKEND)
	{
		pg_atomic_write_u32(&pilot_slots[slot].s.wake_handler, 0);
		return;
	}
	pqsignal(WP_WAKE_SIGNAL, wake_signal_handler);
	pg_atomic_write_u32(&pilot_slots[slot].s.wake_handler, 1);
}

/*
 * wake_leader
 *		The group may be complete: if G backends have arrived since the last
 *		group closed, cut the sleeping leader's commit_delay short.
 *
 * The in_commit count alone is not enough: a member of the previous group
 * that has not yet been scheduled since its flush still counts, and waking
 * on it closed the group one arrival early -- that arrival then waited a
 * whole extra flush (0.5 % of commits at 8 clients).  So this scan counts
 * only arrivals after the previous group's closing arrival, and the
 * compare-and-swap of that time lets exactly one arrival close a group.
 */
static void
wake_leader(int my_slot, uint64 my_arrival, uint32 group)
{
	int			lo = (int) pg_atomic_read_u32(&pilot->min_slot);
	int			hi = (int) pg_atomic_read_u32(&pilot->max_slot);
	uint64		closed = pg_atomic_read_u64(&pilot->group_closed_us);
	uint32		fresh = 1;		/* this arrival */
	int			best_pid = 0;
	int			best_slot = -1;
	uint64		best_arrival = PG_UINT64_MAX;
	int			i;

	/*
	 * The leader is the earliest fresh arrival in the commit_delay sleep
	 * (no wait event up to 18, Timeout:CommitDelay from 19): followers
	 * wait on LWLock:WALWrite.
	 */
	for (i = lo; i < hi; i++)
	{
		uint64		a;
		PGPROC	   *proc;

		if (i == my_slot)
			continue;
		a = pg_atomic_read_u64(&pilot_slots[i].s.arrived_us);
		if (a == 0 || a <= closed)
			continue;
		fresh++;
		if (a >= best_arrival)
			continue;
		proc = &ProcGlobal->allProcs[i];
		if (!wp_wait_may_be_commit_delay(WP_READ_ONCE_U32(proc->wait_event_info)))
			continue;
		best_pid = WP_READ_ONCE_I32(proc->pid);
		best_slot = i;
		best_arrival = a;
	}
	if (fresh < group || best_pid <= 0 || my_arrival <= closed)
		return;
	if (!pg_atomic_compare_exchange_u64(&pilot->group_closed_us, &closed,
										my_arrival))
		return;					/* another arrival closed it */

	if (pg_atomic_read_u32(&pilot_slots[best_slot].s.wake_handler))
	{
		pg_atomic_write_u32(&pilot->waker_slot, (uint32) my_slot);
		kill(best_pid, WP_WAKE_SIGNAL);
	}
	else
		kill(best_pid, SIGUSR1);	/* any signal ends the sleep */
}

/*
 * wp_pilot_before_commit
 *		Called by commit_timing.c at PRE_COMMIT of every top-level
 *		transaction of a regular backend; durable says whether it will wait
 *		for a WAL flush.  Applies a newly published target; in tune mode
 *		notes that this backend commits and, in gather mode, counts the
 *		arrival.  No lock, no allocation, no error.
 */
void
wp_pilot_before_commit(bool durable)
{
	int			slot;
	uint64		now;
	uint32		n;
	uint32		group;

	if (pilot == NULL)
		return;
	wp_settings_apply_in_backend();
	if (!durable || MyProc == NULL || wp_mode != WP_MODE_TUNE)
		return;

	/* tune mode: the worker needs to know who commits (the group size) */
	commit_in_flight = true;
	slot = wp_my_proc_number();
	/* unlocked widening; a lost race is repaired at the next commit */
	if ((uint32) slot >= pg_atomic_read_u32(&pilot->max_slot))
		pg_atomic_write_u32(&pilot->max_slot, (uint32) slot + 1);
	if ((uint32) slot < pg_atomic_read_u32(&pilot->min_slot))
		pg_atomic_write_u32(&pilot->min_slot, (uint32) slot);
	if (!pg_atomic_read_u32(&pilot->gather_on) || commit_delay_pinned())
		return;

	/* gather mode: count this arrival, complete the group, or skip */
	install_wake_handler(slot);
	INSTR_TIME_SET_CURRENT(commit_started);
	now = INSTR_TIME_GET_MICROSEC(commit_started);
	commit_counted = true;
	pg_atomic_write_u64(&pilot_slots[slot].s.arrived_us, now);
	n = pg_atomic_add_fetch_u32(&pilot->in_commit, 1);

	group = pg_atomic_read_u32(&pilot->gather_group);
	if (group < 2)
	{
		saved_commit_delay = CommitDelay;
		CommitDelay = 0;		/* nobody to wait for */
	}
	else if (n >= group)
		wake_leader(slot, now, group);
}

/*
 * wp_pilot_after_commit
 *		Called at COMMIT and ABORT of the same transactions: restores this
 *		session's commit_delay and counts the arrival out.  end is commit
 *		timing's stamp of a durable commit's end, 0 when it took none (an
 *		abort): the pilot reuses it rather than read the clock again.
 *		Same rules.
 */
void
wp_pilot_after_commit(TimestampTz end)
{
	int			slot;

	if (saved_commit_delay >= 0)
	{
		CommitDelay = saved_commit_delay;
		saved_commit_delay = -1;
	}
	if (!commit_in_flight || pilot == NULL)
		return;
	commit_in_flight = false;

	slot = wp_my_proc_number();
	if (end == 0)
		end = GetCurrentTimestamp();
	pg_atomic_write_u64(&pilot_slots[slot].s.last_commit_at, (uint64) end);
	if (!commit_counted)
		return;
	commit_counted = false;
	pg_atomic_write_u64(&pilot_slots[slot].s.arrived_us, 0);
	pg_atomic_fetch_sub_u32(&pilot->in_commit, 1);
}

/*---- worker side: measurement ----*/

/*
 * take_second
 *		Per-second commits and latency histogram from the cumulative
 *		counters.
 */
static void
take_second(WpSecondStats *s)
{
	WpCommitTotals *t = palloc(sizeof(WpCommitTotals));
	int			i;

	/* raw totals: walpilot.reset() does not disturb the pilot's windows */
	wp_commit_totals_raw(t);
	s->commits = (double) (t->durable - prev_commits);
	prev_commits = t->durable;
	for (i = 0; i < WP_HIST_BUCKETS; i++)
	{
		s->hist[i] = t->hist[i] - prev_hist[i];
		prev_hist[i] = t->hist[i];
	}
	pfree(t);
}

/*
 * update_group
 *		Publish G, the number of backends that finished a durable commit in
 *		the last few commit latencies; and retire a stuck in_commit count.
 */
static void
update_group(void)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		horizon = (int64) Max(50000.0, 4.0 * last_p50_us);
	int			lo = (int) pg_atomic_read_u32(&pilot->min_slot);
	int			n = (int) pg_atomic_read_u32(&pilot->max_slot);
	uint32		group = 0;
	uint32		in_commit_slots = 0;
	int			i;

	for (i = lo; i < n; i++)
	{
		TimestampTz last = (TimestampTz)
			pg_atomic_read_u64(&pilot_slots[i].s.last_commit_at);

		/* signed: a wall-clock step back counts as recent, briefly */
		if (last != 0 && now - last < horizon)
			group++;
		if (pg_atomic_read_u64(&pilot_slots[i].s.arrived_us) != 0)
			in_commit_slots++;
	}
	pg_atomic_write_u32(&pilot->gather_group, group);

	/* a backend that died mid-commit must not leave the counter high */
	if (pg_atomic_read_u32(&pilot->in_commit) > in_commit_slots + (uint32) n)
		pg_atomic_write_u32(&pilot->in_commit, in_commit_slots);
}

/*---- worker side: applying choices ----*/

static void
choice_text(const WpChoice *c, char *buf, size_t len)
{
	if (c->gather)
		snprintf(buf, len, "gather(cap %d us, siblings %d)", c->delay_us,
				 c->siblings);
	else
		snprintf(buf, len, "delay %d us, siblings %d", c->delay_us,
				 c->siblings);
}

static bool
choice_equal(const WpChoice *a, const WpChoice *b)
{
	return a->gather == b->gather && a->delay_us == b->delay_us &&
		a->siblings == b->siblings;
}

/*
 * apply_choice
 *		Publish a choice to every backend (the DBA's = stop managing).
 */
static void
apply_choice(const WpChoice *c)
{
	int32		targets[WP_NUM_KNOBS];
	bool		is_dba = choice_equal(c, &dba);

	targets[WP_KNOB_COMMIT_DELAY] = c->delay_us;
	targets[WP_KNOB_COMMIT_SIBLINGS] = c->siblings;
	pg_atomic_write_u32(&pilot->gather_on, c->gather ? 1 : 0);
	wp_settings_publish(!is_dba, targets);
	managing = !is_dba;
}

static void
publish_state(const char *what)
{
	char		cur[64];
	char		cand[64];

	choice_text(&current, cur, sizeof(cur));
	if (state == WP_PS_TRIAL)
		choice_text(&candidate, cand, sizeof(cand));
	else
		cand[0] = '\0';
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	strlcpy(pilot->state, what, sizeof(pilot->state));
	strlcpy(pilot->current, cur, sizeof(pilot->current));
	strlcpy(pilot->candidate, cand, sizeof(pilot->candidate));
	LWLockRelease(wp_shared->lock);
}

/*
 * change_to
 *		Make a choice current, with a decision row.
 */
static uint64
change_to(const WpChoice *c, const char *reason, const char *evidence)
{
	char		from[64];
	char		to[64];
	uint64		id;

	choice_text(&current, from, sizeof(from));
	choice_text(c, to, sizeof(to));
	id = wp_decision_log("commit_delay", from, to, reason, evidence);
	current = *c;
	apply_choice(c);
	return id;
}

/*
 * fall_back
 *		Put the DBA's settings back and go idle.
 */
static void
fall_back(const char *reason, bool hold_off)
{
	if (managing || !choice_equal(&current, &dba))
		change_to(&dba, reason, NULL);
	state = WP_PS_IDLE;
	engage_streak = 0;
	search_step = 0;
	configured_p99_us = 0;
	if (hold_off)
		recheck_from = GetCurrentTimestamp();
	publish_state("idle");
}

/*---- worker side: trials ----*/

static bool
next_candidate(WpChoice *c)
{
	double		f = Max(flush_estimate_us, 100.0);
	int			cap = (int) Min((double) wp_commit_delay_max_us, f);

	for (;;)
	{
		switch (search_step++)
		{
			case 0:
				/* the cap bounds a wait whose wake-up signal was lost */
				c->gather = true;
				c->delay_us = Max(cap / 2, WP_GATHER_MIN_CAP_US);
				c->siblings = 0;	/* a lone committer skips the sleep */
				break;
			case 1:
				c->gather = false;
				c->delay_us = (int) Min((double) wp_commit_delay_max_us, f / 4);
				c->siblings = 1;
				break;
			case 2:
				c->gather = false;
				c->delay_us = (int) Min((double) wp_commit_delay_max_us, f / 8);
				c->siblings = 1;
				break;
			default:
				return false;
		}
		if (c->delay_us > 0 && !choice_equal(c, &current))
			return true;
	}
}

static void
start_trial(const WpChoice *c, bool recheck)
{
	char		cur[64];
	char		cand[64];
	char		evidence[256];

	candidate = *c;
	trial_window = 0;
	trial_is_recheck = recheck;
	memset(trial_commits, 0, sizeof(trial_commits));
	memset(trial_hist, 0, sizeof(trial_hist));
	state = WP_PS_TRIAL;
	choice_text(&current, cur, sizeof(cur));
	choice_text(c, cand, sizeof(cand));
	snprintf(evidence, sizeof(evidence),
			 "{\"flush_estimate_us\": %.0f, \"commits_per_s\": %.0f, \"commit_p50_us\": %.0f, \"pairs\": %d}",
			 flush_estimate_us, level_commits, level_p50, WP_TRIAL_PAIRS);
	trial_decision = wp_decision_log("commit_delay", cur, cand,
									 recheck ? "re-check: trial against the configured setting" :
									 "trial: flush-bound commits",
									 evidence);
}

/* window w of a trial runs the candidate when this is true (ABBA) */
static bool
window_is_candidate(int w)
{
	int			pair = w / 2;
	int			second = w % 2;

	return (pair % 2 == 0) ? second == 1 : second == 0;
}

static double
t_critical_95(int df)
{
	static const double t[] = {6.314, 2.920, 2.353, 2.132, 2.015, 1.943,
	1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753};

	return t[Min(Max(df, 1), 15) - 1];
}

/* one-sided 99.9 % critical values: the bar for stopping a trial early */
static double
t_critical_999(int df)
{
	static const double t[] = {318.3, 22.33, 10.21, 7.173, 5.893, 5.208,
	4.785, 4.501, 4.297, 4.144, 4.025, 3.930, 3.852, 3.787, 3.733};

	return t[Min(Max(df, 1), 15) - 1];
}

/*
 * pair_stats
 *		Paired t statistic and geometric-mean ratio (candidate / current)
 *		of commits over the first npairs pairs; their commit sums too.
 */
static double
pair_stats(int npairs, double *gain, double *commits)
{
	double		sum = 0,
				sumsq = 0,
				mean,
				sd;
	int			i;

	commits[0] = commits[1] = 0;
	for (i = 0; i < npairs; i++)
	{
		/* within pair i: a = current, b = candidate */
		bool		cand_first = window_is_candidate(2 * i);
		double		a = trial_commits[2 * i + (cand_first ? 1 : 0)];
		double		b = trial_commits[2 * i + (cand_first ? 0 : 1)];
		double		r = log((b + 1) / (a + 1));

		sum += r;
		sumsq += r * r;
		commits[0] += a;
		commits[1] += b;
	}
	mean = sum / npairs;
	sd = sqrt(Max(0.0, (sumsq - npairs * mean * mean) / (npairs - 1)));
	*gain = exp(mean);
	if (sd > 0)
		return mean / (sd / sqrt(npairs));
	return mean > 0 ? 99 : (mean < 0 ? -99 : 0);
}

/*
 * finish_trial
 *		Judge the candidate against the current setting.
 */
static void
finish_trial(int npairs)
{
	double		tstat,
				gain,
				tcrit = t_critical_95(npairs - 1);
	double		p50[2],
				p99[2],
				commits[2];
	int			i;
	bool		better_tps,
				worse_tps,
				better_latency,
				p99_ok,
				keep;
	char		evidence[480];
	char		outcome[160];

	tstat = pair_stats(npairs, &gain, commits);
	for (i = 0; i < 2; i++)
	{
		p50[i] = hist_quantile(trial_hist[i], 0.50);
		p99[i] = hist_quantile(trial_hist[i], 0.99);
	}

	better_tps = tstat >= tcrit && gain >= WP_MIN_GAIN;
	worse_tps = tstat <= -tcrit;
	better_latency = !worse_tps && fabs(gain - 1.0) < 0.02 &&
		p50[1] < p50[0] * 0.95;
	/*
	 * The p99 bound is the DBA's setting's p99 as measured in this search
	 * (or the current choice's, when higher): a candidate may trade some of
	 * the tail the current choice won back for throughput, never push the
	 * tail above what the configured setting gives.
	 */
	if (trial_is_recheck)
		configured_p99_us = p99[1];
	else if (choice_equal(&current, &dba))
		configured_p99_us = p99[0];
	p99_ok = p99[1] <= Max(p99[0], configured_p99_us) *
		(1.0 + wp_max_latency_regression_pct / 100.0);
	keep = (better_tps || better_latency) && p99_ok;

	snprintf(evidence, sizeof(evidence),
			 "{\"pairs\": %d, \"commits_ratio\": %.3f, \"t\": %.2f, \"t_crit\": %.3f, "
			 "\"commits_current\": %.0f, \"commits_candidate\": %.0f, "
			 "\"p50_us_current\": %.0f, \"p50_us_candidate\": %.0f, "
			 "\"p99_us_current\": %.0f, \"p99_us_candidate\": %.0f, "
			 "\"p99_us_configured\": %.0f}",
			 npairs, gain, tstat, tcrit,
			 commits[0], commits[1], p50[0], p50[1], p99[0], p99[1],
			 configured_p99_us);

	if (keep)
	{
		snprintf(outcome, sizeof(outcome), "kept: commits/s x%.2f (t=%.1f, %d pairs), p99 %.0f -> %.0f us",
				 gain, tstat, npairs, p99[0], p99[1]);
		wp_decision_set_outcome(trial_decision, outcome);
		if (trial_is_recheck)
		{
			/* the candidate was the DBA's setting: it won, so go back */
			fall_back("re-check: configured setting is better", true);
			return;
		}
		change_to(&candidate, "trial won", evidence);
	}
	else
	{
		snprintf(outcome, sizeof(outcome), "rejected: commits/s x%.2f (t=%.1f, %d pairs), p99 %.0f -> %.0f us%s",
				 gain, tstat, npairs, p99[0], p99[1], p99_ok ? "" : " (p99 regression)");
		wp_decision_set_outcome(trial_decision, outcome);
		apply_choice(&current);
	}
	level_commits = commits[keep ? 1 : 0] / npairs;
	level_p50 = p50[keep ? 1 : 0];
	state = WP_PS_HOLD;
	shift_streak = 0;
	recheck_from = GetCurrentTimestamp();
}

/*
 * clear_verdict
 *		After WP_TRIAL_EARLY_PAIRS pairs (two ABBA blocks), is the
 *		difference so large that the remaining pairs cannot matter?  The
 *		bar is one-sided 99.9 %, so looking twice hardly raises the false
 *		keep rate; a flush-bound trial usually clears it (t of 20 and more
 *		at 8 clients), which halves the time the search spends on a losing
 *		candidate.
 */
static bool
clear_verdict(void)
{
	double		gain;
	double		commits[2];
	double		t = pair_stats(WP_TRIAL_EARLY_PAIRS, &gain, commits);

	return fabs(t) >= t_critical_999(WP_TRIAL_EARLY_PAIRS - 1);
}

/*
 * trial_second
 *		Account one finished second to its window and set up the next.
 */
static void
trial_second(const WpSecondStats *s)
{
	int			arm = window_is_candidate(trial_window) ? 1 : 0;
	int			i;

	trial_commits[trial_window] = s->commits;
	for (i = 0; i < WP_HIST_BUCKETS; i++)
		trial_hist[arm][i] += s->hist[i];
	trial_window++;

	if (trial_window >= 2 * WP_TRIAL_PAIRS ||
		(trial_window == 2 * WP_TRIAL_EARLY_PAIRS && clear_verdict()))
	{
		finish_trial(trial_window / 2);
		/* continue the search while candidates remain */
		if (state == WP_PS_HOLD && !trial_is_recheck)
		{
			WpChoice	c;

			if (next_candidate(&c))
				start_trial(&c, false);
		}
		return;
	}
	apply_choice(window_is_candidate(trial_window) ? &candidate : &current);
}

/*
 * flush_bound
 *		Is this second's load one commit_delay can help?  Several backends
 *		commit durably, and one WAL flush is slow (the storage estimate:
 *		flush leaders' timing, pg_stat_wal or sampled IO:WALSync).  Commit
 *		latency alone is not used: on a saturated CPU it rises while the
 *		flush stays fast, and there commit_delay only loses.
 */
static bool
flush_bound(const WpSecondStats *s, double *flush_us)
{
	char		source[32];

	if (!wp_probe_flush_estimate_us(flush_us, source, sizeof(source)))
		return false;
	return s->commits >= WP_ENGAGE_MIN_COMMITS &&
		*flush_us >= WP_ENGAGE_MIN_FLUSH_US &&
		pg_atomic_read_u32(&pilot->gather_group) >= 2;
}

static void controller_step(const WpSecondStats *s);

/*
 * controller_second
 *		The controller's once-a-second step, then its state for the views.
 */
static void
controller_second(const WpSecondStats *s)
{
	controller_step(s);
	publish_state(state == WP_PS_IDLE ? "idle" :
				  state == WP_PS_HOLD ? "hold" :
				  trial_is_recheck ? "re-check" : "trial");
}

static void
controller_step(const WpSecondStats *s)
{
	double		p50 = hist_quantile(s->hist, 0.5);
	double		flush_us = 0;
	bool		tuning = wp_mode == WP_MODE_TUNE && wp_tune_commit_delay;
	bool		pinned;

	dba.gather = false;
	dba.delay_us = wp_settings_configured(WP_KNOB_COMMIT_DELAY, &pinned);
	dba.siblings = wp_settings_configured(WP_KNOB_COMMIT_SIBLINGS, NULL);
	if (state == WP_PS_IDLE && !managing)
		current = dba;

	if (pg_atomic_exchange_u32(&pilot->revert_requested, 0))
	{
		fall_back("walpilot.revert() or DROP EXTENSION", true);
		return;
	}
	if (!tuning || pinned)
	{
		if (managing || state != WP_PS_IDLE)
			fall_back(pinned ? "commit_delay is set in the configuration" :
					  "walpilot.mode or walpilot.tune_commit_delay turned tuning off",
					  false);
		return;
	}

	switch (state)
	{
		case WP_PS_IDLE:
			engage_streak = flush_bound(s, &flush_us) ? engage_streak + 1 : 0;
			if (engage_streak >= WP_ENGAGE_SECONDS &&
				recheck_due())
			{
				WpChoice	c;
				double		probed_us;

				/* the passive estimate says slow: time the device itself */
				engage_streak = 0;
				if (!wp_probe_confirm_flush_us(&probed_us) ||
					probed_us < WP_CONFIRM_MIN_FLUSH_US)
				{
					char		evidence[160];

					snprintf(evidence, sizeof(evidence),
							 "{\"flush_estimate_us\": %.0f, \"probe_p50_us\": %.0f}",
							 flush_us, probed_us);
					wp_decision_log("commit_delay", "-", "-",
									"no trial: the probe finds the flush fast",
									evidence);
					recheck_from = GetCurrentTimestamp();
					break;
				}
				flush_estimate_us = flush_us;
				level_commits = s->commits;
				level_p50 = p50;
				search_step = 0;
				if (next_candidate(&c))
					start_trial(&c, false);
			}
			break;

		case WP_PS_TRIAL:
			trial_second(s);
			break;

		case WP_PS_HOLD:
			if (s->commits < WP_ENGAGE_MIN_COMMITS)
			{
				if (++idle_streak >= WP_IDLE_FALLBACK_S)
				{
					idle_streak = 0;
					if (managing)
						fall_back("load is no longer flush-bound", false);
					else
						state = WP_PS_IDLE;
				}
				break;
			}
			idle_streak = 0;
			if (level_commits > 0 &&
				(s->commits > level_commits * WP_SHIFT_RATIO ||
				 s->commits < level_commits / WP_SHIFT_RATIO ||
				 (level_p50 > 0 && (p50 > level_p50 * WP_SHIFT_RATIO ||
									p50 < level_p50 / WP_SHIFT_RATIO))))
				shift_streak++;
			else
				shift_streak = 0;

			if (shift_streak >= WP_SHIFT_SECONDS)
			{
				/*
				 * New client count or new storage: what was best may not
				 * be.  Start over from the configured setting; the search
				 * re-engages within WP_ENGAGE_SECONDS if still flush-bound.
				 */
				shift_streak = 0;
				fall_back("workload or storage shifted: searching again", false);
				recheck_from = 0;
			}
			else if (recheck_due())
			{
				if (managing)
				{
					/* prove the choice still beats the DBA's setting */
					start_trial(&dba, true);
				}
				else if (flush_bound(s, &flush_us))
				{
					state = WP_PS_IDLE;
					engage_streak = 0;
					recheck_from = 0;
				}
				else
					recheck_from = GetCurrentTimestamp();
			}
			break;
	}
}

/*
 * wp_pilot_tick
 *		Worker tick: group size every 100 ms, controller every second.
 */
void
wp_pilot_tick(TimestampTz now)
{
	WpSecondStats s;

	if (now - last_group_update >= 100 * 1000)
	{
		update_group();
		last_group_update = now;
	}
	if (!have_prev)
	{
		take_second(&s);
		have_prev = true;
		last_second = now;
		wp_settings_note_configured();
		return;
	}
	if (now - last_second < USECS_PER_SEC)
		return;
	last_second = now;
	take_second(&s);
	last_p50_us = hist_quantile(s.hist, 0.5);

	controller_second(&s);
}

/*
 * wp_pilot_stop
 *		Worker exit or mode off: put the DBA's settings back now.
 */
void
wp_pilot_stop(const char *why)
{
	if (pilot == NULL)
		return;
	if (managing)
		fall_back(why, false);
	pg_atomic_write_u32(&pilot->gather_on, 0);
}

/*
 * wp_pilot_worker_start
 *		A (re)started worker knows nothing of earlier choices: whatever a
 *		previous worker published is withdrawn first.
 */
void
wp_pilot_worker_start(void)
{
	int32		targets[WP_NUM_KNOBS] = {0, 0};

	pg_atomic_write_u32(&pilot->gather_on, 0);
	wp_settings_publish(false, targets);
	publish_state("idle");
}

/*
 * wp_pilot_request_revert
 *		SQL side (walpilot.revert(), DROP EXTENSION): put the DBA's
 *		settings back at once and have the worker go idle.
 */
void
wp_pilot_request_revert(void)
{
	int32		targets[WP_NUM_KNOBS] = {0, 0};

	pg_atomic_write_u32(&pilot->gather_on, 0);
	wp_settings_publish(false, targets);
	pg_atomic_write_u32(&pilot->revert_requested, 1);
}

/*
 * wp_pilot_describe
 *		Copy the controller's state for walpilot.status.
 */
void
wp_pilot_describe(char *st, char *cur, char *cand, size_t len)
{
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	strlcpy(st, pilot->state, len);
	strlcpy(cur, pilot->current, len);
	strlcpy(cand, pilot->candidate, len);
	LWLockRelease(wp_shared->lock);
}
