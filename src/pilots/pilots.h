/*-------------------------------------------------------------------------
 *
 * pilots.h
 *		The pilots: trials, the generic controller, the decision log and
 *		one knob table per pilot.
 *
 * Pilots read the instruments, ask the settings to apply a value and
 * write the decision row themselves; they never call advice or the hub.
 * The controller's own table is in pilot.h, the trial engine in trial.h.
 *
 * IDENTIFICATION
 *	  src/pilots/pilots.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_PILOTS_H
#define WALPILOT_PILOTS_H

#include "settings.h"

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

/*---- decision_log.c: walpilot.decisions ----*/
extern Size wp_decision_log_shmem_size(void);
extern void wp_decision_log_shmem_init(void);
extern WP_VISIBLE uint64 wp_decision_log(const char *setting,
										 const char *old_value,
										 const char *new_value,
										 const char *reason,
										 const char *evidence);
extern void wp_decision_set_outcome(uint64 id, const char *outcome);
extern int	wp_decisions_copy(WpDecision **out);

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

/*---- the generic controller ----*/
/* pilot.c: the tick, stop and worker start, whether a trial runs;
 * pilot_status.c: its region, status and rows, hold-off requests */
extern Size wp_pilot_shmem_size(void);
extern void wp_pilot_shmem_init(void);
extern void wp_pilot_tick(TimestampTz now, bool standby);
extern void wp_pilot_stop(const char *why);
extern void wp_pilot_worker_start(void);
extern void wp_pilot_request_revert(void);
extern void wp_pilot_describe(char *st, char *cur, char *cand, size_t len);
extern bool wp_pilot_trial_running(void);
extern void wp_pilot_request_hold_off(const char *by, TimestampTz until);
extern void wp_pilot_reason(int pilot, char *buf, size_t len);

/*
 * A pilot's model graded by its trials since the worker started: each
 * search's first trial (the model's candidate against the configured
 * value) with the ratio the model predicted and the ratio it measured.
 */
typedef struct WpModelGrade
{
	bool		has_model;
	int			trials;			/* graded trials */
	double		last_predicted; /* the last graded trial's */
	double		last_measured;
	double		error_sum;		/* of |predicted / measured - 1| */
} WpModelGrade;

/* walpilot.pilots: one row per pilot */
#define WP_PILOT_ROWS_MAX		4
typedef struct WpPilotRow
{
	char		name[32];
	char		state[16];
	char		current[64];
	char		candidate[64];	/* "" when none */
	char		reason[256];	/* "" when none */
	WpModelGrade grade;
} WpPilotRow;

extern int	wp_pilot_rows(WpPilotRow *out);

/*---- pilot_wal_size.c: max_wal_size applied from its recommendation ----*/
extern void wp_wal_size_pilot_worker_start(void);
extern void wp_wal_size_pilot_tick(TimestampTz now);
extern void wp_wal_size_pilot_stop(const char *why);

#endif							/* WALPILOT_PILOTS_H */
