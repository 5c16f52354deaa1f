/*-------------------------------------------------------------------------
 *
 * pilot_search.c
 *		The generic pilot controller's search and its trials.
 *
 * A search tries the knob's candidates one at a time against the choice
 * in force: in step order, or for a ladder knob the neighbour rungs of
 * the current choice.  A search that starts while a choice is held tests
 * that choice first, against the configured value; a candidate that lost
 * clearly is skipped until what its verdict rested on moved.  Each trial
 * is one decision row, opened when it starts and given its outcome when
 * the trial engine (trial.c) judges it, a guard fails or it is
 * interrupted.  The state machine that calls this is in pilot.c.
 *
 * IDENTIFICATION
 *	  src/pilots/pilot_search.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "utils/timestamp.h"

#include "pilot_internal.h"

/*
 * wp_pilot_close_trial
 *		Give the open trial row its outcome (and say it in the log).
 */
void
wp_pilot_close_trial(WpPilotRun *r, const char *outcome)
{
	if (!r->trial_open)
		return;
	r->trial_open = false;
	wp_decision_set_outcome(r->trial_decision, outcome);
	ereport(LOG,
			(errmsg("walpilot trial on %s ended: %s", r->def->name, outcome)));
}

/*---- the search ----*/

/*---- the search ----*/

/* did this step lose clearly, and has nothing it depends on moved since? */
static bool
still_lost(WpPilotRun *r, int step, TimestampTz now)
{
	int			k;
	double		move = DEF_DBL(r->def->context_move, WP_PILOT_CONTEXT_MOVE);

	if (step < 0 || step >= WP_PILOT_MAX_STEPS || !r->lost[step])
		return false;
	if (!r->def->lost_until_moved &&
		now >= wp_pilot_tune_interval_from(r->lost_at[step]))
	{
		r->lost[step] = false;
		return false;
	}
	for (k = 0; k < WP_PILOT_CONTEXTS; k++)
	{
		double		then = r->lost_context[step][k];
		double		now = r->load.context[k];

		if (then <= 0 || now <= 0)
			continue;
		if (now > then * (1 + move) || now < then / (1 + move))
		{
			r->lost[step] = false;
			return false;
		}
	}
	return true;
}

void
wp_pilot_start_trial(WpPilotRun *r, const WpPilotValue *cand,
					 WpTrialKind kind, int step)
{
	WpTrialConfig cfg = r->def->trial;
	WpEvidence	e;
	char		in_force[WP_PILOT_TEXT];
	char		other[WP_PILOT_TEXT];
	char		reason[WP_DECISION_TEXT];
	const char *wd = r->def->window_desc;

	cfg.max_p99_regression = wp_max_latency_regression_pct / 100.0;
	cfg.incumbent = (kind != WP_TK_CANDIDATE);
	wp_trial_begin(&r->trial, &cfg);
	r->kind = kind;
	r->trial_step = step;
	r->candidate = *cand;
	r->state = WP_PS_TRIAL;
	r->skipped = 0;
	r->next_arm_early = false;
	r->have_last_current = false;
	r->waiting = false;
	r->waited_at = 0;
	r->hold_ref_set = false;

	wp_ev_begin(&e);
	ev_load(&e, &r->load);
	wp_ev_num(&e, "pairs", cfg.pairs);
	if (r->trials_in_search == 0 && r->confirm_why[0])
		wp_ev_str(&e, "confirmed_by", r->confirm_why);
	r->confirm_why[0] = '\0';
	if (r->configured_p99_us > 0)
		wp_ev_num(&e, "p99_us_configured", r->configured_p99_us);
	r->trial_predicted = 0;
	if (r->def->predict && kind == WP_TK_CANDIDATE &&
		r->trials_in_search == 0 && value_equal(&r->current, &r->configured))
		r->trial_predicted = r->def->predict(&e);

	/*
	 * The row: what is in force -> what is tried.  Against a held choice
	 * the configured value is the other arm.
	 */
	describe(r, &r->in_force, in_force);
	if (kind == WP_TK_CANDIDATE)
	{
		describe(r, cand, other);
		snprintf(reason, sizeof(reason), "trial: %s against %s%s%s: %s%s",
				 other, in_force, wd ? ", " : "", wd ? wd : "",
				 r->trials_in_search > 0 ? "next candidate" :
				 r->shift_why[0] ? "new search, " :
				 "the load is one this setting can help",
				 r->trials_in_search == 0 ? r->shift_why : "");
	}
	else
	{
		describe(r, &r->configured, other);
		snprintf(reason, sizeof(reason), "%s: the choice in force, %s, against the configured setting, %s%s%s%s",
				 kind == WP_TK_RECHECK ? "re-check" : "new search",
				 in_force, other, kind == WP_TK_RECHECK ? "" : ", first",
				 kind == WP_TK_SEARCH_HELD && r->shift_why[0] ? "; " : "",
				 kind == WP_TK_SEARCH_HELD ? r->shift_why : "");
	}
	if (r->trials_in_search == 0)
		r->shift_why[0] = '\0';
	/* the status says so at once, not when the trial's first window closes */
	strlcpy(r->reason, reason, sizeof(r->reason));
	r->trial_decision = wp_decision_log(r->def->name, in_force, other, reason,
										wp_ev_end(&e));
	ereport(LOG,
			(errmsg("walpilot trial on %s starts: %s", r->def->name, reason)));
	r->trials_in_search++;
	r->trial_open = true;

	/* window 0 of ABBA runs the current arm: the configured value here */
	if (kind != WP_TK_CANDIDATE)
		wp_pilot_apply(r, &r->configured);
}

/*
 * ladder_candidate
 *		A ladder knob's next candidate: a neighbour rung of the current
 *		choice (up first, then down; after a step that paid only on in its
 *		direction), not judged in this search, not lost, not the
 *		configured value.
 */
static bool
ladder_candidate(WpPilotRun *r, TimestampTz now, WpPilotValue *c, int *step)
{
	static const int dirs[2] = {+1, -1};
	int			here = r->def->rung(&r->current);
	int			i;

	for (i = 0; i < 2; i++)
	{
		int			d = r->direction != 0 ? r->direction : dirs[i];
		int			s = here + d;
		bool		last = false;

		if (s >= 0 && s < WP_PILOT_MAX_STEPS && !r->tried[s] &&
			!still_lost(r, s, now) &&
			r->def->candidate(s, &r->load, c, &last) &&
			!value_equal(c, &r->current) && !value_equal(c, &r->configured))
		{
			*step = s;
			return true;
		}
		if (r->direction != 0)
			break;
	}
	return false;
}

/*
 * pause_search
 *		Hold the current choice, the search to go on once pilot o's trial
 *		has run.
 */
static void
pause_search(WpPilotRun *r, int o, TimestampTz now)
{
	wp_pilot_apply(r, &r->current);
	r->state = WP_PS_HOLD;
	r->hold_since = now;
	r->shift_streak = 0;
	r->idle_streak = 0;
	r->search_paused = true;
	snprintf(r->reason, sizeof(r->reason),
			 "search paused: the %s pilot waits for a trial, which goes first",
			 wp_pilot_runs[o].def->name);
	wp_decision_log(r->def->name, "-", "-", r->reason, NULL);
}

/*
 * wp_pilot_next_trial
 *		Start the search's next candidate, or hold what is current.
 */
void
wp_pilot_next_trial(WpPilotRun *r, TimestampTz now)
{
	int			o;

	/*
	 * Mid-search, a pilot that waits for a trial goes first when this
	 * one's trials are long: the search pauses with the current choice in
	 * force and goes on after it (a search of checkpoint windows would
	 * keep the other pilot waiting for hours).
	 */
	if (r->def->long_trials && r->trials_in_search > 0 &&
		(o = wp_pilot_other_waiting(r, now)) >= 0)
	{
		pause_search(r, o, now);
		return;
	}
	r->search_paused = false;
	if (r->def->rung)
	{
		WpPilotValue c;
		int			step;

		if (ladder_candidate(r, now, &c, &step))
		{
			wp_pilot_start_trial(r, &c, WP_TK_CANDIDATE, step);
			return;
		}
	}
	else
	{
		while (r->step < WP_PILOT_MAX_STEPS)
		{
			WpPilotValue c;
			bool		last = false;
			int			step = r->step++;
			bool		have = r->def->candidate(step, &r->load, &c, &last);

			if (have && step != r->skip_step &&
				!value_equal(&c, &r->current) &&
				!value_equal(&c, &r->configured) && !still_lost(r, step, now))
			{
				wp_pilot_start_trial(r, &c, WP_TK_CANDIDATE, step);
				return;
			}
			if (last)
				break;
		}
	}
	/* search over */
	wp_pilot_apply(r, &r->current);
	r->state = WP_PS_HOLD;
	r->hold_since = now;
	r->shift_streak = 0;
	r->idle_streak = 0;
}

/*
 * wp_pilot_begin_search
 *		From the configured value (idle) or keeping the held choice.
 */
void
wp_pilot_begin_search(WpPilotRun *r, TimestampTz now)
{
	r->step = 0;
	r->trials_in_search = 0;
	r->skip_step = -1;
	r->configured_p99_us = 0;
	r->direction = 0;
	memset(r->tried, 0, sizeof(r->tried));
	if (r->managing)
		wp_pilot_start_trial(r, &r->current, WP_TK_SEARCH_HELD,
							 r->current_step);
	else
		wp_pilot_next_trial(r, now);
}

/* remember that a step lost clearly, and what the verdict rested on */
static void
note_lost(WpPilotRun *r, int step, TimestampTz now)
{
	if (step < 0 || step >= WP_PILOT_MAX_STEPS)
		return;
	r->lost[step] = true;
	r->lost_at[step] = now;
	memcpy(r->lost_context[step], r->load.context, sizeof(r->load.context));
}

/* the level hold watches from now on: the verdict's, or (knob levels) the
 * first window of the hold */
static void
set_level(WpPilotRun *r, const WpTrialVerdict *v, int arm)
{
	if (r->def->rung || v == NULL)
	{
		r->level_metric = 0;
		r->level_p50 = 0;
		return;
	}
	r->level_metric = v->metric_mean[arm];
	r->level_p50 = v->p50_us[arm];
}

/*
 * after_held_trial
 *		A trial of the held choice against the configured value ended:
 *		go on with the search, hold, or idle.
 */
static void
after_held_trial(WpPilotRun *r, bool keep, TimestampTz now)
{
	if (r->kind == WP_TK_SEARCH_HELD)
	{
		r->skip_step = r->trial_step;
		wp_pilot_next_trial(r, now);
	}
	else if (keep)
	{
		r->state = WP_PS_HOLD;
		r->hold_since = now;
		if (r->recheck_s > 0)
			r->recheck_s *= 2;
	}
	else
	{
		char		t[64];
		char		why[WP_DECISION_TEXT];

		/*
		 * Hold the configured setting as a search that found nothing
		 * does: a shift of the load starts a new search at once, where a
		 * hold-off would have kept the pilot off for tune_interval through
		 * whatever load came next.
		 */
		r->state = WP_PS_HOLD;
		r->hold_since = now;
		r->shift_streak = 0;
		r->idle_streak = 0;
		format_time(wp_pilot_recheck_due(r), t, sizeof(t));
		snprintf(why, sizeof(why),
				 "a re-check found the configured setting as good: holding it until %s (walpilot.tune_interval), or a new search when the load shifts",
				 t);
		wp_decision_log(r->def->name, "-", "-", why, NULL);
	}
}

/*
 * guard_failed
 *		A candidate-arm window failed the knob's guard: the candidate lost
 *		at once (and is not tried again until its context moves).
 */
static void
guard_failed(WpPilotRun *r, const char *why, TimestampTz now)
{
	char		outcome[WP_DECISION_TEXT];

	note_lost(r, r->trial_step, now);
	if (r->trial_step >= 0 && r->trial_step < WP_PILOT_MAX_STEPS)
		r->tried[r->trial_step] = true;
	if (r->kind != WP_TK_CANDIDATE)
	{
		snprintf(outcome, sizeof(outcome), "configured setting restored: %s", why);
		r->current = r->configured;
		r->current_step = -1;
		wp_pilot_close_trial(r, outcome);
		wp_pilot_apply(r, &r->current);
		set_level(r, NULL, 0);
		after_held_trial(r, false, now);
		return;
	}
	snprintf(outcome, sizeof(outcome), "rejected: %s", why);
	wp_pilot_close_trial(r, outcome);
	wp_pilot_apply(r, &r->current);
	set_level(r, NULL, 0);
	wp_pilot_next_trial(r, now);
}

/*
 * grade_model
 *		A trial the model predicted: its prediction against what the trial
 *		measured, for walpilot.pilots.
 */
static void
grade_model(WpPilotRun *r, const WpTrialVerdict *v)
{
	if (r->trial_predicted <= 0 || v->ratio <= 0)
		return;
	r->grade.trials++;
	r->grade.last_predicted = r->trial_predicted;
	r->grade.last_measured = v->ratio;
	r->grade.error_sum += fabs(r->trial_predicted / v->ratio - 1);
}

/*
 * finish_trial
 *		Judge the trial, record its outcome on the trial row (one row per
 *		trial, also for a win), and go on.
 */
static void
finish_trial(WpPilotRun *r, TimestampTz now)
{
	WpTrialVerdict v;
	char		outcome[WP_DECISION_TEXT];
	char		tail[224];	/* fits the outcome after its longest prefix */
	bool		current_is_configured = (r->kind != WP_TK_CANDIDATE) ||
		value_equal(&r->current, &r->configured);

	/*
	 * The configured value's p99 bounds every trial of the search: its own
	 * windows' p99 when it is the current arm, else the one measured when
	 * it was.
	 */
	wp_trial_verdict(&r->trial, current_is_configured ? 0 : r->configured_p99_us,
					 &v);
	if (current_is_configured)
		r->configured_p99_us = v.p99_us[0];

	if (v.p99_bound_us > 0)
		snprintf(tail, sizeof(tail), "x%.2f (t=%.1f, keep needs %.1f, %d pairs), p99 %.0f -> %.0f us (bound %.0f); rule: %s",
				 v.ratio, v.t, v.t_keep, v.pairs, v.p99_us[0], v.p99_us[1],
				 v.p99_bound_us, v.rule);
	else
		snprintf(tail, sizeof(tail), "x%.2f (t=%.1f, keep needs %.1f, %d pairs), mean %.2f -> %.2f; rule: %s",
				 v.ratio, v.t, v.t_keep, v.pairs, v.metric_mean[0],
				 v.metric_mean[1], v.rule);
	if (r->skipped > 0)
	{
		size_t		used = strlen(tail);

		snprintf(tail + used, sizeof(tail) - used, "; %d window%s skipped",
				 r->skipped, r->skipped == 1 ? "" : "s");
	}
	if (r->trial_step >= 0 && r->trial_step < WP_PILOT_MAX_STEPS)
		r->tried[r->trial_step] = true;
	grade_model(r, &v);

	if (r->kind != WP_TK_CANDIDATE)
	{
		/* the held choice was the candidate, the configured value arm A */
		if (v.keep)
		{
			snprintf(outcome, sizeof(outcome), "held choice kept: %s", tail);
			set_level(r, &v, 1);
		}
		else
		{
			snprintf(outcome, sizeof(outcome), "configured setting restored: %s",
					 tail);
			r->current = r->configured;
			r->current_step = -1;
			if (v.worse)
				note_lost(r, r->trial_step, now);
			set_level(r, &v, 0);
		}
		wp_pilot_close_trial(r, outcome);
		wp_pilot_apply(r, &r->current);
		after_held_trial(r, v.keep, now);
		return;
	}

	if (v.keep)
	{
		snprintf(outcome, sizeof(outcome), "kept: %s", tail);
		r->recheck_s = r->def->first_recheck_s;
		if (r->def->rung)
			r->direction = r->trial_step > r->def->rung(&r->current) ? +1 : -1;
		r->current = r->candidate;
		r->current_step = r->trial_step;
		set_level(r, &v, 1);
	}
	else
	{
		snprintf(outcome, sizeof(outcome), "rejected: %s", tail);
		if (v.worse)
			note_lost(r, r->trial_step, now);
		set_level(r, &v, 0);
	}
	wp_pilot_close_trial(r, outcome);
	wp_pilot_apply(r, &r->current);
	wp_pilot_next_trial(r, now);
}

/*
 * wp_pilot_trial_window
 *		One window of a running trial.
 */
void
wp_pilot_trial_window(WpPilotRun *r, const WpPilotWindow *w, TimestampTz now)
{
	bool		cand_arm = wp_trial_window_is_candidate(&r->trial);
	const WpPilotValue *arm = cand_arm ? &r->candidate :
	(r->kind == WP_TK_CANDIDATE ? &r->current : &r->configured);
	char		why[160];
	int			o;

	r->next_arm_early = false;
	if (w->unusable || (w->has_ran_with && !value_equal(&w->ran_with, arm)))
	{
		/* nothing to learn, or not run with the arm's value: again */
		r->skipped++;
		if (r->def->max_skipped > 0 && r->skipped > r->def->max_skipped)
		{
			snprintf(why, sizeof(why), "no usable window in %d: the trial ends",
					 r->skipped);
			wp_pilot_fall_back(r, why, NULL);
			return;
		}
		wp_pilot_apply(r, arm);
		snprintf(r->reason, sizeof(r->reason), "%s: window skipped (%s), %d so far: %s",
				 r->kind == WP_TK_RECHECK ? "re-check" : "trial",
				 !w->unusable ? "not run with the value meant" :
				 w->unusable_why ? w->unusable_why : "nothing to learn from it",
				 r->skipped, r->load.numbers);
		return;
	}
	why[0] = '\0';
	if (cand_arm && r->def->guard &&
		!r->def->guard(w, r->have_last_current ? &r->last_current : NULL,
					   why, sizeof(why)))
	{
		guard_failed(r, why, now);
		return;
	}
	if (!cand_arm)
	{
		r->last_current = *w;
		r->have_last_current = true;
	}
	if (wp_trial_add_window(&r->trial, w->metric, w->length,
							w->has_hist ? w->hist : NULL))
		finish_trial(r, now);
	else if (r->def->long_trials && r->kind == WP_TK_CANDIDATE &&
			 (o = wp_pilot_other_waiting_search(r, now)) >= 0)
	{
		char		outcome[WP_DECISION_TEXT];

		/*
		 * The other pilot engaged or saw its load move: its search would
		 * wait for this trial's remaining checkpoints, and windows under
		 * the load to come would not compare with those measured.  The
		 * candidate is tried anew once that search has run.
		 */
		snprintf(outcome, sizeof(outcome),
				 "interrupted after %d of %d windows: the %s pilot waits to start a search, which goes first; this candidate is tried again after it",
				 r->trial.windows, 2 * r->trial.cfg.pairs,
				 wp_pilot_runs[o].def->name);
		r->trials_in_search--;
		wp_pilot_close_trial(r, outcome);
		pause_search(r, o, now);
	}
	else
		wp_pilot_apply(r, wp_trial_window_is_candidate(&r->trial) ?
					   &r->candidate :
					   (r->kind == WP_TK_CANDIDATE ? &r->current :
						&r->configured));
	if (r->state == WP_PS_TRIAL)
		snprintf(r->reason, sizeof(r->reason), "%s: %s",
				 r->kind == WP_TK_RECHECK ? "re-check" : "trial",
				 r->load.numbers);
}

/*
 * wp_pilot_next_arm_early
 *		The open window's event has ended but its figures are not in yet
 *		(window_ended): put the next window's arm in force now, so that the
 *		next event runs with it even when it starts before this window
 *		closes.  Not when this window is the trial's last one (or its early
 *		verdict point: what follows depends on the verdict), and not when
 *		the event did not run with its arm's value (it will be skipped and
 *		run again with that value).  In ABBA order the windows on either
 *		side of those points run the same arm, so the early switch never
 *		puts in force a value that a verdict then takes back; the checks
 *		keep it so should the order ever change.
 */
void
wp_pilot_next_arm_early(WpPilotRun *r)
{
	WpPilotValue ran_with;
	int			k = r->trial.windows;
	int			early = 2 * r->trial.cfg.early_pairs;
	const WpPilotValue *cur = r->kind == WP_TK_CANDIDATE ? &r->current :
	&r->configured;
	const WpPilotValue *arm,
			   *next;

	if (r->next_arm_early || k + 1 >= 2 * r->trial.cfg.pairs ||
		(early > 0 && k + 1 == early))
		return;
	if (!r->def->window_ended(&ran_with))
		return;
	r->next_arm_early = true;
	arm = wp_trial_arm_of(k) ? &r->candidate : cur;
	next = wp_trial_arm_of(k + 1) ? &r->candidate : cur;
	if (value_equal(&ran_with, arm) && !value_equal(next, arm))
		(void) wp_pilot_apply(r, next);
}
