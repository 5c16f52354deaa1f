/*
 * test_trial.c -- unit test of the trial engine (src/pilots/trial.c) on known
 * inputs.  Links src/pilots/trial.c and src/core/histogram.c only; prints one line per
 * check ending in " ok" or " FAIL" and exits non-zero on any failure.
 */
#include "postgres.h"

#include <math.h>
#include <stdio.h>

#include "trial.h"

/* port.h maps printf to libpgport's; this program links no library */
#undef printf

static int	failures = 0;

static void
check(bool cond, const char *what)
{
	printf("%-70s %s\n", what, cond ? "ok" : "FAIL");
	if (!cond)
		failures++;
}

/* deterministic noise in [-amp, +amp] (an LCG: same on every libc) */
static uint32 lcg_state = 12345;

static double
noise(double amp)
{
	lcg_state = lcg_state * 1103515245u + 12345u;
	return amp * (((double) ((lcg_state >> 8) & 0xffff) / 65535.0) * 2.0 - 1.0);
}

/* a histogram with n commits at latency us */
static void
hist_at(uint64 *hist, uint64 us, uint64 n)
{
	memset(hist, 0, sizeof(uint64) * WP_HIST_BUCKETS);
	hist[wp_hist_bucket(us)] = n;
}

static WpTrialConfig
commit_cfg(void)
{
	WpTrialConfig c;

	memset(&c, 0, sizeof(c));
	c.pairs = 8;
	c.early_pairs = 4;
	c.higher_is_better = true;
	c.min_gain = 1.02;
	c.max_p99_regression = 0.10;
	c.latency_tiebreak = true;
	return c;
}

/*
 * run_trial
 *		Feed windows until the trial ends: current runs at rate_a commits/s,
 *		candidate at rate_b, each with +-amp relative noise, latencies p99
 *		lat_a / lat_b.  Returns the number of windows fed.
 */
static int
run_trial(WpTrial *t, const WpTrialConfig *cfg, double rate_a, double rate_b,
		  double amp, uint64 lat_a, uint64 lat_b)
{
	uint64		hist[WP_HIST_BUCKETS];
	int			n = 0;

	wp_trial_begin(t, cfg);
	for (;;)
	{
		bool		cand = wp_trial_window_is_candidate(t);
		double		rate = cand ? rate_b : rate_a;
		bool		over;

		hist_at(hist, cand ? lat_b : lat_a, 1000);
		over = wp_trial_add_window(t, rate * (1.0 + noise(amp)), 1.0, hist);
		n++;
		if (over || n > 4 * WP_TRIAL_MAX_PAIRS)
			return n;
	}
}

/*
 * run_pairs
 *		Feed pair i the current arm's metric a[i] and the candidate's b[i]
 *		(in ABBA order), with p50s pa[i] / pb[i] (0: no histogram).
 */
static void
run_pairs(WpTrial *t, const WpTrialConfig *cfg, int npairs, const double *a,
		  const double *b, const double *pa, const double *pb)
{
	uint64		hist[WP_HIST_BUCKETS];
	int			i;

	wp_trial_begin(t, cfg);
	for (i = 0; i < 2 * npairs; i++)
	{
		bool		cand = wp_trial_window_is_candidate(t);
		double		p = cand ? (pb ? pb[i / 2] : 0) : (pa ? pa[i / 2] : 0);

		if (p > 0)
			hist_at(hist, (uint64) p, 1000);
		if (wp_trial_add_window(t, cand ? b[i / 2] : a[i / 2], 1.0,
								p > 0 ? hist : NULL))
			break;
	}
}

/*
 * never_below_checks
 *		The rules of a knob that must never run below its configured
 *		setting (commit_delay): 99 % to keep, a 3 % minimum effect, a
 *		paired p50 test for the latency tie-break, and a held choice
 *		dropped when its mean is below the configured setting.
 */
static void
never_below_checks(void)
{
	WpTrial		t;
	WpTrialConfig cfg = commit_cfg();
	WpTrialVerdict v;

	/*
	 * A marginal win, as a token-bucket trial gave one: x1.13 on average,
	 * but pairs from x0.93 to x1.46 (t about 2.2 over 8 pairs).  At 95 %
	 * it was kept (and ran 22 % below the defaults afterwards).
	 */
	static const double ma[] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
	static const double mb[] = {1460, 930, 1010, 1300, 950, 1250, 990, 1200};

	/* a steady +2.5 %: significant, but below the 3 % minimum effect */
	static const double sa[] = {1000, 1002, 998, 1001, 999, 1000, 1003, 997};
	static const double sb[] = {1025, 1027, 1023, 1026, 1024, 1025, 1028, 1022};

	/* a held choice 1 % below the configured setting, not significantly */
	static const double ha[] = {1000, 990, 1010, 1000, 1005, 995, 1000, 1000};
	static const double hb[] = {995, 975, 1010, 985, 990, 990, 1000, 975};

	/*
	 * equal commits; p50 lower in every pair, or lower pooled (five pairs
	 * at half, three 7.5 % higher) but not consistently
	 */
	static const double ea[] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
	static const double pa[] = {2000, 2100, 1900, 2000, 2050, 1950, 2000, 2000};
	static const double pb[] = {1500, 1600, 1450, 1500, 1550, 1500, 1500, 1480};
	static const double qa[] = {2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000};
	static const double qb[] = {1000, 2150, 1000, 2150, 1000, 2150, 1000, 1000};

	cfg.never_below_configured = false;
	run_pairs(&t, &cfg, 8, ma, mb, NULL, NULL);
	wp_trial_verdict(&t, 0, &v);
	check(v.keep && v.t > v.t_crit,
		  "marginal win x1.13, t between 95 % and 99 %: kept at 95 %");
	cfg.never_below_configured = true;
	cfg.min_gain = 1.03;
	run_pairs(&t, &cfg, 8, ma, mb, NULL, NULL);
	wp_trial_verdict(&t, 0, &v);
	check(!v.keep && v.t > v.t_crit && v.t < v.t_keep &&
		  strstr(v.rule, "marginal") != NULL,
		  "never below: the same marginal win rejected, rule says marginal");

	run_pairs(&t, &cfg, 8, sa, sb, NULL, NULL);
	wp_trial_verdict(&t, 0, &v);
	check(!v.keep && v.t > v.t_keep &&
		  strcmp(v.rule, "gain below the minimum effect") == 0,
		  "never below: +2.5 % at t > 99 %, below the minimum effect: rejected");
	cfg.min_gain = 1.02;
	run_pairs(&t, &cfg, 8, sa, sb, NULL, NULL);
	wp_trial_verdict(&t, 0, &v);
	check(v.keep && strstr(v.rule, "99 %") != NULL,
		  "... with a 2 % minimum effect it is kept, rule says 99 %");
	cfg.min_gain = 1.03;

	cfg.incumbent = true;
	run_pairs(&t, &cfg, 8, ha, hb, NULL, NULL);
	wp_trial_verdict(&t, 0, &v);
	check(!v.worse && !v.keep &&
		  strcmp(v.rule, "below the configured setting") == 0,
		  "never below, re-check: held -1 %, not significant: dropped");
	cfg.never_below_configured = false;
	run_pairs(&t, &cfg, 8, ha, hb, NULL, NULL);
	wp_trial_verdict(&t, 0, &v);
	check(v.keep, "... without the rule it was kept (not clearly worse)");
	cfg.never_below_configured = true;
	run_pairs(&t, &cfg, 8, ha, ma, NULL, NULL);
	wp_trial_verdict(&t, 0, &v);
	check(v.keep && strcmp(v.rule, "not below the configured setting") == 0,
		  "never below, re-check: held at +0.1 %: kept");
	cfg.incumbent = false;

	/* (the p99 bound, at histogram bucket resolution, is not tested here) */
	cfg.max_p99_regression = 0.5;
	run_pairs(&t, &cfg, 8, ea, ea, pa, pb);
	wp_trial_verdict(&t, 0, &v);
	check(v.better_latency && v.keep && v.p50_t > v.t_keep,
		  "never below: equal commits, p50 -25 % in every pair: kept on latency");
	run_pairs(&t, &cfg, 8, ea, ea, qa, qb);
	wp_trial_verdict(&t, 0, &v);
	check(!v.keep && v.p50_us[1] < v.p50_us[0] * 0.95 && v.p50_t < v.t_keep &&
		  strcmp(v.rule, "not significant") == 0,
		  "never below: p50 lower pooled, not in every pair: not kept");
	cfg.never_below_configured = false;
	run_pairs(&t, &cfg, 8, ea, ea, qa, qb);
	wp_trial_verdict(&t, 0, &v);
	check(v.keep, "... without the rule the pooled p50 kept it");
}

int
main(void)
{
	WpTrial		t;
	WpTrialConfig cfg = commit_cfg();
	WpTrialVerdict v;
	uint64		hist[WP_HIST_BUCKETS];
	int			n;
	int			w;
	bool		abba_ok = true;
	static const bool abba[] = {false, true, true, false,
	false, true, true, false};

	/* ABBA schedule */
	wp_trial_begin(&t, &cfg);
	for (w = 0; w < 8; w++)
	{
		if (wp_trial_window_is_candidate(&t) != abba[w])
			abba_ok = false;
		wp_trial_add_window(&t, 100, 1.0, NULL);
	}
	check(abba_ok, "ABBA: windows run A B B A A B B A");

	/* the quantile helper */
	hist_at(hist, 1000, 100);
	check(wp_hist_quantile(hist, 0.5) >= 896 && wp_hist_quantile(hist, 0.5) <= 1024,
		  "wp_hist_quantile: p50 of 100 commits at 1000 us is in their bucket");
	memset(hist, 0, sizeof(hist));
	hist[wp_hist_bucket(100)] = 98;
	hist[wp_hist_bucket(50000)] = 2;
	check(wp_hist_quantile(hist, 0.99) >= 40000,
		  "wp_hist_quantile: p99 of 98 x 100 us + 2 x 50 ms is in the 50 ms bucket");
	memset(hist, 0, sizeof(hist));
	check(wp_hist_quantile(hist, 0.99) == 0, "wp_hist_quantile: empty histogram gives 0");

	/* a clear win ends early and is kept */
	n = run_trial(&t, &cfg, 1000, 1200, 0.02, 2000, 2000);
	wp_trial_verdict(&t, 0, &v);
	check(n == 8 && v.ended_early, "clear win (+20 %, 2 % noise): ends after 4 pairs");
	check(v.better && !v.worse && v.keep, "clear win: better, kept");
	check(v.ratio > 1.15 && v.ratio < 1.25, "clear win: ratio about 1.2");

	/* a clear loss ends early and is rejected */
	n = run_trial(&t, &cfg, 1000, 800, 0.02, 2000, 2000);
	wp_trial_verdict(&t, 0, &v);
	check(n == 8 && v.worse && !v.better && !v.keep,
		  "clear loss (-20 %): ends after 4 pairs, worse, rejected");

	/* no difference: all pairs, neither better nor worse */
	n = run_trial(&t, &cfg, 1000, 1000, 0.05, 2000, 2000);
	wp_trial_verdict(&t, 0, &v);
	check(n == 16 && v.pairs == 8 && !v.ended_early,
		  "no difference (5 % noise): runs all 8 pairs");
	check(!v.better && !v.worse && !v.keep, "no difference: rejected");

	/* below min_gain: significant but too small */
	n = run_trial(&t, &cfg, 1000, 1010, 0.001, 2000, 2000);
	wp_trial_verdict(&t, 0, &v);
	check(v.t > v.t_crit && !v.better && !v.keep,
		  "+1 % with no noise: significant, below min_gain, rejected");

	/* the p99 bound */
	run_trial(&t, &cfg, 1000, 1200, 0.02, 2000, 4000);
	wp_trial_verdict(&t, 0, &v);
	check(v.better && !v.p99_ok && !v.keep,
		  "+20 % commits but p99 x2: p99 bound rejects it");
	run_trial(&t, &cfg, 1000, 1200, 0.02, 2000, 1900);
	wp_trial_verdict(&t, 0, &v);
	check(v.p99_ok && v.keep, "+20 % commits, p99 in the same bucket: kept");

	/*
	 * The configured setting's p99 from an earlier trial binds too: current
	 * (an earlier winner) has p99 1000, the configured setting had 1000, a
	 * candidate at 1200 exceeds 1100.  A reference above the current lets
	 * the candidate use it.
	 */
	run_trial(&t, &cfg, 1000, 1200, 0.02, 1000, 1200);
	wp_trial_verdict(&t, 1000, &v);
	check(!v.p99_ok && !v.keep && v.p99_bound_us > 1000 && v.p99_bound_us < 1200,
		  "reference p99: bound = max(reference, current) x 1.1 binds");
	run_trial(&t, &cfg, 1000, 1200, 0.02, 1000, 1200);
	wp_trial_verdict(&t, 1500, &v);
	check(v.p99_ok && v.keep, "reference p99 above current: the larger one is the base");

	/*
	 * The re-check (the p99 bound in every trial): the held choice is the
	 * candidate, the configured setting the current arm.  At equal commits
	 * a held choice with p99 5x the configured setting's is not kept;
	 * before, the re-check took the bound from the arm under test and kept
	 * it.
	 */
	cfg.incumbent = true;
	run_trial(&t, &cfg, 1000, 1000, 0.02, 1000, 5000);
	wp_trial_verdict(&t, 0, &v);
	check(!v.worse && !v.p99_ok && !v.keep,
		  "re-check, equal commits, held p99 x5: p99 bound binds, not kept");
	run_trial(&t, &cfg, 1000, 1000, 0.02, 1000, 1010);
	wp_trial_verdict(&t, 0, &v);
	check(v.keep, "re-check, equal commits, held p99 in the same bucket: kept");
	run_trial(&t, &cfg, 1000, 800, 0.02, 1000, 1000);
	wp_trial_verdict(&t, 0, &v);
	check(v.worse && !v.keep, "re-check, held -20 %: worse, not kept");
	run_trial(&t, &cfg, 1000, 1200, 0.02, 1000, 900);
	wp_trial_verdict(&t, 0, &v);
	check(v.keep, "re-check, held +20 %: kept");
	cfg.incumbent = false;

	/* latency tie-break (open loop): same commits, p50 lower */
	run_trial(&t, &cfg, 1000, 1000, 0.001, 2000, 1500);
	wp_trial_verdict(&t, 0, &v);
	check(v.better_latency && v.keep, "open loop: equal commits, p50 -25 %: kept on latency");
	cfg.latency_tiebreak = false;
	run_trial(&t, &cfg, 1000, 1000, 0.001, 2000, 1500);
	wp_trial_verdict(&t, 0, &v);
	check(!v.keep, "without the latency tie-break: not kept");
	cfg.latency_tiebreak = true;

	/*
	 * Windows normalised by their measured length: the candidate's windows
	 * ran 1.3 s (a late tick) at the same rate.  Raw counts would call it
	 * 30 % better; per second it is no better.
	 */
	wp_trial_begin(&t, &cfg);
	do
	{
		bool		cand = wp_trial_window_is_candidate(&t);
		double		len = cand ? 1.3 : 1.0;

		if (wp_trial_add_counts(&t, 1000 * len * (1.0 + noise(0.02)), len, NULL))
			break;
	} while (true);
	wp_trial_verdict(&t, 0, &v);
	check(!v.better && !v.keep && fabs(v.ratio - 1.0) < 0.03,
		  "late windows at the same rate: not better (per-second metric)");
	check(fabs(v.weight[1] / v.weight[0] - 1.3) < 0.01 &&
		  fabs(v.metric_mean[1] / v.metric_mean[0] - 1.0) < 0.03,
		  "late windows: weights 1.3 : 1, weighted rates equal");
	wp_trial_begin(&t, &cfg);
	do
	{
		bool		cand = wp_trial_window_is_candidate(&t);
		double		len = cand ? 1.3 : 1.0;

		if (wp_trial_add_window(&t, 1000 * len * (1.0 + noise(0.02)), 1.0, NULL))
			break;
	} while (true);
	wp_trial_verdict(&t, 0, &v);
	check(v.better, "... the same windows as raw counts would be called better");

	/* lower is better (stall seconds per checkpoint), events as windows */
	cfg = commit_cfg();
	cfg.higher_is_better = false;
	cfg.pairs = 4;
	cfg.early_pairs = 0;
	cfg.latency_tiebreak = false;
	run_trial(&t, &cfg, 2.0, 0.5, 0.05, 0, 0);
	wp_trial_verdict(&t, 0, &v);
	check(v.pairs == 4 && v.ratio < 1.0 && v.better && v.keep,
		  "lower is better: 2.0 -> 0.5 stall s per checkpoint, kept");
	run_trial(&t, &cfg, 0.5, 2.0, 0.05, 0, 0);
	wp_trial_verdict(&t, 0, &v);
	check(v.worse && !v.keep, "lower is better: 0.5 -> 2.0 rejected");

	/* zero metrics stay finite; no histograms means no p99 bound */
	wp_trial_begin(&t, &cfg);
	while (!wp_trial_add_window(&t, 0, 1, NULL))
		;
	wp_trial_verdict(&t, 0, &v);
	check(isfinite(v.t) && v.ratio == 1.0 && v.p99_ok && !v.keep,
		  "all-zero metric: finite, no verdict, no p99 bound");

	/* windows after the end are ignored */
	check(wp_trial_add_window(&t, 1e9, 1, NULL) && t.windows == 8,
		  "windows after the end: ignored");

	/* pairs are clamped to WP_TRIAL_MAX_PAIRS */
	cfg.pairs = 100;
	wp_trial_begin(&t, &cfg);
	check(t.cfg.pairs == WP_TRIAL_MAX_PAIRS, "pairs above the maximum: clamped");

	/*
	 * The checkpoint window's impact: a doubled p99 weighs one stalled
	 * second.  Checkpoint means of the flushing-hurts benchmark (throttled,
	 * 4 MB/s): 0 stalled 8.5 s at p99 x1.16, 256kB 5.0 s at x8.67, and the
	 * client was late 25.8 % against 18.5 %; linear in the ratio, 256kB
	 * scored worse than 0.
	 */
	check(fabs(wp_trial_impact(1, 1) - wp_trial_impact(0, 2)) < 1e-9,
		  "impact: a stalled second weighs a doubled p99");
	check(wp_trial_impact(5.0, 8.67) < wp_trial_impact(8.5, 1.16),
		  "impact: 5 stalled s at p99 x8.7 below 8.5 s at x1.16");
	check(wp_trial_impact(0, 0.5) == wp_trial_impact(0, 1) &&
		  wp_trial_impact(0, 1) > 0,
		  "impact: above zero, no credit for a p99 below the reference");

	never_below_checks();

	printf("%d failed\n", failures);
	return failures == 0 ? 0 : 1;
}
