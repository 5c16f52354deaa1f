/*-------------------------------------------------------------------------
 *
 * commit_timing.c
 *		Time every durable commit from inside the committing backend.
 *
 * An observer of the commit path (commit_path.c), which decides at
 * XACT_EVENT_PRE_COMMIT whether the commit will wait for its commit
 * record's flush.  The interval measured runs from PRE_COMMIT (walpilot's
 * callback is registered first, so it runs after every other extension's
 * PRE_COMMIT work; what follows is core's pre-commit steps and the commit
 * record's insertion) to just after the flush returned (plus the clog
 * update, any synchronous replication wait and ProcArrayEndTransaction,
 * which run before the COMMIT callback).  Both ends are read on the
 * monotonic clock (instr_time), so a step of the wall clock cannot make a
 * commit look an hour long: two clock reads per durable commit, and the
 * gather reuses both stamps.
 *
 * A backend led its flush when its own WAL sync counter moved across the
 * window; that gives commits per flush exactly.
 *
 * The commit path takes no lock, allocates nothing and cannot raise an
 * error: each backend owns one padded slot of counters, indexed by its
 * PGPROC number, and is the only writer of it (plain atomic loads and
 * stores, no locked instructions).  Slots are never cleared: the worker
 * reads deltas against its own copy (wp_commit_take), and walpilot.reset()
 * records a baseline (under wp_shared->lock) that readers subtract.
 *
 * IDENTIFICATION
 *	  src/instruments/commit_timing.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/parallel.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "instruments.h"

/* One backend's counters; one writer (the owner), many readers. */
typedef struct WpCommitSlot
{
	pg_atomic_uint64 durable;
	pg_atomic_uint64 async;
	pg_atomic_uint64 led_flush;
	pg_atomic_uint64 sum_us;
	pg_atomic_uint64 max_tagged;	/* (scan epoch << 40) | largest us of
									 * the commits since that scan began */
	pg_atomic_uint64 hist[WP_HIST_BUCKETS];
} WpCommitSlot;

#define WP_SLOT_STRIDE	TYPEALIGN(PG_CACHE_LINE_SIZE, sizeof(WpCommitSlot))

/*
 * The per-scan maximum.  Only the owner writes its slot's max_tagged: it
 * tags its value with the scan epoch it read, and starts afresh when the
 * epoch moved.  The worker, the only writer of max_epoch, advances the
 * epoch at each scan and keeps the values tagged with the epoch that just
 * ended.  (A commit that read the old epoch and stores after the worker
 * read its slot is missing from that maximum; the histogram still has it.)
 */
#define WP_MAX_US_BITS			40
#define WP_MAX_US_MASK			((UINT64CONST(1) << WP_MAX_US_BITS) - 1)
#define WP_MAX_EPOCH_MASK		0xFFFFFFU	/* 24 bits above the value */

typedef struct WpCommitShared
{
	int			nslots;
	bool		leader_known;	/* false where leader detection is absent */
	pg_atomic_uint32 max_epoch; /* written by the worker only */
	WpCommitTotals baseline;	/* at the last reset; wp_shared->lock */
} WpCommitShared;

static WpCommitShared *commit_shared = NULL;
static char *commit_slots = NULL;	/* nslots * WP_SLOT_STRIDE bytes */

/* Backend-local state between PRE_COMMIT and COMMIT. */
typedef enum WpPending
{
	WP_PENDING_NONE,
	WP_PENDING_DURABLE,
	WP_PENDING_ASYNC
} WpPending;

static WpPending pending = WP_PENDING_NONE;
static uint64 pending_start_us;
#if WP_HAVE_LEADER_DETECTION
static uint64 pending_syncs;
static uint64 pending_writes;
#endif

/* Worker-local copy of every slot, for per-second deltas. */
typedef struct WpSlotSeen
{
	uint64		durable;
	uint64		async;
	uint64		led_flush;
	uint64		hist[WP_HIST_BUCKETS];
} WpSlotSeen;

static WpSlotSeen *seen = NULL;

/* Worker-local: each reader's deltas since it last took them. */
static WpCommitSecond reader_acc[WP_COMMIT_NUM_READERS];
static bool reader_primed[WP_COMMIT_NUM_READERS];
static bool collected_once = false;
static uint64 collected_tick = 0;

static inline WpCommitSlot *
slot_at(int i)
{
	return (WpCommitSlot *) (commit_slots + (Size) i * WP_SLOT_STRIDE);
}

/* One writer: a plain load and store, no locked instruction. */
static inline void
slot_add(pg_atomic_uint64 *c, uint64 n)
{
	pg_atomic_write_u64(c, pg_atomic_read_u64(c) + n);
}

/*
 * wp_commit_timing_shmem_size
 *		Header plus one padded slot per PGPROC (known in the request hook).
 */
Size
wp_commit_timing_shmem_size(void)
{
	Size		size = CACHELINEALIGN(sizeof(WpCommitShared));

	size = add_size(size, mul_size(wp_max_procs(), WP_SLOT_STRIDE));
	return size;
}

/*
 * wp_commit_timing_shmem_init
 *		Create or attach the region; caller holds AddinShmemInitLock.
 */
void
wp_commit_timing_shmem_init(void)
{
	bool		found;
	char	   *base;

	base = ShmemInitStruct("walpilot commit timing",
						   wp_commit_timing_shmem_size(), &found);
	commit_shared = (WpCommitShared *) base;
	commit_slots = base + CACHELINEALIGN(sizeof(WpCommitShared));
	if (!found)
	{
		int			i,
					b;

		memset(commit_shared, 0, sizeof(WpCommitShared));
		commit_shared->nslots = wp_max_procs();
		commit_shared->leader_known = (WP_HAVE_LEADER_DETECTION != 0);
		pg_atomic_init_u32(&commit_shared->max_epoch, 0);
		for (i = 0; i < commit_shared->nslots; i++)
		{
			WpCommitSlot *s = slot_at(i);

			pg_atomic_init_u64(&s->durable, 0);
			pg_atomic_init_u64(&s->async, 0);
			pg_atomic_init_u64(&s->led_flush, 0);
			pg_atomic_init_u64(&s->sum_us, 0);
			pg_atomic_init_u64(&s->max_tagged, 0);
			for (b = 0; b < WP_HIST_BUCKETS; b++)
				pg_atomic_init_u64(&s->hist[b], 0);
		}
	}
}

/*
 * now_us
 *		The monotonic clock in microseconds.  Read into a static buffer: a
 *		local whose address is taken would cost the commit path's
 *		functions a stack-protector check.  Backend-local, and the signal
 *		handlers do not use it.
 */
static instr_time clock_buf;

static inline uint64
now_us(void)
{
	INSTR_TIME_SET_CURRENT(clock_buf);
	return INSTR_TIME_GET_MICROSEC(clock_buf);
}

/*
 * record_commit
 *		Add one finished commit to our own slot.  Commit path: no lock, no
 *		allocation, no error.
 */
static inline void
record_commit(WpCommitSlot *s, uint64 us, bool led)
{
	uint64		epoch = pg_atomic_read_u32(&commit_shared->max_epoch);
	uint64		tagged = pg_atomic_read_u64(&s->max_tagged);
	uint64		capped = Min(us, WP_MAX_US_MASK);

	slot_add(&s->hist[wp_hist_bucket(us)], 1);
	slot_add(&s->sum_us, us);
	if (led)
		slot_add(&s->led_flush, 1);
	if ((tagged >> WP_MAX_US_BITS) != epoch ||
		capped > (tagged & WP_MAX_US_MASK))
		pg_atomic_write_u64(&s->max_tagged,
							(epoch << WP_MAX_US_BITS) | capped);
	/* last, so a reader that sees the count also sees the bucket */
	pg_write_barrier();
	slot_add(&s->durable, 1);
}

/*
 * wp_commit_timing_pre_commit
 *		Commit-path observer at PRE_COMMIT: decide whether this commit is
 *		timed and snapshot the backend's WAL sync counters.
 */
void
wp_commit_timing_pre_commit(WpCommitContext *ctx)
{
	pending = WP_PENDING_NONE;
	if (ctx->has_xid && wp_mode != WP_MODE_OFF &&
		commit_slots != NULL && MyProc != NULL)
	{
		pending = ctx->durable ? WP_PENDING_DURABLE : WP_PENDING_ASYNC;
		if (pending == WP_PENDING_DURABLE)
		{
			pending_start_us = now_us();
			ctx->start_us = pending_start_us;
		}
#if WP_HAVE_LEADER_DETECTION
		pending_syncs = wp_pending_wal_syncs();
		pending_writes = WP_PENDING_WAL_ONE_COUNTER ? pending_syncs :
			wp_pending_wal_writes();
#endif
	}
}

/*
 * wp_commit_timing_commit
 *		Commit-path observer at COMMIT, called first: take the end stamp,
 *		record the commit, and give the stamp and the leader flag to the
 *		observers after it (ctx->end_us stays 0 for an untimed commit).
 */
void
wp_commit_timing_commit(WpCommitContext *ctx)
{
	if (pending == WP_PENDING_DURABLE)
	{
		/* the end stamp first: nothing else belongs in the window */
		uint64		end_us = now_us();
		uint64		us;
		bool		led = false;

		us = (end_us > pending_start_us) ? end_us - pending_start_us : 0;

#if WP_HAVE_LEADER_DETECTION
		led = (wp_pending_wal_syncs() != pending_syncs) ||
			(wp_wal_sync_is_open() &&
			 wp_pending_wal_writes() != pending_writes);
#endif
		record_commit(slot_at(wp_my_proc_number()), us, led);
		ctx->start_us = pending_start_us;
		ctx->end_us = end_us;
		ctx->led_flush = led;
	}
	else if (pending == WP_PENDING_ASYNC)
	{
#if WP_HAVE_LEADER_DETECTION
		/*
		 * A commit whose command forced the flush (forceSyncCommit): rare,
		 * so it is timed from the server's stop stamp (wall clock) rather
		 * than costing every asynchronous commit a clock read.
		 */
		if (wp_pending_wal_syncs() != pending_syncs)
		{
			TimestampTz end = GetCurrentTimestamp();
			TimestampTz start = GetCurrentTransactionStopTimestamp();
			uint64		us = (end > start) ? (uint64) (end - start) : 0;

			record_commit(slot_at(wp_my_proc_number()), us, true);
			ctx->durable = true;
			ctx->end_us = now_us();
			ctx->start_us = ctx->end_us - Min(us, ctx->end_us);
			ctx->led_flush = true;
			pending = WP_PENDING_NONE;
			return;
		}
#endif
		slot_add(&slot_at(wp_my_proc_number())->async, 1);
	}
	pending = WP_PENDING_NONE;
}

/*
 * wp_commit_timing_abort
 *		Commit-path observer at ABORT: forget the pending commit.
 */
void
wp_commit_timing_abort(WpCommitContext *ctx)
{
	pending = WP_PENDING_NONE;
}

/*
 * wp_commit_totals_raw
 *		Cumulative counters of every slot since shared memory was created
 *		(reset does not touch them: take deltas).  No lock: each counter is
 *		read atomically, the set may be torn by commits finishing
 *		meanwhile.  For the pilot and other worker-side readers.
 */
void
wp_commit_totals_raw(WpCommitTotals *out)
{
	int			i,
				b;

	memset(out, 0, sizeof(WpCommitTotals));
	if (commit_shared == NULL)
		return;
	for (i = 0; i < commit_shared->nslots; i++)
	{
		WpCommitSlot *s = slot_at(i);
		uint64		d = pg_atomic_read_u64(&s->durable);

		out->async += pg_atomic_read_u64(&s->async);
		if (d == 0)
			continue;
		pg_read_barrier();
		out->durable += d;
		out->led_flush += pg_atomic_read_u64(&s->led_flush);
		out->sum_us += pg_atomic_read_u64(&s->sum_us);
		for (b = 0; b < WP_HIST_BUCKETS; b++)
			out->hist[b] += pg_atomic_read_u64(&s->hist[b]);
	}
}

/*
 * wp_commit_totals
 *		Counters since the last walpilot.reset().  Takes wp_shared->lock
 *		briefly (shared) to copy the baseline; never call it in the commit
 *		path.
 */
void
wp_commit_totals(WpCommitTotals *out)
{
	WpCommitTotals base;
	int			b;

	wp_commit_totals_raw(out);
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	memcpy(&base, &commit_shared->baseline, sizeof(base));
	LWLockRelease(wp_shared->lock);

#define WP_SUB(f) (out->f = (out->f > base.f) ? out->f - base.f : 0)
	WP_SUB(durable);
	WP_SUB(async);
	WP_SUB(led_flush);
	WP_SUB(sum_us);
	for (b = 0; b < WP_HIST_BUCKETS; b++)
		WP_SUB(hist[b]);
#undef WP_SUB
}

/*
 * wp_commit_leader_known
 *		Whether led_flush means anything on this server version.
 */
bool
wp_commit_leader_known(void)
{
	return commit_shared != NULL && commit_shared->leader_known;
}

/*
 * wp_commit_timing_reset
 *		walpilot.reset(): make the current sums the new zero.
 */
void
wp_commit_timing_reset(void)
{
	WpCommitTotals now;

	wp_commit_totals_raw(&now);
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	memcpy(&commit_shared->baseline, &now, sizeof(now));
	LWLockRelease(wp_shared->lock);
}

/*
 * collect
 *		Worker only: one scan of every slot, adding what each gained since
 *		the previous scan to every reader's accumulator.
 *
 * Keeps a private copy of every slot (allocated on first use in
 * TopMemoryContext); slots whose counts did not move are skipped after
 * two loads, so idle connections cost almost nothing.  The first scan
 * only primes the copy.
 */
static void
collect(void)
{
	bool		priming = false;
	uint32		epoch;
	WpCommitSecond delta;
	int			i,
				b,
				r;

	if (seen == NULL)
	{
		seen = MemoryContextAllocZero(TopMemoryContext,
									  sizeof(WpSlotSeen) * commit_shared->nslots);
		priming = true;
	}
	memset(&delta, 0, sizeof(delta));

	/* commits from now on belong to the next epoch */
	epoch = pg_atomic_read_u32(&commit_shared->max_epoch);
	pg_atomic_write_u32(&commit_shared->max_epoch,
						(epoch + 1) & WP_MAX_EPOCH_MASK);
	pg_memory_barrier();

	for (i = 0; i < commit_shared->nslots; i++)
	{
		WpCommitSlot *s = slot_at(i);
		WpSlotSeen *p = &seen[i];
		uint64		d = pg_atomic_read_u64(&s->durable);
		uint64		a = pg_atomic_read_u64(&s->async);
		uint64		tagged;
		uint64		l;

		if (a != p->async)
		{
			delta.async += a - p->async;
			p->async = a;
		}
		if (d == p->durable)
			continue;
		pg_read_barrier();
		delta.durable += d - p->durable;
		p->durable = d;
		tagged = pg_atomic_read_u64(&s->max_tagged);
		if ((tagged >> WP_MAX_US_BITS) == epoch)
			delta.max_us = Max(delta.max_us, tagged & WP_MAX_US_MASK);
		l = pg_atomic_read_u64(&s->led_flush);
		delta.led_flush += l - p->led_flush;
		p->led_flush = l;
		for (b = 0; b < WP_HIST_BUCKETS; b++)
		{
			uint64		h = pg_atomic_read_u64(&s->hist[b]);

			delta.hist[b] += h - p->hist[b];
			p->hist[b] = h;
		}
	}
	if (priming)
		return;

	for (r = 0; r < WP_COMMIT_NUM_READERS; r++)
	{
		WpCommitSecond *acc = &reader_acc[r];

		acc->durable += delta.durable;
		acc->async += delta.async;
		acc->led_flush += delta.led_flush;
		acc->max_us = Max(acc->max_us, delta.max_us);
		for (b = 0; b < WP_HIST_BUCKETS; b++)
			acc->hist[b] += delta.hist[b];
	}
}

/*
 * wp_commit_take
 *		Worker only: what the commit slots gained since this reader's
 *		previous call (zeros at its first call).
 *
 * The one delta reader over the slots: the timeline and the pilot each
 * take their own windows, but the slots are scanned once per worker tick
 * however many readers ask in it (both ask in the same tick when their
 * seconds line up).  max_us is the largest commit latency of the scans in
 * the window.
 */
void
wp_commit_take(WpCommitReader reader, WpCommitSecond *out)
{
	uint64		tick;

	memset(out, 0, sizeof(WpCommitSecond));
	if (commit_shared == NULL || reader < 0 || reader >= WP_COMMIT_NUM_READERS)
		return;
	tick = pg_atomic_read_u64(&wp_shared->ticks);
	if (!collected_once || tick != collected_tick)
	{
		collect();
		collected_once = true;
		collected_tick = tick;
	}
	if (reader_primed[reader])
		*out = reader_acc[reader];
	reader_primed[reader] = true;
	memset(&reader_acc[reader], 0, sizeof(WpCommitSecond));
}
