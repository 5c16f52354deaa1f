/*-------------------------------------------------------------------------
 *
 * decision_log.c
 *		walpilot.decisions: every change, trial and revert a pilot makes.
 *
 * A fixed ring of WP_DECISIONS rows in shared memory under the walpilot
 * lock, and a LOG line per row.  Only pilots write it: the settings apply
 * what a pilot asks and report, the pilot records why.
 *
 * IDENTIFICATION
 *	  src/pilots/decision_log.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "pilots.h"

#define WP_DECISIONS			256

typedef struct WpDecisionLog
{
	/* protected by wp_shared->lock */
	uint64		total;			/* rows ever written; the next id */
	WpDecision	decisions[WP_DECISIONS];
} WpDecisionLog;

static WpDecisionLog *dlog = NULL;

Size
wp_decision_log_shmem_size(void)
{
	return MAXALIGN(sizeof(WpDecisionLog));
}

void
wp_decision_log_shmem_init(void)
{
	bool		found;

	dlog = ShmemInitStruct("walpilot decisions", sizeof(WpDecisionLog),
						   &found);
	if (!found)
		memset(dlog, 0, sizeof(WpDecisionLog));
}

/*
 * wp_decision_log
 *		Append a decision (and say it in the server log); returns its id
 *		for wp_decision_set_outcome.  evidence is a JSON object's text, as
 *		the server's jsonb code writes it (JsonbToCString); one that does
 *		not fit is replaced by a note saying so, never cut.
 */
uint64
wp_decision_log(const char *setting, const char *old_value,
				const char *new_value, const char *reason,
				const char *evidence)
{
	WpDecision *d;
	uint64		id;

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	id = dlog->total++;
	d = &dlog->decisions[id % WP_DECISIONS];
	memset(d, 0, sizeof(WpDecision));
	d->id = id;
	d->decided_at = GetCurrentTimestamp();
	strlcpy(d->setting, setting, sizeof(d->setting));
	strlcpy(d->old_value, old_value, sizeof(d->old_value));
	strlcpy(d->new_value, new_value, sizeof(d->new_value));
	strlcpy(d->reason, reason, sizeof(d->reason));
	/* cut JSON is no JSON: walpilot.decisions would fail to read it */
	if (evidence == NULL)
		strlcpy(d->evidence, "{}", sizeof(d->evidence));
	else if (strlen(evidence) >= sizeof(d->evidence))
		snprintf(d->evidence, sizeof(d->evidence),
				 "{\"evidence_truncated\": true, \"length\": %zu}",
				 strlen(evidence));
	else
		strlcpy(d->evidence, evidence, sizeof(d->evidence));
	LWLockRelease(wp_shared->lock);

	ereport(LOG,
			(errmsg("walpilot decision on %s: \"%s\" -> \"%s\"",
					setting, old_value, new_value),
			 errdetail_internal("%s", reason)));
	return id;
}

/*
 * wp_decision_set_outcome
 *		Record what a decision turned out to do, if it is still in the ring.
 */
void
wp_decision_set_outcome(uint64 id, const char *outcome)
{
	WpDecision *d;

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	d = &dlog->decisions[id % WP_DECISIONS];
	if (d->id == id && id < dlog->total)
		strlcpy(d->outcome, outcome, sizeof(d->outcome));
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_decisions_copy
 *		Copy the decision log, oldest first, into a palloc'd array.
 */
int
wp_decisions_copy(WpDecision **out)
{
	uint64		total,
				first,
				id;
	int			n = 0;
	WpDecision *buf = palloc(sizeof(WpDecision) * WP_DECISIONS);

	LWLockAcquire(wp_shared->lock, LW_SHARED);
	total = dlog->total;
	first = total > WP_DECISIONS ? total - WP_DECISIONS : 0;
	for (id = first; id < total; id++)
		buf[n++] = dlog->decisions[id % WP_DECISIONS];
	LWLockRelease(wp_shared->lock);
	*out = buf;
	return n;
}
