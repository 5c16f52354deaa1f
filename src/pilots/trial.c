/*-------------------------------------------------------------------------
 *
 * trial.c
 *		The trial engine: ABBA windows, paired t on log ratios, an early
 *		verdict, pooled latency quantiles and the p99 bound.
 *
 * A trial alternates the current setting (A) and the candidate (B) in
 * pairs of windows, ordered A B, B A, A B, ... so that a drift in the load
 * during the trial (a checkpoint, a cache warming) falls on both arms
 * alike.  Each pair gives one log ratio log((b + c) / (a + c)) of the
 * per-window metrics; their mean is the log of the geometric-mean ratio,
 * and a one-sided paired t-test on them says whether the candidate is
 * better (95 %).  Windows are compared by their normalised metric (per
 * second, per event), so a window that ran 1.3 s instead of 1 s does not
 * count 30 % more commits.
 *
 * Early verdict: after early_pairs pairs, and after each further ABBA
 * block, a difference already beyond one-sided 99.9 % ends the trial; the
 * bar is high enough that looking several times hardly raises the false
 * keep rate, and a flush-bound trial usually clears it (t of 20 and more),
 * which halves the time spent on a losing candidate.
 *
 * The p99 bound: the candidate's p99 commit latency, from the histograms
 * of all its windows pooled, must not exceed max(reference, current's
 * p99) x (1 + max_p99_regression), where the reference is the configured
 * setting's p99 measured in this or an earlier trial of the same search.
 * Pooled histograms, not a mean of per-window p99s: a p99 over 8 windows
 * of 1 s rests on 8 x the commits.
 *
 * A knob that must never leave the server slower than its configured
 * setting (never_below_configured: commit_delay) keeps a candidate only on
 * a one-sided 99 % paired t and a gain of at least min_gain, and its latency
 * tie-break needs a paired t of its own on the windows' p50s.  95 % kept
 * too much: a search tries up to three candidates, a held choice is
 * searched again after every shift, and windows on a token-bucket disk
 * swing with the bucket, so a marginal t of 2.1 over 8 pairs kept a
 * delay that later ran 22 % below the defaults.  The verdict names the
 * rule that decided (WpTrialVerdict.rule), for the decision row.
 *
 * IDENTIFICATION
 *	  src/pilots/trial.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "trial.h"

/* a paired t with no spread: a difference of sign s, "infinitely" clear */
#define WP_TRIAL_T_NO_SPREAD	99.0

/* latency tie-break: metric within this of 1, p50 lower by this factor */
#define WP_TRIAL_TIE_BAND		0.02
#define WP_TRIAL_TIE_P50		0.95

/*
 * wp_hist_quantile
 *		Quantile q (0..1) of a commit-latency histogram, interpolated in its
 *		bucket; 0 for an empty one.  The one quantile helper of walpilot's
 *		pilots (histogram.c's wp_hist_percentile is its primitive).
 */
double
wp_hist_quantile(const uint64 *hist, double q)
{
	uint64		total = 0;
	int			i;

	for (i = 0; i < WP_HIST_BUCKETS; i++)
		total += hist[i];
	return wp_hist_percentile(hist, total, q, 0);
}

/*
 * wp_trial_impact
 *		A window's foreground impact from its stalled seconds and the ratio
 *		of its commit p99 to a reference p99, lower better: one stalled
 *		second weighs as much as a doubling of the p99.  (Linear in the
 *		ratio, a p99 going from 3 to 66 ms weighed as 21 stalled seconds,
 *		and a value that stalls more won.)  A p99 below the reference earns
 *		nothing; the 1 keeps the metric above zero for the engine's ratios.
 */
double
wp_trial_impact(double stall_s, double p99_ratio)
{
	return 1.0 + Max(stall_s, 0.0) + log2(Max(p99_ratio, 1.0));
}

/*
 * wp_trial_t_critical
 *		One-sided critical value of Student's t at df degrees of freedom:
 *		95 %, or 99.9 % when strict (the early-verdict bar).
 */
double
wp_trial_t_critical(int df, bool strict)
{
	static const double t95[] = {6.314, 2.920, 2.353, 2.132, 2.015, 1.943,
		1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753};
	static const double t999[] = {318.3, 22.33, 10.21, 7.173, 5.893, 5.208,
		4.785, 4.501, 4.297, 4.144, 4.025, 3.930, 3.852, 3.787, 3.733};
	int			i = Min(Max(df, 1), (int) lengthof(t95)) - 1;

	return strict ? t999[i] : t95[i];
}

/* one-sided 99 %: the keep bar of a never_below_configured knob */
static double
t_critical_99(int df)
{
	static const double t99[] = {31.82, 6.965, 4.541, 3.747, 3.365, 3.143,
		2.998, 2.896, 2.821, 2.764, 2.718, 2.681, 2.650, 2.624, 2.602};
	int			i = Min(Max(df, 1), (int) lengthof(t99)) - 1;

	return t99[i];
}

/*
 * wp_trial_arm_of
 *		Does window w (0-based) run the candidate?  ABBA: pair 0 is
 *		current, candidate; pair 1 candidate, current; and so on.
 */
bool
wp_trial_arm_of(int window)
{
	int			pair = window / 2;
	int			second = window % 2;

	return (pair % 2 == 0) ? second == 1 : second == 0;
}

void
wp_trial_begin(WpTrial *t, const WpTrialConfig *cfg)
{
	memset(t, 0, sizeof(WpTrial));
	t->cfg = *cfg;
	t->cfg.pairs = Min(Max(cfg->pairs, 2), WP_TRIAL_MAX_PAIRS);
	if (t->cfg.early_pairs < 2 || t->cfg.early_pairs >= t->cfg.pairs)
		t->cfg.early_pairs = 0;
	if (t->cfg.log_offset <= 0)
		t->cfg.log_offset = 1.0;
	if (t->cfg.min_gain < 1.0)
		t->cfg.min_gain = 1.0;
	if (t->cfg.max_p99_regression < 0)
		t->cfg.max_p99_regression = 0;
}

/*
 * wp_trial_window_is_candidate
 *		Should the window now starting run the candidate?
 */
bool
wp_trial_window_is_candidate(const WpTrial *t)
{
	return wp_trial_arm_of(t->windows);
}

/*
 * paired_log_t
 *		Paired t statistic and geometric-mean ratio (candidate / current)
 *		of x over the first npairs pairs, each pair's log ratio taken with
 *		offset added to both sides.  Pairs where either side is missing
 *		(below zero) are left out.  Signed: positive means the candidate's
 *		x is higher.
 */
static double
paired_log_t(const WpTrial *t, const double *x, double offset, int npairs,
			 double *ratio)
{
	double		sum = 0,
				sumsq = 0,
				mean,
				sd;
	int			i;
	int			n = 0;

	*ratio = 1.0;
	for (i = 0; i < npairs; i++)
	{
		bool		cand_first = wp_trial_arm_of(2 * i);
		double		a = x[2 * i + (cand_first ? 1 : 0)];
		double		b = x[2 * i + (cand_first ? 0 : 1)];
		double		r;

		if (a < 0 || b < 0)
			continue;
		r = log((b + offset) / (a + offset));
		sum += r;
		sumsq += r * r;
		n++;
	}
	if (n < 1)
		return 0;
	mean = sum / n;
	*ratio = exp(mean);
	if (n < 2)
		return 0;
	sd = sqrt(Max(0.0, (sumsq - n * mean * mean) / (n - 1)));
	if (sd > 1e-12)
		return mean / (sd / sqrt(n));
	return mean > 1e-12 ? WP_TRIAL_T_NO_SPREAD :
		(mean < -1e-12 ? -WP_TRIAL_T_NO_SPREAD : 0);
}

/*
 * paired_t
 *		paired_log_t of the metric, signed so that a positive value favours
 *		the candidate in the metric's own sense.
 */
static double
paired_t(const WpTrial *t, int npairs, double *ratio)
{
	double		tstat = paired_log_t(t, t->metric, t->cfg.log_offset, npairs,
									 ratio);

	return t->cfg.higher_is_better ? tstat : -tstat;
}

/*
 * wp_trial_add_window
 *		Account one finished window: its metric (normalised), its length
 *		(seconds or events, > 0) and its commit histogram (may be NULL).
 *		Returns true when the trial is over: all pairs run, or a clear
 *		verdict after early_pairs.  Windows after that are ignored.
 */
bool
wp_trial_add_window(WpTrial *t, double metric, double weight,
					const uint64 *hist)
{
	int			arm;
	int			pairs;

	if (t->done)
		return true;
	arm = wp_trial_arm_of(t->windows) ? 1 : 0;
	t->metric[t->windows] = isfinite(metric) ? metric : 0;
	t->weight[t->windows] = (isfinite(weight) && weight > 0) ? weight : 0;
	t->p50[t->windows] = -1;
	if (hist != NULL)
	{
		int			i;
		uint64		n = 0;

		for (i = 0; i < WP_HIST_BUCKETS; i++)
		{
			t->hist[arm][i] += hist[i];
			n += hist[i];
		}
		if (n > 0)
			t->p50[t->windows] = wp_hist_quantile(hist, 0.50);
	}
	t->windows++;

	if (t->windows % 2 != 0)
		return false;
	pairs = t->windows / 2;
	if (pairs >= t->cfg.pairs)
		t->done = true;
	else if (t->cfg.early_pairs > 0 && pairs >= t->cfg.early_pairs &&
			 pairs % 2 == 0)
	{
		double		ratio;
		double		ts = paired_t(t, pairs, &ratio);

		if (fabs(ts) >= wp_trial_t_critical(pairs - 1, true))
			t->done = t->ended_early = true;
	}
	return t->done;
}

/*
 * wp_trial_add_counts
 *		wp_trial_add_window for a count over a measured length: the metric
 *		is count / length, so a window the worker closed late (tick jitter,
 *		a stalled tick) is not credited with the extra time's events.
 */
bool
wp_trial_add_counts(WpTrial *t, double count, double length,
					const uint64 *hist)
{
	return wp_trial_add_window(t, length > 0 ? count / length : 0, length,
							   hist);
}

/*
 * wp_trial_verdict
 *		Judge the candidate over the pairs finished so far.
 *		reference_p99_us is the configured setting's p99 from an earlier
 *		trial of this search (0 when unknown, or when the current arm is the
 *		configured setting itself); the bound is max(reference, current's
 *		p99) x (1 + max_p99_regression), and it binds in every trial.
 *		v->rule says which rule decided.
 */
void
wp_trial_verdict(const WpTrial *t, double reference_p99_us,
				 WpTrialVerdict *v)
{
	bool		strict = t->cfg.never_below_configured;
	double		gain;
	int			arm;
	int			w;

	memset(v, 0, sizeof(WpTrialVerdict));
	v->pairs = t->windows / 2;
	v->ended_early = t->ended_early;
	v->t = paired_t(t, v->pairs, &v->ratio);
	v->t_crit = wp_trial_t_critical(v->pairs - 1, false);
	v->t_keep = strict ? t_critical_99(v->pairs - 1) : v->t_crit;

	/* gain in the metric's sense: > 1 favours the candidate */
	gain = t->cfg.higher_is_better ? v->ratio : 1.0 / v->ratio;
	v->better = v->pairs >= 2 && v->t >= v->t_keep &&
		gain >= t->cfg.min_gain;
	v->worse = v->pairs >= 2 && v->t <= -v->t_crit &&
		1.0 / gain >= t->cfg.min_gain;

	for (w = 0; w < 2 * v->pairs; w++)
	{
		arm = wp_trial_arm_of(w) ? 1 : 0;
		v->metric_mean[arm] += t->metric[w] * t->weight[w];
		v->weight[arm] += t->weight[w];
	}
	for (arm = 0; arm < 2; arm++)
	{
		if (v->weight[arm] > 0)
			v->metric_mean[arm] /= v->weight[arm];
		v->p50_us[arm] = wp_hist_quantile(t->hist[arm], 0.50);
		v->p99_us[arm] = wp_hist_quantile(t->hist[arm], 0.99);
	}

	/* no latency on either side of the bound (event windows): no bound */
	v->p99_bound_us = Max(reference_p99_us > 0 ? reference_p99_us : 0,
						  v->p99_us[0]) *
		(1.0 + t->cfg.max_p99_regression);
	v->p99_ok = v->p99_bound_us <= 0 || v->p99_us[1] <= v->p99_bound_us;

	/* the windows' p50s, paired like the metric: positive t, lower p50 */
	v->p50_t = -paired_log_t(t, t->p50, 1.0, v->pairs, &v->p50_ratio);
	v->better_latency = t->cfg.latency_tiebreak && v->pairs >= 2 &&
		!v->worse && fabs(v->ratio - 1.0) < WP_TRIAL_TIE_BAND &&
		v->p50_us[1] > 0 && v->p50_us[1] < v->p50_us[0] * WP_TRIAL_TIE_P50 &&
		(!strict || (v->p50_t >= v->t_keep &&
					 v->p50_ratio < WP_TRIAL_TIE_P50));

	if (t->cfg.incumbent)
	{
		/*
		 * The held choice (candidate arm) against the configured setting:
		 * kept unless it loses -- clearly, or (strict) by its mean at all.
		 */
		bool		loses = v->worse ||
			(strict && gain < 1.0 && !v->better_latency);

		v->keep = v->pairs >= 2 && !loses && v->p99_ok;
		if (v->pairs < 2)
			v->rule = "too few windows to judge";
		else if (!v->p99_ok)
			v->rule = "p99 above the bound";
		else if (v->worse)
			v->rule = "clearly worse than the configured setting";
		else if (loses)
			v->rule = "below the configured setting";
		else
			v->rule = strict ? "not below the configured setting" :
				"not clearly worse than the configured setting";
		return;
	}

	v->keep = (v->better || v->better_latency) && v->p99_ok;
	if (v->keep)
		v->rule = v->better ?
			(strict ? "gain significant at 99 % and above the minimum effect" :
			 "gain significant at 95 % and above the minimum effect") :
			"lower p50, significant, at unchanged throughput";
	else if (v->better || v->better_latency)
		v->rule = "p99 above the bound";
	else if (v->pairs < 2)
		v->rule = "too few windows to judge";
	else if (v->worse)
		v->rule = "clearly worse";
	else if (v->t >= v->t_keep)
		v->rule = "gain below the minimum effect";
	else if (strict && v->t >= v->t_crit)
		v->rule = "marginal: significant at 95 % but not at 99 %";
	else
		v->rule = "not significant";
}
