/*-------------------------------------------------------------------------
 *
 * pilot.c
 *		The generic pilot controller: idle / trial / hold, driven by a
 *		per-knob table (pilot.h).
 *
 * Idle: the configured value is in force.  When the knob's engage test
 * says for WP_ENGAGE_WINDOWS windows in a row that the load is one the
 * knob can help, and its confirm step agrees, a search begins.
 *
 * Search: trials of the knob's candidates, in step order, each against
 * the choice in force (trial.c: ABBA windows, paired t, early verdict,
 * the p99 bound).  A winner becomes the current choice; the search goes
 * on with the next step.  A search that starts while a choice is held (a
 * shift in the load) keeps that choice in force and tests it first,
 * against the configured value; a candidate that lost clearly before is
 * skipped unless what the verdict depends on (the knob's context: flush
 * time, group size) moved by more than WP_PILOT_CONTEXT_MOVE.
 *
 * The p99 bound binds in every trial: the configured value's p99 is
 * measured in the first trial of every search (the configured value is
 * its current arm) and bounds every later trial of that search.
 *
 * Hold: the choice stays in force.  Every walpilot.tune_interval it is
 * re-checked against the configured value (a trial in which it must not
 * lose and must stay within the p99 bound); a knob with first_recheck_s
 * re-checks a new choice sooner, after first_recheck_s and then twice as
 * long after each re-check it passes, up to walpilot.tune_interval (a
 * choice kept while a token-bucket disk still had its burst is found out
 * within minutes, not at the next tune_interval); a choice that fails its
 * re-check gives way to the configured value, held as after a search that
 * found nothing, so that a shift of the load still starts a new search
 * before tune_interval is out.  A shift of the load starts a new search:
 * for a knob with shift_by_context, one of the knob's contexts (flush
 * time, committers, commits per flush) moved by
 * WP_CONTEXT_SHIFT for WP_SHIFT_WINDOWS windows in a row, named in the
 * search's first row -- never the throughput or latency alone, which a
 * steady load on a jittery disk moves by as much; for the others, the
 * load level or latency by WP_SHIFT_RATIO.  WP_IDLE_FALLBACK windows
 * without load put the configured value back, and the pilot re-engages as
 * soon as the load returns.
 *
 * Every trial ends with an outcome -- also one interrupted by a revert,
 * DROP EXTENSION, a mode change or the worker's exit -- and every change,
 * trial and hold-off is a decision row and a LOG line.  Rows name what
 * was really in force.  Why a pilot is idle or holding is published as
 * walpilot.status.pilot_reason.
 *
 * This file is the state machine: one closed window at a time (idle,
 * trial, hold), the stop conditions checked at every tick, fall-back and
 * the worker's entry points.  The search and its trials are in
 * pilot_search.c; hold-offs, the re-check, shift detection and the rule
 * that trials never overlap in pilot_schedule.c; the shared state
 * walpilot.status and walpilot.pilots show, and hold-offs requested from
 * SQL, in pilot_status.c.  pilot_internal.h is what they share.
 *
 * IDENTIFICATION
 *	  src/pilots/pilot.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "utils/timestamp.h"

#include "pilot_internal.h"

/* the knobs, in the order their controllers run */
const WpPilotDef *const wp_pilot_defs[] = {
	&wp_pilot_commit_delay,
	&wp_pilot_checkpoint_flush,
};

StaticAssertDecl(lengthof(wp_pilot_defs) == WP_NUM_PILOTS,
				 "WP_NUM_PILOTS must count wp_pilot_defs");

WpPilotRun	wp_pilot_runs[WP_NUM_PILOTS];
static bool runs_ready = false;

/* whether the last tick was on a standby (worker only) */
static bool tick_standby = false;

/*
 * wp_pilot_apply
 *		Publish v.  A knob that cannot (a file that cannot be written)
 *		marks the pilot broken; wp_pilot_tick() then stops it
 *		(wp_pilot_stop_broken).
 */
bool
wp_pilot_apply(WpPilotRun *r, const WpPilotValue *v)
{
	bool		is_configured = value_equal(v, &r->configured);

	if (r->broken)
		return false;
	if (!r->def->apply(v, is_configured))
	{
		r->broken = true;
		return false;
	}
	r->in_force = *v;
	r->managing = !is_configured;
	return true;
}

/*
 * wp_pilot_fall_back
 *		Put the configured value back and go idle, with a decision row
 *		naming what was really in force.  An open trial is closed as
 *		interrupted first.  load (or NULL): the load that made the pilot
 *		fall back, as the row's evidence.
 */
void
wp_pilot_fall_back(WpPilotRun *r, const char *reason, const WpPilotLoad *load)
{
	char		from[WP_PILOT_TEXT];
	char		to[WP_PILOT_TEXT];
	char	   *evidence = NULL;

	if (r->trial_open)
	{
		char		outcome[WP_DECISION_TEXT];

		snprintf(outcome, sizeof(outcome), "interrupted: %s", reason);
		wp_pilot_close_trial(r, outcome);
	}
	if (r->managing || !value_equal(&r->in_force, &r->configured))
	{
		describe(r, &r->in_force, from);
		describe(r, &r->configured, to);
		if (load && load->nvalues > 0)
		{
			WpEvidence	e;

			wp_ev_begin(&e);
			ev_load(&e, load);
			evidence = wp_ev_end(&e);
		}
		wp_decision_log(r->def->name, from, to, reason, evidence);
	}
	wp_pilot_apply(r, &r->configured);
	r->current = r->configured;
	r->current_step = -1;
	r->state = WP_PS_IDLE;
	r->engage_streak = 0;
	r->idle_streak = 0;
	r->shift_streak = 0;
	r->search_paused = false;
}

/*---- one pilot's step ----*/

/*
 * not_tuning
 *		Why this pilot must not tune now (false: it may).  Puts the
 *		configured value back when it had something else in force.  The
 *		knob's configured value (and pin) is read when a window closed;
 *		the rest at every tick, so a mode change acts at once also for a
 *		knob whose windows are minutes apart.  standby: the server is in
 *		recovery, as the hub says.
 */
static bool
not_tuning(WpPilotRun *r, bool window_closed, bool standby)
{
	char		why[WP_PILOT_REASON];

	why[0] = '\0';
	if (window_closed)
	{
		r->pin_why[0] = '\0';
		r->free_to_tune = r->def->configured(&r->configured, r->pin_why,
											 sizeof(r->pin_why));
	}
	if (r->broken)
		return true;
	if (standby)
		strlcpy(why, "standby: no trials during recovery", sizeof(why));
	else if (wp_mode != WP_MODE_TUNE)
		snprintf(why, sizeof(why), "%s mode: walpilot.mode = '%s'",
				 wp_mode_name(wp_mode), wp_mode_name(wp_mode));
	else if (!enableFsync)
		strlcpy(why, r->def->fsync_off ? r->def->fsync_off :
				"fsync = off: no WAL flush to tune", sizeof(why));
	else if (!r->def->enabled(why, sizeof(why)))
		;
	else if (!r->free_to_tune)
		snprintf(why, sizeof(why), "pinned: %s", r->pin_why);
	if (why[0] == '\0')
	{
		if (r->stopped)
		{
			/*
			 * While stopped the configured value was in force, as it was
			 * then: a DBA's pin now gone leaves its value behind in current
			 * and in_force, and the pilot would hold it as its own choice
			 * (outside walpilot's bounds, after the DBA removed it).  Start
			 * again from the configured value of now, which configured()
			 * has just read (a pin is read when a window closes, and so is
			 * its end).
			 */
			r->stopped = false;
			r->current = r->in_force = r->configured;
			r->current_step = -1;
			r->managing = false;
			strlcpy(r->reason, "resumed: waiting for a window", sizeof(r->reason));
			ereport(LOG,
					(errmsg("walpilot %s pilot resumes", r->def->name)));
		}
		return false;
	}

	if (r->state != WP_PS_IDLE || r->managing)
		wp_pilot_fall_back(r, why, NULL);
	if (!r->stopped || strcmp(why, r->reason) != 0)
		ereport(LOG,
				(errmsg("walpilot %s pilot does not tune", r->def->name),
				 errdetail_internal("%s", why)));
	r->stopped = true;
	r->state = WP_PS_IDLE;
	r->current = r->configured;
	r->current_step = -1;
	r->waiting = r->waited = false;
	r->waited_at = 0;
	r->search_paused = false;
	strlcpy(r->reason, why, sizeof(r->reason));
	return true;
}

/*
 * wp_pilot_stop_broken
 *		A value could not be applied: the configuration goes back as far as
 *		it can, and the pilot stops until the worker restarts, with a
 *		WARNING and a decision row.
 */
void
wp_pilot_stop_broken(WpPilotRun *r)
{
	char		why[WP_PILOT_REASON];

	if (r->broken_said)
		return;
	r->broken_said = true;
	snprintf(why, sizeof(why),
			 "stopped: a value could not be applied; the configured setting is back, no more trials until the worker restarts");
	if (r->trial_open)
	{
		char		outcome[WP_DECISION_TEXT];

		snprintf(outcome, sizeof(outcome), "interrupted: %s", why);
		wp_pilot_close_trial(r, outcome);
	}
	r->def->withdraw();
	r->managing = false;
	r->in_force = r->current = r->configured;
	r->current_step = -1;
	r->state = WP_PS_IDLE;
	r->waiting = false;
	r->waited_at = 0;
	ereport(WARNING,
			(errmsg("walpilot stops tuning %s", r->def->name),
			 errdetail_internal("%s", why)));
	wp_decision_log(r->def->name, "-", "-", why, NULL);
	strlcpy(r->reason, why, sizeof(r->reason));
}

/*
 * paused_search_shifted
 *		A window of a paused search with a choice of walpilot's in force:
 *		when the load has shifted for shift_windows windows, the configured
 *		setting goes back (true) and the pilot starts afresh when it may.
 */
static bool
paused_search_shifted(WpPilotRun *r, const WpPilotWindow *w,
					  const WpPilotLoad *load, int shift_windows)
{
	char		why[WP_DECISION_TEXT];

	if (!wp_pilot_shifted(r, w, load))
	{
		r->shift_streak = 0;
		return false;
	}
	if (++r->shift_streak < shift_windows)
		return false;
	snprintf(why, sizeof(why),
			 "the load shifted (%s) while the search was paused: configured setting back, a new search follows",
			 r->shift_why);
	wp_pilot_fall_back(r, why, load);
	return true;
}

static void
pilot_window(WpPilotRun *r, const WpPilotWindow *w, TimestampTz now)
{
	WpPilotLoad load;
	char		t[64];
	int			engage_windows = DEF_INT(r->def->engage_windows, WP_ENGAGE_WINDOWS);
	int			shift_windows = DEF_INT(r->def->shift_windows, WP_SHIFT_WINDOWS);
	const char *unsuited = r->def->unsuited ? r->def->unsuited : "not flush-bound";

	memset(&load, 0, sizeof(load));
	r->def->engage(w, &load);

	/* waiting is re-decided at every window of this pilot */
	r->waited = r->waiting;
	r->waiting = false;

	switch (r->state)
	{
		case WP_PS_IDLE:
			if (wp_pilot_hold_end(r) > now)
			{
				r->engage_streak = 0;
				format_time(wp_pilot_hold_end(r), t, sizeof(t));
				snprintf(r->reason, sizeof(r->reason), "held off until %s: %s",
						 t, r->hold_why);
				break;
			}
			r->hold_from = 0;
			if (!load.suits)
			{
				r->engage_streak = 0;
				r->waiting = false;
				snprintf(r->reason, sizeof(r->reason), "%s: %s", unsuited,
						 load.numbers);
				break;
			}
			if (++r->engage_streak < engage_windows)
			{
				snprintf(r->reason, sizeof(r->reason), "flush-bound for %d s: %s",
						 r->engage_streak, load.numbers);
				break;
			}
			if (wp_pilot_wait_for_other(r, "search"))
			{
				/* the next window that suits tries again */
				r->engage_streak = engage_windows - 1;
				break;
			}
			r->engage_streak = 0;
			if (r->def->confirm)
			{
				char		why[192];
				char		what[WP_DECISION_TEXT];
				bool		measured = false;
				const char *verdict = NULL;
				bool		ok = r->def->confirm(why, sizeof(why), &measured,
												 &verdict);

				/* the probe loaded the device: start the next window afresh */
				r->def->restart_window(GetCurrentTimestamp());
				strlcpy(r->confirm_why, ok ? why : "", sizeof(r->confirm_why));
				if (!ok)
				{
					WpEvidence	e;

					wp_ev_begin(&e);
					ev_load(&e, &load);
					wp_ev_str(&e, "probe", why);
					wp_ev_bool(&e, "probe_measured", measured);
					if (verdict == NULL)
						verdict = measured ? "flush fast per probe" :
							"the confirming probe could not measure the flush";
					snprintf(what, sizeof(what), "%s (%s)", verdict, why);
					wp_pilot_hold_off(r, 0, what, wp_ev_end(&e));
					format_time(wp_pilot_hold_end(r), t, sizeof(t));
					snprintf(r->reason, sizeof(r->reason),
							 "held off until %s: %s", t, what);
					break;
				}
			}
			r->load = load;
			r->shift_why[0] = '\0';
			wp_pilot_begin_search(r, now);
			break;

		case WP_PS_TRIAL:
			wp_pilot_trial_window(r, w, now);
			break;

		case WP_PS_HOLD:
			if (r->search_paused)
			{
				int			o;

				/*
				 * The paused search's results were measured under a load
				 * that has gone: a choice it made is not kept into the new
				 * one.
				 */
				if (r->managing && !w->unusable && load.active &&
					paused_search_shifted(r, w, &load, shift_windows))
					break;
				if (wp_pilot_wait_for_other(r, "search"))
					break;
				if ((o = wp_pilot_other_waiting(r, now)) >= 0)
				{
					snprintf(r->reason, sizeof(r->reason),
							 "search paused: the %s pilot waits for a trial, which goes first",
							 wp_pilot_runs[o].def->name);
					break;
				}
				/* the search goes on where it paused */
				ereport(LOG,
						(errmsg("walpilot %s pilot: the paused search goes on",
								r->def->name)));
				r->search_paused = false;
				if (r->load.nvalues == 0)
					r->load = load;
				wp_pilot_next_trial(r, now);
				break;
			}
			if (!load.active)
			{
				if (++r->idle_streak >= WP_IDLE_FALLBACK)
				{
					/* no hold-off: the pilot re-engages when the load returns */
					if (r->managing)
						wp_pilot_fall_back(r, "the load is gone: configured setting back until it returns",
										   NULL);
					r->state = WP_PS_IDLE;
				}
				snprintf(r->reason, sizeof(r->reason), "holding; no load for %d windows: %s",
						 r->idle_streak, load.numbers);
				break;
			}
			r->idle_streak = 0;
			if (w->unusable)
				break;			/* a CHECKPOINT command tells nothing */
			if (wp_pilot_shifted(r, w, &load))
				r->shift_streak++;
			else
				r->shift_streak = 0;

			if (r->shift_streak >= shift_windows)
			{
				if (load.suits)
				{
					if (wp_pilot_wait_for_other(r, "new search"))
					{
						/*
						 * Another pilot's trial may run for minutes: the
						 * choice made for the old load is not kept into the
						 * new one meanwhile.
						 */
						if (r->managing)
						{
							char		why[WP_DECISION_TEXT];

							snprintf(why, sizeof(why),
									 "the load shifted (%s) while another pilot's trial keeps a new search from running: configured setting back until it can run",
									 r->shift_why);
							wp_pilot_fall_back(r, why, &load);
							break;
						}
						r->shift_streak = shift_windows - 1;
						break;
					}
					/* a new search that keeps the held choice in force */
					r->shift_streak = 0;
					r->load = load;
					wp_pilot_begin_search(r, now);
				}
				else if (r->managing)
				{
					char		why[WP_DECISION_TEXT];

					snprintf(why, sizeof(why),
							 "the load shifted (%s) and is no longer flush-bound",
							 r->shift_why);
					r->shift_streak = 0;
					wp_pilot_fall_back(r, why, &load);
				}
				else
				{
					r->shift_streak = 0;
					r->state = WP_PS_IDLE;
				}
				break;
			}
			if (now >= wp_pilot_recheck_due(r))
			{
				if (r->managing)
				{
					if (wp_pilot_wait_for_other(r, "re-check"))
						break;
					r->load = load;
					wp_pilot_start_trial(r, &r->current, WP_TK_RECHECK,
										 r->current_step);
					break;
				}
				/*
				 * holding the configured value: look again (a knob whose
				 * losses expire only when their context moves keeps them),
				 * unless its model rules out a win
				 */
				if (wp_pilot_search_ruled_out(r, now))
					break;
				r->state = WP_PS_IDLE;
				if (!r->def->lost_until_moved)
					memset(r->lost, 0, sizeof(r->lost));
				break;
			}
			{
				char		cur[WP_PILOT_TEXT];
				char		next[64];

				describe(r, &r->current, cur);
				format_time(wp_pilot_recheck_due(r), next, sizeof(next));
				snprintf(r->reason, sizeof(r->reason),
						 "holding %s%s; next re-check %s; %s", cur,
						 r->managing ? "" : " (no candidate beat it)", next,
						 load.numbers);
			}
			break;
	}
}

/*
 * wp_pilot_tick
 *		Worker tick: every pilot's per-tick hook, its stop conditions, and
 *		its controller step when its window closes.
 *
 * standby: the server is in recovery (the hub says so).  There no pilot
 * measures a window or tries anything; each one only says why, in
 * walpilot.pilots and walpilot.status.  At the first tick after a
 * promotion every pilot reads its configured value again and starts a
 * fresh window: what ran during recovery is no window of the primary.
 */
void
wp_pilot_tick(TimestampTz now, bool standby)
{
	int			i;

	if (!wp_pilot_attached())
		return;
	if (!runs_ready)
		wp_pilot_worker_start();
	if (standby)
	{
		for (i = 0; i < WP_NUM_PILOTS; i++)
		{
			WpPilotRun *r = &wp_pilot_runs[i];
			bool		was_stopped = r->stopped;
			char		before[WP_PILOT_REASON];

			strlcpy(before, r->reason, sizeof(before));
			(void) not_tuning(r, false, true);
			if (r->stopped != was_stopped || strcmp(before, r->reason) != 0)
				wp_pilot_publish(i);
		}
		tick_standby = true;
		return;
	}
	if (tick_standby)
	{
		for (i = 0; i < WP_NUM_PILOTS; i++)
		{
			WpPilotRun *r = &wp_pilot_runs[i];

			r->pin_why[0] = '\0';
			r->free_to_tune = r->def->configured(&r->configured, r->pin_why,
												 sizeof(r->pin_why));
			r->def->restart_window(now);
		}
		tick_standby = false;
	}
	wp_pilot_take_hold_request();

	for (i = 0; i < WP_NUM_PILOTS; i++)
	{
		WpPilotRun *r = &wp_pilot_runs[i];
		WpPilotWindow *w = palloc0(sizeof(WpPilotWindow));
		bool		closed;
		bool		was_stopped = r->stopped;

		if (r->def->tick)
			r->def->tick(now);
		closed = r->def->window(now, w);
		if (!not_tuning(r, closed, false))
		{
			if (closed)
				pilot_window(r, w, now);
			else if (r->state == WP_PS_TRIAL && r->def->window_ended)
				wp_pilot_next_arm_early(r);
		}
		if (r->broken)
			wp_pilot_stop_broken(r);
		if (closed || r->stopped != was_stopped || r->broken)
			wp_pilot_publish(i);
		pfree(w);
	}
}

/*
 * wp_pilot_stop
 *		Worker exit or mode off: put the configured values back now and
 *		close any open trial.
 */
void
wp_pilot_stop(const char *why)
{
	int			i;

	if (!wp_pilot_attached() || !runs_ready)
		return;
	for (i = 0; i < WP_NUM_PILOTS; i++)
	{
		WpPilotRun *r = &wp_pilot_runs[i];

		if (r->managing || r->state != WP_PS_IDLE || r->trial_open)
			wp_pilot_fall_back(r, why, NULL);
		r->def->withdraw();
		strlcpy(r->reason, why, sizeof(r->reason));
		wp_pilot_publish(i);
	}
}

/*
 * wp_pilot_worker_start
 *		A (re)started worker knows nothing of earlier choices: whatever a
 *		previous worker published is withdrawn first.
 */
void
wp_pilot_worker_start(void)
{
	int			i;

	memset(wp_pilot_runs, 0, sizeof(wp_pilot_runs));
	for (i = 0; i < WP_NUM_PILOTS; i++)
	{
		WpPilotRun *r = &wp_pilot_runs[i];

		r->def = wp_pilot_defs[i];
		r->def->withdraw();
		r->free_to_tune = r->def->configured(&r->configured, r->pin_why,
											 sizeof(r->pin_why));
		r->current = r->in_force = r->configured;
		r->current_step = -1;
		r->state = WP_PS_IDLE;
		strlcpy(r->reason, "starting: no window measured yet", sizeof(r->reason));
		r->def->restart_window(GetCurrentTimestamp());
		wp_pilot_publish(i);
	}
	runs_ready = true;
}

/*
 * wp_pilot_trial_running
 *		Is any pilot in a trial?  (The periodic probe waits: it would
 *		stall a window and load the device.)  Worker only.
 */
bool
wp_pilot_trial_running(void)
{
	int			i;

	if (!runs_ready)
		return false;
	for (i = 0; i < WP_NUM_PILOTS; i++)
		if (wp_pilot_runs[i].state == WP_PS_TRIAL)
			return true;
	return false;
}
