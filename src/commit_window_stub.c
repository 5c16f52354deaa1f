/*-------------------------------------------------------------------------
 *
 * commit_window_stub.c
 *		Placeholder for the per-second commit data the checkpoint records
 *		and the flush-latency estimate read.
 *
 * The commit-timing instrument (per-commit latency, per-second timeline,
 * flush-leader detection) is built separately.  Until it is merged, these
 * functions answer "unknown", so the columns that depend on them are NULL
 * and the flush-latency estimate falls back to pg_stat_wal, wait-event
 * samples or the probe.  When the timeline lands, delete this file and
 * implement the three functions of walpilot.h's "per-second commit data"
 * block over it.
 *
 * IDENTIFICATION
 *	  src/commit_window_stub.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "walpilot.h"

/*
 * wp_commit_window
 *		Durable commits and their latency in [from, to): unknown here.
 */
bool
wp_commit_window(TimestampTz from, TimestampTz to, WpCommitWindow *out)
{
	memset(out, 0, sizeof(WpCommitWindow));
	return false;
}

/*
 * wp_commit_seconds_between
 *		Durable commits per second in [from, to): unknown here.
 */
int
wp_commit_seconds_between(TimestampTz from, TimestampTz to,
						  uint64 *counts, int max_seconds)
{
	return -1;
}

/*
 * wp_commit_flush_leader_us
 *		Flush time as the flush leaders' commits see it: unknown here.
 */
bool
wp_commit_flush_leader_us(double *p50_us, uint64 *flushes)
{
	*p50_us = 0;
	*flushes = 0;
	return false;
}
