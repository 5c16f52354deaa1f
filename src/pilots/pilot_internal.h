/*-------------------------------------------------------------------------
 *
 * pilot_internal.h
 *		What the files of the generic pilot controller share: each pilot's
 *		worker-local state and the functions one of them calls in another.
 *		Only those files include it; the rest of walpilot sees pilot.h and
 *		pilots.h.
 *
 * The controller is in four files:
 *   pilot.c           the state machine: idle / trial / hold, one closed
 *                     window at a time, stop conditions, the worker's tick
 *   pilot_search.c    the search and its trials: candidates, trial rows,
 *                     verdicts and outcomes, candidates that lost
 *   pilot_schedule.c  when: hold-offs, the re-check, shifts of the load,
 *                     trials that never overlap
 *   pilot_status.c    the shared region: the state walpilot.status and
 *                     walpilot.pilots show, hold-offs requested from SQL
 *
 * IDENTIFICATION
 *	  src/pilots/pilot_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_PILOT_INTERNAL_H
#define WALPILOT_PILOT_INTERNAL_H

#include "utils/timestamp.h"

#include "pilot.h"

/* the controller's defaults; a knob's table may set its own */
#define WP_ENGAGE_WINDOWS		3
#define WP_SHIFT_RATIO			1.35
#define WP_CONTEXT_SHIFT		1.5
#define WP_SHIFT_WINDOWS		5
#define WP_IDLE_FALLBACK		10
#define WP_WAIT_MEMORY_S		30	/* a pilot that waited counts as waiting */
#define WP_PILOT_CONTEXT_MOVE	0.25

/* the knobs (wp_pilot_defs in pilot.c, in the order their controllers run) */
#define WP_NUM_PILOTS	2
extern const WpPilotDef *const wp_pilot_defs[WP_NUM_PILOTS];

typedef enum WpPilotState
{
	WP_PS_IDLE,
	WP_PS_TRIAL,
	WP_PS_HOLD
} WpPilotState;

typedef enum WpTrialKind
{
	WP_TK_CANDIDATE,			/* a search step against the current choice */
	WP_TK_SEARCH_HELD,			/* a search's first trial: the held choice */
	WP_TK_RECHECK				/* tune_interval: the held choice again */
} WpTrialKind;

/* worker-local state of one pilot */
typedef struct WpPilotRun
{
	const WpPilotDef *def;
	WpPilotState state;
	bool		managing;		/* a value other than the configured one is
								 * published */
	WpPilotValue configured;
	WpPilotValue current;		/* the choice between trial windows */
	WpPilotValue in_force;		/* what was last applied */
	WpPilotValue candidate;
	int			current_step;	/* search step the current choice won as
								 * (-1: the configured value) */
	bool		stopped;		/* not tuning (mode, pin, ...): reason set */
	bool		broken;			/* a value could not be applied: stopped
								 * until the worker restarts */
	bool		broken_said;
	bool		free_to_tune;	/* configured() at the last window */
	char		pin_why[WP_PILOT_REASON];
	bool		waiting;		/* a trial is due, another pilot's runs */
	bool		waited;			/* ... so it was at the window before */
	bool		waiting_search; /* ... and that trial starts a search */
	TimestampTz waited_at;		/* its last wait (0: none since its trial) */
	bool		waited_search;	/* ... was for a search */
	bool		search_paused;	/* mid-search, a waiting pilot goes first */

	int			engage_streak;
	int			idle_streak;
	int			shift_streak;
	double		level_metric;
	double		level_p50;
	bool		hold_ref_set;	/* hold_ref holds the hold's first contexts */
	double		hold_ref[WP_PILOT_CONTEXTS];
	char		shift_why[128]; /* what moved, for the new search's row */
	char		confirm_why[192];	/* what confirmed this search */
	TimestampTz hold_since;		/* HOLD: when the re-check clock started */
	int			recheck_s;		/* first_recheck_s knobs: the next re-check's
								 * delay (0: walpilot.tune_interval) */
	TimestampTz hold_from;		/* a hold-off began (0: none) ... */
	TimestampTz hold_fixed;		/* ... until this, or (0) tune_interval */
	char		hold_why[160];

	/* the search */
	WpPilotLoad load;			/* at engage time */
	int			step;			/* next step */
	int			trials_in_search;
	double		configured_p99_us;	/* this search's, 0 = not yet */
	int			skip_step;		/* tested as the held choice: not again */
	bool		tried[WP_PILOT_MAX_STEPS];	/* judged in this search */
	int			direction;		/* ladder: +1/-1 after a step that paid */
	bool		lost[WP_PILOT_MAX_STEPS];
	TimestampTz lost_at[WP_PILOT_MAX_STEPS];
	double		lost_context[WP_PILOT_MAX_STEPS][WP_PILOT_CONTEXTS];

	/* the trial */
	WpTrial		trial;
	WpTrialKind kind;
	int			trial_step;
	double		trial_predicted;	/* the model's ratio for it, 0: none */
	uint64		trial_decision;
	bool		trial_open;		/* trial_decision has no outcome yet */
	int			skipped;		/* unusable windows in this trial */
	bool		next_arm_early; /* window_ended seen for the open window */
	bool		have_last_current;
	WpPilotWindow last_current; /* the trial's last current-arm window */

	char		reason[WP_PILOT_REASON];
	WpModelGrade grade;
} WpPilotRun;

/* pilot.c: every pilot's state, worker only */
extern WpPilotRun wp_pilot_runs[WP_NUM_PILOTS];

/* a knob's own figure, or the controller's default (above) */
#define DEF_INT(x, d)	((x) > 0 ? (x) : (d))
#define DEF_DBL(x, d)	((x) > 0 ? (x) : (d))

/* the load seen at engage time, as evidence keys and values */
static inline void
ev_load(WpEvidence *e, const WpPilotLoad *load)
{
	int			i;

	for (i = 0; i < load->nvalues && i < (int) lengthof(load->names); i++)
		wp_ev_num(e, load->names[i], load->values[i]);
}

static inline bool
value_equal(const WpPilotValue *a, const WpPilotValue *b)
{
	return memcmp(a, b, sizeof(WpPilotValue)) == 0;
}

static inline void
describe(WpPilotRun *r, const WpPilotValue *v, char *buf)
{
	r->def->describe(v, buf, WP_PILOT_TEXT);
}

static inline void
format_time(TimestampTz t, char *buf, size_t len)
{
	strlcpy(buf, timestamptz_to_str(t), len);
}

/* pilot.c: the state machine */
extern bool wp_pilot_apply(WpPilotRun *r, const WpPilotValue *v);
extern void wp_pilot_fall_back(WpPilotRun *r, const char *reason,
							   const WpPilotLoad *load);
extern void wp_pilot_stop_broken(WpPilotRun *r);

/* pilot_search.c: the search and its trials */
extern void wp_pilot_begin_search(WpPilotRun *r, TimestampTz now);
extern void wp_pilot_next_trial(WpPilotRun *r, TimestampTz now);
extern void wp_pilot_start_trial(WpPilotRun *r, const WpPilotValue *cand,
								 WpTrialKind kind, int step);
extern void wp_pilot_trial_window(WpPilotRun *r, const WpPilotWindow *w,
								  TimestampTz now);
extern void wp_pilot_next_arm_early(WpPilotRun *r);
extern void wp_pilot_close_trial(WpPilotRun *r, const char *outcome);

/* pilot_schedule.c: hold-offs, re-checks, shifts, one trial at a time */
extern TimestampTz wp_pilot_tune_interval_from(TimestampTz t);
extern TimestampTz wp_pilot_recheck_due(WpPilotRun *r);
extern bool wp_pilot_search_ruled_out(WpPilotRun *r, TimestampTz now);
extern TimestampTz wp_pilot_hold_end(WpPilotRun *r);
extern void wp_pilot_hold_off(WpPilotRun *r, TimestampTz until,
							  const char *why, const char *evidence);
extern bool wp_pilot_shifted(WpPilotRun *r, const WpPilotWindow *w,
							 const WpPilotLoad *load);
extern bool wp_pilot_wait_for_other(WpPilotRun *r, const char *what);
extern int	wp_pilot_other_waiting(WpPilotRun *r, TimestampTz now);
extern int	wp_pilot_other_waiting_search(WpPilotRun *r, TimestampTz now);

/* pilot_status.c: what walpilot.status and walpilot.pilots show */
extern bool wp_pilot_attached(void);
extern void wp_pilot_publish(int i);
extern void wp_pilot_take_hold_request(void);

#endif							/* WALPILOT_PILOT_INTERNAL_H */
