/*-------------------------------------------------------------------------
 *
 * compat.h
 *		Every PostgreSQL version difference walpilot cares about, in one place.
 *
 * The logic files stay free of PG_VERSION_NUM tests: each difference is a
 * macro or a static inline wrapper here.  walpilot targets PostgreSQL 15;
 * guards for 16-18 follow what is known of those releases (see
 * INTERNALS.md) and must be verified when built against them.
 *
 * IDENTIFICATION
 *	  src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_COMPAT_H
#define WALPILOT_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 150000
#error "walpilot requires PostgreSQL 15 or later"
#endif

#include "funcapi.h"
#include "miscadmin.h"
#include "storage/proc.h"

/* _PG_init is declared by fmgr.h only from 16 (18 certainly) on. */
#if PG_VERSION_NUM < 160000
extern void _PG_init(void);
#endif

/*
 * commit_delay and commit_siblings are exported by the server but declared
 * in a header only in later releases; an identical repeated extern
 * declaration is legal, so this line is safe on every version.
 */
extern PGDLLIMPORT int CommitDelay;
extern PGDLLIMPORT int CommitSiblings;

/* Index of a PGPROC in ProcGlobal->allProcs, and of our own. */
#if PG_VERSION_NUM >= 170000
#define wp_my_proc_number()		(MyProcNumber)
#else
#define wp_my_proc_number()		(MyProc->pgprocno)
#endif

/* Number of PGPROC slots, as sized in the shmem request hook. */
static inline int
wp_max_procs(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS;
}

/* Materialized set-returning function setup: 15.x has both names. */
#define wp_init_materialized_srf(fcinfo) InitMaterializedSRF((fcinfo), 0)

/* Our worker's wait event: custom events exist only from 17. */
#define WP_WAIT_EVENT_MAIN	PG_WAIT_EXTENSION

/* Read a 4-byte field another process writes without a lock, once. */
#define WP_READ_ONCE_U32(v) ((uint32) (*((volatile uint32 *) &(v))))
#define WP_READ_ONCE_I32(v) ((int32) (*((volatile int32 *) &(v))))

/*
 * Leader detection for commit timing: PendingWalStats holds this process's
 * not-yet-reported WAL I/O counts up to 17; 18 moved WAL I/O to pg_stat_io
 * and made the pending counters static, so there "did this backend lead
 * the flush" is unknown.  With an open_* wal_sync_method the sync is part
 * of the write and wal_sync never moves, so the write count stands in.
 */
#if PG_VERSION_NUM < 180000
#include "access/xlog.h"
#include "pgstat.h"
#define WP_HAVE_LEADER_DETECTION 1
#define wp_pending_wal_syncs()		((uint64) PendingWalStats.wal_sync)
#define wp_pending_wal_writes()		((uint64) PendingWalStats.wal_write)
#if PG_VERSION_NUM >= 170000
#define wp_wal_sync_is_open() \
	(wal_sync_method == WAL_SYNC_METHOD_OPEN || \
	 wal_sync_method == WAL_SYNC_METHOD_OPEN_DSYNC)
#else
#define wp_wal_sync_is_open() \
	(sync_method == SYNC_METHOD_OPEN || sync_method == SYNC_METHOD_OPEN_DSYNC)
#endif
#else
#define WP_HAVE_LEADER_DETECTION 0
#endif

/*
 * Backend type of the process owning a PGPROC.  15 keeps no type in the
 * PGPROC: the sampler derives it from the slot's index range, the
 * checkpointer/walwriter latch pointers and a pid map (sampler.c).  18
 * replaced the latch pointers by proc numbers.
 */
#if PG_VERSION_NUM >= 180000
#define wp_proc_is_checkpointer(i) \
	((int) ProcGlobal->checkpointerProc == (i))
#define wp_proc_is_walwriter(i) \
	((int) ProcGlobal->walwriterProc == (i))
#else
#define wp_proc_is_checkpointer(i) \
	(ProcGlobal->checkpointerLatch == &ProcGlobal->allProcs[(i)].procLatch)
#define wp_proc_is_walwriter(i) \
	(ProcGlobal->walwriterLatch == &ProcGlobal->allProcs[(i)].procLatch)
#endif

/* Current WAL insert position (takes only the insertpos spinlock). */
#define wp_insert_lsn()			GetXLogInsertRecPtr()

#endif							/* WALPILOT_COMPAT_H */
