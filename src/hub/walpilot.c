/*-------------------------------------------------------------------------
 *
 * walpilot.c
 *		Module entry point: the settings' definitions (core/gucs.c), hook
 *		installation and worker registration.
 *
 * walpilot works only when loaded through shared_preload_libraries: its
 * shared memory is requested at postmaster start and its worker is a
 * static background worker.  Loaded any other way (for instance by
 * CREATE EXTENSION calling one of its functions), _PG_init returns at once
 * and every SQL function reports that the library is not preloaded, as
 * pg_stat_statements does.
 *
 * IDENTIFICATION
 *	  src/hub/walpilot.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "hub.h"

PG_MODULE_MAGIC;

static emit_log_hook_type prev_emit_log_hook = NULL;

/*
 * wp_emit_log_hook
 *		Every server log message, in every process: the checkpointer's
 *		start line first applies checkpoint_flush_after (in every mode:
 *		with walpilot.mode = off it puts the configured value back), then
 *		the checkpoint records see the line.
 */
static void
wp_emit_log_hook(ErrorData *edata)
{
	if (wp_checkpoints_is_start_line(edata))
		wp_ckpt_setting_at_checkpoint_start();
	wp_checkpoints_note_log(edata);
	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
}

/*
 * _PG_init
 *		Module load callback.
 */
void
_PG_init(void)
{
	/*
	 * Shared memory and the static worker can only be set up while the
	 * postmaster loads shared_preload_libraries.  Anything else gets a
	 * library whose SQL functions report the missing preload.
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	wp_define_gucs();
	wp_shmem_install_hooks();
	wp_worker_register();
	wp_commit_path_register();
	wp_drop_watch_register();
	wp_ckpt_setting_find_guc();

	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = wp_emit_log_hook;
}
