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
 *	PRE_COMMIT	commit timing (snapshots the WAL sync counters),
 *				the session settings applier, the gather (counts arrival)
 *	COMMIT		commit timing (takes the end stamp first: nothing else
 *				belongs in the timed window; sets end and led_flush),
 *				the gather (reuses the end stamp)
 *	ABORT		commit timing, the gather
 *
 * Observers are peers: none calls another, and each reads only the
 * context.  Parallel workers get the PARALLEL_* events and are ignored.
 * Nothing here takes a lock, allocates or can raise an error.
 *
 * IDENTIFICATION
 *	  src/commit_path.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"

#include "walpilot.h"

/* The current top-level transaction's context, PRE_COMMIT to COMMIT. */
static WpCommitContext commit_ctx;

/*
 * classify_commit
 *		What this commit is, at PRE_COMMIT.
 */
static void
classify_commit(WpCommitContext *ctx)
{
	memset(ctx, 0, sizeof(WpCommitContext));
	ctx->has_xid = TransactionIdIsValid(GetTopTransactionIdIfAny());
	ctx->durable = ctx->has_xid && XactLastRecEnd != 0 &&
		synchronous_commit > SYNCHRONOUS_COMMIT_OFF;
}

static void
wp_commit_path_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			classify_commit(&commit_ctx);
			wp_commit_timing_pre_commit(&commit_ctx);
			(void) wp_settings_apply_in_backend();
			wp_gather_pre_commit(&commit_ctx);
			break;

		case XACT_EVENT_COMMIT:
			wp_commit_timing_commit(&commit_ctx);
			wp_gather_end(&commit_ctx);
			memset(&commit_ctx, 0, sizeof(WpCommitContext));
			break;

		case XACT_EVENT_ABORT:
			commit_ctx.end = 0;
			wp_commit_timing_abort(&commit_ctx);
			wp_gather_end(&commit_ctx);
			memset(&commit_ctx, 0, sizeof(WpCommitContext));
			break;

		default:
			break;
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
