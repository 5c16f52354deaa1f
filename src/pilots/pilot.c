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
 * within minutes, not at the next tune_interval).  A shift of the load
 * starts a new search: for a knob with shift_by_context, one of the
 * knob's contexts (flush time, committers, commits per flush) moved by
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
 * IDENTIFICATION
 *	  src/pilots/pilot.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "pilot.h"

#define WP_ENGAGE_WINDOWS		3
#define WP_SHIFT_RATIO			1.35
#define WP_CONTEXT_SHIFT		1.5
#define WP_SHIFT_WINDOWS		5
#define WP_IDLE_FALLBACK		10
#define WP_PILOT_CONTEXT_MOVE	0.25

/* the knobs, in the order their controllers run */
static const WpPilotDef *const pilot_defs[] = {
	&wp_pilot_commit_delay,
	&wp_pilot_checkpoint_flush,
};

#define WP_NUM_PILOTS	((int) lengthof(pilot_defs))

/* What a pilot publishes for walpilot.status; under wp_shared->lock. */
typedef struct WpPilotPublic
{
	char		state[16];
	char		current[WP_PILOT_TEXT];
	char		candidate[WP_PILOT_TEXT];
	char		reason[WP_PILOT_REASON];
} WpPilotPublic;

typedef struct WpPilotShared
{
	/* a hold-off requested from SQL (revert(), DROP EXTENSION) */
	pg_atomic_uint32 hold_requested;
	TimestampTz hold_until;		/* under lock; 0: tune_interval from now */
	char		hold_by[128];	/* under lock */
	WpPilotPublic pub[WP_NUM_PILOTS];
} WpPilotShared;

static WpPilotShared *pilot_shared = NULL;

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
	uint64		trial_decision;
	bool		trial_open;		/* trial_decision has no outcome yet */
	int			skipped;		/* unusable windows in this trial */
	bool		next_arm_early; /* window_ended seen for the open window */
	bool		have_last_current;
	WpPilotWindow last_current; /* the trial's last current-arm window */

	char		reason[WP_PILOT_REASON];
} WpPilotRun;

static WpPilotRun runs[WP_NUM_PILOTS];
static bool runs_ready = false;

/* whether the last tick was on a standby (worker only) */
static bool tick_standby = false;

Size
wp_pilot_shmem_size(void)
{
	return MAXALIGN(sizeof(WpPilotShared));
}

void
wp_pilot_shmem_init(void)
{
	bool		found;
	int			i;

	pilot_shared = ShmemInitStruct("walpilot pilots", sizeof(WpPilotShared),
								   &found);
	if (!found)
	{
		memset(pilot_shared, 0, sizeof(WpPilotShared));
		pg_atomic_init_u32(&pilot_shared->hold_requested, 0);
		for (i = 0; i < WP_NUM_PILOTS; i++)
		{
			strlcpy(pilot_shared->pub[i].state, "idle",
					sizeof(pilot_shared->pub[i].state));
			strlcpy(pilot_shared->pub[i].reason, "the worker has not started",
					sizeof(pilot_shared->pub[i].reason));
		}
	}
}

/*---- evidence ----*/

static void
ev_load(WpEvidence *e, const WpPilotLoad *load)
{
	int			i;

	for (i = 0; i < load->nvalues && i < (int) lengthof(load->names); i++)
		wp_ev_num(e, load->names[i], load->values[i]);
}

/*---- helpers ----*/

static bool
value_equal(const WpPilotValue *a, const WpPilotValue *b)
{
	return memcmp(a, b, sizeof(WpPilotValue)) == 0;
}

static void
describe(WpPilotRun *r, const WpPilotValue *v, char *buf)
{
	r->def->describe(v, buf, WP_PILOT_TEXT);
}

static void
format_time(TimestampTz t, char *buf, size_t len)
{
	strlcpy(buf, timestamptz_to_str(t), len);
}

/*
 * publish
 *		The pilot's state for walpilot.status.
 */
static void
publish(int i)
{
	WpPilotRun *r = &runs[i];
	WpPilotPublic pub;

	memset(&pub, 0, sizeof(pub));
	strlcpy(pub.state, r->state == WP_PS_IDLE ? "idle" :
			r->state == WP_PS_HOLD ? "hold" :
			r->kind == WP_TK_RECHECK ? "re-check" : "trial",
			sizeof(pub.state));
	describe(r, &r->current, pub.current);
	if (r->state == WP_PS_TRIAL)
		describe(r, &r->candidate, pub.candidate);
	strlcpy(pub.reason, r->reason, sizeof(pub.reason));

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	pilot_shared->pub[i] = pub;
	LWLockRelease(wp_shared->lock);
}

/*
 * apply
 *		Publish v.  A knob that cannot (a file that cannot be written)
 *		marks the pilot broken; pilot_step() then stops it.
 */
static bool
apply(WpPilotRun *r, const WpPilotValue *v)
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

/* a knob's own figure, or pilot.c's default */
#define DEF_INT(x, d)	((x) > 0 ? (x) : (d))
#define DEF_DBL(x, d)	((x) > 0 ? (x) : (d))

/*
 * close_trial
 *		Give the open trial row its outcome (and say it in the log).
 */
static void
close_trial(WpPilotRun *r, const char *outcome)
{
	if (!r->trial_open)
		return;
	r->trial_open = false;
	wp_decision_set_outcome(r->trial_decision, outcome);
	ereport(LOG,
			(errmsg("walpilot trial on %s ended: %s", r->def->name, outcome)));
}

/*
 * fall_back
 *		Put the configured value back and go idle, with a decision row
 *		naming what was really in force.  An open trial is closed as
 *		interrupted first.
 */
static void
fall_back(WpPilotRun *r, const char *reason)
{
	char		from[WP_PILOT_TEXT];
	char		to[WP_PILOT_TEXT];

	if (r->trial_open)
	{
		char		outcome[WP_DECISION_TEXT];

		snprintf(outcome, sizeof(outcome), "interrupted: %s", reason);
		close_trial(r, outcome);
	}
	if (r->managing || !value_equal(&r->in_force, &r->configured))
	{
		describe(r, &r->in_force, from);
		describe(r, &r->configured, to);
		wp_decision_log(r->def->name, from, to, reason, NULL);
	}
	apply(r, &r->configured);
	r->current = r->configured;
	r->current_step = -1;
	r->state = WP_PS_IDLE;
	r->engage_streak = 0;
	r->idle_streak = 0;
	r->shift_streak = 0;
	r->search_paused = false;
}

static TimestampTz
tune_interval_from(TimestampTz t)
{
	return t + (TimestampTz) wp_tune_interval_s * USECS_PER_SEC;
}

/*
 * recheck_due
 *		When the held choice is re-checked: walpilot.tune_interval after the
 *		hold began, or sooner for a knob with first_recheck_s while its
 *		choice is new (recheck_s doubles with every re-check passed).
 */
static TimestampTz
recheck_due(WpPilotRun *r)
{
	int			s = wp_tune_interval_s;

	if (r->managing && r->recheck_s > 0 && r->recheck_s < s)
		s = r->recheck_s;
	return r->hold_since + (TimestampTz) s * USECS_PER_SEC;
}

/*
 * hold_end
 *		When the hold-off ends (0: none).  walpilot.tune_interval is read
 *		per call, so a reload that shortens it ends a running hold-off.
 */
static TimestampTz
hold_end(WpPilotRun *r)
{
	if (r->hold_from == 0)
		return 0;
	return r->hold_fixed != 0 ? r->hold_fixed : tune_interval_from(r->hold_from);
}

/*
 * hold_off
 *		No new search before until (0: walpilot.tune_interval from now); a
 *		decision row and a LOG line say why.
 */
static void
hold_off(WpPilotRun *r, TimestampTz until, const char *why,
		 const char *evidence)
{
	char		t[64];
	char		reason[WP_DECISION_TEXT];

	r->hold_from = GetCurrentTimestamp();
	r->hold_fixed = until;
	strlcpy(r->hold_why, why, sizeof(r->hold_why));
	format_time(hold_end(r), t, sizeof(t));
	snprintf(reason, sizeof(reason), "held off until %s%s: %s", t,
			 until == 0 ? " (walpilot.tune_interval)" : "", why);
	wp_decision_log(r->def->name, "-", "-", reason, evidence);
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
		if (&runs[i] != r && runs[i].state == WP_PS_TRIAL)
			return i;
	return -1;
}

/*
 * wait_for_other
 *		A trial of this pilot is due: true (and the reason says so) when it
 *		must wait for another pilot's trial to end.  The first wait writes
 *		a decision row.
 */
static bool
wait_for_other(WpPilotRun *r, const char *what)
{
	int			o = other_trial(r);
	char		why[160];

	if (o < 0)
	{
		if (r->waited)
			ereport(LOG,
					(errmsg("walpilot %s pilot: no other trial runs now, its %s starts",
							r->def->name, what)));
		r->waiting = r->waited = false;
		return false;
	}
	snprintf(why, sizeof(why),
			 "waiting: the %s trial runs, this %s starts after it (trials never overlap)",
			 runs[o].def->name, what);
	if (!r->waited)
		wp_decision_log(r->def->name, "-", "-", why, NULL);
	r->waiting = true;
	strlcpy(r->reason, why, sizeof(r->reason));
	return true;
}

/* another pilot waits for a trial of its own (-1: none) */
static int
other_waiting(WpPilotRun *r)
{
	int			i;

	for (i = 0; i < WP_NUM_PILOTS; i++)
		if (&runs[i] != r && runs[i].waiting)
			return i;
	return -1;
}

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
		now >= tune_interval_from(r->lost_at[step]))
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

static void
start_trial(WpPilotRun *r, const WpPilotValue *cand, WpTrialKind kind,
			int step)
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
	r->hold_ref_set = false;

	wp_ev_begin(&e);
	ev_load(&e, &r->load);
	wp_ev_num(&e, "pairs", cfg.pairs);
	if (r->trials_in_search == 0 && r->confirm_why[0])
		wp_ev_str(&e, "confirmed_by", r->confirm_why);
	r->confirm_why[0] = '\0';
	if (r->configured_p99_us > 0)
		wp_ev_num(&e, "p99_us_configured", r->configured_p99_us);

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
	r->trial_decision = wp_decision_log(r->def->name, in_force, other, reason,
										wp_ev_end(&e));
	ereport(LOG,
			(errmsg("walpilot trial on %s starts: %s", r->def->name, reason)));
	r->trials_in_search++;
	r->trial_open = true;

	/* window 0 of ABBA runs the current arm: the configured value here */
	if (kind != WP_TK_CANDIDATE)
		apply(r, &r->configured);
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
 * next_trial
 *		Start the search's next candidate, or hold what is current.
 */
static void
next_trial(WpPilotRun *r, TimestampTz now)
{
	int			o;

	/*
	 * Mid-search, a pilot that waits for a trial goes first: the search
	 * pauses with the current choice in force and goes on after it (a
	 * search of checkpoint windows would keep the other pilot waiting for
	 * hours).
	 */
	if (r->trials_in_search > 0 && (o = other_waiting(r)) >= 0)
	{
		apply(r, &r->current);
		r->state = WP_PS_HOLD;
		r->hold_since = now;
		r->shift_streak = 0;
		r->idle_streak = 0;
		r->search_paused = true;
		snprintf(r->reason, sizeof(r->reason),
				 "search paused: the %s pilot waits for a trial, which goes first",
				 runs[o].def->name);
		wp_decision_log(r->def->name, "-", "-", r->reason, NULL);
		return;
	}
	r->search_paused = false;
	if (r->def->rung)
	{
		WpPilotValue c;
		int			step;

		if (ladder_candidate(r, now, &c, &step))
		{
			start_trial(r, &c, WP_TK_CANDIDATE, step);
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
				start_trial(r, &c, WP_TK_CANDIDATE, step);
				return;
			}
			if (last)
				break;
		}
	}
	/* search over */
	apply(r, &r->current);
	r->state = WP_PS_HOLD;
	r->hold_since = now;
	r->shift_streak = 0;
	r->idle_streak = 0;
}

/*
 * begin_search
 *		From the configured value (idle) or keeping the held choice.
 */
static void
begin_search(WpPilotRun *r, TimestampTz now)
{
	r->step = 0;
	r->trials_in_search = 0;
	r->skip_step = -1;
	r->configured_p99_us = 0;
	r->direction = 0;
	memset(r->tried, 0, sizeof(r->tried));
	if (r->managing)
		start_trial(r, &r->current, WP_TK_SEARCH_HELD,
					r->current_step);
	else
		next_trial(r, now);
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
		next_trial(r, now);
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
		r->state = WP_PS_IDLE;
		hold_off(r, 0,
				 "a re-check found the configured setting as good", NULL);
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
		close_trial(r, outcome);
		apply(r, &r->current);
		set_level(r, NULL, 0);
		after_held_trial(r, false, now);
		return;
	}
	snprintf(outcome, sizeof(outcome), "rejected: %s", why);
	close_trial(r, outcome);
	apply(r, &r->current);
	set_level(r, NULL, 0);
	next_trial(r, now);
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
	char		tail[192];
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
	if (r->trial_step >= 0 && r->trial_step < WP_PILOT_MAX_STEPS)
		r->tried[r->trial_step] = true;

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
		close_trial(r, outcome);
		apply(r, &r->current);
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
	close_trial(r, outcome);
	apply(r, &r->current);
	next_trial(r, now);
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
		fall_back(r, why);
	if (!r->stopped || strcmp(why, r->reason) != 0)
		ereport(LOG,
				(errmsg("walpilot %s pilot does not tune", r->def->name),
				 errdetail_internal("%s", why)));
	r->stopped = true;
	r->state = WP_PS_IDLE;
	r->current = r->configured;
	r->current_step = -1;
	r->waiting = r->waited = false;
	r->search_paused = false;
	strlcpy(r->reason, why, sizeof(r->reason));
	return true;
}

/*
 * stop_broken
 *		A value could not be applied: the configuration goes back as far as
 *		it can, and the pilot stops until the worker restarts, with a
 *		WARNING and a decision row.
 */
static void
stop_broken(WpPilotRun *r)
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
		close_trial(r, outcome);
	}
	r->def->withdraw();
	r->managing = false;
	r->in_force = r->current = r->configured;
	r->current_step = -1;
	r->state = WP_PS_IDLE;
	r->waiting = false;
	ereport(WARNING,
			(errmsg("walpilot stops tuning %s", r->def->name),
			 errdetail_internal("%s", why)));
	wp_decision_log(r->def->name, "-", "-", why, NULL);
	strlcpy(r->reason, why, sizeof(r->reason));
}

/*
 * trial_window
 *		One window of a running trial.
 */
static void
trial_window(WpPilotRun *r, const WpPilotWindow *w, TimestampTz now)
{
	bool		cand_arm = wp_trial_window_is_candidate(&r->trial);
	const WpPilotValue *arm = cand_arm ? &r->candidate :
	(r->kind == WP_TK_CANDIDATE ? &r->current : &r->configured);
	char		why[160];

	r->next_arm_early = false;
	if (w->unusable || (w->has_ran_with && !value_equal(&w->ran_with, arm)))
	{
		/* nothing to learn, or not run with the arm's value: again */
		r->skipped++;
		if (r->def->max_skipped > 0 && r->skipped > r->def->max_skipped)
		{
			snprintf(why, sizeof(why), "no usable window in %d: the trial ends",
					 r->skipped);
			fall_back(r, why);
			return;
		}
		apply(r, arm);
		snprintf(r->reason, sizeof(r->reason), "%s: window skipped (%s), %d so far: %s",
				 r->kind == WP_TK_RECHECK ? "re-check" : "trial",
				 w->unusable ? "nothing to learn from it" : "not run with the value meant",
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
	else
		apply(r, wp_trial_window_is_candidate(&r->trial) ?
			  &r->candidate :
			  (r->kind == WP_TK_CANDIDATE ? &r->current : &r->configured));
	if (r->state == WP_PS_TRIAL)
		snprintf(r->reason, sizeof(r->reason), "%s: %s",
				 r->kind == WP_TK_RECHECK ? "re-check" : "trial",
				 r->load.numbers);
}

/*
 * next_arm_early
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
static void
next_arm_early(WpPilotRun *r)
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
		(void) apply(r, next);
}

/*
 * context_shifted
 *		Has one of the knob's contexts moved by WP_CONTEXT_SHIFT from what
 *		the hold's first window saw?  That window sets the reference; the
 *		first context that moved is named in r->shift_why.
 */
static bool
context_shifted(WpPilotRun *r, const WpPilotLoad *load)
{
	int			k;

	if (!r->hold_ref_set)
	{
		memcpy(r->hold_ref, load->context, sizeof(r->hold_ref));
		r->hold_ref_set = true;
		return false;
	}
	for (k = 0; k < WP_PILOT_CONTEXTS; k++)
	{
		double		then = r->hold_ref[k];
		double		now = load->context[k];

		if (then <= 0 || now <= 0)
			continue;
		if (now > then * WP_CONTEXT_SHIFT || now < then / WP_CONTEXT_SHIFT)
		{
			const char *name = r->def->context_names[k] ?
				r->def->context_names[k] : "context";

			snprintf(r->shift_why, sizeof(r->shift_why),
					 "%s moved from %.1f to %.1f (x%.2f, needs x%.1f for %d windows)",
					 name, then, now, now / then, WP_CONTEXT_SHIFT,
					 DEF_INT(r->def->shift_windows, WP_SHIFT_WINDOWS));
			return true;
		}
	}
	return false;
}

static void
pilot_window(WpPilotRun *r, const WpPilotWindow *w, TimestampTz now)
{
	WpPilotLoad load;
	char		t[64];
	int			engage_windows = DEF_INT(r->def->engage_windows, WP_ENGAGE_WINDOWS);
	int			shift_windows = DEF_INT(r->def->shift_windows, WP_SHIFT_WINDOWS);
	double		shift = DEF_DBL(r->def->shift_ratio, WP_SHIFT_RATIO);
	const char *unsuited = r->def->unsuited ? r->def->unsuited : "not flush-bound";

	memset(&load, 0, sizeof(load));
	r->def->engage(w, &load);

	/* waiting is re-decided at every window of this pilot */
	r->waited = r->waiting;
	r->waiting = false;

	switch (r->state)
	{
		case WP_PS_IDLE:
			if (hold_end(r) > now)
			{
				r->engage_streak = 0;
				format_time(hold_end(r), t, sizeof(t));
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
			if (wait_for_other(r, "search"))
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
					hold_off(r, 0, what, wp_ev_end(&e));
					format_time(hold_end(r), t, sizeof(t));
					snprintf(r->reason, sizeof(r->reason),
							 "held off until %s: %s", t, what);
					break;
				}
			}
			r->load = load;
			r->shift_why[0] = '\0';
			begin_search(r, now);
			break;

		case WP_PS_TRIAL:
			trial_window(r, w, now);
			break;

		case WP_PS_HOLD:
			if (r->search_paused)
			{
				int			o;

				if (wait_for_other(r, "search"))
					break;
				if ((o = other_waiting(r)) >= 0)
				{
					snprintf(r->reason, sizeof(r->reason),
							 "search paused: the %s pilot waits for a trial, which goes first",
							 runs[o].def->name);
					break;
				}
				/* the search goes on where it paused */
				ereport(LOG,
						(errmsg("walpilot %s pilot: the paused search goes on",
								r->def->name)));
				r->search_paused = false;
				if (r->load.nvalues == 0)
					r->load = load;
				next_trial(r, now);
				break;
			}
			if (!load.active)
			{
				if (++r->idle_streak >= WP_IDLE_FALLBACK)
				{
					/* no hold-off: the pilot re-engages when the load returns */
					if (r->managing)
						fall_back(r, "the load is gone: configured setting back until it returns");
					r->state = WP_PS_IDLE;
				}
				snprintf(r->reason, sizeof(r->reason), "holding; no load for %d windows: %s",
						 r->idle_streak, load.numbers);
				break;
			}
			r->idle_streak = 0;
			if (w->unusable)
				break;			/* a CHECKPOINT command tells nothing */
			if (r->def->shift_by_context)
			{
				if (context_shifted(r, &load))
					r->shift_streak++;
				else
					r->shift_streak = 0;
			}
			else
			{
				double		l0 = w->has_levels ? w->level[0] : w->metric;
				double		l1 = w->has_levels ? w->level[1] : w->p50_us;

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
					r->shift_streak++;
					snprintf(r->shift_why, sizeof(r->shift_why),
							 "the load level moved from %.0f to %.0f",
							 r->level_metric, l0);
				}
				else
					r->shift_streak = 0;
			}

			if (r->shift_streak >= shift_windows)
			{
				if (load.suits)
				{
					if (wait_for_other(r, "new search"))
					{
						r->shift_streak = shift_windows - 1;
						break;
					}
					/* a new search that keeps the held choice in force */
					r->shift_streak = 0;
					r->load = load;
					begin_search(r, now);
				}
				else if (r->managing)
				{
					r->shift_streak = 0;
					fall_back(r, "the load shifted and is no longer flush-bound");
				}
				else
				{
					r->shift_streak = 0;
					r->state = WP_PS_IDLE;
				}
				break;
			}
			if (now >= recheck_due(r))
			{
				if (r->managing)
				{
					if (wait_for_other(r, "re-check"))
						break;
					r->load = load;
					start_trial(r, &r->current, WP_TK_RECHECK,
								r->current_step);
					break;
				}
				/*
				 * holding the configured value: look again (a knob whose
				 * losses expire only when their context moves keeps them)
				 */
				r->state = WP_PS_IDLE;
				if (!r->def->lost_until_moved)
					memset(r->lost, 0, sizeof(r->lost));
				break;
			}
			{
				char		cur[WP_PILOT_TEXT];
				char		next[64];

				describe(r, &r->current, cur);
				format_time(recheck_due(r), next, sizeof(next));
				snprintf(r->reason, sizeof(r->reason),
						 "holding %s%s; next re-check %s; %s", cur,
						 r->managing ? "" : " (no candidate beat it)", next,
						 load.numbers);
			}
			break;
	}
}

/*
 * take_hold_request
 *		A hold-off requested from SQL (revert(), DROP EXTENSION).
 */
static void
take_hold_request(void)
{
	TimestampTz until;
	char		by[128];
	char		t[64];
	int			i;

	if (!pg_atomic_exchange_u32(&pilot_shared->hold_requested, 0))
		return;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	until = pilot_shared->hold_until;
	strlcpy(by, pilot_shared->hold_by, sizeof(by));
	LWLockRelease(wp_shared->lock);
	for (i = 0; i < WP_NUM_PILOTS; i++)
	{
		WpPilotRun *r = &runs[i];

		if (r->broken)
			continue;
		fall_back(r, by);
		hold_off(r, until, by, NULL);
		format_time(hold_end(r), t, sizeof(t));
		snprintf(r->reason, sizeof(r->reason), "held off until %s: %s", t, by);
		if (r->broken)
			stop_broken(r);
		publish(i);
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

	if (pilot_shared == NULL)
		return;
	if (!runs_ready)
		wp_pilot_worker_start();
	if (standby)
	{
		for (i = 0; i < WP_NUM_PILOTS; i++)
		{
			WpPilotRun *r = &runs[i];
			bool		was_stopped = r->stopped;
			char		before[WP_PILOT_REASON];

			strlcpy(before, r->reason, sizeof(before));
			(void) not_tuning(r, false, true);
			if (r->stopped != was_stopped || strcmp(before, r->reason) != 0)
				publish(i);
		}
		tick_standby = true;
		return;
	}
	if (tick_standby)
	{
		for (i = 0; i < WP_NUM_PILOTS; i++)
		{
			WpPilotRun *r = &runs[i];

			r->pin_why[0] = '\0';
			r->free_to_tune = r->def->configured(&r->configured, r->pin_why,
												 sizeof(r->pin_why));
			r->def->restart_window(now);
		}
		tick_standby = false;
	}
	take_hold_request();

	for (i = 0; i < WP_NUM_PILOTS; i++)
	{
		WpPilotRun *r = &runs[i];
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
				next_arm_early(r);
		}
		if (r->broken)
			stop_broken(r);
		if (closed || r->stopped != was_stopped || r->broken)
			publish(i);
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

	if (pilot_shared == NULL || !runs_ready)
		return;
	for (i = 0; i < WP_NUM_PILOTS; i++)
	{
		WpPilotRun *r = &runs[i];

		if (r->managing || r->state != WP_PS_IDLE || r->trial_open)
			fall_back(r, why);
		r->def->withdraw();
		strlcpy(r->reason, why, sizeof(r->reason));
		publish(i);
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

	memset(runs, 0, sizeof(runs));
	for (i = 0; i < WP_NUM_PILOTS; i++)
	{
		WpPilotRun *r = &runs[i];

		r->def = pilot_defs[i];
		r->def->withdraw();
		r->free_to_tune = r->def->configured(&r->configured, r->pin_why,
											 sizeof(r->pin_why));
		r->current = r->in_force = r->configured;
		r->current_step = -1;
		r->state = WP_PS_IDLE;
		strlcpy(r->reason, "starting: no window measured yet", sizeof(r->reason));
		r->def->restart_window(GetCurrentTimestamp());
		publish(i);
	}
	runs_ready = true;
}

/*
 * wp_pilot_request_hold_off
 *		SQL or commit path: put every configured value back at once, and
 *		have the worker hold every pilot off until `until` (0:
 *		walpilot.tune_interval from when it sees the request), saying `by`
 *		(who, where) in its rows and in walpilot.status.pilot_reason.  No
 *		catalog access, no allocation, no error: callable at
 *		XACT_EVENT_COMMIT.
 */
void
wp_pilot_request_hold_off(const char *by, TimestampTz until)
{
	int			i;

	if (pilot_shared == NULL)
		return;
	for (i = 0; i < WP_NUM_PILOTS; i++)
		pilot_defs[i]->withdraw();
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	pilot_shared->hold_until = until;
	strlcpy(pilot_shared->hold_by, by, sizeof(pilot_shared->hold_by));
	LWLockRelease(wp_shared->lock);
	pg_atomic_write_u32(&pilot_shared->hold_requested, 1);
}

/*
 * wp_pilot_request_revert
 *		The same, when the caller cannot say more.
 */
void
wp_pilot_request_revert(void)
{
	wp_pilot_request_hold_off("walpilot.revert() or DROP EXTENSION", 0);
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
		if (runs[i].state == WP_PS_TRIAL)
			return true;
	return false;
}

/*
 * wp_pilot_describe
 *		The commit_delay pilot's state for walpilot.status.
 */
void
wp_pilot_describe(char *st, char *cur, char *cand, size_t len)
{
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	strlcpy(st, pilot_shared->pub[0].state, len);
	strlcpy(cur, pilot_shared->pub[0].current, len);
	strlcpy(cand, pilot_shared->pub[0].candidate, len);
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_pilot_reason
 *		Why pilot i is idle or holding (walpilot.status.pilot_reason).
 */
void
wp_pilot_reason(int pilot, char *buf, size_t len)
{
	if (pilot < 0 || pilot >= WP_NUM_PILOTS)
	{
		buf[0] = '\0';
		return;
	}
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	strlcpy(buf, pilot_shared->pub[pilot].reason, len);
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_pilot_rows
 *		One row per pilot, in the order the controllers run, for
 *		walpilot.pilots: copied under the lock.  out[] holds
 *		WP_PILOT_ROWS_MAX rows; returns how many it filled.
 */
int
wp_pilot_rows(WpPilotRow *out)
{
	WpPilotPublic pub[WP_NUM_PILOTS];
	int			i;

	StaticAssertStmt(WP_NUM_PILOTS <= WP_PILOT_ROWS_MAX,
					 "WP_PILOT_ROWS_MAX is too small");
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	memcpy(pub, pilot_shared->pub, sizeof(pub));
	LWLockRelease(wp_shared->lock);
	for (i = 0; i < WP_NUM_PILOTS; i++)
	{
		strlcpy(out[i].name, pilot_defs[i]->name, sizeof(out[i].name));
		strlcpy(out[i].state, pub[i].state, sizeof(out[i].state));
		strlcpy(out[i].current, pub[i].current, sizeof(out[i].current));
		strlcpy(out[i].candidate, pub[i].candidate, sizeof(out[i].candidate));
		strlcpy(out[i].reason, pub[i].reason, sizeof(out[i].reason));
	}
	return WP_NUM_PILOTS;
}
