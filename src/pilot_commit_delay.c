/*-------------------------------------------------------------------------
 *
 * pilot_commit_delay.c
 *		The commit_delay / commit_siblings pilot's controller: engage,
 *		trial, keep or revert.  Its backend side, the group gather, is
 *		gather.c.
 *
 * Controller (worker, once a second).  It engages only when commits are
 * flush-bound: enough durable commits, several concurrent committers, and
 * a slow WAL flush (the storage estimate).  It then runs on-line
 * trials: the candidate and the current setting alternate in one-second
 * windows (ABBA order, WP_TRIAL_PAIRS pairs, or WP_TRIAL_EARLY_PAIRS when
 * the verdict is already clear); a candidate is kept only if
 * its commits/s are higher with one-sided 95 % confidence (paired t-test
 * on log ratios) -- or, when throughput is unchanged (an open-loop load),
 * its median latency is lower -- and its p99 commit latency is no more
 * than walpilot.max_latency_regression above the configured setting's (or
 * the current choice's, if higher).  Candidates: gather, then
 * static delays of 1/4 and 1/8 of the flush time with siblings 1 (what the
 * benchmarks found best, the seeds' 1/2 rule being too long).  It re-checks
 * its choice against the DBA's setting every walpilot.tune_interval and at
 * once when throughput or latency shift, and falls back to the DBA's
 * setting when the load stops being flush-bound or a re-check fails.
 *
 * IDENTIFICATION
 *	  src/pilot_commit_delay.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "walpilot.h"

/* GUC variables */
bool		wp_tune_commit_delay = true;
int			wp_commit_delay_max_us = 10000;
int			wp_max_latency_regression_pct = 10;
int			wp_tune_interval_s = 600;

/* Controller constants (see the header comment). */
#define WP_TRIAL_PAIRS			8
#define WP_TRIAL_EARLY_PAIRS	4	/* a clear verdict may end a trial here */
#define WP_ENGAGE_MIN_COMMITS	20		/* durable commits per second */
#define WP_ENGAGE_MIN_FLUSH_US	500		/* slower flushes: worth a trial */
#define WP_CONFIRM_MIN_FLUSH_US	400		/* ... if a probe confirms it */
#define WP_ENGAGE_SECONDS		3
#define WP_MIN_GAIN				1.02	/* geometric-mean ratio to keep */
#define WP_SHIFT_RATIO			1.35	/* a workload or storage shift */
#define WP_SHIFT_SECONDS		5
#define WP_IDLE_FALLBACK_S		10
#define WP_GATHER_MIN_CAP_US	50

typedef struct WpPilotShared
{
	/* requests from SQL to the worker */
	pg_atomic_uint32 revert_requested;

	/* controller state for the views; protected by wp_shared->lock */
	char		state[64];
	char		current[64];
	char		candidate[64];
} WpPilotShared;

static WpPilotShared *pilot = NULL;

/* A setting the controller can choose. */
typedef struct WpChoice
{
	bool		gather;
	int			delay_us;
	int			siblings;
} WpChoice;

typedef enum WpPilotState
{
	WP_PS_IDLE,					/* DBA settings in force, watching */
	WP_PS_TRIAL,				/* alternating candidate and current */
	WP_PS_HOLD					/* a choice in force, watching for shifts */
} WpPilotState;

/* One second of measurement, from cumulative counters. */
typedef struct WpSecondStats
{
	double		commits;
	uint64		hist[WP_HIST_BUCKETS];
} WpSecondStats;

/*---- worker-local controller state ----*/
static WpPilotState state = WP_PS_IDLE;
static bool managing = false;
static WpChoice current;
static WpChoice candidate;
static WpChoice dba;
static int	engage_streak = 0;
static int	idle_streak = 0;
static int	shift_streak = 0;
static double level_commits = 0;
static double level_p50 = 0;
static TimestampTz recheck_from = 0;	/* 0: no hold-off */
static int	search_step = 0;
static double flush_estimate_us = 0;
static double configured_p99_us = 0;	/* the DBA's setting, this search */
static uint64 trial_decision = 0;
static bool trial_is_recheck = false;

/* trial windows: index 2*pair + (0 = current, 1 = candidate) */
static int	trial_window = 0;
static double trial_commits[2 * WP_TRIAL_PAIRS];
static uint64 trial_hist[2][WP_HIST_BUCKETS];

/* previous cumulative snapshot and the last seconds */
static uint64 prev_commits = 0;
static uint64 prev_hist[WP_HIST_BUCKETS];
static bool have_prev = false;
static TimestampTz last_second = 0;
static TimestampTz last_group_update = 0;
static double last_p50_us = 0;	/* commit p50 of the last second */

/*
 * recheck_due
 *		Is walpilot.tune_interval over since recheck_from?  The setting is
 *		read per call, so a reload that shortens it ends a running hold-off.
 */
static bool
recheck_due(void)
{
	return recheck_from == 0 ||
		GetCurrentTimestamp() >= recheck_from +
		(TimestampTz) wp_tune_interval_s * USECS_PER_SEC;
}

Size
wp_pilot_shmem_size(void)
{
	return MAXALIGN(sizeof(WpPilotShared));
}

void
wp_pilot_shmem_init(void)
{
	bool		found;

	pilot = ShmemInitStruct("walpilot pilot", sizeof(WpPilotShared), &found);
	if (!found)
	{
		memset(pilot, 0, sizeof(WpPilotShared));
		pg_atomic_init_u32(&pilot->revert_requested, 0);
		strlcpy(pilot->state, "idle", sizeof(pilot->state));
	}
}

/*---- helpers ----*/

/*
 * hist_quantile
 *		Quantile q of a commit-timing histogram (interpolated in a bucket).
 */
static double
hist_quantile(const uint64 *hist, double q)
{
	uint64		total = 0;
	int			i;

	for (i = 0; i < WP_HIST_BUCKETS; i++)
		total += hist[i];
	return wp_hist_percentile(hist, total, q, 0);
}

/*---- worker side: measurement ----*/

/*
 * take_second
 *		Per-second commits and latency histogram from the cumulative
 *		counters.
 */
static void
take_second(WpSecondStats *s)
{
	WpCommitTotals *t = palloc(sizeof(WpCommitTotals));
	int			i;

	/* raw totals: walpilot.reset() does not disturb the pilot's windows */
	wp_commit_totals_raw(t);
	s->commits = (double) (t->durable - prev_commits);
	prev_commits = t->durable;
	for (i = 0; i < WP_HIST_BUCKETS; i++)
	{
		s->hist[i] = t->hist[i] - prev_hist[i];
		prev_hist[i] = t->hist[i];
	}
	pfree(t);
}

/*---- worker side: applying choices ----*/

static void
choice_text(const WpChoice *c, char *buf, size_t len)
{
	if (c->gather)
		snprintf(buf, len, "gather(cap %d us, siblings %d)", c->delay_us,
				 c->siblings);
	else
		snprintf(buf, len, "delay %d us, siblings %d", c->delay_us,
				 c->siblings);
}

static bool
choice_equal(const WpChoice *a, const WpChoice *b)
{
	return a->gather == b->gather && a->delay_us == b->delay_us &&
		a->siblings == b->siblings;
}

/*
 * apply_choice
 *		Publish a choice to every backend (the DBA's = stop managing).
 */
static void
apply_choice(const WpChoice *c)
{
	int32		targets[WP_NUM_KNOBS];
	bool		is_dba = choice_equal(c, &dba);

	targets[WP_KNOB_COMMIT_DELAY] = c->delay_us;
	targets[WP_KNOB_COMMIT_SIBLINGS] = c->siblings;
	wp_gather_set_enabled(c->gather);
	wp_settings_publish(!is_dba, targets);
	managing = !is_dba;
}

static void
publish_state(const char *what)
{
	char		cur[64];
	char		cand[64];

	choice_text(&current, cur, sizeof(cur));
	if (state == WP_PS_TRIAL)
		choice_text(&candidate, cand, sizeof(cand));
	else
		cand[0] = '\0';
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	strlcpy(pilot->state, what, sizeof(pilot->state));
	strlcpy(pilot->current, cur, sizeof(pilot->current));
	strlcpy(pilot->candidate, cand, sizeof(pilot->candidate));
	LWLockRelease(wp_shared->lock);
}

/*
 * change_to
 *		Make a choice current, with a decision row.
 */
static uint64
change_to(const WpChoice *c, const char *reason, const char *evidence)
{
	char		from[64];
	char		to[64];
	uint64		id;

	choice_text(&current, from, sizeof(from));
	choice_text(c, to, sizeof(to));
	id = wp_decision_log("commit_delay", from, to, reason, evidence);
	current = *c;
	apply_choice(c);
	return id;
}

/*
 * fall_back
 *		Put the DBA's settings back and go idle.
 */
static void
fall_back(const char *reason, bool hold_off)
{
	if (managing || !choice_equal(&current, &dba))
		change_to(&dba, reason, NULL);
	state = WP_PS_IDLE;
	engage_streak = 0;
	search_step = 0;
	configured_p99_us = 0;
	if (hold_off)
		recheck_from = GetCurrentTimestamp();
	publish_state("idle");
}

/*---- worker side: trials ----*/

static bool
next_candidate(WpChoice *c)
{
	double		f = Max(flush_estimate_us, 100.0);
	int			cap = (int) Min((double) wp_commit_delay_max_us, f);

	for (;;)
	{
		switch (search_step++)
		{
			case 0:
				/* the cap bounds a wait whose wake-up signal was lost */
				c->gather = true;
				c->delay_us = Max(cap / 2, WP_GATHER_MIN_CAP_US);
				c->siblings = 0;	/* a lone committer skips the sleep */
				break;
			case 1:
				c->gather = false;
				c->delay_us = (int) Min((double) wp_commit_delay_max_us, f / 4);
				c->siblings = 1;
				break;
			case 2:
				c->gather = false;
				c->delay_us = (int) Min((double) wp_commit_delay_max_us, f / 8);
				c->siblings = 1;
				break;
			default:
				return false;
		}
		if (c->delay_us > 0 && !choice_equal(c, &current))
			return true;
	}
}

static void
start_trial(const WpChoice *c, bool recheck)
{
	char		cur[64];
	char		cand[64];
	char		evidence[256];

	candidate = *c;
	trial_window = 0;
	trial_is_recheck = recheck;
	memset(trial_commits, 0, sizeof(trial_commits));
	memset(trial_hist, 0, sizeof(trial_hist));
	state = WP_PS_TRIAL;
	choice_text(&current, cur, sizeof(cur));
	choice_text(c, cand, sizeof(cand));
	snprintf(evidence, sizeof(evidence),
			 "{\"flush_estimate_us\": %.0f, \"commits_per_s\": %.0f, \"commit_p50_us\": %.0f, \"pairs\": %d}",
			 flush_estimate_us, level_commits, level_p50, WP_TRIAL_PAIRS);
	trial_decision = wp_decision_log("commit_delay", cur, cand,
									 recheck ? "re-check: trial against the configured setting" :
									 "trial: flush-bound commits",
									 evidence);
}

/* window w of a trial runs the candidate when this is true (ABBA) */
static bool
window_is_candidate(int w)
{
	int			pair = w / 2;
	int			second = w % 2;

	return (pair % 2 == 0) ? second == 1 : second == 0;
}

static double
t_critical_95(int df)
{
	static const double t[] = {6.314, 2.920, 2.353, 2.132, 2.015, 1.943,
	1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753};

	return t[Min(Max(df, 1), 15) - 1];
}

/* one-sided 99.9 % critical values: the bar for stopping a trial early */
static double
t_critical_999(int df)
{
	static const double t[] = {318.3, 22.33, 10.21, 7.173, 5.893, 5.208,
	4.785, 4.501, 4.297, 4.144, 4.025, 3.930, 3.852, 3.787, 3.733};

	return t[Min(Max(df, 1), 15) - 1];
}

/*
 * pair_stats
 *		Paired t statistic and geometric-mean ratio (candidate / current)
 *		of commits over the first npairs pairs; their commit sums too.
 */
static double
pair_stats(int npairs, double *gain, double *commits)
{
	double		sum = 0,
				sumsq = 0,
				mean,
				sd;
	int			i;

	commits[0] = commits[1] = 0;
	for (i = 0; i < npairs; i++)
	{
		/* within pair i: a = current, b = candidate */
		bool		cand_first = window_is_candidate(2 * i);
		double		a = trial_commits[2 * i + (cand_first ? 1 : 0)];
		double		b = trial_commits[2 * i + (cand_first ? 0 : 1)];
		double		r = log((b + 1) / (a + 1));

		sum += r;
		sumsq += r * r;
		commits[0] += a;
		commits[1] += b;
	}
	mean = sum / npairs;
	sd = sqrt(Max(0.0, (sumsq - npairs * mean * mean) / (npairs - 1)));
	*gain = exp(mean);
	if (sd > 0)
		return mean / (sd / sqrt(npairs));
	return mean > 0 ? 99 : (mean < 0 ? -99 : 0);
}

/*
 * finish_trial
 *		Judge the candidate against the current setting.
 */
static void
finish_trial(int npairs)
{
	double		tstat,
				gain,
				tcrit = t_critical_95(npairs - 1);
	double		p50[2],
				p99[2],
				commits[2];
	int			i;
	bool		better_tps,
				worse_tps,
				better_latency,
				p99_ok,
				keep;
	char		evidence[480];
	char		outcome[160];

	tstat = pair_stats(npairs, &gain, commits);
	for (i = 0; i < 2; i++)
	{
		p50[i] = hist_quantile(trial_hist[i], 0.50);
		p99[i] = hist_quantile(trial_hist[i], 0.99);
	}

	better_tps = tstat >= tcrit && gain >= WP_MIN_GAIN;
	worse_tps = tstat <= -tcrit;
	better_latency = !worse_tps && fabs(gain - 1.0) < 0.02 &&
		p50[1] < p50[0] * 0.95;
	/*
	 * The p99 bound is the DBA's setting's p99 as measured in this search
	 * (or the current choice's, when higher): a candidate may trade some of
	 * the tail the current choice won back for throughput, never push the
	 * tail above what the configured setting gives.
	 */
	if (trial_is_recheck)
		configured_p99_us = p99[1];
	else if (choice_equal(&current, &dba))
		configured_p99_us = p99[0];
	p99_ok = p99[1] <= Max(p99[0], configured_p99_us) *
		(1.0 + wp_max_latency_regression_pct / 100.0);
	keep = (better_tps || better_latency) && p99_ok;

	snprintf(evidence, sizeof(evidence),
			 "{\"pairs\": %d, \"commits_ratio\": %.3f, \"t\": %.2f, \"t_crit\": %.3f, "
			 "\"commits_current\": %.0f, \"commits_candidate\": %.0f, "
			 "\"p50_us_current\": %.0f, \"p50_us_candidate\": %.0f, "
			 "\"p99_us_current\": %.0f, \"p99_us_candidate\": %.0f, "
			 "\"p99_us_configured\": %.0f}",
			 npairs, gain, tstat, tcrit,
			 commits[0], commits[1], p50[0], p50[1], p99[0], p99[1],
			 configured_p99_us);

	if (keep)
	{
		snprintf(outcome, sizeof(outcome), "kept: commits/s x%.2f (t=%.1f, %d pairs), p99 %.0f -> %.0f us",
				 gain, tstat, npairs, p99[0], p99[1]);
		wp_decision_set_outcome(trial_decision, outcome);
		if (trial_is_recheck)
		{
			/* the candidate was the DBA's setting: it won, so go back */
			fall_back("re-check: configured setting is better", true);
			return;
		}
		change_to(&candidate, "trial won", evidence);
	}
	else
	{
		snprintf(outcome, sizeof(outcome), "rejected: commits/s x%.2f (t=%.1f, %d pairs), p99 %.0f -> %.0f us%s",
				 gain, tstat, npairs, p99[0], p99[1], p99_ok ? "" : " (p99 regression)");
		wp_decision_set_outcome(trial_decision, outcome);
		apply_choice(&current);
	}
	level_commits = commits[keep ? 1 : 0] / npairs;
	level_p50 = p50[keep ? 1 : 0];
	state = WP_PS_HOLD;
	shift_streak = 0;
	recheck_from = GetCurrentTimestamp();
}

/*
 * clear_verdict
 *		After WP_TRIAL_EARLY_PAIRS pairs (two ABBA blocks), is the
 *		difference so large that the remaining pairs cannot matter?  The
 *		bar is one-sided 99.9 %, so looking twice hardly raises the false
 *		keep rate; a flush-bound trial usually clears it (t of 20 and more
 *		at 8 clients), which halves the time the search spends on a losing
 *		candidate.
 */
static bool
clear_verdict(void)
{
	double		gain;
	double		commits[2];
	double		t = pair_stats(WP_TRIAL_EARLY_PAIRS, &gain, commits);

	return fabs(t) >= t_critical_999(WP_TRIAL_EARLY_PAIRS - 1);
}

/*
 * trial_second
 *		Account one finished second to its window and set up the next.
 */
static void
trial_second(const WpSecondStats *s)
{
	int			arm = window_is_candidate(trial_window) ? 1 : 0;
	int			i;

	trial_commits[trial_window] = s->commits;
	for (i = 0; i < WP_HIST_BUCKETS; i++)
		trial_hist[arm][i] += s->hist[i];
	trial_window++;

	if (trial_window >= 2 * WP_TRIAL_PAIRS ||
		(trial_window == 2 * WP_TRIAL_EARLY_PAIRS && clear_verdict()))
	{
		finish_trial(trial_window / 2);
		/* continue the search while candidates remain */
		if (state == WP_PS_HOLD && !trial_is_recheck)
		{
			WpChoice	c;

			if (next_candidate(&c))
				start_trial(&c, false);
		}
		return;
	}
	apply_choice(window_is_candidate(trial_window) ? &candidate : &current);
}

/*
 * flush_bound
 *		Is this second's load one commit_delay can help?  Several backends
 *		commit durably, and one WAL flush is slow (the storage estimate:
 *		flush leaders' timing, pg_stat_wal or sampled IO:WALSync).  Commit
 *		latency alone is not used: on a saturated CPU it rises while the
 *		flush stays fast, and there commit_delay only loses.
 */
static bool
flush_bound(const WpSecondStats *s, double *flush_us)
{
	char		source[32];

	if (!wp_probe_flush_estimate_us(flush_us, source, sizeof(source)))
		return false;
	return s->commits >= WP_ENGAGE_MIN_COMMITS &&
		*flush_us >= WP_ENGAGE_MIN_FLUSH_US &&
		wp_gather_group() >= 2;
}

static void controller_step(const WpSecondStats *s);

/*
 * controller_second
 *		The controller's once-a-second step, then its state for the views.
 */
static void
controller_second(const WpSecondStats *s)
{
	controller_step(s);
	publish_state(state == WP_PS_IDLE ? "idle" :
				  state == WP_PS_HOLD ? "hold" :
				  trial_is_recheck ? "re-check" : "trial");
}

static void
controller_step(const WpSecondStats *s)
{
	double		p50 = hist_quantile(s->hist, 0.5);
	double		flush_us = 0;
	bool		tuning = wp_mode == WP_MODE_TUNE && wp_tune_commit_delay;
	bool		pinned;

	dba.gather = false;
	dba.delay_us = wp_settings_configured(WP_KNOB_COMMIT_DELAY, &pinned);
	dba.siblings = wp_settings_configured(WP_KNOB_COMMIT_SIBLINGS, NULL);
	if (state == WP_PS_IDLE && !managing)
		current = dba;

	if (pg_atomic_exchange_u32(&pilot->revert_requested, 0))
	{
		fall_back("walpilot.revert() or DROP EXTENSION", true);
		return;
	}
	if (!tuning || pinned)
	{
		if (managing || state != WP_PS_IDLE)
			fall_back(pinned ? "commit_delay is set in the configuration" :
					  "walpilot.mode or walpilot.tune_commit_delay turned tuning off",
					  false);
		return;
	}

	switch (state)
	{
		case WP_PS_IDLE:
			engage_streak = flush_bound(s, &flush_us) ? engage_streak + 1 : 0;
			if (engage_streak >= WP_ENGAGE_SECONDS &&
				recheck_due())
			{
				WpChoice	c;
				double		probed_us;

				/* the passive estimate says slow: time the device itself */
				engage_streak = 0;
				if (!wp_probe_confirm_flush_us(&probed_us) ||
					probed_us < WP_CONFIRM_MIN_FLUSH_US)
				{
					char		evidence[160];

					snprintf(evidence, sizeof(evidence),
							 "{\"flush_estimate_us\": %.0f, \"probe_p50_us\": %.0f}",
							 flush_us, probed_us);
					wp_decision_log("commit_delay", "-", "-",
									"no trial: the probe finds the flush fast",
									evidence);
					recheck_from = GetCurrentTimestamp();
					break;
				}
				flush_estimate_us = flush_us;
				level_commits = s->commits;
				level_p50 = p50;
				search_step = 0;
				if (next_candidate(&c))
					start_trial(&c, false);
			}
			break;

		case WP_PS_TRIAL:
			trial_second(s);
			break;

		case WP_PS_HOLD:
			if (s->commits < WP_ENGAGE_MIN_COMMITS)
			{
				if (++idle_streak >= WP_IDLE_FALLBACK_S)
				{
					idle_streak = 0;
					if (managing)
						fall_back("load is no longer flush-bound", false);
					else
						state = WP_PS_IDLE;
				}
				break;
			}
			idle_streak = 0;
			if (level_commits > 0 &&
				(s->commits > level_commits * WP_SHIFT_RATIO ||
				 s->commits < level_commits / WP_SHIFT_RATIO ||
				 (level_p50 > 0 && (p50 > level_p50 * WP_SHIFT_RATIO ||
									p50 < level_p50 / WP_SHIFT_RATIO))))
				shift_streak++;
			else
				shift_streak = 0;

			if (shift_streak >= WP_SHIFT_SECONDS)
			{
				/*
				 * New client count or new storage: what was best may not
				 * be.  Start over from the configured setting; the search
				 * re-engages within WP_ENGAGE_SECONDS if still flush-bound.
				 */
				shift_streak = 0;
				fall_back("workload or storage shifted: searching again", false);
				recheck_from = 0;
			}
			else if (recheck_due())
			{
				if (managing)
				{
					/* prove the choice still beats the DBA's setting */
					start_trial(&dba, true);
				}
				else if (flush_bound(s, &flush_us))
				{
					state = WP_PS_IDLE;
					engage_streak = 0;
					recheck_from = 0;
				}
				else
					recheck_from = GetCurrentTimestamp();
			}
			break;
	}
}

/*
 * wp_pilot_tick
 *		Worker tick: group size every 100 ms, controller every second.
 */
void
wp_pilot_tick(TimestampTz now)
{
	WpSecondStats s;

	if (now - last_group_update >= 100 * 1000)
	{
		wp_gather_update_group(last_p50_us);
		last_group_update = now;
	}
	if (!have_prev)
	{
		take_second(&s);
		have_prev = true;
		last_second = now;
		wp_settings_note_configured();
		return;
	}
	if (now - last_second < USECS_PER_SEC)
		return;
	last_second = now;
	take_second(&s);
	last_p50_us = hist_quantile(s.hist, 0.5);

	controller_second(&s);
}

/*
 * wp_pilot_stop
 *		Worker exit or mode off: put the DBA's settings back now.
 */
void
wp_pilot_stop(const char *why)
{
	if (pilot == NULL)
		return;
	if (managing)
		fall_back(why, false);
	wp_gather_set_enabled(false);
}

/*
 * wp_pilot_worker_start
 *		A (re)started worker knows nothing of earlier choices: whatever a
 *		previous worker published is withdrawn first.
 */
void
wp_pilot_worker_start(void)
{
	int32		targets[WP_NUM_KNOBS] = {0, 0};

	wp_gather_set_enabled(false);
	wp_settings_publish(false, targets);
	publish_state("idle");
}

/*
 * wp_pilot_request_revert
 *		SQL side (walpilot.revert(), DROP EXTENSION): put the DBA's
 *		settings back at once and have the worker go idle.
 */
void
wp_pilot_request_revert(void)
{
	int32		targets[WP_NUM_KNOBS] = {0, 0};

	wp_gather_set_enabled(false);
	wp_settings_publish(false, targets);
	pg_atomic_write_u32(&pilot->revert_requested, 1);
}

/*
 * wp_pilot_describe
 *		Copy the controller's state for walpilot.status.
 */
void
wp_pilot_describe(char *st, char *cur, char *cand, size_t len)
{
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	strlcpy(st, pilot->state, len);
	strlcpy(cur, pilot->current, len);
	strlcpy(cand, pilot->candidate, len);
	LWLockRelease(wp_shared->lock);
}
