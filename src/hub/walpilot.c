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

#include "catalog/objectaccess.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "tcop/utility.h"
#include "utils/guc.h"

#include "hub.h"

PG_MODULE_MAGIC;

static object_access_hook_type prev_object_access_hook = NULL;
static ProcessUtility_hook_type prev_process_utility_hook = NULL;
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
 * wp_object_access
 *		DROP EXTENSION walpilot puts every setting walpilot manages back
 *		when its transaction commits (commit_path.c).  In place only while
 *		a DROP statement runs (wp_process_utility).
 */
static void
wp_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				 int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	if (access == OAT_DROP && classId == ExtensionRelationId &&
		objectId == get_extension_oid("walpilot", true))
		wp_commit_path_note_extension_drop();	/* acts at commit */
}

/*
 * watched_drop
 *		Run a DROP statement with wp_object_access in place.
 */
static pg_noinline void
watched_drop(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
			 ProcessUtilityContext context, ParamListInfo params,
			 QueryEnvironment *queryEnv, DestReceiver *dest,
			 QueryCompletion *qc)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = wp_object_access;
	PG_TRY();
	{
		if (prev_process_utility_hook)
			prev_process_utility_hook(pstmt, queryString, readOnlyTree,
									  context, params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree,
									context, params, queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		object_access_hook = prev_object_access_hook;
	}
	PG_END_TRY();
}

/*
 * wp_process_utility
 *		Puts wp_object_access in place around the statements that can drop
 *		the extension: DROP (EXTENSION, or a SCHEMA ... CASCADE) and DROP
 *		OWNED.  An object access hook that stayed installed would cost every
 *		query: the executor calls it for each function it initialises.
 *		Every other utility statement (BEGIN, COMMIT, SET ...) passes
 *		straight on.
 */
static void
wp_process_utility(PlannedStmt *pstmt, const char *queryString,
				   bool readOnlyTree, ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc)
{
	NodeTag		tag = nodeTag(pstmt->utilityStmt);

	/* not again inside a DROP that runs another (an event trigger's) */
	if (unlikely(tag == T_DropStmt || tag == T_DropOwnedStmt) &&
		object_access_hook != wp_object_access)
		watched_drop(pstmt, queryString, readOnlyTree, context, params,
					 queryEnv, dest, qc);
	else if (prev_process_utility_hook)
		prev_process_utility_hook(pstmt, queryString, readOnlyTree, context,
								  params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
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
	wp_ckpt_setting_find_guc();

	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = wp_process_utility;
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = wp_emit_log_hook;
}
