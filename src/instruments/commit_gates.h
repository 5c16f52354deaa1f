/*-------------------------------------------------------------------------
 *
 * commit_gates.h
 *		The tests the commit path makes before calling a commit instrument.
 *
 * Inline, so that the common durable commit (no commit_delay sleep, no
 * synchronous standby) costs commit groups and commit phases a test each
 * and no call.  Commit phases uses the standby test too.  Each gate answers "would the instrument's first test
 * return?" and must stay in step with that instrument's own rules.
 *
 * IDENTIFICATION
 *	  src/instruments/commit_gates.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_COMMIT_GATES_H
#define WALPILOT_COMMIT_GATES_H

#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"

#include "instruments.h"

/*
 * wp_commit_groups_wanted
 *		COMMIT of a timed durable commit: commit groups has something to
 *		do when the commit could have slept (its PRE_COMMIT ran), or when
 *		the last commit-led flush closed for a reason other than no_delay
 *		(a follower files itself under it, a leader puts no_delay back).
 *		Otherwise it would write nothing.
 */
static inline bool
wp_commit_groups_wanted(const WpCommitContext *ctx)
{
	return ctx->may_sleep ||
		pg_atomic_read_u32(&((WpGroupsShared *)
							wp_commit_groups_slots.header)->last_reason) !=
		WP_GROUP_NO_DELAY;
}

/*
 * wp_commit_may_wait_for_standby
 *		Whether this commit may have waited for a synchronous standby:
 *		SyncRepWaitForLSN's own unlocked tests.
 */
static inline bool
wp_commit_may_wait_for_standby(void)
{
	return SyncRepRequested() && WalSndCtl != NULL && wp_sync_standbys_defined();
}

/*
 * wp_commit_phases_wanted
 *		COMMIT of a timed durable commit: commit phases counts only a
 *		commit that slept in commit_delay or may have waited for a
 *		synchronous standby.
 */
static inline bool
wp_commit_phases_wanted(const WpCommitContext *ctx)
{
	return ctx->slept_us != 0 || wp_commit_may_wait_for_standby();
}

#endif							/* WALPILOT_COMMIT_GATES_H */
