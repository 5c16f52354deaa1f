/*-------------------------------------------------------------------------
 *
 * histogram.c
 *		The commit-latency histogram's shape: bucket of a latency, bucket
 *		bounds, and the percentile of a bucket array.
 *
 * Pure functions over a uint64 array of WP_HIST_BUCKETS counts: no shared
 * memory, no allocation, no error.  Commit timing fills such arrays, the
 * timeline and the trial engine read them; the trial engine's unit test
 * links this file alone.
 *
 * IDENTIFICATION
 *	  src/core/histogram.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "port/pg_bitutils.h"

#include "core.h"

/*
 * wp_hist_lower_us / wp_hist_upper_us
 *		Bounds of a bucket: [lower, upper) in microseconds; the last bucket
 *		has no upper bound (-1).
 */
uint64
wp_hist_lower_us(int bucket)
{
	int			e,
				sub;

	if (bucket < WP_HIST_EXACT)
		return (uint64) bucket;
	if (bucket >= WP_HIST_BUCKETS - 1)
		return UINT64CONST(1) << WP_HIST_MAX_LOG2;
	e = 3 + (bucket - WP_HIST_EXACT) / WP_HIST_SUB;
	sub = (bucket - WP_HIST_EXACT) % WP_HIST_SUB;
	return (uint64) (WP_HIST_SUB + sub) << (e - 2);
}

int64
wp_hist_upper_us(int bucket)
{
	if (bucket >= WP_HIST_BUCKETS - 1)
		return -1;
	return (int64) wp_hist_lower_us(bucket + 1);
}

/*
 * wp_hist_percentile
 *		The latency below which the given fraction of commits fall,
 *		interpolated linearly inside its bucket and capped by max_us when
 *		that is known (non-zero).  Returns 0 for an empty histogram.
 */
double
wp_hist_percentile(const uint64 *hist, uint64 total, double fraction,
				   uint64 max_us)
{
	uint64		rank;
	uint64		below = 0;
	int			b;

	if (total == 0)
		return 0.0;
	rank = (uint64) ceil(fraction * (double) total);
	if (rank < 1)
		rank = 1;
	for (b = 0; b < WP_HIST_BUCKETS; b++)
	{
		if (hist[b] == 0)
			continue;
		if (below + hist[b] >= rank)
		{
			double		lo = (double) wp_hist_lower_us(b);
			double		hi;
			double		v;

			if (b == WP_HIST_BUCKETS - 1)
				hi = Max((double) max_us, lo);
			else
				hi = (double) wp_hist_upper_us(b);
			v = lo + (hi - lo) * ((double) (rank - below) / (double) hist[b]);
			if (max_us > 0 && v > (double) max_us)
				v = (double) max_us;
			return v;
		}
		below += hist[b];
	}
	return (double) max_us;
}
