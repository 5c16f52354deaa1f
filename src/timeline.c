/*-------------------------------------------------------------------------
 *
 * timeline.c
 *		The per-second ring: walpilot's memory of the last
 *		walpilot.history_size seconds.
 *
 * The worker appends one WpSecond per second (sampler.c closes it); SQL
 * readers and the pilot copy entries out.  The ring is sized once, from
 * the PGC_POSTMASTER walpilot.history_size, in the shmem request hook.
 * Head, count and entries are protected by wp_shared->lock: the writer
 * holds it exclusively for one struct copy per second, readers shared
 * while they copy.  Nothing here runs in a commit path.
 *
 * IDENTIFICATION
 *	  src/timeline.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "walpilot.h"

typedef struct WpTimeline
{
	int			capacity;		/* entries in ring[] */
	int			head;			/* next slot to write */
	int			count;			/* valid entries, <= capacity */
	WpSecond	ring[FLEXIBLE_ARRAY_MEMBER];
} WpTimeline;

static WpTimeline *timeline = NULL;

/*
 * wp_timeline_shmem_size
 *		One WpSecond per second of walpilot.history_size.
 */
Size
wp_timeline_shmem_size(void)
{
	return add_size(offsetof(WpTimeline, ring),
					mul_size(wp_history_size_s, sizeof(WpSecond)));
}

/*
 * wp_timeline_shmem_init
 *		Create or attach the ring; caller holds AddinShmemInitLock.
 */
void
wp_timeline_shmem_init(void)
{
	bool		found;

	timeline = ShmemInitStruct("walpilot timeline",
							   wp_timeline_shmem_size(), &found);
	if (!found)
	{
		timeline->capacity = wp_history_size_s;
		timeline->head = 0;
		timeline->count = 0;
	}
}

/*
 * wp_timeline_append
 *		Worker only: store a closed second, overwriting the oldest.
 */
void
wp_timeline_append(const WpSecond *sec)
{
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	timeline->ring[timeline->head] = *sec;
	timeline->head = (timeline->head + 1) % timeline->capacity;
	if (timeline->count < timeline->capacity)
		timeline->count++;
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_timeline_reset
 *		Forget every second; part of walpilot.reset().
 */
void
wp_timeline_reset(void)
{
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	timeline->head = 0;
	timeline->count = 0;
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_timeline_get_second
 *		Copy the complete second age_s seconds back (0 = the most recent
 *		one closed) into *out.  Returns false when the ring does not hold
 *		it.  Takes wp_shared->lock shared.
 */
bool
wp_timeline_get_second(int64 age_s, WpSecond *out)
{
	bool		ok = false;

	if (timeline == NULL || age_s < 0)
		return false;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	if (age_s < timeline->count)
	{
		int			i = (int) ((timeline->head - 1 - age_s +
								(int64) timeline->capacity * 2) %
							   timeline->capacity);

		*out = timeline->ring[i];
		ok = true;
	}
	LWLockRelease(wp_shared->lock);
	return ok;
}

/*
 * wp_timeline_last
 *		Copy up to n most recent complete seconds into out[], oldest first;
 *		returns how many were copied.  n <= 0 means all of them (out must
 *		then hold walpilot.history_size entries).  Takes wp_shared->lock
 *		shared.
 */
int
wp_timeline_last(int n, WpSecond *out)
{
	int			k,
				start,
				i;

	if (timeline == NULL)
		return 0;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	k = timeline->count;
	if (n > 0 && n < k)
		k = n;
	start = (timeline->head - k + timeline->capacity) % timeline->capacity;
	for (i = 0; i < k; i++)
		out[i] = timeline->ring[(start + i) % timeline->capacity];
	LWLockRelease(wp_shared->lock);
	return k;
}
