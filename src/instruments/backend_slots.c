/*-------------------------------------------------------------------------
 *
 * backend_slots.c
 *		Per-backend counter slots: shared memory, sums, the reset baseline
 *		and the worker's deltas (see backend_slots.h).
 *
 * The region of one instrument is, cache-line aligned each: the slot count
 * and the baseline, the instrument's own header, then one slot per PGPROC
 * (known in the request hook).  Readers take no lock to sum the slots: each
 * counter is read atomically, the set may be torn by commits finishing
 * meanwhile.  Only the baseline is under wp_shared->lock, taken briefly;
 * never in the commit path.
 *
 * IDENTIFICATION
 *	  src/instruments/backend_slots.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/shmem.h"
#include "utils/memutils.h"

#include "backend_slots.h"

static inline Size
shared_part_size(const WpBackendSlots *bs)
{
	return CACHELINEALIGN(add_size(offsetof(WpSlotsShared, baseline),
								   mul_size(bs->ncounters, sizeof(uint64))));
}

static inline pg_atomic_uint64 *
slot_at(const WpBackendSlots *bs, int i)
{
	return (pg_atomic_uint64 *) (bs->slots + (Size) i * bs->stride);
}

/*
 * wp_backend_slots_shmem_size
 *		The region: the shared part, the instrument's header, the slots.
 */
Size
wp_backend_slots_shmem_size(const WpBackendSlots *bs)
{
	Size		size = shared_part_size(bs);

	size = add_size(size, CACHELINEALIGN(bs->header_size));
	return add_size(size, mul_size(wp_max_procs(),
								   CACHELINEALIGN(bs->slot_size)));
}

/*
 * wp_backend_slots_attach
 *		Create or attach the region; caller holds AddinShmemInitLock.  At
 *		creation every counter and the header are zero, and the instrument's
 *		init_header sets up what else its header holds.
 */
void
wp_backend_slots_attach(WpBackendSlots *bs)
{
	bool		found;
	char	   *base;
	int			words = (int) (bs->slot_size / sizeof(pg_atomic_uint64));
	int			i,
				w;

	Assert(bs->npublish <= bs->ntracked && bs->ntracked <= bs->ncounters &&
		   bs->npublish <= 32);
	Assert(bs->ncounters <= words);
	base = ShmemInitStruct(bs->name, wp_backend_slots_shmem_size(bs), &found);
	bs->shared = (WpSlotsShared *) base;
	bs->header = base + shared_part_size(bs);
	bs->slots = (char *) bs->header + CACHELINEALIGN(bs->header_size);
	bs->stride = CACHELINEALIGN(bs->slot_size);
	bs->mine = NULL;
	if (found)
		return;
	memset(bs->shared, 0, shared_part_size(bs));
	memset(bs->header, 0, bs->header_size);
	bs->shared->nslots = wp_max_procs();
	for (i = 0; i < bs->shared->nslots; i++)
	{
		pg_atomic_uint64 *s = slot_at(bs, i);

		for (w = 0; w < words; w++)
			pg_atomic_init_u64(&s[w], 0);
	}
	if (bs->init_header)
		bs->init_header(bs->header);
}

/*
 * wp_backend_slots_sum
 *		Every slot's counters summed into out[ncounters], since shared
 *		memory was created.  A slot whose published counters are all zero
 *		is skipped after reading them.
 */
void
wp_backend_slots_sum(const WpBackendSlots *bs, uint64 *out)
{
	int			i,
				k;

	memset(out, 0, sizeof(uint64) * bs->ncounters);
	if (bs->shared == NULL)
		return;
	for (i = 0; i < bs->shared->nslots; i++)
	{
		pg_atomic_uint64 *s = slot_at(bs, i);
		bool		any = false;

		for (k = 0; k < bs->npublish; k++)
		{
			uint64		v = pg_atomic_read_u64(&s[k]);

			out[k] += v;
			any |= (v != 0);
		}
		if (!any)
			continue;
		pg_read_barrier();
		for (; k < bs->ncounters; k++)
			out[k] += pg_atomic_read_u64(&s[k]);
	}
}

/*
 * wp_backend_slots_totals
 *		The sums since the last walpilot.reset(): the baseline subtracted
 *		(a counter below it reads 0).
 */
void
wp_backend_slots_totals(const WpBackendSlots *bs, uint64 *out)
{
	uint64	   *base;
	int			k;

	wp_backend_slots_sum(bs, out);
	if (bs->shared == NULL)
		return;
	base = palloc(sizeof(uint64) * bs->ncounters);
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	memcpy(base, bs->shared->baseline, sizeof(uint64) * bs->ncounters);
	LWLockRelease(wp_shared->lock);
	for (k = 0; k < bs->ncounters; k++)
		out[k] = (out[k] > base[k]) ? out[k] - base[k] : 0;
	pfree(base);
}

/*
 * wp_backend_slots_reset
 *		walpilot.reset(): make the current sums the new zero.
 */
void
wp_backend_slots_reset(const WpBackendSlots *bs)
{
	uint64	   *now;

	if (bs->shared == NULL)
		return;
	now = palloc(sizeof(uint64) * bs->ncounters);
	wp_backend_slots_sum(bs, now);
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	memcpy(bs->shared->baseline, now, sizeof(uint64) * bs->ncounters);
	LWLockRelease(wp_shared->lock);
	pfree(now);
}

/*
 * wp_backend_slots_delta
 *		Worker only: what the first ntracked counters gained since the
 *		previous call, into delta[ntracked]; false (and zeros) at the first
 *		call, which only primes the worker's copy (allocated then, in
 *		TopMemoryContext).  A slot whose published counters did not move
 *		is skipped after reading them, so idle connections cost almost
 *		nothing; for each other slot, moved (if given) is called after its
 *		counters are read, with the slot's index and what each of its
 *		tracked counters gained (ntracked values, valid during the call).
 */
bool
wp_backend_slots_delta(WpBackendSlots *bs, uint64 *delta,
					   void (*moved) (pg_atomic_uint64 *slot, int index,
									  const uint64 *slot_gain, void *arg),
					   void *arg)
{
	bool		priming = false;
	int			i,
				k;

	memset(delta, 0, sizeof(uint64) * bs->ntracked);
	if (bs->shared == NULL)
		return false;
	if (bs->seen == NULL)
	{
		bs->seen = MemoryContextAllocZero(TopMemoryContext,
										  mul_size(sizeof(uint64) * bs->ntracked,
												   bs->shared->nslots));
		bs->slot_gain = MemoryContextAllocZero(TopMemoryContext,
											   sizeof(uint64) * bs->ntracked);
		priming = true;
	}
	for (i = 0; i < bs->shared->nslots; i++)
	{
		pg_atomic_uint64 *s = slot_at(bs, i);
		uint64	   *seen = bs->seen + (Size) i * bs->ntracked;
		bool		published_moved = false;

		for (k = 0; k < bs->npublish; k++)
		{
			uint64		v = pg_atomic_read_u64(&s[k]);

			bs->slot_gain[k] = v - seen[k];
			if (v != seen[k])
				published_moved = true;
			delta[k] += v - seen[k];
			seen[k] = v;
		}
		if (!published_moved)
			continue;
		pg_read_barrier();
		for (; k < bs->ntracked; k++)
		{
			uint64		v = pg_atomic_read_u64(&s[k]);

			bs->slot_gain[k] = v - seen[k];
			delta[k] += v - seen[k];
			seen[k] = v;
		}
		if (moved && !priming)
			moved(s, i, bs->slot_gain, arg);
	}
	if (priming)
		memset(delta, 0, sizeof(uint64) * bs->ntracked);
	return !priming;
}
