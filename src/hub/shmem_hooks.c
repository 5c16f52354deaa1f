/*-------------------------------------------------------------------------
 *
 * shmem_hooks.c
 *		The shared-memory hooks: ask every layer for its size, then let
 *		each attach, the core region first.
 *
 * Sizes come from PGC_POSTMASTER settings only (see core/shmem.c for the
 * rules every region follows).
 *
 * IDENTIFICATION
 *	  src/hub/shmem_hooks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "hub.h"

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static Size
wp_shmem_size(void)
{
	Size		size = wp_core_shmem_size();

	/* instruments */
	size = add_size(size, wp_sampler_shmem_size());
	size = add_size(size, wp_timeline_shmem_size());
	size = add_size(size, wp_backend_slots_shmem_size(&wp_commit_timing_slots));
	size = add_size(size, wp_backend_slots_shmem_size(&wp_commit_groups_slots));
	size = add_size(size, wp_backend_slots_shmem_size(&wp_commit_phases_slots));
	size = add_size(size, wp_checkpoints_shmem_size());
	size = add_size(size, wp_probe_shmem_size());
	size = add_size(size, wp_flush_estimate_shmem_size());
	/* settings */
	size = add_size(size, wp_settings_shmem_size());
	size = add_size(size, wp_ckpt_setting_shmem_size());
	size = add_size(size, wp_alter_system_shmem_size());
	/* pilots */
	size = add_size(size, wp_decision_log_shmem_size());
	size = add_size(size, wp_pilot_shmem_size());
	size = add_size(size, wp_gather_shmem_size());

	return size;
}

static void
wp_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(wp_shmem_size());
	RequestNamedLWLockTranche(WP_TRANCHE_NAME, 1);
}

static void
wp_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	wp_core_shmem_init();
	/* the order the regions were always attached in */
	wp_settings_shmem_init();
	wp_decision_log_shmem_init();
	wp_ckpt_setting_shmem_init();
	wp_alter_system_shmem_init();
	wp_pilot_shmem_init();
	wp_gather_shmem_init();
	wp_probe_shmem_init();
	wp_flush_estimate_shmem_init();
	wp_checkpoints_shmem_init();
	wp_backend_slots_attach(&wp_commit_timing_slots);
	wp_backend_slots_attach(&wp_commit_groups_slots);
	wp_backend_slots_attach(&wp_commit_phases_slots);
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
