/*-------------------------------------------------------------------------
 *
 * core.h
 *		The bottom layer: shared types, every walpilot.* setting, the core
 *		shared state, the histogram's shape and the version differences.
 *
 * Every other layer includes this header (through its own).  It knows
 * nothing above it: PostgreSQL's headers and compat.h only.
 *
 * IDENTIFICATION
 *	  src/core/core.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_CORE_H
#define WALPILOT_CORE_H

#include "postgres.h"

#include "port/atomics.h"
#include "port/pg_bitutils.h"
#include "storage/lwlock.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "evidence.h"

#define WALPILOT_VERSION		"0.2"
#define WP_WORKER_TYPE			"walpilot worker"
#define WP_TRANCHE_NAME			"walpilot"

/* walpilot.mode */
typedef enum WpMode
{
	WP_MODE_OFF,
	WP_MODE_OBSERVE,
	WP_MODE_TUNE
} WpMode;

/*
 * The core shared state.  Locking rules are in shmem.c's header comment;
 * each field says what protects it.
 */
typedef struct WpSharedState
{
	LWLock	   *lock;			/* the walpilot tranche's only lock */

	/* written by the worker, read by anyone */
	pg_atomic_uint32 worker_pid;	/* 0 when no worker runs */
	pg_atomic_uint64 ticks;		/* worker loop passes since start */
	pg_atomic_uint32 worker_mode;	/* WpMode the worker last applied */
	pg_atomic_uint32 worker_sample_interval_ms;

	/* protected by lock */
	TimestampTz worker_started_at;	/* 0 when no worker runs */
	TimestampTz stats_reset_at; /* last walpilot.reset() or startup */
	uint64		worker_starts;	/* worker starts since server start */
} WpSharedState;

/*---- gucs.c: every walpilot.* setting ----*/
extern int	wp_mode;
extern int	wp_sample_interval_ms;
extern int	wp_history_size_s;
extern int	wp_max_latency_regression_pct;
extern int	wp_tune_interval_s;
extern bool wp_tune_commit_delay;
extern int	wp_commit_delay_max_us;
extern bool wp_tune_checkpoint_flush;
extern int	wp_checkpoint_flush_min_kb;
extern int	wp_checkpoint_flush_max_kb;
extern bool wp_tune_max_wal_size;
extern int	wp_max_wal_size_max_mb;
extern int	wp_probe_interval_s;

extern void wp_define_gucs(void);
extern const char *wp_mode_name(int mode);

/*---- shmem.c: the core region ----*/
extern WpSharedState *wp_shared;

extern Size wp_core_shmem_size(void);
extern void wp_core_shmem_init(void);
extern void wp_require_shared_state(void);

/*
 * What one top-level commit is, handed to every commit-path observer.
 * Filled at PRE_COMMIT (has_xid, durable, timed, may_sleep; commit timing
 * adds start_us); commit timing adds end and led_flush at COMMIT, and
 * commit groups the leader's sleep, before the observers after them run.
 */
typedef struct WpCommitContext
{
	bool		has_xid;		/* the transaction has a top-level xid */
	bool		durable;		/* it waits for its commit record's flush */
	bool		timed;			/* has an xid, walpilot is on, and the
								 * instruments' slots are there */
	bool		may_sleep;		/* durable and commit_delay > 0 after the
								 * gather: XLogFlush may sleep */
	bool		led_flush;		/* this backend did the WAL sync */
	uint64		start_us;		/* monotonic clock (instr_time), us: PRE_COMMIT */
	uint64		end_us;			/* ... and just after the flush; 0: untimed */
	uint64		slept_us;		/* COMMIT: the leader's commit_delay sleep */
} WpCommitContext;

/*---- histogram.c ----*/

/*
 * Durable-commit latency histogram: log buckets, 4 per power of two above
 * 8 us, exact 1-us buckets below.  Bucket 0 holds commits under 1 us, the
 * last bucket everything from 2^24 us (16.8 s) up.
 */
#define WP_HIST_EXACT			8	/* buckets [0,1) .. [7,8) us */
#define WP_HIST_SUB				4	/* sub-buckets per power of two */
#define WP_HIST_MAX_LOG2		24	/* overflow bucket starts at 2^24 us */
#define WP_HIST_BUCKETS \
	(WP_HIST_EXACT + (WP_HIST_MAX_LOG2 - 3) * WP_HIST_SUB + 1)

/*
 * wp_hist_bucket
 *		Histogram bucket of a latency in microseconds.  Inline: every
 *		durable commit files its latency (commit timing, commit phases).
 */
static inline int
wp_hist_bucket(uint64 us)
{
	int			e;

	if (us < WP_HIST_EXACT)
		return (int) us;
	e = pg_leftmost_one_pos64(us);
	if (e >= WP_HIST_MAX_LOG2)
		return WP_HIST_BUCKETS - 1;
	return WP_HIST_EXACT + (e - 3) * WP_HIST_SUB +
		(int) ((us >> (e - 2)) & (WP_HIST_SUB - 1));
}

/* histogram.c: the histogram's shape, pure functions */
extern uint64 wp_hist_lower_us(int bucket);
extern int64 wp_hist_upper_us(int bucket);
extern double wp_hist_percentile(const uint64 *hist, uint64 total,
								 double fraction, uint64 max_us);

/*---- small numeric helpers ----*/

/* x limited to [0, 1]; NaN gives 0 */
static inline double
wp_clamp01(double x)
{
	if (!(x > 0))
		return 0;
	return x > 1 ? 1 : x;
}

/* smallest power of two >= x (x >= 1) */
static inline int64
wp_pow2_at_least(double x)
{
	int64		p = 1;

	while ((double) p < x && p < (INT64CONST(1) << 40))
		p <<= 1;
	return p;
}

#endif							/* WALPILOT_CORE_H */
