/*-------------------------------------------------------------------------
 *
 * pilot_status.c
 *		The generic pilot controller's shared region "walpilot pilots":
 *		what each pilot publishes for walpilot.status and walpilot.pilots,
 *		and the hold-offs SQL and the commit path request.
 *
 * The worker publishes each pilot's state, its current value and
 * candidate and why it is idle or holding (the reason the state machine
 * in pilot.c keeps) under wp_shared->lock; readers copy it out under the
 * same lock.  walpilot.revert() and DROP EXTENSION withdraw every
 * published value at once and leave the worker a request, which it takes
 * at its next tick.
 *
 * IDENTIFICATION
 *	  src/pilots/pilot_status.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "pilot_internal.h"

/* What a pilot publishes for walpilot.status; under wp_shared->lock. */
typedef struct WpPilotPublic
{
	char		state[16];
	char		current[WP_PILOT_TEXT];
	char		candidate[WP_PILOT_TEXT];
	char		reason[WP_PILOT_REASON];
	WpModelGrade grade;
} WpPilotPublic;

typedef struct WpPilotShared
{
	/* a hold-off requested from SQL (revert(), DROP EXTENSION) */
	pg_atomic_uint32 hold_requested;
	TimestampTz hold_until;		/* under lock; 0: tune_interval from now */
	char		hold_by[128];	/* under lock */
	WpPilotPublic pub[WP_NUM_PILOTS];
} WpPilotShared;

static WpPilotShared *pilot_shared = NULL;

Size
wp_pilot_shmem_size(void)
{
	return MAXALIGN(sizeof(WpPilotShared));
}

void
wp_pilot_shmem_init(void)
{
	bool		found;
	int			i;

	pilot_shared = ShmemInitStruct("walpilot pilots", sizeof(WpPilotShared),
								   &found);
	if (!found)
	{
		memset(pilot_shared, 0, sizeof(WpPilotShared));
		pg_atomic_init_u32(&pilot_shared->hold_requested, 0);
		for (i = 0; i < WP_NUM_PILOTS; i++)
		{
			strlcpy(pilot_shared->pub[i].state, "idle",
					sizeof(pilot_shared->pub[i].state));
			strlcpy(pilot_shared->pub[i].reason, "the worker has not started",
					sizeof(pilot_shared->pub[i].reason));
		}
	}
}

/* has this process attached to the region (shared_preload_libraries)? */
bool
wp_pilot_attached(void)
{
	return pilot_shared != NULL;
}

/*
 * wp_pilot_publish
 *		The pilot's state for walpilot.status.
 */
void
wp_pilot_publish(int i)
{
	WpPilotRun *r = &wp_pilot_runs[i];
	WpPilotPublic pub;

	memset(&pub, 0, sizeof(pub));
	strlcpy(pub.state, r->state == WP_PS_IDLE ? "idle" :
			r->state == WP_PS_HOLD ? "hold" :
			r->kind == WP_TK_RECHECK ? "re-check" : "trial",
			sizeof(pub.state));
	describe(r, &r->current, pub.current);
	if (r->state == WP_PS_TRIAL)
		describe(r, &r->candidate, pub.candidate);
	strlcpy(pub.reason, r->reason, sizeof(pub.reason));
	pub.grade = r->grade;

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	pilot_shared->pub[i] = pub;
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_pilot_take_hold_request
 *		A hold-off requested from SQL (revert(), DROP EXTENSION).
 */
void
wp_pilot_take_hold_request(void)
{
	TimestampTz until;
	char		by[128];
	char		t[64];
	int			i;

	if (!pg_atomic_exchange_u32(&pilot_shared->hold_requested, 0))
		return;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	until = pilot_shared->hold_until;
	strlcpy(by, pilot_shared->hold_by, sizeof(by));
	LWLockRelease(wp_shared->lock);
	for (i = 0; i < WP_NUM_PILOTS; i++)
	{
		WpPilotRun *r = &wp_pilot_runs[i];

		if (r->broken)
			continue;
		wp_pilot_fall_back(r, by, NULL);
		wp_pilot_hold_off(r, until, by, NULL);
		format_time(wp_pilot_hold_end(r), t, sizeof(t));
		snprintf(r->reason, sizeof(r->reason), "held off until %s: %s", t, by);
		if (r->broken)
			wp_pilot_stop_broken(r);
		wp_pilot_publish(i);
	}
}

/*
 * wp_pilot_request_hold_off
 *		SQL or commit path: put every configured value back at once, and
 *		have the worker hold every pilot off until `until` (0:
 *		walpilot.tune_interval from when it sees the request), saying `by`
 *		(who, where) in its rows and in walpilot.status.pilot_reason.  No
 *		catalog access, no allocation, no error: callable at
 *		XACT_EVENT_COMMIT.
 */
void
wp_pilot_request_hold_off(const char *by, TimestampTz until)
{
	int			i;

	if (pilot_shared == NULL)
		return;
	for (i = 0; i < WP_NUM_PILOTS; i++)
		wp_pilot_defs[i]->withdraw();
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	pilot_shared->hold_until = until;
	strlcpy(pilot_shared->hold_by, by, sizeof(pilot_shared->hold_by));
	LWLockRelease(wp_shared->lock);
	pg_atomic_write_u32(&pilot_shared->hold_requested, 1);
}

/*
 * wp_pilot_request_revert
 *		The same, when the caller cannot say more.
 */
void
wp_pilot_request_revert(void)
{
	wp_pilot_request_hold_off("walpilot.revert() or DROP EXTENSION", 0);
}

/*
 * wp_pilot_describe
 *		The commit_delay pilot's state for walpilot.status.
 */
void
wp_pilot_describe(char *st, char *cur, char *cand, size_t len)
{
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	strlcpy(st, pilot_shared->pub[0].state, len);
	strlcpy(cur, pilot_shared->pub[0].current, len);
	strlcpy(cand, pilot_shared->pub[0].candidate, len);
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_pilot_reason
 *		Why pilot i is idle or holding (walpilot.status.pilot_reason).
 */
void
wp_pilot_reason(int pilot, char *buf, size_t len)
{
	if (pilot < 0 || pilot >= WP_NUM_PILOTS)
	{
		buf[0] = '\0';
		return;
	}
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	strlcpy(buf, pilot_shared->pub[pilot].reason, len);
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_pilot_rows
 *		One row per pilot, in the order the controllers run, for
 *		walpilot.pilots: copied under the lock.  out[] holds
 *		WP_PILOT_ROWS_MAX rows; returns how many it filled.
 */
int
wp_pilot_rows(WpPilotRow *out)
{
	WpPilotPublic pub[WP_NUM_PILOTS];
	int			i;

	StaticAssertStmt(WP_NUM_PILOTS <= WP_PILOT_ROWS_MAX,
					 "WP_PILOT_ROWS_MAX is too small");
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	memcpy(pub, pilot_shared->pub, sizeof(pub));
	LWLockRelease(wp_shared->lock);
	for (i = 0; i < WP_NUM_PILOTS; i++)
	{
		strlcpy(out[i].name, wp_pilot_defs[i]->name, sizeof(out[i].name));
		strlcpy(out[i].state, pub[i].state, sizeof(out[i].state));
		strlcpy(out[i].current, pub[i].current, sizeof(out[i].current));
		strlcpy(out[i].candidate, pub[i].candidate, sizeof(out[i].candidate));
		strlcpy(out[i].reason, pub[i].reason, sizeof(out[i].reason));
		out[i].grade = pub[i].grade;
		out[i].grade.has_model = (wp_pilot_defs[i]->predict != NULL);
	}
	return WP_NUM_PILOTS;
}
