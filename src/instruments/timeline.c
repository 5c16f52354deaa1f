/*-------------------------------------------------------------------------
 *
 * timeline.c
 *		The per-second ring: walpilot's memory of the last
 *		walpilot.history_size seconds.
 *
 * The worker appends one WpSecond per second (sampler.c closes it); SQL
 * readers and the pilot copy entries out.  The ring is sized once, from
 * the PGC_POSTMASTER walpilot.history_size, in the shmem request hook.
 * Nothing here runs in a commit path.
 *
 * Readers and the worker never wait on each other: the ring takes no lock.
 * Each slot carries a change counter (a seqlock with a single writer, the
 * worker): odd while the worker rewrites the slot.  A reader copies the
 * slot between two reads of the counter and keeps the copy only when the
 * counter was even and unchanged and the slot still holds the second it
 * wanted (its number, the count of seconds appended before it).  A reader
 * copying the whole ring (up to 86,400 seconds, about 17 MB) can therefore
 * lose at most the oldest seconds that rotate out while it copies; the
 * worker never waits for it.
 *
 * walpilot.reset() does not write the ring: it moves "base", the number of
 * the first second that counts, to the current end.
 *
 * IDENTIFICATION
 *	  src/instruments/timeline.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/atomics.h"
#include "storage/shmem.h"

#include "instruments.h"

/* A reader retries a slot the worker is rewriting this many times. */
#define WP_TIMELINE_READ_RETRIES	100

typedef struct WpTimelineSlot
{
	pg_atomic_uint64 changes;	/* odd while the worker writes the slot */
	uint64		number;			/* which second this is (appended before it) */
	WpSecond	sec;
} WpTimelineSlot;

typedef struct WpTimeline
{
	int			capacity;		/* entries in ring[] */
	pg_atomic_uint64 appended;	/* seconds ever appended; next number */
	pg_atomic_uint64 base;		/* number of the first second since reset */
	WpTimelineSlot ring[FLEXIBLE_ARRAY_MEMBER];
} WpTimeline;

static WpTimeline *timeline = NULL;

/*
 * wp_timeline_shmem_size
 *		One slot per second of walpilot.history_size.
 */
Size
wp_timeline_shmem_size(void)
{
	return add_size(offsetof(WpTimeline, ring),
					mul_size(wp_history_size_s, sizeof(WpTimelineSlot)));
}

/*
 * wp_timeline_shmem_init
 *		Create or attach the ring; caller holds AddinShmemInitLock.
 */
void
wp_timeline_shmem_init(void)
{
	bool		found;
	int			i;

	timeline = ShmemInitStruct("walpilot timeline",
							   wp_timeline_shmem_size(), &found);
	if (!found)
	{
		timeline->capacity = wp_history_size_s;
		pg_atomic_init_u64(&timeline->appended, 0);
		pg_atomic_init_u64(&timeline->base, 0);
		for (i = 0; i < timeline->capacity; i++)
		{
			pg_atomic_init_u64(&timeline->ring[i].changes, 0);
			timeline->ring[i].number = PG_UINT64_MAX;
		}
	}
}

/*
 * wp_timeline_append
 *		Worker only: store a closed second, overwriting the oldest.
 */
void
wp_timeline_append(const WpSecond *sec)
{
	uint64		n = pg_atomic_read_u64(&timeline->appended);
	WpTimelineSlot *slot = &timeline->ring[n % timeline->capacity];

	/* the atomic increments are full barriers around the plain copy */
	pg_atomic_fetch_add_u64(&slot->changes, 1);
	slot->number = n;
	slot->sec = *sec;
	pg_atomic_fetch_add_u64(&slot->changes, 1);
	pg_atomic_write_u64(&timeline->appended, n + 1);
	pg_write_barrier();
}

/*
 * wp_timeline_reset
 *		Forget every second; part of walpilot.reset().  A second the worker
 *		appends at the same moment may stay visible.
 */
void
wp_timeline_reset(void)
{
	pg_atomic_write_u64(&timeline->base,
						pg_atomic_read_u64(&timeline->appended));
}

/*
 * read_slot
 *		Copy second number n into *out; false when the ring no longer holds
 *		it (it rotated out while we looked) or the worker kept rewriting it.
 */
static bool
read_slot(uint64 n, WpSecond *out)
{
	WpTimelineSlot *slot = &timeline->ring[n % timeline->capacity];
	int			tries;

	for (tries = 0; tries < WP_TIMELINE_READ_RETRIES; tries++)
	{
		uint64		before = pg_atomic_read_u64(&slot->changes);
		uint64		number;

		pg_read_barrier();
		number = slot->number;
		*out = slot->sec;
		pg_read_barrier();
		if ((before & 1) == 0 &&
			pg_atomic_read_u64(&slot->changes) == before)
			return number == n;
		SPIN_DELAY();
	}
	return false;
}

/*
 * visible_range
 *		The numbers [*first, *end) of the seconds the ring holds since the
 *		last reset.
 */
static void
visible_range(uint64 *first, uint64 *end)
{
	uint64		base = pg_atomic_read_u64(&timeline->base);

	pg_read_barrier();
	*end = pg_atomic_read_u64(&timeline->appended);
	*first = *end > (uint64) timeline->capacity ?
		*end - timeline->capacity : 0;
	if (*first < base)
		*first = Min(base, *end);
}

/*
 * wp_timeline_get_second
 *		Copy the complete second age_s seconds back (0 = the most recent
 *		one closed) into *out.  Returns false when the ring does not hold
 *		it.  Takes no lock.
 */
bool
wp_timeline_get_second(int64 age_s, WpSecond *out)
{
	uint64		first,
				end;

	if (timeline == NULL || age_s < 0)
		return false;
	visible_range(&first, &end);
	if ((uint64) age_s >= end - first)
		return false;
	return read_slot(end - 1 - (uint64) age_s, out);
}

/*
 * wp_timeline_last
 *		Copy up to n most recent complete seconds into out[], oldest first;
 *		returns how many were copied.  n <= 0 means all of them (out must
 *		then hold walpilot.history_size entries).  Takes no lock: seconds
 *		that rotate out during the copy are left out.
 */
int
wp_timeline_last(int n, WpSecond *out)
{
	uint64		first,
				end,
				s;
	int			k = 0;

	if (timeline == NULL)
		return 0;
	visible_range(&first, &end);
	if (n > 0 && end - first > (uint64) n)
		first = end - n;
	for (s = first; s < end; s++)
	{
		if (read_slot(s, &out[k]))
			k++;
	}
	return k;
}
