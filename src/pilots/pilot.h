/*-------------------------------------------------------------------------
 *
 * pilot.h
 *		The generic pilot controller and the per-knob table it is driven by.
 *
 * A pilot tunes one knob (commit_delay with commit_siblings; checkpoint
 * flushing) by on-line trials.  The generic controller owns what every
 * pilot does alike: the idle / trial / hold state machine, engage and idle
 * streaks and fall-back to the configured value (pilot.c), the search and
 * its trials' decision rows (pilot_search.c), shift detection, the
 * periodic re-check and hold-offs (pilot_schedule.c), and the state
 * published for walpilot.status (pilot_status.c).  A knob brings a
 * WpPilotDef: its configured value and whether the DBA
 * pinned it, how to apply and describe a value, its search candidates, its
 * engage test and its trial window.
 *
 * IDENTIFICATION
 *	  src/pilots/pilot.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_PILOT_H
#define WALPILOT_PILOT_H

#include "pilots.h"
#include "trial.h"

/* a value of a knob: up to four integers, compared as a whole */
#define WP_PILOT_VALUE_INTS		4
typedef struct WpPilotValue
{
	int32		v[WP_PILOT_VALUE_INTS];
} WpPilotValue;

/* search candidates a knob may have (steps 0 .. WP_PILOT_MAX_STEPS-1) */
#define WP_PILOT_MAX_STEPS		8

/* what a verdict depends on: a candidate that lost clearly is not tried
 * again until one of these moved by more than WP_PILOT_CONTEXT_MOVE */
#define WP_PILOT_CONTEXTS		3

/* text sizes of the published state */
#define WP_PILOT_TEXT			64
#define WP_PILOT_REASON			256

/* One finished window, as a knob's window() measures it. */
typedef struct WpPilotWindow
{
	double		count;			/* events: durable commits, stall seconds */
	double		length;			/* measured length: seconds or events */
	double		metric;			/* count / length */
	double		p50_us;			/* commit latency of the window */
	bool		has_hist;
	uint64		hist[WP_HIST_BUCKETS];

	/*
	 * Event windows (a checkpoint).  unusable: nothing to learn from it (a
	 * CHECKPOINT command, too few commits); a trial skips it.  ran_with:
	 * the value the server really ran this window with, when the knob
	 * knows it; a trial skips a window that did not run with its arm.
	 */
	bool		unusable;
	const char *unusable_why;	/* for the status (NULL: generic) */
	bool		has_ran_with;
	WpPilotValue ran_with;

	/*
	 * What hold watches for a shift of the load (has_levels), instead of
	 * the metric and p50; and figures the knob's guard reads.
	 */
	bool		has_levels;
	double		level[2];
	double		detail[6];
} WpPilotWindow;

/* The engage test's view of the load. */
typedef struct WpPilotLoad
{
	bool		suits;			/* a load this knob can help */
	bool		active;			/* any load at all (for the idle streak) */
	double		context[WP_PILOT_CONTEXTS];
	char		numbers[224];	/* "950 commits/s, flush 8100 us ..." */
	/* the same as evidence keys and values for the decision rows */
	int			nvalues;
	const char *names[6];
	double		values[6];
} WpPilotLoad;

typedef struct WpPilotDef
{
	const char *name;			/* decision rows, LOG lines */
	WpTrialConfig trial;		/* max_p99_regression is set per trial */

	/*
	 * The configured (DBA) value, and whether the DBA pinned the knob
	 * (then why: which setting, where), in the worker.
	 */
	bool		(*configured) (WpPilotValue *value, char *why, size_t len);

	/* may this pilot tune at all (its own GUCs)?  why when not */
	bool		(*enabled) (char *why, size_t len);

	/*
	 * Publish a value to the server; configured: the DBA's own value.
	 * false: it could not be published (a file that cannot be written);
	 * the pilot then stops until the worker restarts.
	 */
	bool		(*apply) (const WpPilotValue *value, bool configured);

	/* withdraw any published value at once (any process, no error) */
	void		(*withdraw) (void);

	void		(*describe) (const WpPilotValue *value, char *buf, size_t len);

	/*
	 * Candidate of search step `step` (0, 1, ...), for the load seen at
	 * engage time; false when the step has no candidate (skipped) and
	 * *last when no step follows.
	 */
	bool		(*candidate) (int step, const WpPilotLoad *load,
							  WpPilotValue *value, bool *last);

	/* is this window's load one this knob can help? */
	void		(*engage) (const WpPilotWindow *w, WpPilotLoad *load);

	/*
	 * Before a search: confirm the engage test by a direct measurement
	 * (may be NULL).  false stops the search; why says what was found
	 * (measured: true when a value was measured, false when the
	 * measurement itself failed) and verdict, when set, what the hold-off
	 * says instead of "flush fast per probe".
	 */
	bool		(*confirm) (char *why, size_t len, bool *measured,
							const char **verdict);

	/*
	 * Close a window if one is due at now (false: not yet); restart:
	 * begin a fresh window now (after something that disturbed it).
	 */
	bool		(*window) (TimestampTz now, WpPilotWindow *w);
	void		(*restart_window) (TimestampTz now);

	/* a cheap per-tick hook (group size), may be NULL */
	void		(*tick) (TimestampTz now);

	/*
	 * What a model predicts the search's first trial, from the configured
	 * value, will measure: its evidence keys on the trial's row, and the
	 * predicted ratio (0 when it predicts none), graded by the trial's own
	 * ratio in walpilot.pilots (may be NULL).
	 */
	double		(*predict) (WpEvidence *e);

	/*
	 * Added for event windows; zero or NULL keeps the controller's defaults
	 * (pilot_internal.h).
	 *
	 * rung: candidates form a ladder (step s is rung s) and the search
	 * tries the neighbours of the current choice first -- the next rung
	 * up, then down; after a step that paid, only on in its direction.
	 * rung() maps a value to its (nearest) rung.
	 */
	int			(*rung) (const WpPilotValue *value);

	/*
	 * A candidate-arm window that fails the guard ends the trial at once
	 * and marks the candidate lost (learning must not cause storms).
	 * last_current: the trial's last current-arm window (NULL: none yet).
	 */
	bool		(*guard) (const WpPilotWindow *w,
						  const WpPilotWindow *last_current,
						  char *why, size_t len);

	int			engage_windows; /* suiting windows before a search */
	int			shift_windows;	/* windows of a shifted level */
	double		shift_ratio;	/* what counts as shifted */
	double		context_move;	/* what re-opens a lost candidate */
	bool		lost_until_moved;	/* a loss expires only by context */
	int			max_skipped;	/* unusable windows that end a trial */

	/*
	 * long_trials: a window lasts minutes (a checkpoint), a trial several
	 * of them.  Such a pilot's search pauses between trials for another
	 * pilot waiting for a trial, and a candidate trial of it ends at its
	 * next window when another pilot waits to start a search (its load
	 * moved, which spoils this trial's comparison too); the candidate is
	 * tried again after it.  A pilot of short trials does neither: its
	 * search is over in a minute, and pausing it for a pilot of long
	 * trials would only hand the turn back and forth.
	 */
	bool		long_trials;

	/*
	 * shift_by_context: in hold, only a move of a context (named by
	 * context_names) starts a new search, not the metric or p50.
	 * search_contexts: a bit (1 << k) for each context no arm moves (the
	 * committers): the hold also compares it with the search's start, so
	 * a load that changed while the trials ran is searched again.
	 * first_recheck_s: re-check a new choice after this many seconds, then
	 * twice as long after each pass, up to walpilot.tune_interval (0: at
	 * walpilot.tune_interval only).
	 */
	bool		shift_by_context;
	const char *context_names[WP_PILOT_CONTEXTS];
	uint32		search_contexts;
	int			first_recheck_s;
	const char *window_desc;	/* "one checkpoint per window" */
	const char *unsuited;		/* "not flush-bound" */
	const char *fsync_off;		/* why fsync = off stops it */

	/*
	 * Event windows whose figures come in some time after the event (a
	 * checkpoint's commit columns, seconds after its end), while the next
	 * event may start sooner: true once the event of the window now open
	 * has ended, with the value it ran with.  During a trial the
	 * controller then puts the next window's arm in force at once, so that
	 * it reaches the next event before it starts.  May be NULL.
	 */
	bool		(*window_ended) (WpPilotValue *ran_with);
} WpPilotDef;

/* the knobs (pilot_commit_delay.c, ...) */
extern const WpPilotDef wp_pilot_commit_delay;
extern const WpPilotDef wp_pilot_checkpoint_flush;

/* the controller's entry points are in pilots.h */

#endif							/* WALPILOT_PILOT_H */
