/*-------------------------------------------------------------------------
 *
 * pilot_schedule.c
 *		When the generic pilot controller acts: hold-offs, the periodic
 *		re-check, shifts of the load, and trials that never overlap.
 *
 * A hold-off keeps a pilot from searching until a time (or
 * walpilot.tune_interval from when it began), with a decision row that
 * says why.  A held choice is re-checked every walpilot.tune_interval, or
 * sooner while it is new for a knob with first_recheck_s; holding the
 * configured value, the periodic search is skipped when the knob's model
 * rules out a win by more than its own error.  A hold watches
 * for a shift of the load: one of the knob's contexts, or its load level,
 * moved for WP_SHIFT_WINDOWS windows.  A trial that is due waits while
 * another pilot's trial runs.  The state machine that asks is in pilot.c.
 *
 * IDENTIFICATION
 *	  src/pilots/pilot_schedule.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "utils/timestamp.h"

#include "pilot_internal.h"

/* walpilot.tune_interval from t */
TimestampTz
wp_pilot_tune_interval_from(TimestampTz t)
{
	return t + (TimestampTz) wp_tune_interval_s * USECS_PER_SEC;
}

/*
 * wp_pilot_recheck_due
 *		When the held choice is re-checked: walpilot.tune_interval after the
 *		hold began, or sooner for a knob with first_recheck_s while its
 *		choice is new (recheck_s doubles with every re-check passed).
 */
TimestampTz
wp_pilot_recheck_due(WpPilotRun *r)
{
	int			s = wp_tune_interval_s;

	if (r->managing && r->recheck_s > 0 && r->recheck_s < s)
		s = r->recheck_s;
	return r->hold_since + (TimestampTz) s * USECS_PER_SEC;
}

/*
 * wp_pilot_hold_end
 *		When the hold-off ends (0: none).  walpilot.tune_interval is read
 *		per call, so a reload that shortens it ends a running hold-off.
 */
TimestampTz
wp_pilot_hold_end(WpPilotRun *r)
{
	if (r->hold_from == 0)
		return 0;
	return r->hold_fixed != 0 ? r->hold_fixed :
		wp_pilot_tune_interval_from(r->hold_from);
}

/*
 * wp_pilot_hold_off
 *		No new search before until (0: walpilot.tune_interval from now); a
 *		decision row and a LOG line say why.
 */
void
wp_pilot_hold_off(WpPilotRun *r, TimestampTz until, const char *why,
				  const char *evidence)
{
	char		t[64];
	char		reason[WP_DECISION_TEXT];

	r->hold_from = GetCurrentTimestamp();
	r->hold_fixed = until;
	strlcpy(r->hold_why, why, sizeof(r->hold_why));
	format_time(wp_pilot_hold_end(r), t, sizeof(t));
	snprintf(reason, sizeof(reason), "held off until %s%s: %s", t,
			 until == 0 ? " (walpilot.tune_interval)" : "", why);
	wp_decision_log(r->def->name, "-", "-", reason, evidence);
}

/*
 * wp_pilot_search_ruled_out
 *		Holding the configured value, a periodic search is due: true (with
 *		a decision row, and the re-check clock restarted) when the knob's
 *		model rules out a win on the load of the last minute by a margin
 *		its own record covers.  The model predicts the search's first trial
 *		(for commit_delay: every commit grouped, the most any delay gives);
 *		raised by its mean error on this server's graded trials, that
 *		prediction must stay under the gain a trial must show to keep a
 *		candidate.  Without a graded trial nothing is ruled out; a held
 *		choice of the pilot's own is never asked (its re-check runs); and
 *		a shift of the load still starts a search at once (the hold
 *		watches it).
 */
bool
wp_pilot_search_ruled_out(WpPilotRun *r, TimestampTz now)
{
	WpEvidence	e;
	double		predicted;
	double		error;
	double		need = Max(r->def->trial.min_gain, 1.0);
	char		why[WP_DECISION_TEXT];
	char		next[64];

	if (r->managing || r->def->predict == NULL || r->grade.trials == 0)
		return false;
	error = r->grade.error_sum / r->grade.trials;
	wp_ev_begin(&e);
	predicted = r->def->predict(&e);
	if (predicted <= 0 || predicted * (1 + error) >= need)
		return false;
	wp_ev_num(&e, "model_trials", r->grade.trials);
	wp_ev_num(&e, "model_error", round(error * 1000) / 1000);
	r->hold_since = now;
	format_time(wp_pilot_recheck_due(r), next, sizeof(next));
	snprintf(why, sizeof(why),
			 "periodic search skipped: the model predicts x%.2f for its first trial, x%.2f with its mean error on %d graded trial%s here, under the x%.2f a candidate must win by; next look %s",
			 predicted, predicted * (1 + error), r->grade.trials,
			 r->grade.trials == 1 ? "" : "s", need, next);
	wp_decision_log(r->def->name, "-", "-", why, wp_ev_end(&e));
	ereport(LOG,
			(errmsg("walpilot %s pilot: periodic search skipped", r->def->name),
			 errdetail_internal("%s", why)));
	return true;
}

/*---- shifts of the load ----*/

/*
 * context_moved
 *		Has context k moved by WP_CONTEXT_SHIFT from "then"?  If so it is
 *		named in r->shift_why, with what "then" was.
 */
static bool
context_moved(WpPilotRun *r, int k, double then, double now, const char *ref)
{
	const char *name = r->def->context_names[k] ?
		r->def->context_names[k] : "context";

	if (then <= 0 || now <= 0)
		return false;
	if (now <= then * WP_CONTEXT_SHIFT && now >= then / WP_CONTEXT_SHIFT)
		return false;
	snprintf(r->shift_why, sizeof(r->shift_why),
			 "%s moved from %.1f%s to %.1f (x%.2f, needs x%.1f for %d windows)",
			 name, then, ref, now, now / then, WP_CONTEXT_SHIFT,
			 DEF_INT(r->def->shift_windows, WP_SHIFT_WINDOWS));
	return true;
}

/*
 * context_shifted
 *		Has one of the knob's contexts moved by WP_CONTEXT_SHIFT from what
 *		the hold's first window saw?  That window sets the reference.  The
 *		contexts no arm moves (search_contexts) are also compared with the
 *		search's start (r->load): a search whose trials ran while the load
 *		changed chose for a load that is gone, and the hold's first window
 *		already sees the new one.  The first context that moved is named
 *		in r->shift_why.
 */
static bool
context_shifted(WpPilotRun *r, const WpPilotLoad *load)
{
	int			k;

	if (!r->hold_ref_set)
	{
		memcpy(r->hold_ref, load->context, sizeof(r->hold_ref));
		r->hold_ref_set = true;
	}
	for (k = 0; k < WP_PILOT_CONTEXTS; k++)
	{
		if (context_moved(r, k, r->hold_ref[k], load->context[k], ""))
			return true;
		if ((r->def->search_contexts & (1U << k)) &&
			context_moved(r, k, r->load.context[k], load->context[k],
						  " at the search's start"))
			return true;
	}
	return false;
}

/*
 * wp_pilot_shifted
 *		Has the load moved in this window of a hold?  For a knob with
 *		shift_by_context one of its contexts (context_shifted); for the
 *		others the load level and latency (or the window's own levels) by
 *		the knob's shift_ratio from the level the hold watches.  What moved
 *		is named in r->shift_why.
 */
bool
wp_pilot_shifted(WpPilotRun *r, const WpPilotWindow *w, const WpPilotLoad *load)
{
	double		shift = DEF_DBL(r->def->shift_ratio, WP_SHIFT_RATIO);
	double		l0 = w->has_levels ? w->level[0] : w->metric;
	double		l1 = w->has_levels ? w->level[1] : w->p50_us;

	if (r->def->shift_by_context)
		return context_shifted(r, load);
	if (r->level_metric <= 0 && w->has_levels)
	{
		/* the first window of this hold sets the level */
		r->level_metric = l0;
		r->level_p50 = l1;
	}
	if (r->level_metric > 0 &&
		(l0 > r->level_metric * shift ||
		 l0 < r->level_metric / shift ||
		 (r->level_p50 > 0 && (l1 > r->level_p50 * shift ||
							   l1 < r->level_p50 / shift))))
	{
		snprintf(r->shift_why, sizeof(r->shift_why),
				 "the load level moved from %.0f to %.0f",
				 r->level_metric, l0);
		return true;
	}
	return false;
}

/*---- trials never overlap ----*/

/*
 * other_trial
 *		Another pilot whose trial runs now (-1: none).  A trial of one
 *		knob would bias the other's windows (a commit_delay candidate
 *		changes the commits a checkpoint window sees; a checkpoint
 *		trial's storms change the flush time of commit_delay's windows).
 */
static int
other_trial(WpPilotRun *r)
{
	int			i;

	for (i = 0; i < WP_NUM_PILOTS; i++)
		if (&wp_pilot_runs[i] != r && wp_pilot_runs[i].state == WP_PS_TRIAL)
			return i;
	return -1;
}

/*
 * wp_pilot_wait_for_other
 *		A trial of this pilot is due: true (and the reason says so) when it
 *		must wait for another pilot's trial to end.  The first wait writes
 *		a decision row.
 */
bool
wp_pilot_wait_for_other(WpPilotRun *r, const char *what)
{
	int			o = other_trial(r);
	char		why[160];
	TimestampTz now;

	if (o < 0)
	{
		if (r->waited)
			ereport(LOG,
					(errmsg("walpilot %s pilot: no other trial runs now, its %s starts",
							r->def->name, what)));
		/* nothing left to remember: its trial or search starts now */
		r->waiting = r->waited = r->waiting_search = false;
		r->waited_at = 0;
		return false;
	}
	snprintf(why, sizeof(why),
			 "waiting: the %s trial runs, this %s starts after it (trials never overlap)",
			 wp_pilot_runs[o].def->name, what);
	/* one row per wait, also when its load suits in most seconds only */
	now = GetCurrentTimestamp();
	if (!r->waited &&
		(r->waited_at == 0 ||
		 now >= TimestampTzPlusMilliseconds(r->waited_at,
											WP_WAIT_MEMORY_S * 1000)))
		wp_decision_log(r->def->name, "-", "-", why, NULL);
	r->waiting = true;
	r->waiting_search = strcmp(what, "re-check") != 0;
	r->waited_at = now;
	r->waited_search = r->waiting_search;
	strlcpy(r->reason, why, sizeof(r->reason));
	return true;
}

/*
 * still_waiting
 *		Pilot i waits for a trial (a search: only one that starts a
 *		search), now or within the last WP_WAIT_MEMORY_S seconds: a load
 *		that suits it in most seconds but not all leaves its waiting flag
 *		down at many a moment, and the other pilot must not take that for
 *		"no one waits".
 */
static bool
still_waiting(int i, bool search, TimestampTz now)
{
	WpPilotRun *o = &wp_pilot_runs[i];

	if (o->waiting && (!search || o->waiting_search))
		return true;
	return o->waited_at != 0 && (!search || o->waited_search) &&
		now < TimestampTzPlusMilliseconds(o->waited_at,
										  WP_WAIT_MEMORY_S * 1000);
}

/* another pilot that still_waiting() says waits (-1: none) */
static int
other_still_waiting(WpPilotRun *r, bool search, TimestampTz now)
{
	int			i;

	for (i = 0; i < WP_NUM_PILOTS; i++)
		if (&wp_pilot_runs[i] != r && still_waiting(i, search, now))
			return i;
	return -1;
}

/* another pilot waits for a trial of its own (-1: none) */
int
wp_pilot_other_waiting(WpPilotRun *r, TimestampTz now)
{
	return other_still_waiting(r, false, now);
}

/*
 * wp_pilot_other_waiting_search
 *		Another pilot waits to start a search, from idle or because its
 *		load moved, not a re-check (-1: none).
 */
int
wp_pilot_other_waiting_search(WpPilotRun *r, TimestampTz now)
{
	return other_still_waiting(r, true, now);
}
