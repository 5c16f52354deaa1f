/*-------------------------------------------------------------------------
 *
 * shmem.c
 *		walpilot's shared memory: sizing, creation and the locking rules.
 *
 * Every byte walpilot shares is sized in the shmem_request_hook, from
 * PGC_POSTMASTER settings only, and created in the shmem_startup_hook.
 * Nothing grows afterwards.  Each part owns a named region of its own
 * ("walpilot", "walpilot sampler", ...): it reports its size through a
 * *_shmem_size() function and attaches in *_shmem_init(); the hub's hooks
 * (shmem_hooks.c) ask every layer, so adding an instrument touches one line
 * in each of its lists.  This file holds the core region, "walpilot".
 *
 * After a crash of any server process the postmaster re-creates shared
 * memory from scratch and runs the startup hook again with found == false,
 * so every region is (re)initialised whenever it was not found, and no
 * process-local "already initialised" flag is kept.
 *
 * Locking rules
 * -------------
 * - wp_shared->lock (the one lock of the "walpilot" tranche) protects the
 *   multi-word state that must be read consistently: the worker's start
 *   time, the reset time, ring-buffer heads with their entries, and logs.
 *   The timeline ring is the exception: it is seqlocked (timeline.c), so
 *   that a reader copying a day of seconds never holds up the worker.
 *   It is never held while calling anything that can ereport(ERROR), never
 *   while forming SQL rows (readers copy under it, release it, then
 *   format), and never taken in a backend's commit path.
 * - Single counters are pg_atomic_* and need no lock.
 * - Per-backend slots (indexed by PGPROC number) have exactly one writer,
 *   the owning process; the worker and readers sum them without locks.
 *
 * IDENTIFICATION
 *	  src/core/shmem.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "core.h"

WpSharedState *wp_shared = NULL;

Size
wp_core_shmem_size(void)
{
	return MAXALIGN(sizeof(WpSharedState));
}

/*
 * wp_core_shmem_init
 *		Attach to (or create) the core region.  Called with
 *		AddinShmemInitLock held, before any other region.
 */
void
wp_core_shmem_init(void)
{
	bool		found;

	wp_shared = ShmemInitStruct("walpilot", sizeof(WpSharedState), &found);
	if (!found)
	{
		memset(wp_shared, 0, sizeof(WpSharedState));
		wp_shared->lock = &(GetNamedLWLockTranche(WP_TRANCHE_NAME))->lock;
		pg_atomic_init_u32(&wp_shared->worker_pid, 0);
		pg_atomic_init_u64(&wp_shared->ticks, 0);
		pg_atomic_init_u32(&wp_shared->worker_mode, (uint32) wp_mode);
		pg_atomic_init_u32(&wp_shared->worker_sample_interval_ms,
						   (uint32) wp_sample_interval_ms);
		wp_shared->stats_reset_at = GetCurrentTimestamp();
	}
}

/*
 * wp_require_shared_state
 *		Error out of a SQL function when walpilot's shared memory is absent,
 *		which means the library was not preloaded.
 */
void
wp_require_shared_state(void)
{
	if (wp_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("walpilot must be loaded via \"%s\"",
						"shared_preload_libraries"),
				 errhint("Add walpilot to \"%s\" and restart the server.",
						 "shared_preload_libraries")));
}
