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

#endif							/* WALPILOT_COMPAT_H */
