/*-------------------------------------------------------------------------
 *
 * commit_path.c
 *		The one transaction callback, and the observers it calls in order.
 *
 * Every process that loads walpilot inherits one transaction callback,
 * registered in _PG_init.  It decides once per top-level commit what the
 * commit is (an xid? will it wait for its commit record's flush?) and
 * hands a per-commit context to its observers, always in this order:
 *
 *	PRE_COMMIT	commit timing (start stamp, WAL sync counters),
 *				the session settings applier, the gather (counts arrival;
 *				durable commits in tune mode only), commit groups (notes
 *				the delay the flush will run with; only when commit_delay
 *				is above 0 after the gather)
 *	COMMIT		commit timing (takes the end stamp first: nothing else
 *				belongs in the timed window; sets end and led_flush),
 *				commit groups (why the flush closed; sets the leader's
 *				sleep), commit phases (splits the commit's time), both for
 *				timed durable commits and only when their gate says they
 *				would write (commit_gates.h), the gather (reuses the end
 *				stamp; only after its PRE_COMMIT)
 *	ABORT		commit groups, the gather (as at COMMIT)
 *
 * and, after all of them, the end of the drop watch (drop_watch.c): at
 * COMMIT a DROP EXTENSION walpilot this transaction ran takes effect.
 *
 * Most transactions write nothing: one without an xid costs a test, the
 * settings applier's check of its generation, and at COMMIT a test.  An
 * observer is not called when the context or its gate says it has nothing
 * to do (its own first test would return), which spares the calls: the
 * common durable commit, with no commit_delay sleep and no synchronous
 * standby, runs commit timing and the settings applier only.
 *
 * "Durable" is RecordTransactionCommit's test: an xid and WAL written with
 * synchronous_commit above off, or relations dropped (their files go only
 * once the commit record is flushed).  Transactions whose commit record is
 * flushed only because the command forced it (forceSyncCommit) are found
 * at COMMIT by commit timing.  Two-phase commit is not seen: PREPARE
 * TRANSACTION and COMMIT PREPARED flush inside the statement, not in the
 * commit of the transaction that runs it.
 *
 * Observers are peers: none calls another, and each reads only the
 * context (commit timing and commit groups add to it at COMMIT).
 * Parallel workers get the PARALLEL_* events and are ignored.  Nothing
 * here takes a lock or can raise an error; the one allocation is
 * smgrGetPendingDeletes' array, for a non-durable commit that drops
 * relations.
 *
 * IDENTIFICATION
 *	  src/hub/commit_path.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/storage.h"

#include "miscadmin.h"

#include "hub.h"
#include "commit_gates.h"

/* The current top-level transaction's context, PRE_COMMIT to COMMIT. */
static WpCommitContext commit_ctx;

/* The gather's PRE_COMMIT ran: its end runs at COMMIT or ABORT. */
static bool gather_called = false;

/*
 * commit_path_ready
 *		Whether the commit instruments can record in this backend: their
 *		slots attached and a PGPROC to index them by.  Neither changes once
 *		true.
 */
static inline bool
commit_path_ready(void)
{
	static bool ready = false;

	if (likely(ready))
		return true;
	ready = MyProc != NULL &&
		wp_commit_timing_slots.slots != NULL &&
		wp_commit_groups_slots.slots != NULL &&
		wp_commit_phases_slots.slots != NULL;
	return ready;
}

/*
 * drops_relations
 *		Whether the commit drops relations: their files go only once the
 *		commit record is flushed, whatever synchronous_commit says.  Apart,
 *		so that the array's address costs the common path no stack check.
 */
static pg_noinline bool
drops_relations(void)
{
	WpRelFile  *rels = NULL;
	bool		any = smgrGetPendingDeletes(true, &rels) > 0;

	if (rels)
		pfree(rels);
	return any;
}

/*
 * classify_commit
 *		What this commit is, at PRE_COMMIT of a transaction with an xid.
 */
static inline void
classify_commit(WpCommitContext *ctx)
{
	memset(ctx, 0, sizeof(WpCommitContext));
	ctx->has_xid = true;
	/* RecordTransactionCommit's test for waiting on the flush */
	ctx->durable = XactLastRecEnd != 0 &&
		synchronous_commit > SYNCHRONOUS_COMMIT_OFF;
	if (!ctx->durable)
		ctx->durable = drops_relations();
	ctx->timed = wp_mode != WP_MODE_OFF && commit_path_ready();

	/*
	 * forceSyncCommit (CREATE/DROP DATABASE, tablespaces) is private to
	 * xact.c; commit timing counts such a commit as durable at COMMIT when
	 * this backend did the flush.
	 */
}

/*
 * commit_path_pre_commit
 *		PRE_COMMIT of a transaction with an xid: classify it, call the
 *		observers that have work.
 */
static pg_noinline void
commit_path_pre_commit(void)
{
	classify_commit(&commit_ctx);
	if (commit_ctx.timed)
		wp_commit_timing_pre_commit(&commit_ctx);
	(void) wp_settings_apply_in_backend();
	if (!commit_ctx.timed || !commit_ctx.durable)
		return;
	/* the gather has work only for a durable commit in tune mode */
	if (wp_mode == WP_MODE_TUNE)
	{
		gather_called = true;
		wp_gather_pre_commit(&commit_ctx);
	}
	/* the delay XLogFlush will see, after the gather's */
	if (CommitDelay > 0)
	{
		commit_ctx.may_sleep = true;
		wp_commit_groups_pre_commit(&commit_ctx);
	}
}

/*
 * commit_path_commit
 *		COMMIT of a transaction that had an xid at PRE_COMMIT (or ran a
 *		statement that could drop the extension: drop_watch.c).
 */
static pg_noinline void
commit_path_commit(void)
{
	if (commit_ctx.timed)
	{
		wp_commit_timing_commit(&commit_ctx);
		/* the instruments after it look at commits that waited for a flush */
		if (commit_ctx.end_us != 0)
		{
			if (wp_commit_groups_wanted(&commit_ctx))
				wp_commit_groups_commit(&commit_ctx);
			if (wp_commit_phases_wanted(&commit_ctx))
				wp_commit_phases_commit(&commit_ctx);
		}
	}
	if (gather_called)
	{
		gather_called = false;
		wp_gather_end(&commit_ctx);
	}
	memset(&commit_ctx, 0, sizeof(WpCommitContext));
	if (wp_drop_watch_active)
		wp_drop_watch_end(true);
}

/*
 * commit_path_abort
 *		ABORT, whether or not PRE_COMMIT ran.
 */
static pg_noinline void
commit_path_abort(void)
{
	commit_ctx.end_us = 0;
	wp_commit_groups_abort();
	if (gather_called)
	{
		gather_called = false;
		wp_gather_end(&commit_ctx);
	}
	memset(&commit_ctx, 0, sizeof(WpCommitContext));
	if (wp_drop_watch_active)
		wp_drop_watch_end(false);
}

/*
 * wp_commit_path_callback
 *		Every transaction end.  The work is in the functions above, so that
 *		a transaction without an xid, the common case, runs no prologue of
 *		theirs: no xid means no commit record, nothing to time, count or
 *		gather, and every observer's state already clear (COMMIT and ABORT
 *		clear it).  Only a newly published setting is applied then, so that
 *		SHOW in a read-only session sees it as before.
 */
static void
wp_commit_path_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_PRE_COMMIT)
	{
		if (TransactionIdIsValid(GetTopTransactionIdIfAny()))
			commit_path_pre_commit();
		else
			(void) wp_settings_apply_in_backend();
	}
	else if (event == XACT_EVENT_COMMIT)
	{
		/* no xid at PRE_COMMIT leaves the context clear */
		if (commit_ctx.has_xid || wp_drop_watch_active)
			commit_path_commit();
	}
	else if (event == XACT_EVENT_ABORT)
		commit_path_abort();
	else if (event == XACT_EVENT_PREPARE && wp_drop_watch_active)
	{
		/* its COMMIT PREPARED is not seen (see drop_watch.c) */
		wp_drop_watch_end(false);
	}
}

/*
 * wp_commit_path_register
 *		Install the transaction callback; called once from _PG_init.
 */
void
wp_commit_path_register(void)
{
	RegisterXactCallback(wp_commit_path_callback, NULL);
}
