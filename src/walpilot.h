/*-------------------------------------------------------------------------
 *
 * walpilot.h
 *		Shared types, GUC variables and prototypes of walpilot.
 *
 * One header for the whole module (as pg_wait_sampling has): every file
 * includes it, and its prototypes are grouped by the file that defines
 * them.  Only shmem.c knows how the shared segment is laid out; other
 * files reach their part through the pointers declared here.
 *
 * IDENTIFICATION
 *	  src/walpilot.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_H
#define WALPILOT_H

#include "postgres.h"

#include "port/atomics.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"

#include "compat.h"

#define WALPILOT_VERSION		"0.1"
#define WP_WORKER_TYPE			"walpilot worker"
#define WP_TRANCHE_NAME			"walpilot"

/* walpilot.mode */
typedef enum WpMode
{
	WP_MODE_OFF,
	WP_MODE_OBSERVE,
	WP_MODE_TUNE
} WpMode;

/*
 * The core shared state.  Locking rules are in shmem.c's header comment;
 * each field says what protects it.
 */
typedef struct WpSharedState
{
	LWLock	   *lock;			/* the walpilot tranche's only lock */

	/* written by the worker, read by anyone */
	pg_atomic_uint32 worker_pid;	/* 0 when no worker runs */
	pg_atomic_uint64 ticks;		/* worker loop passes since start */
	pg_atomic_uint32 worker_mode;	/* WpMode the worker last applied */
	pg_atomic_uint32 worker_sample_interval_ms;

	/* protected by lock */
	TimestampTz worker_started_at;	/* 0 when no worker runs */
	TimestampTz stats_reset_at; /* last walpilot.reset() or startup */
	uint64		worker_starts;	/* worker starts since server start */
} WpSharedState;

/*---- walpilot.c: GUC variables ----*/
extern int	wp_mode;
extern char *wp_database;
extern int	wp_sample_interval_ms;
extern int	wp_history_size_s;

extern const char *wp_mode_name(int mode);

/*---- shmem.c ----*/
extern WpSharedState *wp_shared;

extern void wp_shmem_install_hooks(void);
extern void wp_require_shared_state(void);
extern void wp_reset_all(void);

/*---- pilot_commit_delay.c ----*/
extern void wp_pilot_before_commit(bool durable);
extern void wp_pilot_after_commit(void);

/*---- worker.c ----*/
extern void wp_worker_register(void);
extern PGDLLEXPORT void walpilot_worker_main(Datum main_arg);

#endif							/* WALPILOT_H */
