/*-------------------------------------------------------------------------
 *
 * instruments.h
 *		What walpilot measures: wait samples and the per-second timeline,
 *		commit timing and commit groups, checkpoints, the storage probe and
 *		the flush-time estimate.
 *
 * Instruments read PostgreSQL and walpilot's core, and each other; they
 * never call the settings, a pilot, advice or the hub.  What they need to
 * know from above (is the server a standby, does walpilot publish a
 * commit_delay, does a trial run) the hub hands in with the tick.
 *
 * IDENTIFICATION
 *	  src/instruments/instruments.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_INSTRUMENTS_H
#define WALPILOT_INSTRUMENTS_H

#include "core.h"
#include "backend_slots.h"

/*
 * The commit instruments' per-backend slots (backend_slots.h), which the
 * hub sizes and attaches.
 */
extern WpBackendSlots wp_commit_timing_slots;
extern WpBackendSlots wp_commit_groups_slots;
extern WpBackendSlots wp_commit_phases_slots;

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

/* The region's header; the commit path's gate (commit_gates.h) reads it. */
typedef struct WpGroupsShared
{
	pg_atomic_uint32 last_reason;	/* of the latest commit-led flush */
} WpGroupsShared;

extern void wp_commit_groups_pre_commit(const WpCommitContext *ctx);
extern void wp_commit_groups_commit(WpCommitContext *ctx);
extern void wp_commit_groups_abort(void);
extern void wp_commit_groups_note_wakeup(bool group_complete);
extern void wp_commit_groups_totals(WpGroupTotals *out);
extern void wp_commit_groups_reset(void);
extern void wp_commit_groups_take(uint32 *groups);
extern const char *wp_commit_group_reason_name(int reason);

/*---- commit_phases.c ----*/

/* The phases a durable commit's time is split into, in view order. */
typedef enum WpCommitPhase
{
	WP_PHASE_COMMIT_DELAY,		/* the flush leader's commit_delay sleep */
	WP_PHASE_WAL_FLUSH,			/* insert, WALWriteLock, local write+flush */
	WP_PHASE_STANDBY_WAIT,		/* the synchronous standby's lag */
	WP_PHASE_COUNT
} WpCommitPhase;

/* Cumulative per-phase counters (since start, or since reset). */
typedef struct WpPhaseTotals
{
	uint64		commits[WP_PHASE_COUNT];	/* commits that had the phase */
	uint64		sum_us[WP_PHASE_COUNT];
	uint64		hist[WP_PHASE_COUNT][WP_HIST_BUCKETS];
} WpPhaseTotals;

extern void wp_commit_phases_commit(const WpCommitContext *ctx);
extern void wp_commit_phases_totals(WpPhaseTotals *out);
extern void wp_commit_phases_reset(void);
extern void wp_commit_phases_take(uint64 *sum_us, uint64 sampled_standby_us);
extern const char *wp_commit_phase_name(int phase);

/*---- commit_timing.c ----*/

/* Cumulative commit counters since the server started or walpilot.reset(). */
typedef struct WpCommitTotals
{
	uint64		durable;		/* durable commits timed */
	uint64		async;			/* commits that wrote a record, no flush wait */
	uint64		led_flush;		/* durable commits whose backend did the sync */
	uint64		sum_us;			/* sum of durable commit latencies */
	/* a backend's time from one durable commit's end to its next's start */
	uint64		outside_n;		/* such gaps, each under WP_OUTSIDE_MAX_US */
	uint64		outside_sum_us;
	uint64		outside_sq_us2; /* sum of their squares */
	uint64		hist[WP_HIST_BUCKETS];	/* durable commits per bucket */
} WpCommitTotals;

/* a longer gap is a pause, not a turn of the load's cycle */
#define WP_OUTSIDE_MAX_US		1000000

extern void wp_commit_timing_pre_commit(WpCommitContext *ctx);
extern void wp_commit_timing_commit(WpCommitContext *ctx);
extern void wp_commit_timing_reset(void);
extern void wp_commit_totals(WpCommitTotals *out);
extern void wp_commit_totals_raw(WpCommitTotals *out);
extern bool wp_commit_leader_known(void);


/*
 * Worker side: deltas of the per-backend slots.  A committer of a window
 * is a backend with WP_COMMITTER_MIN durable commits or more in it.
 */
#define WP_COMMITTER_MIN		2

typedef struct WpCommitSecond
{
	uint64		durable;
	uint64		async;
	uint64		led_flush;
	uint64		sum_us;
	uint64		max_us;
	uint64		committers;		/* backends with 2 durable commits or more */
	uint64		outside_n;
	uint64		outside_sum_us;
	uint64		outside_sq_us2;
	uint64		hist[WP_HIST_BUCKETS];
} WpCommitSecond;

/* The readers of the commit slots' deltas (all in the worker). */
typedef enum WpCommitReader
{
	WP_COMMIT_READER_TIMELINE,
	WP_COMMIT_READER_PILOT,
	WP_COMMIT_READER_GROUPS,	/* commit groups' no_delay row */
	WP_COMMIT_READER_PHASES,	/* commit phases' wal_flush row */
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
	uint32		sync_rep_sum;	/* IPC:SyncRep, waiting for a standby */
	uint64		sync_rep_wait_us;	/* ... x the sample interval (Little) */
	uint32		checkpointer_busy;	/* samples with the checkpointer working */
	uint64		commits;		/* durable commits */
	uint64		async_commits;
	uint64		commit_flushes; /* durable commits that led their flush */
	uint32		committers;		/* backends with 2 durable commits or more */
	uint32		outside_mean_us;	/* gaps between a backend's durable */
	uint32		outside_sd_us;	/* commits: mean, standard deviation */
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
	uint64		commit_time_us; /* durable commits' time, all phases */
	uint64		standby_wait_us;	/* ... of it waiting for a standby */
} WpSecond;

extern Size wp_sampler_shmem_size(void);
extern void wp_sampler_shmem_init(void);
extern void wp_sampler_tick(TimestampTz now, bool standby, bool delay_managed);
extern void wp_sampler_reset(void);
extern uint64 wp_sampler_samples_taken(void);
extern uint64 wp_sampler_missed_ticks(void);

/* Running totals of the worker's samples (sampler.c). */
typedef struct WpSamplerTotals
{
	uint64		checkpoint_sync_samples;	/* checkpointer in IO:DataFileSync */
} WpSamplerTotals;

extern void wp_sampler_totals(WpSamplerTotals *out);

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

/*---- checkpoints.c: checkpoint detection and records ----*/

extern Size wp_checkpoints_shmem_size(void);
extern void wp_checkpoints_shmem_init(void);
extern bool wp_checkpoints_is_start_line(const ErrorData *edata);
extern void wp_checkpoints_note_log(ErrorData *edata);
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

/* A remembered checkpoint as readers show it. */
#define WP_CKPT_HISTORY			64	/* checkpoints remembered */
typedef struct WpCheckpointRow
{
	TimestampTz started_at;
	TimestampTz finished_at;	/* 0 while running */
	char		reason[20];		/* "" when unknown */
	int64		buffers_written;	/* -1 unknown (or running) */
	double		write_ms;		/* < 0 unknown (or running) */
	double		sync_ms;		/* < 0 unknown (or running) */
	int64		wal_bytes;		/* redo distance from the previous; -1 unknown */
	int32		flush_after_kb; /* checkpoint_flush_after in force */
	bool		have_commits;	/* commits, p50, p99 during it known */
	uint64		commits;
	double		commit_p50_us;
	double		commit_p99_us;
	bool		have_outside;	/* p99 outside checkpoints known */
	double		commit_p99_us_outside;
	bool		have_stall;
	int32		stall_seconds;
} WpCheckpointRow;

extern int	wp_checkpoints_copy(WpCheckpointRow *out);

/*---- checkpoint_analysis.c: what the checkpoints say about max_wal_size ----*/
/* checkpoint analysis looks at checkpoints started this recently */
#define WP_CKPT_WINDOW_S 3600
#define WP_CKPT_MAX_RECORDS		64

/* a checkpoint record as the rules read it */
typedef struct WpCheckpointRecord
{
	double		started;		/* epoch seconds */
	double		finished;		/* 0 while running */
	char		reason[24];
	double		wal_bytes;		/* < 0: unknown */
	double		write_ms;
	double		sync_ms;
	int			stall_seconds;	/* < 0: unknown */
} WpCheckpointRecord;

/* what the max_wal_size rule found */
typedef struct WpWalSizeAnalysis
{
	int64		recommended_mb;
	int			wal_checkpoints;
	int			timed_checkpoints;
	double		trigger_bytes;
	double		mean_distance_bytes;
	double		wal_bytes_per_s;
	double		seconds_between;
	double		confidence;
} WpWalSizeAnalysis;

extern bool wp_ckpt_max_wal_size(const WpCheckpointRecord *ck, int nck,
								   WpWalSizeAnalysis *out);
extern void wp_ckpt_max_wal_size_evidence(const WpWalSizeAnalysis *a,
											WpEvidence *e);

/*---- probe_io.c: the storage probe; probe_sleep.c: the sleep probe ----*/
#define WP_PROBE_METHODS		5	/* every wal_sync_method PostgreSQL knows */
#define WP_PROBE_ROWS			(WP_PROBE_METHODS * 2)
#define WP_PROBE_NOTE_LEN		160
#define WP_SLEEP_DELAYS			10

/* One result row: a method at 1 or 2 writes per sync. */
typedef struct WpProbeRow
{
	char		method[24];
	int32		writes;			/* 0: method not measured */
	bool		measured;
	int64		ops;
	double		mean_us;
	double		p50_us;
	double		p99_us;
	double		ops_per_sec;
	char		note[WP_PROBE_NOTE_LEN];
} WpProbeRow;

/* Requested vs actual pg_usleep for one delay. */
typedef struct WpSleepRow
{
	int32		requested_us;
	int32		samples;
	double		mean_over_us;
	double		p50_over_us;
	double		p99_over_us;
} WpSleepRow;

/* Every probe result (the probe keeps them in this form, under the lock). */
typedef struct WpProbeSnapshot
{
	char		wal_dir[MAXPGPATH];
	TimestampTz probe_at;		/* last walpilot.probe(), 0 = never */
	int			probe_nrows;
	WpProbeRow	probe_rows[WP_PROBE_ROWS];
	TimestampTz periodic_at;	/* last periodic probe, 0 = never */
	WpProbeRow	periodic_row;
	TimestampTz sleep_at;		/* last sleep probe, 0 = never */
	WpSleepRow	sleep_rows[WP_SLEEP_DELAYS];
} WpProbeSnapshot;

extern Size wp_probe_shmem_size(void);
extern void wp_probe_shmem_init(void);
extern void wp_probe_worker_start(void);
extern void wp_probe_worker_tick(TimestampTz now, bool pilot_in_trial);
extern bool wp_probe_sleep_overshoot_us(int requested_us, double *p50_us,
										double *p99_us);
extern bool wp_probe_confirm_flush_us(double *p50_us);
extern int	wp_probe_method_index(const char *name);
extern const char *wp_probe_method_name(int method);
extern void wp_probe_resolve_wal_dir(char *out);
extern int	wp_probe_run(double seconds, const bool *selected, WpProbeRow *rows,
						 char *wal_dir);
extern bool wp_probe_newest_p50(const char *method, double *p50_us,
								TimestampTz *at);
extern void wp_probe_snapshot(WpProbeSnapshot *out);

/*---- flush_estimate.c: what one WAL flush takes ----*/
typedef struct WpFlushEstimate
{
	TimestampTz at;				/* 0 = none yet */
	double		us;
	uint64		flushes;		/* flushes it is based on; 0 for a probe */
	char		source[32];
	char		note[WP_PROBE_NOTE_LEN];
} WpFlushEstimate;

extern Size wp_flush_estimate_shmem_size(void);
extern void wp_flush_estimate_shmem_init(void);
extern void wp_flush_estimate_tick(TimestampTz now);
extern bool wp_flush_estimate_us(double *us, char *source, int source_len);
extern void wp_flush_estimate_snapshot(WpFlushEstimate *out);

#endif							/* WALPILOT_INSTRUMENTS_H */
