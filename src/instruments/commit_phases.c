/*-------------------------------------------------------------------------
 *
 * commit_phases.c
 *		Where each durable commit's time went: the commit delay, the local
 *		WAL flush, the wait for a synchronous standby.
 *
 * An observer of the commit path (commit_path.c), at COMMIT after commit
 * timing (the commit's whole time, PRE_COMMIT to after the standby's
 * acknowledgement) and commit groups (the flush leader's own sleep in
 * commit_delay).  PostgreSQL stamps none of the three phases, so each
 * commit's time T is split as
 *
 *	standby_wait	S: the synchronous standby's lag at this commit's
 *					synchronous_commit level (pg_stat_replication's
 *					write_lag, flush_lag or replay_lag) as its WAL sender
 *					published it when it released the waiters, times the
 *					calibration below.  For several synchronous standbys,
 *					the one the commit waited for: the slowest of the first
 *					num_sync by priority (FIRST), the num_sync-th fastest
 *					(ANY).  Capped at T - D.
 *	commit_delay	D: the leader's sleep in commit_delay (commit groups).
 *					Followers queued behind a sleeping leader wait on
 *					WALWriteLock and show no sleep of their own.
 *	wal_flush		T - S - D: the commit record's insert, the wait for
 *					WALWriteLock, the local WAL write and flush, the clog
 *					update.
 *
 * The standby's lag is the one estimate, and alone it can fall short: it
 * runs from the WAL sender sending the newest WAL its reply covers, while
 * a commit whose WAL went out earlier in the same standby flush waited
 * longer, and it is missing at times (below).  In a benchmark run at 32
 * clients on a 4 ms standby, 6.6 s after a restart, the lags made up 0.2
 * of the commit time while the committers were waiting for the standby
 * nearly all of it.  So the worker calibrates them every second: the
 * sampler counts the
 * processes waiting on IPC:SyncRep, which by Little's law gives the time
 * spent waiting for the standby, and the lags of the last
 * WP_CALIBRATION_SECONDS are scaled to add up to it (a factor of 1 to
 * WP_SCALE_MAX, published in shared memory; the lags never overstate the
 * wait).  The per-commit values keep the lags' spread, the total is the
 * sampled one.  It also leaves out the WAL sender's and the backend's
 * wake-ups (tens of microseconds); a commit released by
 * a reply whose lag the WAL sender could not compute is split with the
 * previous reply's lag; and a WAL sender has no lag in its first moments
 * and clears its lags when its standby has replayed everything in two
 * replies running, so a commit released then counts a standby wait of 0
 * (the calibration, which sees their wait sampled, scales the other
 * commits' lags up for it).  A commit waits for a standby when
 * synchronous_commit is above local and synchronous_standby_names names
 * one (SyncRepWaitForLSN's test); while no synchronous standby streams,
 * the whole commit but the leader's sleep is standby_wait (commits then
 * wait until one connects).
 *
 * A commit that neither slept in commit_delay nor waited for a standby,
 * the common case, is all wal_flush: it writes nothing here, and readers
 * and the worker take its time from commit timing (the durable commits'
 * time and histogram, less the whole time of the commits counted here).
 *
 * Same rules as commit timing: one padded slot per PGPROC
 * (backend_slots.c), written only by its backend (plain loads and
 * stores), summed by readers; nothing here allocates or can fail.  The
 * one lock: a commit that waited for a
 * synchronous standby copies each WAL sender's pid, state, priority and
 * lag under that sender's spinlock, as walsender_private.h requires and
 * PostgreSQL's own readers (pg_stat_get_wal_senders,
 * SyncRepGetCandidateStandbys) do -- without it, on a weakly ordered CPU,
 * a reused slot's new pid could pair with the previous standby's lag.
 * The spinlock is held for a few loads; nothing in between can fail.
 *
 * IDENTIFICATION
 *	  src/instruments/commit_phases.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/memutils.h"

#include "backend_slots.h"
#include "commit_gates.h"

/* Synchronous standbys considered per commit, at most. */
#define WP_MAX_SYNC_CANDIDATES	32

/* The lags' calibration against the sampled IPC:SyncRep time. */
#define WP_CALIBRATION_SECONDS	5
#define WP_SCALE_MAX			50.0
#define WP_SCALE_ONE			1000	/* the published factor, fixed point */
#define WP_CALIBRATION_MIN_US	10000	/* less lag than this: keep the factor */

/*
 * A slot's counters, one writer (the owner).  Only commits with a
 * commit_delay sleep or a synchronous standby wait are counted here, with
 * their whole time (whole_*) beside their phases; the others are all
 * wal_flush, which readers take from commit timing (its durable commits
 * and their time, less the whole time counted here).
 */
typedef struct WpPhaseCounts
{
	uint64		commits[WP_PHASE_COUNT];	/* published */
	uint64		sum_us[WP_PHASE_COUNT];
	uint64		whole_sum_us;
	uint64		lag_us;			/* the standby lags before calibration */
	uint64		hist[WP_PHASE_COUNT][WP_HIST_BUCKETS];
	uint64		whole_hist[WP_HIST_BUCKETS];
} WpPhaseCounts;

#define PC(field)		WP_SLOT_INDEX(WpPhaseCounts, field)

typedef struct WpPhasesShared
{
	pg_atomic_uint32 lag_scale; /* x WP_SCALE_ONE; written by the worker */
} WpPhasesShared;

static void
phases_init_header(void *header)
{
	pg_atomic_init_u32(&((WpPhasesShared *) header)->lag_scale, WP_SCALE_ONE);
}

WpBackendSlots wp_commit_phases_slots = {
	.name = "walpilot commit phases",
	.init_header = phases_init_header,
	.ntracked = (int) PC(hist), /* the worker wants the sums */
	.npublish = WP_PHASE_COUNT, /* commits[] */
	.ncounters = (int) (sizeof(WpPhaseCounts) / sizeof(uint64)),
	.header_size = sizeof(WpPhasesShared),
	.slot_size = sizeof(WpPhaseCounts),
};

#define phases_shared	((WpPhasesShared *) wp_commit_phases_slots.header)

/* Worker-local: wal_flush time the timeline got ahead of (< 0). */
static int64 wal_flush_owed = 0;

/* Worker-local: the last seconds' sampled standby time and lags. */
static uint64 cal_sampled[WP_CALIBRATION_SECONDS];
static uint64 cal_lag[WP_CALIBRATION_SECONDS];
static int	cal_next = 0;

static const char *const phase_names[WP_PHASE_COUNT] = {
	"commit_delay",
	"wal_flush",
	"standby_wait",
};

const char *
wp_commit_phase_name(int phase)
{
	Assert(phase >= 0 && phase < WP_PHASE_COUNT);
	return phase_names[phase];
}

/*
 * A WAL sender's published lag for a synchronous_commit level; 0: none.
 * Caller holds walsnd->mutex.
 */
static inline int64
sender_lag(volatile WalSnd *walsnd, int level)
{
	int64		lag;

	switch (level)
	{
		case SYNCHRONOUS_COMMIT_REMOTE_WRITE:
			lag = walsnd->writeLag;
			break;
		case SYNCHRONOUS_COMMIT_REMOTE_APPLY:
			lag = walsnd->applyLag;
			break;
		default:
			lag = walsnd->flushLag;
			break;
	}
	return Max(lag, 0);
}

/*
 * standby_lag_us
 *		The lag of the standby a commit at synchronous_commit level waits
 *		for, as the WAL senders last published it; -1 when no synchronous
 *		standby streams.
 *		Mirrors SyncRepGetSyncRecPtr's choice over the WAL senders that
 *		SyncRepGetCandidateStandbys would take, copying each sender's
 *		fields under its spinlock as that function does; no other lock.
 */
static int64
standby_lag_us(int level)
{
	int64		lag[WP_MAX_SYNC_CANDIDATES];
	int			prio[WP_MAX_SYNC_CANDIDATES];
	int			n = 0;
	int			num_sync;
	int			i,
				j;
	int64		result = -1;

	if (SyncRepConfig == NULL || WalSndCtl == NULL)
		return -1;
	num_sync = Max(SyncRepConfig->num_sync, 1);

	for (i = 0; i < max_wal_senders && n < WP_MAX_SYNC_CANDIDATES; i++)
	{
		volatile WalSnd *walsnd = &WalSndCtl->walsnds[i];
		pid_t		pid;
		WalSndState state;
		int			p;
		int64		l;

		/* one consistent copy: loads only, nothing can fail while held */
		SpinLockAcquire(&walsnd->mutex);
		pid = walsnd->pid;
		state = walsnd->state;
		p = walsnd->sync_standby_priority;
		l = sender_lag(walsnd, level);
		SpinLockRelease(&walsnd->mutex);

		if (pid == 0 || (state != WALSNDSTATE_STREAMING &&
						 state != WALSNDSTATE_STOPPING) || p <= 0)
			continue;
		/* insertion: by priority (FIRST) or by lag (ANY), ascending */
		for (j = n; j > 0; j--)
		{
			bool		before = (SyncRepConfig->syncrep_method ==
								  SYNC_REP_PRIORITY) ?
				p < prio[j - 1] : l < lag[j - 1];

			if (!before)
				break;
			lag[j] = lag[j - 1];
			prio[j] = prio[j - 1];
		}
		lag[j] = l;
		prio[j] = p;
		n++;
	}
	if (n == 0)
		return -1;
	/* fewer streaming than num_sync: the commit waits for all of them */
	num_sync = Min(num_sync, n);
	if (SyncRepConfig->syncrep_method == SYNC_REP_PRIORITY)
	{
		for (i = 0; i < num_sync; i++)
			result = Max(result, lag[i]);
	}
	else
		result = lag[num_sync - 1];
	return result;
}

static void
record_phase(pg_atomic_uint64 *s, int phase, uint64 us)
{
	wp_slot_add(&s[PC(hist) + phase * WP_HIST_BUCKETS + wp_hist_bucket(us)], 1);
	wp_slot_add(&s[PC(sum_us) + phase], us);
	/* last, so a reader that sees the count also sees the bucket */
	pg_write_barrier();
	wp_slot_add(&s[PC(commits) + phase], 1);
}

/*
 * wp_commit_phases_commit
 *		Commit-path observer at COMMIT, after commit timing and commit
 *		groups: split a timed durable commit into its phases.  A commit
 *		that neither slept nor waited for a standby is all wal_flush, which
 *		commit timing has counted: nothing to write, and the gate
 *		(commit_gates.h) spares the call.
 */
void
wp_commit_phases_commit(const WpCommitContext *ctx)
{
	pg_atomic_uint64 *s;
	uint64		total;
	uint64		delay;
	uint64		standby = 0;
	bool		waited;

	Assert(ctx->timed && ctx->durable && ctx->end_us != 0);
	waited = wp_commit_may_wait_for_standby();
	if (ctx->slept_us == 0 && !waited)
		return;

	total = ctx->end_us > ctx->start_us ? ctx->end_us - ctx->start_us : 0;
	delay = Min(ctx->slept_us, total);
	s = wp_backend_slot_mine(&wp_commit_phases_slots);
	if (waited)
	{
		int64		lag = standby_lag_us(synchronous_commit);

		if (lag < 0)
			standby = total - delay;
		else
		{
			uint64		raw = Min((uint64) lag, total - delay);
			uint32		scale = pg_atomic_read_u32(&phases_shared->lag_scale);

			wp_slot_add(&s[PC(lag_us)], raw);
			standby = Min(raw * scale / WP_SCALE_ONE, total - delay);
		}
	}

	/* after commit timing's count, which readers read after ours */
	pg_write_barrier();
	wp_slot_add(&s[PC(whole_hist) + wp_hist_bucket(total)], 1);
	wp_slot_add(&s[PC(whole_sum_us)], total);
	if (delay > 0)
		record_phase(s, WP_PHASE_COMMIT_DELAY, delay);
	if (waited)
		record_phase(s, WP_PHASE_STANDBY_WAIT, standby);
	/* last: its count is the count of the whole */
	record_phase(s, WP_PHASE_WAL_FLUSH, total - delay - standby);
}

/*
 * wp_commit_phases_totals
 *		Counters since the last walpilot.reset(), wal_flush with the
 *		commits counted by commit timing alone.  Takes wp_shared->lock
 *		briefly (shared) to copy the baselines; never in the commit path.
 */
void
wp_commit_phases_totals(WpPhaseTotals *out)
{
	WpPhaseCounts *own = palloc(sizeof(WpPhaseCounts));
	WpCommitTotals *t = palloc(sizeof(WpCommitTotals));
	int			p,
				b;

	wp_backend_slots_totals(&wp_commit_phases_slots, (uint64 *) own);
	/* ours first: a commit counted in them is in commit timing's too */
	pg_read_barrier();
	wp_commit_totals(t);
	for (p = 0; p < WP_PHASE_COUNT; p++)
	{
		out->commits[p] = own->commits[p];
		out->sum_us[p] = own->sum_us[p];
		memcpy(out->hist[p], own->hist[p], sizeof(out->hist[p]));
	}
#define WP_ADD_REST(o, all, part) \
	((o) += ((all) > (part)) ? (all) - (part) : 0)
	WP_ADD_REST(out->commits[WP_PHASE_WAL_FLUSH], t->durable,
				own->commits[WP_PHASE_WAL_FLUSH]);
	WP_ADD_REST(out->sum_us[WP_PHASE_WAL_FLUSH], t->sum_us,
				own->whole_sum_us);
	for (b = 0; b < WP_HIST_BUCKETS; b++)
		WP_ADD_REST(out->hist[WP_PHASE_WAL_FLUSH][b], t->hist[b],
					own->whole_hist[b]);
#undef WP_ADD_REST
	pfree(own);
	pfree(t);
}

/*
 * wp_commit_phases_reset
 *		walpilot.reset(): make the current sums the new zero.
 */
void
wp_commit_phases_reset(void)
{
	wp_backend_slots_reset(&wp_commit_phases_slots);
}

/*
 * calibrate
 *		Worker only: scale the lags of the last WP_CALIBRATION_SECONDS to
 *		the time the sampler saw processes wait for a standby in them.
 */
static void
calibrate(uint64 sampled_us, uint64 lag_us)
{
	uint64		sampled = 0;
	uint64		lag = 0;
	double		scale;
	int			i;

	cal_sampled[cal_next] = sampled_us;
	cal_lag[cal_next] = lag_us;
	cal_next = (cal_next + 1) % WP_CALIBRATION_SECONDS;
	for (i = 0; i < WP_CALIBRATION_SECONDS; i++)
	{
		sampled += cal_sampled[i];
		lag += cal_lag[i];
	}
	if (lag < WP_CALIBRATION_MIN_US)
		return;
	scale = (double) sampled / (double) lag;
	scale = Max(1.0, Min(scale, WP_SCALE_MAX));
	pg_atomic_write_u32(&phases_shared->lag_scale,
						(uint32) (scale * WP_SCALE_ONE));
}

/*
 * wp_commit_phases_take
 *		Worker only, once a second: microseconds per phase since the
 *		previous call (zeros at the first), for the timeline, and the
 *		lags' calibration against sampled_standby_us, the second's sampled
 *		time of processes waiting for a standby.  wal_flush adds commit
 *		timing's time of the commits not counted here; time our slots show
 *		before commit timing's scan does is taken off the next second.
 */
void
wp_commit_phases_take(uint64 *sum_us, uint64 sampled_standby_us)
{
	uint64		own[PC(hist)];
	WpCommitSecond cs;
	int64		wal_flush;
	bool		primed;
	int			p;

	memset(sum_us, 0, sizeof(uint64) * WP_PHASE_COUNT);
	primed = wp_backend_slots_delta(&wp_commit_phases_slots, own, NULL, NULL);
	wp_commit_take(WP_COMMIT_READER_PHASES, &cs);
	if (primed)
	{
		for (p = 0; p < WP_PHASE_COUNT; p++)
			sum_us[p] = own[PC(sum_us) + p];
		wal_flush = (int64) cs.sum_us - (int64) own[PC(whole_sum_us)] +
			(int64) sum_us[WP_PHASE_WAL_FLUSH] + wal_flush_owed;
		wal_flush_owed = Min(wal_flush, 0);
		sum_us[WP_PHASE_WAL_FLUSH] = (uint64) Max(wal_flush, 0);
		calibrate(sampled_standby_us, own[PC(lag_us)]);
	}
}
