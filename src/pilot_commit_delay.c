/*-------------------------------------------------------------------------
 *
 * pilot_commit_delay.c
 *		The commit_delay / commit_siblings controller and its backend side.
 *
 * (Being written.)  The backend-side entry points are called from the
 * transaction callback in commit_timing.c.
 *
 * IDENTIFICATION
 *	  src/pilot_commit_delay.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "walpilot.h"

/*
 * wp_pilot_before_commit
 *		Called at PRE_COMMIT of every top-level transaction of a regular
 *		backend (not parallel workers).  durable tells whether this commit
 *		will write a commit record and wait for its flush.  Must not
 *		ereport(ERROR), take an LWLock or allocate.
 */
void
wp_pilot_before_commit(bool durable)
{
}

/*
 * wp_pilot_after_commit
 *		Called at COMMIT and ABORT of the same transactions, with the same
 *		restrictions.
 */
void
wp_pilot_after_commit(void)
{
}
