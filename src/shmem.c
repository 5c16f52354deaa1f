/*-------------------------------------------------------------------------
 *
 * shmem.c
 *		walpilot's shared memory: sizing, creation and the locking rules.
 *
 * Every byte walpilot shares is sized in the shmem_request_hook, from
 * PGC_POSTMASTER settings only, and created in the shmem_startup_hook.
 * Nothing grows afterwards.  Each instrument owns a named region of its own
 * ("walpilot", "walpilot sampler", ...): it reports its size through a
 * *_shmem_size() function and attaches in *_shmem_init(), both called from
 * here, so adding an instrument touches one line in each list below.
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
 *	  src/shmem.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "walpilot.h"

WpSharedState *wp_shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * wp_shmem_size
 *		Bytes every walpilot region needs, from PGC_POSTMASTER settings.
 */
static Size
wp_shmem_size(void)
{
	Size		size = MAXALIGN(sizeof(WpSharedState));

	size = add_size(size, wp_settings_shmem_size());
	size = add_size(size, wp_ckpt_setting_shmem_size());
	size = add_size(size, wp_alter_system_shmem_size());
	size = add_size(size, wp_pilot_shmem_size());
	size = add_size(size, wp_gather_shmem_size());
	size = add_size(size, wp_probe_shmem_size());
	size = add_size(size, wp_checkpoints_shmem_size());
	size = add_size(size, wp_commit_timing_shmem_size());
	size = add_size(size, wp_commit_groups_shmem_size());
	size = add_size(size, wp_sampler_shmem_size());
	size = add_size(size, wp_timeline_shmem_size());

	return size;
}

/*
 * wp_shmem_request
 *		shmem_request_hook: reserve our space and our lock tranche.
 */
static void
wp_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(wp_shmem_size());
	RequestNamedLWLockTranche(WP_TRANCHE_NAME, 1);
}

/*
 * wp_shmem_startup
 *		shmem_startup_hook: create or attach every walpilot region.
 */
static void
wp_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);

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
	wp_settings_shmem_init();
	wp_ckpt_setting_shmem_init();
	wp_alter_system_shmem_init();
	wp_pilot_shmem_init();
	wp_gather_shmem_init();
	wp_probe_shmem_init();
	wp_checkpoints_shmem_init();
	wp_commit_timing_shmem_init();
	wp_commit_groups_shmem_init();
	wp_sampler_shmem_init();
	wp_timeline_shmem_init();

	LWLockRelease(AddinShmemInitLock);
}

/*
 * wp_shmem_install_hooks
 *		Called from _PG_init while shared_preload_libraries is processed.
 */
void
wp_shmem_install_hooks(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = wp_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = wp_shmem_startup;
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

/*
 * wp_reset_all
 *		Clear every cumulative counter and history walpilot keeps.
 *
 * Called by walpilot.reset().  Settings and the decision log are not
 * measurements and are left alone.
 */
void
wp_reset_all(void)
{
	TimestampTz now = GetCurrentTimestamp();

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	wp_shared->stats_reset_at = now;
	LWLockRelease(wp_shared->lock);

	wp_commit_timing_reset();
	wp_commit_groups_reset();
	wp_sampler_reset();
	wp_timeline_reset();
}
