/*-------------------------------------------------------------------------
 *
 * probe_sleep.c
 *		The sleep-resolution probe.
 *
 * The sleep probe times pg_usleep(), the primitive commit_delay uses, for
 * the delays a pilot would request.  The worker runs it once after it
 * starts, one sleep per tick so that it never stalls the worker for long;
 * walpilot.probe() also runs it in the calling backend.  Its rows are kept
 * in the region "walpilot storage" (probe_io.c), under wp_shared->lock.
 *
 * IDENTIFICATION
 *	  src/instruments/probe_sleep.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdlib.h>

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/lwlock.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "probe_internal.h"

/* Delays (µs) the sleep probe asks pg_usleep for. */
static const int sleep_delays_us[WP_SLEEP_DELAYS] =
{10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000};

/* the worker's spread-out run */
static int	sleep_next = -1;	/* next sleep sample, -1 = not started */
static double *sleep_samples = NULL;

/*
 * sleep_row
 *		Delay d's row from its n overshoot samples (sorted here).
 */
static void
sleep_row(int d, double *v, int n, WpSleepRow *row)
{
	double		sum = 0;
	int			s;

	for (s = 0; s < n; s++)
		sum += v[s];
	qsort(v, n, sizeof(double), cmp_double);
	row->requested_us = sleep_delays_us[d];
	row->samples = n;
	row->mean_over_us = sum / n;
	row->p50_over_us = quantile_sorted(v, n, 0.50);
	row->p99_over_us = quantile_sorted(v, n, 0.99);
}

/*
 * wp_probe_sleep_run
 *		Time pg_usleep for every delay, samples_per_delay times, in this
 *		process, and publish the overshoot.
 */
void
wp_probe_sleep_run(int samples_per_delay)
{
	WpSleepRow	rows[WP_SLEEP_DELAYS];
	double	   *v = palloc(sizeof(double) * samples_per_delay);
	int			d,
				s;

	for (d = 0; d < WP_SLEEP_DELAYS; d++)
	{
		for (s = 0; s < samples_per_delay; s++)
		{
			instr_time	t0,
						t1;

			CHECK_FOR_INTERRUPTS();
			INSTR_TIME_SET_CURRENT(t0);
			pg_usleep(sleep_delays_us[d]);
			INSTR_TIME_SET_CURRENT(t1);
			INSTR_TIME_SUBTRACT(t1, t0);
			v[s] = (double) INSTR_TIME_GET_MICROSEC(t1) - sleep_delays_us[d];
		}
		sleep_row(d, v, samples_per_delay, &rows[d]);
	}
	pfree(v);

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	memcpy(wp_storage->res.sleep_rows, rows, sizeof(rows));
	wp_storage->res.sleep_at = GetCurrentTimestamp();
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_probe_sleep_overshoot_us
 *		For the pilot: the measured p50 and p99 overshoot of a sleep of about
 *		requested_us (the nearest probed delay).  false when never measured.
 */
bool
wp_probe_sleep_overshoot_us(int requested_us, double *p50_us, double *p99_us)
{
	int			best = -1;
	int			d;
	bool		ok;

	for (d = 0; d < WP_SLEEP_DELAYS; d++)
	{
		if (best < 0 ||
			abs(sleep_delays_us[d] - requested_us) <
			abs(sleep_delays_us[best] - requested_us))
			best = d;
	}
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	ok = wp_storage->res.sleep_at != 0;
	*p50_us = wp_storage->res.sleep_rows[best].p50_over_us;
	*p99_us = wp_storage->res.sleep_rows[best].p99_over_us;
	LWLockRelease(wp_shared->lock);
	return ok;
}

/*
 * wp_probe_sleep_step
 *		One sample of the worker's spread-out sleep probe per tick (the
 *		first call starts it); publishes the rows once every delay has
 *		WP_SLEEP_SAMPLES samples.
 */
void
wp_probe_sleep_step(void)
{
	int			d;
	instr_time	t0,
				t1;

	if (sleep_next < 0)
		sleep_next = 0;
	if (sleep_next >= WP_SLEEP_DELAYS * WP_SLEEP_SAMPLES)
		return;
	if (sleep_samples == NULL)
		sleep_samples = MemoryContextAlloc(TopMemoryContext,
										   sizeof(double) * WP_SLEEP_DELAYS * WP_SLEEP_SAMPLES);
	d = sleep_next / WP_SLEEP_SAMPLES;
	INSTR_TIME_SET_CURRENT(t0);
	pg_usleep(sleep_delays_us[d]);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	sleep_samples[sleep_next] =
		(double) INSTR_TIME_GET_MICROSEC(t1) - sleep_delays_us[d];
	sleep_next++;

	if (sleep_next == WP_SLEEP_DELAYS * WP_SLEEP_SAMPLES)
	{
		WpSleepRow	rows[WP_SLEEP_DELAYS];

		for (d = 0; d < WP_SLEEP_DELAYS; d++)
			sleep_row(d, sleep_samples + d * WP_SLEEP_SAMPLES,
					  WP_SLEEP_SAMPLES, &rows[d]);
		LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
		/* a probe() run in a backend in the meantime is as good */
		if (wp_storage->res.sleep_at == 0)
		{
			memcpy(wp_storage->res.sleep_rows, rows, sizeof(rows));
			wp_storage->res.sleep_at = GetCurrentTimestamp();
		}
		LWLockRelease(wp_shared->lock);
	}
}
