/*-------------------------------------------------------------------------
 *
 * probe_internal.h
 *		What the storage probe (probe_io.c) and the sleep probe
 *		(probe_sleep.c) share: the region "walpilot storage" and the
 *		quantiles both take of their samples.  Only those two files include
 *		it.
 *
 * IDENTIFICATION
 *	  src/instruments/probe_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_PROBE_INTERNAL_H
#define WALPILOT_PROBE_INTERNAL_H

#include <math.h>

#include "port/atomics.h"

#include "instruments.h"

/* samples per delay of the sleep probe */
#define WP_SLEEP_SAMPLES		20

typedef struct WpStorageShared
{
	pg_atomic_uint32 probe_owner;	/* pid running a probe, 0 = none */
	WpProbeSnapshot res;		/* protected by wp_shared->lock */
} WpStorageShared;

/* probe_io.c: the region, created at shmem startup */
extern WpStorageShared *wp_storage;

/* ascending doubles, for qsort */
static inline int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/*
 * quantile_sorted
 *		Nearest-rank quantile q (0..1) of n sorted values.
 */
static inline double
quantile_sorted(const double *v, int n, double q)
{
	int			k;

	if (n <= 0)
		return 0;
	k = (int) ceil(q * n) - 1;
	if (k < 0)
		k = 0;
	if (k >= n)
		k = n - 1;
	return v[k];
}

/* probe_sleep.c: the sleep probe */
extern void wp_probe_sleep_run(int samples_per_delay);
extern void wp_probe_sleep_step(void);

#endif							/* WALPILOT_PROBE_INTERNAL_H */
