/*-------------------------------------------------------------------------
 *
 * compat_wal.c
 *		WAL statistics and WAL open flags across PostgreSQL versions.
 *
 * The version differences of compat.h that need more than a macro:
 * pg_stat_wal lost its I/O columns in 18 (they are pg_stat_io rows of
 * object "wal" there), and the server's WAL open flags follow a different
 * O_DIRECT rule from 16 on.
 *
 * IDENTIFICATION
 *	  src/core/compat_wal.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "compat.h"

/*
 * wp_wal_counters
 *		pg_stat_wal's counters (and, from 18, pg_stat_io's WAL rows summed
 *		over backend types), from the statistics snapshot.
 */
void
wp_wal_counters(WpWalCounters *c)
{
	PgStat_WalStats *w = pgstat_fetch_stat_wal();
#if PG_VERSION_NUM >= 180000
	PgStat_IO  *io = pgstat_fetch_stat_io();
	int			bt;

	c->records = w->wal_counters.wal_records;
	c->fpi = w->wal_counters.wal_fpi;
	c->buffers_full = w->wal_counters.wal_buffers_full;
	c->writes = c->syncs = c->write_time_us = c->sync_time_us = 0;
	for (bt = 0; bt < BACKEND_NUM_TYPES; bt++)
	{
		PgStat_BktypeIO *b = &io->stats[bt];

		c->writes += b->counts[IOOBJECT_WAL][IOCONTEXT_NORMAL][IOOP_WRITE];
		c->syncs += b->counts[IOOBJECT_WAL][IOCONTEXT_NORMAL][IOOP_FSYNC];
		c->write_time_us += b->times[IOOBJECT_WAL][IOCONTEXT_NORMAL][IOOP_WRITE];
		c->sync_time_us += b->times[IOOBJECT_WAL][IOCONTEXT_NORMAL][IOOP_FSYNC];
	}
	c->reset_at = Max(w->stat_reset_timestamp, io->stat_reset_timestamp);
#else
	c->records = w->wal_records;
	c->fpi = w->wal_fpi;
	c->buffers_full = w->wal_buffers_full;
	c->writes = w->wal_write;
	c->syncs = w->wal_sync;
	c->write_time_us = w->wal_write_time;
	c->sync_time_us = w->wal_sync_time;
	c->reset_at = w->stat_reset_timestamp;
#endif
}

/*
 * wp_wal_sync_bit
 *		What xlog.c's get_sync_bit() returns for a method in this process
 *		(never a walreceiver): O_SYNC/O_DSYNC for the open_* methods, plus
 *		PG_O_DIRECT where the server would bypass the page cache.
 */
int
wp_wal_sync_bit(int method)
{
	int			o_direct_flag = 0;

#if PG_VERSION_NUM >= 160000
	if (io_direct_flags & IO_DIRECT_WAL)
		o_direct_flag = PG_O_DIRECT;
	if (!enableFsync)
		return o_direct_flag;
	switch (method)
	{
#ifdef O_SYNC
		case WP_SYNC_METHOD_OPEN:
			return O_SYNC | o_direct_flag;
#endif
#ifdef O_DSYNC
		case WP_SYNC_METHOD_OPEN_DSYNC:
			return O_DSYNC | o_direct_flag;
#endif
		default:
			return o_direct_flag;
	}
#else
	if (!enableFsync)
		return 0;
	if (!XLogIsNeeded())
		o_direct_flag = PG_O_DIRECT;
	switch (method)
	{
#ifdef OPEN_SYNC_FLAG
		case WP_SYNC_METHOD_OPEN:
			return OPEN_SYNC_FLAG | o_direct_flag;
#endif
#ifdef OPEN_DATASYNC_FLAG
		case WP_SYNC_METHOD_OPEN_DSYNC:
			return OPEN_DATASYNC_FLAG | o_direct_flag;
#endif
		default:
			return 0;
	}
#endif
}
