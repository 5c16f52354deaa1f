/*-------------------------------------------------------------------------
 *
 * flush_estimate.c
 *		The flush-time estimate: what one WAL flush takes, in microseconds.
 *
 * Kept by the worker from the best source available: pg_stat_wal sync time
 * per sync when track_wal_io_timing is on, the share of wait-event samples
 * in IO:WALSync per flush, and finally the newest probe of the configured
 * wal_sync_method (probe_io.c).
 *
 * Shared state: the region "walpilot flush estimate", protected by
 * wp_shared->lock, taken only to copy the estimate in or out.
 *
 * IDENTIFICATION
 *	  src/instruments/flush_estimate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "pgstat.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "instruments.h"

#define WP_ESTIMATE_WINDOW_MS	5000
#define WP_ESTIMATE_MIN_FLUSHES	10

static WpFlushEstimate *estimate = NULL;

/*---- worker-local state ----*/
static TimestampTz next_estimate_at = 0;
static bool have_prev_wal = false;
static WpWalCounters prev_wal;
static TimestampTz window_start = 0;
static uint64 window_walsync_samples = 0;
static uint64 window_sample_us = 0;

Size
wp_flush_estimate_shmem_size(void)
{
	return MAXALIGN(sizeof(WpFlushEstimate));
}

void
wp_flush_estimate_shmem_init(void)
{
	bool		found;

	estimate = ShmemInitStruct("walpilot flush estimate",
							   sizeof(WpFlushEstimate), &found);
	if (!found)
		memset(estimate, 0, sizeof(WpFlushEstimate));
}

/*
 * count_wal_sync_waiters
 *		How many processes are in IO:WALSync right now (IO:WALWrite too for
 *		the open_* methods, whose writes are the sync).  A lock-free scan
 *		of the PGPROC array, like the wait-event sampler's.
 */
static int
count_wal_sync_waiters(void)
{
	int			n = 0;
	int			i;
	bool		open_method = wp_wal_sync_is_open();

	for (i = 0; i < (int) ProcGlobal->allProcCount; i++)
	{
		uint32		w = WP_READ_ONCE_U32(ProcGlobal->allProcs[i].wait_event_info);

		if (w == WAIT_EVENT_WAL_SYNC ||
			(open_method && w == WAIT_EVENT_WAL_WRITE))
			n++;
	}
	return n;
}

/*
 * publish_estimate
 *		Store a new flush-latency estimate.
 */
static void
publish_estimate(double us, uint64 flushes, const char *source,
				 const char *note, TimestampTz now)
{
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	estimate->us = us;
	estimate->flushes = flushes;
	strlcpy(estimate->source, source, sizeof(estimate->source));
	strlcpy(estimate->note, note, WP_PROBE_NOTE_LEN);
	estimate->at = now;
	LWLockRelease(wp_shared->lock);
}

/*
 * update_estimate
 *		Once a second: refresh the flush-latency estimate from the best
 *		passive source that has enough flushes in the current window.
 */
static void
update_estimate(TimestampTz now)
{
	WpWalCounters cur;
	bool		open_method = wp_wal_sync_is_open();
	int64		dflush;
	char		note[WP_PROBE_NOTE_LEN];

	wp_wal_counters(&cur);
	pgstat_clear_snapshot();

	if (!have_prev_wal || cur.syncs < prev_wal.syncs ||
		cur.writes < prev_wal.writes)
	{
		/* first look, or pg_stat_wal was reset: start a window */
		prev_wal = cur;
		have_prev_wal = true;
		window_start = now;
		window_walsync_samples = 0;
		window_sample_us = 0;
		return;
	}
	if (!TimestampDifferenceExceeds(window_start, now, WP_ESTIMATE_WINDOW_MS))
		return;

	dflush = open_method ? cur.writes - prev_wal.writes :
		cur.syncs - prev_wal.syncs;
	if (dflush >= WP_ESTIMATE_MIN_FLUSHES)
	{
		double		dtime = open_method ?
			(double) (cur.write_time_us - prev_wal.write_time_us) :
			(double) (cur.sync_time_us - prev_wal.sync_time_us);

		if (track_wal_io_timing && dtime > 0)
		{
			/* 1. pg_stat_wal's own timing (µs in the struct) */
			snprintf(note, WP_PROBE_NOTE_LEN,
					 "mean %s time per %s over %ld s (track_wal_io_timing)",
					 open_method ? "write" : "sync",
					 open_method ? "write" : "sync",
					 (long) ((now - window_start) / USECS_PER_SEC));
			publish_estimate(dtime / dflush, (uint64) dflush, WP_WAL_IO_VIEW,
							 note, now);
		}
		else if (window_walsync_samples > 0)
		{
			/* 2. sampled time in IO:WALSync per flush */
			snprintf(note, WP_PROBE_NOTE_LEN,
					 "%llu samples in IO:%s per %lld flushes over %ld s",
					 (unsigned long long) window_walsync_samples,
					 pgstat_get_wait_event(open_method ? WAIT_EVENT_WAL_WRITE :
										   WAIT_EVENT_WAL_SYNC),
					 (long long) dflush,
					 (long) ((now - window_start) / USECS_PER_SEC));
			publish_estimate((double) window_sample_us / dflush,
							 (uint64) dflush, "wait_sampling", note, now);
		}
	}

	prev_wal = cur;
	window_start = now;
	window_walsync_samples = 0;
	window_sample_us = 0;
}

/*
 * estimate_from_probe
 *		Without a passive estimate, use the newest probe of the configured
 *		method at one write per sync.
 */
static void
estimate_from_probe(void)
{
	double		us;
	TimestampTz at;
	bool		have_passive;

	LWLockAcquire(wp_shared->lock, LW_SHARED);
	have_passive = estimate->at != 0 && strcmp(estimate->source, "probe") != 0;
	LWLockRelease(wp_shared->lock);
	if (have_passive ||
		!wp_probe_newest_p50(wp_probe_method_name(wp_wal_sync_method), &us, &at))
		return;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	if (at == estimate->at)
		at = 0;					/* already published */
	LWLockRelease(wp_shared->lock);
	if (at != 0)
		publish_estimate(us, 0, "probe",
						 "p50 of the last probe of the configured wal_sync_method",
						 at);
}

/*
 * wp_flush_estimate_us
 *		The current estimate of one WAL flush (µs) and its source.  false
 *		when there is none yet.
 */
bool
wp_flush_estimate_us(double *us, char *source, int source_len)
{
	bool		ok;

	if (estimate == NULL)
		return false;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	ok = estimate->at != 0;
	*us = estimate->us;
	strlcpy(source, estimate->source, source_len);
	LWLockRelease(wp_shared->lock);
	return ok;
}

/*
 * wp_flush_estimate_snapshot
 *		A copy of the estimate, for walpilot.storage.
 */
void
wp_flush_estimate_snapshot(WpFlushEstimate *out)
{
	memset(out, 0, sizeof(WpFlushEstimate));
	if (estimate == NULL)
		return;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	*out = *estimate;
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_flush_estimate_tick
 *		Worker, every tick: count the processes in a WAL sync now, and once
 *		a second refresh the estimate.  With walpilot.mode = off nothing is
 *		estimated, and a fresh window starts when it is back on.
 */
void
wp_flush_estimate_tick(TimestampTz now)
{
	int			waiters;

	if (estimate == NULL)
		return;
	if (wp_mode == WP_MODE_OFF)
	{
		have_prev_wal = false;
		return;
	}
	waiters = count_wal_sync_waiters();
	window_walsync_samples += waiters;
	window_sample_us += (uint64) waiters * wp_sample_interval_ms * 1000;

	if (now < next_estimate_at)
		return;
	next_estimate_at = now + USECS_PER_SEC;
	update_estimate(now);
	estimate_from_probe();
}
