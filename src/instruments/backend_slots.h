/*-------------------------------------------------------------------------
 *
 * backend_slots.h
 *		Per-backend counter slots: the shape the commit instruments share.
 *
 * An instrument that counts in the commit path gives every PGPROC a
 * padded slot of 64-bit counters that only its backend writes (a plain
 * load and store, no locked instruction, no lock) and that readers sum.
 * The instrument says how many counters a slot has and in what order, by
 * the fields of a struct of uint64 counters; the first npublish of them
 * are the ones its backend writes last, after pg_write_barrier(), and
 * readers read first, before pg_read_barrier(), so that a reader that
 * sees a count also sees what was added with it.  A slot may carry more
 * words after the counters (slot_size); those are the instrument's own.
 *
 * backend_slots.c keeps the rest: the shared-memory size and attach, the
 * sum over every slot, the reset baseline (under wp_shared->lock) and the
 * worker's per-call deltas.
 *
 * IDENTIFICATION
 *	  src/instruments/backend_slots.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_BACKEND_SLOTS_H
#define WALPILOT_BACKEND_SLOTS_H

#include "storage/proc.h"

#include "core.h"

/* The shared part: the slot count and the baseline of the last reset. */
typedef struct WpSlotsShared
{
	int			nslots;
	uint64		baseline[FLEXIBLE_ARRAY_MEMBER];	/* wp_shared->lock */
} WpSlotsShared;

/*
 * One instrument's slots, as a process sees them.  The first fields, up
 * to init_header, are the instrument's description (its initialiser); the
 * others are set by wp_backend_slots_attach and their first use.  The hub
 * sizes and attaches each instrument's region through it.
 */
typedef struct WpBackendSlots
{
	const char *name;			/* the shared memory region */
	Size		header_size;	/* the instrument's own shared header */
	Size		slot_size;		/* bytes per slot, the counters first */
	int			ncounters;		/* summed, baselined, in deltas */
	int			npublish;		/* the first ones: written last */
	int			ntracked;		/* the worker's deltas cover the first ones */
	void		(*init_header) (void *header);	/* at creation, header zeroed */

	WpSlotsShared *shared;
	void	   *header;			/* header_size bytes, cache-line aligned */
	char	   *slots;			/* shared->nslots slots of stride bytes */
	Size		stride;
	pg_atomic_uint64 *mine;		/* this backend's slot, once looked up */
	uint64	   *seen;			/* worker only: counters at the last delta */
	uint64	   *slot_gain;		/* worker only: one slot's gain, ntracked */
} WpBackendSlots;

/* The counter index of a field of an instrument's counter struct. */
#define WP_SLOT_INDEX(type, field)	(offsetof(type, field) / sizeof(uint64))

extern Size wp_backend_slots_shmem_size(const WpBackendSlots *bs);
extern void wp_backend_slots_attach(WpBackendSlots *bs);
extern void wp_backend_slots_sum(const WpBackendSlots *bs, uint64 *out);
extern void wp_backend_slots_totals(const WpBackendSlots *bs, uint64 *out);
extern void wp_backend_slots_reset(const WpBackendSlots *bs);
extern bool wp_backend_slots_delta(WpBackendSlots *bs, uint64 *delta,
								   void (*moved) (pg_atomic_uint64 *slot,
												  int index,
												  const uint64 *slot_gain,
												  void *arg),
								   void *arg);

/*
 * wp_backend_slot_mine
 *		This backend's slot.  Commit path: the caller has checked that the
 *		slots are attached and MyProc is set.  The PGPROC number does not
 *		change in a backend's life, so it is looked up once.
 */
static inline pg_atomic_uint64 *
wp_backend_slot_mine(WpBackendSlots *bs)
{
	if (unlikely(bs->mine == NULL))
		bs->mine = (pg_atomic_uint64 *)
			(bs->slots + (Size) wp_my_proc_number() * bs->stride);
	return bs->mine;
}

/* One writer: a plain load and store, no locked instruction. */
static inline void
wp_slot_add(pg_atomic_uint64 *c, uint64 n)
{
	pg_atomic_write_u64(c, pg_atomic_read_u64(c) + n);
}

#endif							/* WALPILOT_BACKEND_SLOTS_H */
