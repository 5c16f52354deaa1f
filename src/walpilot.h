/*-------------------------------------------------------------------------
 *
 * walpilot.h
 *		Shared types, GUC variables and prototypes of walpilot.
 *
 * One header for the whole module (as pg_wait_sampling has): every file
 * includes it, and its prototypes are grouped by the file that defines
 * them.  Only shmem.c knows how the shared segment is laid out; other
 * files reach their part through the pointers declared here.
 *
 * IDENTIFICATION
 *	  src/walpilot.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_H
#define WALPILOT_H

#include "postgres.h"

#include "port/atomics.h"
#include "storage/lwlock.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "compat.h"

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

/*---- walpilot.c: GUC variables ----*/
extern int	wp_mode;
extern int	wp_sample_interval_ms;
extern int	wp_history_size_s;

extern const char *wp_mode_name(int mode);

/*---- shmem.c ----*/
extern WpSharedState *wp_shared;

extern void wp_shmem_install_hooks(void);
extern void wp_require_shared_state(void);
extern void wp_reset_all(void);

/*---- settings.c ----*/

/* Session knobs walpilot may manage, applied by every backend itself. */
typedef enum WpKnob
{
	WP_KNOB_COMMIT_DELAY,
	WP_KNOB_COMMIT_SIBLINGS,
	WP_NUM_KNOBS
} WpKnob;

/* One row of walpilot.decisions. */
#define WP_DECISION_TEXT		256	/* reason, outcome */
typedef struct WpDecision
{
	uint64		id;
	TimestampTz decided_at;
	char		setting[32];
	char		old_value[32];
	char		new_value[32];
	char		reason[WP_DECISION_TEXT];
	char		evidence[1024]; /* a JSON object's text */
	char		outcome[WP_DECISION_TEXT];
} WpDecision;

extern Size wp_settings_shmem_size(void);
extern void wp_settings_shmem_init(void);
extern const char *wp_settings_knob_name(WpKnob knob);
extern int	wp_settings_boot_value(WpKnob knob);
extern int	wp_settings_current(WpKnob knob);
extern GucSource wp_settings_source(WpKnob knob);
extern WP_VISIBLE void wp_settings_publish(bool managed, const int32 *targets);
extern bool wp_settings_target(bool *managed, int32 *targets,
							   uint32 *generation);
extern bool wp_settings_apply_in_backend(void);
extern bool wp_settings_session_owns_pair(void);
extern void wp_settings_session_view(WpKnob knob, int *effective,
									 const char **owner);
extern const char *wp_settings_pinned_by(void);
extern void wp_settings_extension_dropped(const char *database);
extern WP_VISIBLE bool wp_settings_last_drop(TimestampTz *at,
											 char *database, size_t len);
extern void wp_settings_note_configured(void);
extern bool wp_settings_delay_managed(void);
extern int	wp_settings_configured(WpKnob knob, bool *pinned);
extern WP_VISIBLE uint64 wp_decision_log(const char *setting,
										 const char *old_value,
										 const char *new_value,
										 const char *reason,
										 const char *evidence);
extern void wp_decision_set_outcome(uint64 id, const char *outcome);
extern int	wp_decisions_copy(WpDecision **out);

/*---- commit_path.c: the transaction callback and its observers ----*/

/*
 * What one top-level commit is, handed to every commit-path observer.
 * Filled at PRE_COMMIT (has_xid, durable); commit timing adds start, end
 * and led_flush at COMMIT, before the observers after it run.
 */
typedef struct WpCommitContext
{
	bool		has_xid;		/* the transaction has a top-level xid */
	bool		durable;		/* it waits for its commit record's flush */
	uint64		start_us;		/* monotonic clock (instr_time), us: PRE_COMMIT */
	uint64		end_us;			/* ... and just after the flush; 0: untimed */
	bool		led_flush;		/* this backend did the WAL sync */
} WpCommitContext;

extern void wp_commit_path_register(void);
extern void wp_commit_path_note_extension_drop(void);

/*---- commit_groups.c: why each commit-led flush closed its group ----*/
typedef enum WpGroupReason
{
	WP_GROUP_COUNT_REACHED,		/* the gather's wake-up: group complete */
	WP_GROUP_DELAY_EXPIRED,		/* slept the whole commit_delay */
	WP_GROUP_WOKEN_EARLY,		/* sleep cut short otherwise */
	WP_GROUP_NO_DELAY,			/* flushed without sleeping */
	WP_GROUP_NUM_REASONS
} WpGroupReason;

/* Cumulative per-reason counters (since start, or since reset). */
typedef struct WpGroupTotals
{
	uint64		groups[WP_GROUP_NUM_REASONS];	/* flushes led */
	uint64		commits[WP_GROUP_NUM_REASONS];	/* leaders + followers */
	uint64		wait_us[WP_GROUP_NUM_REASONS];	/* leaders' sleep */
} WpGroupTotals;

extern Size wp_commit_groups_shmem_size(void);
extern void wp_commit_groups_shmem_init(void);
extern void wp_commit_groups_pre_commit(const WpCommitContext *ctx);
extern void wp_commit_groups_commit(const WpCommitContext *ctx);
extern void wp_commit_groups_abort(void);
extern void wp_commit_groups_note_wakeup(bool group_complete);
extern void wp_commit_groups_totals(WpGroupTotals *out);
extern void wp_commit_groups_reset(void);
extern void wp_commit_groups_take(uint32 *groups);
extern const char *wp_commit_group_reason_name(int reason);

/*---- gather.c: the pilot's backend side ----*/
extern Size wp_gather_shmem_size(void);
extern void wp_gather_shmem_init(void);
extern void wp_gather_pre_commit(const WpCommitContext *ctx);
extern void wp_gather_end(const WpCommitContext *ctx);
extern void wp_gather_set_enabled(bool on);
extern uint32 wp_gather_group(void);
extern void wp_gather_update_group(double commit_p50_us);
extern WP_VISIBLE void wp_gather_wake_backend(int slot, int pid,
											  uint64 arrival_us);
extern WP_VISIBLE void wp_gather_wakeup_counts(uint64 *sent,
											   uint64 *misdirected);

/*---- pilot_commit_delay.c: the pilot's controller ----*/
extern bool wp_tune_commit_delay;
extern int	wp_commit_delay_max_us;
extern int	wp_max_latency_regression_pct;
extern int	wp_tune_interval_s;

extern Size wp_pilot_shmem_size(void);
extern void wp_pilot_shmem_init(void);
extern void wp_pilot_tick(TimestampTz now);
extern void wp_pilot_stop(const char *why);
extern void wp_pilot_worker_start(void);
extern void wp_pilot_request_revert(void);
extern void wp_pilot_describe(char *st, char *cur, char *cand, size_t len);

/*---- settings_checkpointer.c: checkpoint_flush_after in the checkpointer ----*/
extern Size wp_ckpt_setting_shmem_size(void);
extern void wp_ckpt_setting_shmem_init(void);
extern void wp_ckpt_setting_find_guc(void);
extern void wp_ckpt_setting_at_checkpoint_start(void);
extern void wp_ckpt_setting_publish(int kb);
extern void wp_ckpt_setting_publish_configured(void);
extern int	wp_ckpt_setting_boot_kb(void);
extern bool wp_ckpt_setting_pinned(char *where, size_t len, int *value_kb);
extern bool wp_ckpt_setting_walpilot_in_force(void);
struct ReturnSetInfo;
extern void wp_ckpt_setting_row(struct ReturnSetInfo *rsinfo);
extern char *wp_format_kb(int64 kb);

/*---- settings_alter_system.c: max_wal_size through ALTER SYSTEM ----*/
#define WP_AS_VALUE_LEN		32
#define WP_AS_NOTE_LEN		256
extern Size wp_alter_system_shmem_size(void);
extern void wp_alter_system_shmem_init(void);
extern void wp_alter_system_worker_start(void);
extern bool wp_alter_system_set(const char *name, const char *value,
								const char *floor, char *why, size_t len);
extern bool wp_alter_system_reset(const char *name, char *why, size_t len);
extern bool wp_alter_system_line_ours(const char *name, char *why, size_t len);
extern bool wp_alter_system_reload_pending(void);
extern void wp_alter_system_note(const char *note);
extern bool wp_alter_system_state(char *value, char *floor, char *note);
extern void wp_alter_system_request_revert(void);
extern uint64 wp_alter_system_revert_generation(void);
extern void wp_alter_system_row(struct ReturnSetInfo *rsinfo);

/*---- pilot_flush.c: the checkpoint_flush_after pilot's knob table ----*/
extern bool wp_tune_checkpoint_flush;
extern int	wp_checkpoint_flush_min_kb;
extern int	wp_checkpoint_flush_max_kb;

/*---- pilot_wal_size.c: max_wal_size applied from its recommendation ----*/
extern bool wp_tune_max_wal_size;
extern int	wp_max_wal_size_max_mb;

extern void wp_wal_size_pilot_tick(TimestampTz now);
extern void wp_wal_size_pilot_stop(const char *why);

/*---- pilot.c: the generic pilot controller (pilot.h has its table) ----*/
extern bool wp_pilot_trial_running(void);
extern void wp_pilot_request_hold_off(const char *by, TimestampTz until);
extern void wp_pilot_reason(int pilot, char *buf, size_t len);

/*---- probe.c: storage probe, sleep probe and flush-latency estimate ----*/
extern int	wp_probe_interval_s;

extern Size wp_probe_shmem_size(void);
extern void wp_probe_shmem_init(void);
extern void wp_probe_worker_start(void);
extern void wp_probe_worker_tick(TimestampTz now);
extern bool wp_probe_sleep_overshoot_us(int requested_us, double *p50_us,
										double *p99_us);
extern bool wp_probe_confirm_flush_us(double *p50_us);
extern bool wp_probe_flush_estimate_us(double *us, char *source,
									   int source_len);

/*---- checkpoints.c: checkpoint detection and records ----*/
extern Size wp_checkpoints_shmem_size(void);
extern void wp_checkpoints_shmem_init(void);
extern void wp_checkpoints_install_hooks(void);
extern void wp_checkpoints_worker_tick(TimestampTz now);

/* A finished checkpoint whose commit columns are filled in. */
typedef struct WpCheckpointSummary
{
	uint64		seq;
	TimestampTz started_at;
	TimestampTz finished_at;
	char		reason[20];
	int32		flush_after_kb; /* in force when it started */
	int64		wal_bytes;		/* redo distance from the previous; -1 unknown */
	int64		buffers_written;	/* -1 unknown */
	double		write_ms;		/* < 0 unknown */
	bool		have_window;
	bool		have_stall;
	uint64		commits;
	double		commit_p99_us;
	double		commit_p99_us_outside;	/* < 0 unknown */
	int32		stall_seconds;
} WpCheckpointSummary;

extern bool wp_checkpoint_next_done(uint64 after_seq,
									WpCheckpointSummary *out);
extern bool wp_checkpoint_next_ended(uint64 after_seq, char *reason,
									 size_t len, int32 *flush_after_kb);

/*
 * Per-second commit data, owned by the commit-timing/timeline instrument.
 *
 * The checkpoint records (commits and commit latency during a checkpoint,
 * stall seconds) read the per-second timeline only through these two
 * functions.  Each returns
 * false (or -1) when the data is unknown: not collected, not yet
 * complete, or already rotated out of the history; the caller then shows
 * NULL.  Both may be called from the worker only, outside any lock of
 * walpilot's.
 *
 * wp_commit_window: durable commits whose commit finished in [from, to),
 * and the p50/p99 of their commit latency in microseconds.
 *
 * wp_commit_seconds_between: durable commits per whole second for the
 * seconds from "from" (rounded down) up to "to" (exclusive), one count per
 * second into counts[0 .. max_seconds); returns the number of seconds
 * filled, or -1 when unknown.
 */
typedef struct WpCommitWindow
{
	uint64		commits;
	double		p50_us;
	double		p99_us;
} WpCommitWindow;

extern bool wp_commit_window(TimestampTz from, TimestampTz to,
							 WpCommitWindow *out);
extern int	wp_commit_seconds_between(TimestampTz from, TimestampTz to,
									  uint64 *counts, int max_seconds);

/*---- commit_timing.c ----*/

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

/* Cumulative commit counters since the server started or walpilot.reset(). */
typedef struct WpCommitTotals
{
	uint64		durable;		/* durable commits timed */
	uint64		async;			/* commits that wrote a record, no flush wait */
	uint64		led_flush;		/* durable commits whose backend did the sync */
	uint64		sum_us;			/* sum of durable commit latencies */
	uint64		hist[WP_HIST_BUCKETS];	/* durable commits per bucket */
} WpCommitTotals;

extern Size wp_commit_timing_shmem_size(void);
extern void wp_commit_timing_shmem_init(void);
extern void wp_commit_timing_pre_commit(WpCommitContext *ctx);
extern void wp_commit_timing_commit(WpCommitContext *ctx);
extern void wp_commit_timing_abort(WpCommitContext *ctx);
extern void wp_commit_timing_reset(void);
extern void wp_commit_totals(WpCommitTotals *out);
extern void wp_commit_totals_raw(WpCommitTotals *out);
extern bool wp_commit_leader_known(void);
/* histogram.c: the histogram's shape, pure functions */
extern int	wp_hist_bucket(uint64 us);
extern uint64 wp_hist_lower_us(int bucket);
extern int64 wp_hist_upper_us(int bucket);
extern double wp_hist_percentile(const uint64 *hist, uint64 total,
								 double fraction, uint64 max_us);

/* Worker side: deltas of the per-backend slots. */
typedef struct WpCommitSecond
{
	uint64		durable;
	uint64		async;
	uint64		led_flush;
	uint64		max_us;
	uint64		hist[WP_HIST_BUCKETS];
} WpCommitSecond;

/* The readers of the commit slots' deltas (all in the worker). */
typedef enum WpCommitReader
{
	WP_COMMIT_READER_TIMELINE,
	WP_COMMIT_READER_PILOT,
	WP_COMMIT_NUM_READERS
} WpCommitReader;

extern void wp_commit_take(WpCommitReader reader, WpCommitSecond *out);

/*---- sampler.c / timeline.c ----*/

/*
 * One second of the timeline, as the worker closes it.  Waiter fields are
 * sums over the second's samples (divide by samples for an average);
 * commit and WAL fields are counts over the second.  This is also what
 * the pilot reads, through wp_timeline_get_second()/wp_timeline_last().
 */
typedef struct WpSecond
{
	TimestampTz ts;				/* start of the second */
	int32		samples;		/* samples taken in it (0: worker stalled) */
	int32		missed_ticks;	/* sample ticks missed in it */
	uint32		active_sum;		/* client backends not in an idle wait */
	uint32		cpu_sum;		/* ... of which on CPU (no wait event) */
	uint32		wal_write_lock_sum; /* LWLock:WALWrite */
	uint32		wal_insert_lock_sum;	/* LWLock:WALInsert */
	uint32		wal_sync_sum;	/* IO:WALSync */
	uint32		wal_write_sum;	/* IO:WALWrite */
	uint32		commit_delay_sum;	/* inferred commit_delay sleepers */
	uint32		checkpointer_busy;	/* samples with the checkpointer working */
	uint64		commits;		/* durable commits */
	uint64		async_commits;
	uint64		commit_flushes; /* durable commits that led their flush */
	uint32		commit_p50_us;
	uint32		commit_p95_us;
	uint32		commit_p99_us;
	uint32		commit_max_us;
	uint64		wal_bytes;		/* insert position advance (own, exact) */
	uint64		wal_records;	/* pg_stat_wal deltas (lag about 1 s) */
	uint64		wal_fpi;
	uint64		wal_buffers_full;
	uint64		wal_writes;
	uint64		wal_syncs;
	uint64		wal_write_time_us;
	uint64		wal_sync_time_us;
	bool		checkpoint_started; /* redo pointer moved in this second */
	uint32		groups[WP_GROUP_NUM_REASONS];	/* commit-led flushes by
												 * why their group closed */
} WpSecond;

extern Size wp_sampler_shmem_size(void);
extern void wp_sampler_shmem_init(void);
extern void wp_sampler_tick(TimestampTz now);
extern void wp_sampler_reset(void);
extern uint64 wp_sampler_samples_taken(void);
extern uint64 wp_sampler_missed_ticks(void);

extern Size wp_timeline_shmem_size(void);
extern void wp_timeline_shmem_init(void);
extern void wp_timeline_append(const WpSecond *sec);
extern void wp_timeline_reset(void);
extern bool wp_timeline_get_second(int64 age_s, WpSecond *out);
extern int	wp_timeline_last(int n, WpSecond *out);

/* Wait-profile snapshot for SQL (sampler.c). */
typedef struct WpProfileRow
{
	char		backend_type[NAMEDATALEN];
	uint32		wait_event_info;
	uint64		samples;
	uint64		time_us;
} WpProfileRow;

extern int	wp_sampler_profile_snapshot(WpProfileRow **rows);
extern void wp_wait_event_names(uint32 wei, const char **type,
								const char **event);
extern bool wp_wait_event_is_idle(uint32 wei);

/*---- worker.c ----*/
extern void wp_worker_register(void);
extern bool wp_worker_standby(void);
extern PGDLLEXPORT void walpilot_worker_main(Datum main_arg);

#endif							/* WALPILOT_H */
