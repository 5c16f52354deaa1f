/*-------------------------------------------------------------------------
 *
 * drop_watch.c
 *		DROP EXTENSION walpilot: seen while it runs, acted on when it
 *		commits.
 *
 * A committed DROP EXTENSION walpilot, in any database, puts every setting
 * walpilot manages back and makes every pilot hold off, as
 * walpilot.revert() does; a DROP that rolls back (the whole transaction or
 * a savepoint) changes nothing.
 *
 * The extension's event trigger walpilot_watch_drop fires at the start of
 * the statements that can drop it (DROP EXTENSION, DROP SCHEMA ... CASCADE,
 * DROP OWNED) and calls walpilot.watch_drop(), which puts an object-access
 * hook in place until the transaction ends.  The hook notes the
 * extension's OAT_DROP with the innermost subtransaction; a subtransaction
 * abort forgets it; the commit path calls wp_drop_watch_end at the
 * transaction's end, which acts on a committed drop and takes the hook
 * away again.
 *
 * Why an event trigger: an object-access hook that stayed in place would
 * cost every query (the executor calls it for each function it
 * initialises), and a utility hook to put it in place would cost every
 * utility statement, BEGIN and COMMIT included.  The event trigger costs
 * nothing outside those DROP statements.  It is ENABLE ALWAYS, so
 * session_replication_role = replica does not silence it; like every event
 * trigger it does not fire in single-user mode, nor with event_triggers =
 * off (17 on), and a DROP run there is not seen.  Nor is a DROP in a
 * prepared transaction: it takes effect at COMMIT PREPARED, which runs no
 * transaction callback of the transaction that prepared it.
 *
 * IDENTIFICATION
 *	  src/hub/drop_watch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_extension.h"
#include "commands/dbcommands.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "miscadmin.h"

#include "hub.h"

/* wp_object_access is in object_access_hook's chain (it may stay there) */
static bool hook_in_chain = false;
static object_access_hook_type prev_object_access_hook = NULL;

/* this transaction ran a statement the event trigger fired for */
bool		wp_drop_watch_active = false;

/*
 * A DROP EXTENSION walpilot in this transaction: the innermost live
 * subtransaction that contains it (InvalidSubTransactionId: none), and the
 * database's name, looked up while catalog access is still possible.
 */
static SubTransactionId drop_subid = InvalidSubTransactionId;
static char drop_database[NAMEDATALEN];

/*
 * wp_object_access
 *		OAT_DROP of the walpilot extension, while watching: remember it
 *		until the transaction ends.  Nothing is reverted yet: the DROP may
 *		still roll back.
 */
static void
wp_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				 int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	if (wp_drop_watch_active && access == OAT_DROP &&
		classId == ExtensionRelationId &&
		objectId == get_extension_oid("walpilot", true))
	{
		char	   *name = get_database_name(MyDatabaseId);

		strlcpy(drop_database, name ? name : "?", sizeof(drop_database));
		if (name)
			pfree(name);
		drop_subid = GetCurrentSubTransactionId();
	}
}

/*
 * walpilot_watch_drop
 *		walpilot.watch_drop(), the event trigger walpilot_watch_drop's
 *		function (ddl_command_start of DROP EXTENSION, DROP SCHEMA, DROP
 *		OWNED): watch this transaction's drops.  Nothing to watch for
 *		without shared_preload_libraries.
 */
PG_FUNCTION_INFO_V1(walpilot_watch_drop);

Datum
walpilot_watch_drop(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("walpilot.watch_drop() can only be called as an event trigger"),
				 errhint("The extension's event trigger walpilot_watch_drop calls it.")));
	if (wp_shared == NULL)
		PG_RETURN_NULL();

	/* once in the chain: a hook installed after ours may call it */
	if (!hook_in_chain)
	{
		prev_object_access_hook = object_access_hook;
		object_access_hook = wp_object_access;
		hook_in_chain = true;
	}
	wp_drop_watch_active = true;
	PG_RETURN_NULL();
}

/*
 * drop_watch_subxact_callback
 *		A savepoint rolled back forgets a drop inside it; one released hands
 *		it to its parent.
 */
static void
drop_watch_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							SubTransactionId parentSubid, void *arg)
{
	if (drop_subid == InvalidSubTransactionId)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB && drop_subid >= mySubid)
		drop_subid = InvalidSubTransactionId;	/* rolled back with it */
	else if (event == SUBXACT_EVENT_COMMIT_SUB && drop_subid == mySubid)
		drop_subid = parentSubid;	/* now the parent's */
}

/*
 * extension_dropped
 *		A DROP EXTENSION walpilot committed: the settings record it and put
 *		the configured values back, and every pilot holds off for
 *		walpilot.tune_interval, as after walpilot.revert().
 */
static void
extension_dropped(void)
{
	char		by[128];

	wp_settings_extension_dropped(drop_database);
	snprintf(by, sizeof(by), "DROP EXTENSION walpilot in database %s",
			 drop_database);
	wp_pilot_request_hold_off(by, 0);
}

/*
 * wp_drop_watch_end
 *		The commit path, at the end of a transaction that watched
 *		(wp_drop_watch_active): act on a committed drop, stop watching, and
 *		take the hook out of the chain when it is still on top.
 */
void
wp_drop_watch_end(bool committed)
{
	bool		dropped = committed && drop_subid != InvalidSubTransactionId;

	drop_subid = InvalidSubTransactionId;
	wp_drop_watch_active = false;
	if (hook_in_chain && object_access_hook == wp_object_access)
	{
		object_access_hook = prev_object_access_hook;
		hook_in_chain = false;
	}
	if (dropped)
		extension_dropped();
}

/*
 * wp_drop_watch_register
 *		The subtransaction callback; called once from _PG_init.
 */
void
wp_drop_watch_register(void)
{
	RegisterSubXactCallback(drop_watch_subxact_callback, NULL);
}
