/*-------------------------------------------------------------------------
 *
 * commit_window.c
 *		Durable commits over a span of time, from the per-second timeline.
 *
 * The checkpoint records ask how many durable commits happened during a
 * checkpoint and before it, per second and in total, and how slow they
 * were.  The timeline keeps one row per second with the commit count and
 * that second's p50/p99, not whole histograms, so a window's p50 and p99
 * are the commit-weighted medians of its seconds' p50 and p99: the
 * latency of a typical second, not an exact quantile of every commit in
 * the window.
 *
 * IDENTIFICATION
 *	  src/instruments/commit_window.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "instruments.h"

/*
 * seconds_in
 *		The timeline seconds that start in [from, to), oldest first, in a
 *		palloc'd array; *n is their count.
 */
static WpSecond *
seconds_in(TimestampTz from, TimestampTz to, int *n)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		span_s;
	int			want,
				got,
				i,
				k = 0;
	WpSecond   *all;

	*n = 0;
	if (to <= from || from > now)
		return NULL;
	span_s = (now - from) / USECS_PER_SEC + 2;
	want = (int) Min(span_s, (int64) wp_history_size_s);
	all = palloc(sizeof(WpSecond) * want);
	got = wp_timeline_last(want, all);
	for (i = 0; i < got; i++)
	{
		if (all[i].ts >= from && all[i].ts < to)
			all[k++] = all[i];
	}
	*n = k;
	return all;
}

/*
 * weighted_median
 *		Median of vals[] with weights w[] (both n long); 0 if no weight.
 */
static double
weighted_median(const double *vals, const uint64 *w, int n)
{
	uint64		total = 0,
				seen = 0;
	int			i,
				j;
	int		   *order;
	double		result = 0;

	for (i = 0; i < n; i++)
		total += w[i];
	if (total == 0)
		return 0;
	/* n is at most a few thousand seconds: insertion sort of indexes */
	order = palloc(sizeof(int) * n);
	for (i = 0; i < n; i++)
	{
		for (j = i; j > 0 && vals[order[j - 1]] > vals[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	for (i = 0; i < n; i++)
	{
		seen += w[order[i]];
		if (seen * 2 >= total)
		{
			result = vals[order[i]];
			break;
		}
	}
	pfree(order);
	return result;
}

/*
 * wp_commit_window
 *		Durable commits in [from, to), with the commit-weighted median of
 *		the seconds' p50 and p99.  false when the timeline has no second
 *		in the window.
 */
bool
wp_commit_window(TimestampTz from, TimestampTz to, WpCommitWindow *out)
{
	int			n,
				i;
	WpSecond   *secs = seconds_in(from, to, &n);
	double	   *p50;
	double	   *p99;
	uint64	   *w;

	memset(out, 0, sizeof(WpCommitWindow));
	if (n == 0)
	{
		if (secs)
			pfree(secs);
		return false;
	}
	p50 = palloc(sizeof(double) * n);
	p99 = palloc(sizeof(double) * n);
	w = palloc(sizeof(uint64) * n);
	for (i = 0; i < n; i++)
	{
		out->commits += secs[i].commits;
		p50[i] = secs[i].commit_p50_us;
		p99[i] = secs[i].commit_p99_us;
		w[i] = secs[i].commits;
	}
	out->p50_us = weighted_median(p50, w, n);
	out->p99_us = weighted_median(p99, w, n);
	pfree(p50);
	pfree(p99);
	pfree(w);
	pfree(secs);
	return true;
}

/*
 * wp_commit_seconds_between
 *		Durable commits of each timeline second in [from, to), oldest
 *		first, at most max_seconds of them; -1 when there is none.
 */
int
wp_commit_seconds_between(TimestampTz from, TimestampTz to,
						  uint64 *counts, int max_seconds)
{
	int			n,
				i,
				k;
	WpSecond   *secs = seconds_in(from, to, &n);

	if (n == 0)
	{
		if (secs)
			pfree(secs);
		return -1;
	}
	k = Min(n, max_seconds);
	for (i = 0; i < k; i++)
		counts[i] = secs[n - k + i].commits;
	pfree(secs);
	return k;
}
