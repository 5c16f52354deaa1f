/*-------------------------------------------------------------------------
 *
 * trial.h
 *		The trial engine: an on-line A/B comparison of a candidate setting
 *		with the current one, in alternating windows (ABBA order).
 *
 * Pure statistics: no shared memory, no GUCs, no ereport, no palloc.  A
 * pilot feeds it one finished window at a time -- a metric already
 * normalised per second or per event (commits/s, stall seconds per
 * checkpoint), the window's length in seconds or events, and the commit
 * latency histogram of the window -- and asks for a verdict.
 *
 * IDENTIFICATION
 *	  src/pilots/trial.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_TRIAL_H
#define WALPILOT_TRIAL_H

#include "core.h"

#define WP_TRIAL_MAX_PAIRS		16

typedef struct WpTrialConfig
{
	int			pairs;			/* ABBA pairs for a full trial */
	int			early_pairs;	/* clear-verdict check point, 0 = none */
	bool		higher_is_better;	/* commits/s: true; stall s: false */
	double		min_gain;		/* geometric-mean ratio to beat (>= 1) */
	double		max_p99_regression; /* fraction, e.g. 0.10 */

	/*
	 * Added fields; zero keeps the plain rule.  log_offset is added to
	 * both metrics before their log ratio, so a window with a zero metric
	 * stays finite (0 means 1.0 in the metric's unit).  latency_tiebreak:
	 * at unchanged metric (within 2 %) a candidate whose p50 is 5 % lower
	 * counts as better (an open-loop load).  incumbent: the candidate is
	 * the choice already in force, re-checked against the configured
	 * setting (the current arm); it is kept unless clearly worse.
	 */
	double		log_offset;
	bool		latency_tiebreak;
	bool		incumbent;

	/*
	 * never_below_configured: the rules of a knob that must never leave the
	 * server slower than its configured setting.  A candidate is kept only
	 * on a one-sided 99 % paired t (not 95 %) and a gain of min_gain or
	 * more; the latency tie-break needs its own paired t on the windows'
	 * p50s at 99 %; and a held choice re-checked against the configured
	 * setting (incumbent) is dropped as soon as its mean gain is below 1,
	 * significant or not.
	 */
	bool		never_below_configured;
} WpTrialConfig;

typedef struct WpTrial
{
	WpTrialConfig cfg;
	int			windows;		/* finished windows */
	bool		done;
	bool		ended_early;
	/* window w: index w; its arm is wp_trial_arm_of(w) */
	double		metric[2 * WP_TRIAL_MAX_PAIRS];
	double		weight[2 * WP_TRIAL_MAX_PAIRS];
	double		p50[2 * WP_TRIAL_MAX_PAIRS];	/* the window's, 0: none */
	uint64		hist[2][WP_HIST_BUCKETS];	/* pooled: [0] current, [1]
											 * candidate */
} WpTrial;

typedef struct WpTrialVerdict
{
	int			pairs;
	double		ratio;			/* geometric mean, candidate / current */
	double		t;				/* paired t of the log ratios */
	double		t_crit;			/* one-sided 95 % at pairs - 1 df */
	bool		better;			/* candidate better, in the metric's sense */
	bool		worse;
	double		p50_us[2],
				p99_us[2];		/* [0] current, [1] candidate */
	double		p99_bound_us;
	bool		p99_ok;
	bool		keep;
	/* added */
	bool		better_latency; /* won on p50 at unchanged metric */
	bool		ended_early;	/* a clear verdict before cfg.pairs */
	double		metric_mean[2]; /* weight-weighted mean per arm */
	double		weight[2];		/* total window length per arm */
	double		p50_ratio;		/* geometric mean of the pairs' p50 ratios */
	double		p50_t;			/* its paired t, positive: candidate lower */
	double		t_keep;			/* the bar t had to clear to keep */
	const char *rule;			/* which rule decided, for the decision row */
} WpTrialVerdict;

extern void wp_trial_begin(WpTrial *t, const WpTrialConfig *cfg);
extern bool wp_trial_window_is_candidate(const WpTrial *t);
extern bool wp_trial_add_window(WpTrial *t, double metric, double weight,
								const uint64 *hist);
extern bool wp_trial_add_counts(WpTrial *t, double count, double length,
								const uint64 *hist);
extern void wp_trial_verdict(const WpTrial *t, double reference_p99_us,
							 WpTrialVerdict *v);
extern bool wp_trial_arm_of(int window);
extern double wp_trial_t_critical(int df, bool strict);
extern double wp_trial_impact(double stall_s, double p99_ratio);
extern double wp_hist_quantile(const uint64 *hist, double q);

#endif							/* WALPILOT_TRIAL_H */
