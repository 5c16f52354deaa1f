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
 * The same stamps give the time a backend spends between two durable
 * commits (the client's turn, the statements): the commit model's spread
 * of arrivals rests on how much those gaps vary.  A gap of a second or
 * more is a pause, not counted.
 *
 * The commit path takes no lock, allocates nothing and cannot raise an
 * error: each backend owns one padded slot of counters (backend_slots.c),
 * indexed by its PGPROC number, and is the only writer of it (plain atomic loads and
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
#include "nodes/bitmapset.h"
#include "port/pg_bitutils.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "backend_slots.h"
#include "instruments.h"

/*
 * A slot: the counters of WpCommitTotals, in its order (durable and async
 * published), then the per-scan maximum.
 */
#define CT(field)		WP_SLOT_INDEX(WpCommitTotals, field)
#define CT_COUNTERS		((int) (sizeof(WpCommitTotals) / sizeof(uint64)))
#define CT_MAX_TAGGED	CT_COUNTERS /* (scan epoch << 40) | largest us of
									 * the commits since that scan began */

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

/* The region's own header. */
typedef struct WpCommitShared
{
	bool		leader_known;	/* false where leader detection is absent */
	pg_atomic_uint32 max_epoch; /* written by the worker only */
} WpCommitShared;

static void
timing_init_header(void *header)
{
	WpCommitShared *h = (WpCommitShared *) header;

	h->leader_known = (WP_HAVE_LEADER_DETECTION != 0);
	pg_atomic_init_u32(&h->max_epoch, 0);
}

WpBackendSlots wp_commit_timing_slots = {
	.name = "walpilot commit timing",
	.header_size = sizeof(WpCommitShared),
	.slot_size = sizeof(WpCommitTotals) + sizeof(pg_atomic_uint64),
	.ncounters = CT_COUNTERS,
	.npublish = 2,				/* durable, async */
	.ntracked = CT_COUNTERS,
	.init_header = timing_init_header,
};

#define commit_shared	((WpCommitShared *) wp_commit_timing_slots.header)

/* Backend-local: when this backend's last durable commit ended (0: none). */
static uint64 last_durable_end_us = 0;

/* Backend-local, PRE_COMMIT to COMMIT: this backend's WAL I/O counts. */
#if WP_HAVE_LEADER_DETECTION
static uint64 pending_syncs;
static uint64 pending_writes;
#endif

/* Worker-local: each reader's deltas since it last took them. */
static WpCommitSecond reader_acc[WP_COMMIT_NUM_READERS];
static bool reader_primed[WP_COMMIT_NUM_READERS];
/* ... and each slot's durable commits in them, up to WP_COMMITTER_MIN */
static uint8 *reader_slot_commits[WP_COMMIT_NUM_READERS];
static bool collected_once = false;
static uint64 collected_tick = 0;

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
record_commit(pg_atomic_uint64 *s, uint64 us, bool led, uint64 outside_us)
{
	uint64		epoch = pg_atomic_read_u32(&commit_shared->max_epoch);
	uint64		tagged = pg_atomic_read_u64(&s[CT_MAX_TAGGED]);
	uint64		capped = Min(us, WP_MAX_US_MASK);

	wp_slot_add(&s[CT(hist) + wp_hist_bucket(us)], 1);
	wp_slot_add(&s[CT(sum_us)], us);
	if (outside_us > 0)
	{
		wp_slot_add(&s[CT(outside_n)], 1);
		wp_slot_add(&s[CT(outside_sum_us)], outside_us);
		wp_slot_add(&s[CT(outside_sq_us2)], outside_us * outside_us);
	}
	if (led)
		wp_slot_add(&s[CT(led_flush)], 1);
	if ((tagged >> WP_MAX_US_BITS) != epoch ||
		capped > (tagged & WP_MAX_US_MASK))
		pg_atomic_write_u64(&s[CT_MAX_TAGGED],
							(epoch << WP_MAX_US_BITS) | capped);
	/* last, so a reader that sees the count also sees the bucket */
	pg_write_barrier();
	wp_slot_add(&s[CT(durable)], 1);
}

/*
 * wp_commit_timing_pre_commit
 *		Commit-path observer at PRE_COMMIT of a timed commit (ctx->timed):
 *		stamp a durable commit's start and snapshot the backend's WAL I/O
 *		counters.
 */
void
wp_commit_timing_pre_commit(WpCommitContext *ctx)
{
	Assert(ctx->timed);
	if (ctx->durable)
		ctx->start_us = now_us();
#if WP_HAVE_LEADER_DETECTION
	pending_syncs = wp_pending_wal_syncs();
	pending_writes = WP_PENDING_WAL_ONE_COUNTER ? pending_syncs :
		wp_pending_wal_writes();
#endif
}

/*
 * wp_commit_timing_commit
 *		Commit-path observer at COMMIT of a timed commit, called first: take
 *		the end stamp, record the commit, and give the stamp and the leader
 *		flag to the observers after it (ctx->end_us stays 0 for a commit
 *		that did not wait for a flush).
 */
void
wp_commit_timing_commit(WpCommitContext *ctx)
{
	Assert(ctx->timed);
	if (ctx->durable)
	{
		/* the end stamp first: nothing else belongs in the window */
		uint64		end_us = now_us();
		uint64		us;
		uint64		outside_us = 0;
		bool		led = false;

		us = (end_us > ctx->start_us) ? end_us - ctx->start_us : 0;
		/* the load's cycle outside the commit: from the last one's end */
		if (last_durable_end_us != 0 && ctx->start_us > last_durable_end_us &&
			ctx->start_us - last_durable_end_us < WP_OUTSIDE_MAX_US)
			outside_us = ctx->start_us - last_durable_end_us;
		last_durable_end_us = end_us;

#if WP_HAVE_LEADER_DETECTION
		led = (wp_pending_wal_syncs() != pending_syncs) ||
			(wp_wal_sync_is_open() &&
			 wp_pending_wal_writes() != pending_writes);
#endif
		record_commit(wp_backend_slot_mine(&wp_commit_timing_slots), us, led,
					  outside_us);
		ctx->end_us = end_us;
		ctx->led_flush = led;
		return;
	}
#if WP_HAVE_LEADER_DETECTION

	/*
	 * A commit whose command forced the flush (forceSyncCommit): rare, so
	 * it is timed from the server's stop stamp (wall clock) rather than
	 * costing every asynchronous commit a clock read.
	 */
	if (wp_pending_wal_syncs() != pending_syncs)
	{
		TimestampTz end = GetCurrentTimestamp();
		TimestampTz start = GetCurrentTransactionStopTimestamp();
		uint64		us = (end > start) ? (uint64) (end - start) : 0;

		record_commit(wp_backend_slot_mine(&wp_commit_timing_slots), us, true, 0);
		ctx->durable = true;
		ctx->end_us = now_us();
		ctx->start_us = ctx->end_us - Min(us, ctx->end_us);
		ctx->led_flush = true;
		return;
	}
#endif
	wp_slot_add(&wp_backend_slot_mine(&wp_commit_timing_slots)[CT(async)], 1);
}

/*
 * wp_commit_totals_raw
 *		Cumulative counters of every slot since shared memory was created
 *		(reset does not touch them: take deltas).  No lock; the set may be
 *		torn by commits finishing meanwhile.  For the pilot and other
 *		worker-side readers.
 */
void
wp_commit_totals_raw(WpCommitTotals *out)
{
	wp_backend_slots_sum(&wp_commit_timing_slots, (uint64 *) out);
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
	wp_backend_slots_totals(&wp_commit_timing_slots, (uint64 *) out);
}

/*
 * wp_commit_leader_known
 *		Whether led_flush means anything on this server version.
 */
bool
wp_commit_leader_known(void)
{
	return wp_commit_timing_slots.header != NULL && commit_shared->leader_known;
}

/*
 * wp_commit_timing_reset
 *		walpilot.reset(): make the current sums the new zero.
 */
void
wp_commit_timing_reset(void)
{
	wp_backend_slots_reset(&wp_commit_timing_slots);
}

/*
 * collect's per-slot step: the maximum tagged with the scan that ended,
 * and the committers.  A backend with WP_COMMITTER_MIN durable commits or
 * more in a reader's window is a committer in it: the commit model's G,
 * the backends that cycle through durable commits, counted the same way
 * in every mode (the gather's own count runs in tune mode only).  A
 * backend that commits once in a window (autovacuum, a monitoring job)
 * is no part of that cycle; counted, it made the model take 2 clients for
 * 3 and spread their commits over a third one's outside time.
 */
typedef struct WpScanMax
{
	uint64		ended;			/* the epoch of the scan that ended */
	uint64		max_us;
} WpScanMax;

static void
collect_slot(pg_atomic_uint64 *s, int index, const uint64 *slot_gain, void *arg)
{
	WpScanMax  *m = (WpScanMax *) arg;
	uint64		tagged = pg_atomic_read_u64(&s[CT_MAX_TAGGED]);
	uint64		durable = slot_gain[CT(durable)];
	int			r;

	if ((tagged >> WP_MAX_US_BITS) == m->ended)
		m->max_us = Max(m->max_us, tagged & WP_MAX_US_MASK);
	if (durable == 0)
		return;
	for (r = 0; r < WP_COMMIT_NUM_READERS; r++)
	{
		uint8	   *n = &reader_slot_commits[r][index];

		if (*n >= WP_COMMITTER_MIN)
			continue;
		*n = (uint8) Min(*n + durable, WP_COMMITTER_MIN);
		if (*n >= WP_COMMITTER_MIN)
			reader_acc[r].committers++;
	}
}

/*
 * collect
 *		Worker only: one scan of every slot, adding what each gained since
 *		the previous scan to every reader's accumulator.  The first scan
 *		only primes the worker's copy.
 */
static void
collect(void)
{
	WpCommitTotals gained;
	WpScanMax	m;
	int			b,
				r;

	if (reader_slot_commits[0] == NULL)
	{
		for (r = 0; r < WP_COMMIT_NUM_READERS; r++)
			reader_slot_commits[r] =
				MemoryContextAllocZero(TopMemoryContext,
									   wp_commit_timing_slots.shared->nslots);
	}

	/* commits from now on belong to the next epoch */
	m.ended = pg_atomic_read_u32(&commit_shared->max_epoch);
	m.max_us = 0;
	pg_atomic_write_u32(&commit_shared->max_epoch,
						(uint32) (m.ended + 1) & WP_MAX_EPOCH_MASK);
	pg_memory_barrier();

	if (!wp_backend_slots_delta(&wp_commit_timing_slots, (uint64 *) &gained,
								collect_slot, &m))
		return;

	for (r = 0; r < WP_COMMIT_NUM_READERS; r++)
	{
		WpCommitSecond *acc = &reader_acc[r];

		acc->durable += gained.durable;
		acc->async += gained.async;
		acc->led_flush += gained.led_flush;
		acc->sum_us += gained.sum_us;
		acc->outside_n += gained.outside_n;
		acc->outside_sum_us += gained.outside_sum_us;
		acc->outside_sq_us2 += gained.outside_sq_us2;
		acc->max_us = Max(acc->max_us, m.max_us);
		for (b = 0; b < WP_HIST_BUCKETS; b++)
			acc->hist[b] += gained.hist[b];
	}
}

/*
 * wp_commit_take
 *		Worker only: what the commit slots gained since this reader's
 *		previous call (zeros at its first call).
 *
 * The one delta reader over the slots: the timeline, the pilot, commit
 * groups and commit phases each take their own windows, but the slots are
 * scanned once per worker tick however many readers ask in it.  max_us is
 * the largest commit latency of the scans in the window.
 */
void
wp_commit_take(WpCommitReader reader, WpCommitSecond *out)
{
	uint64		tick;

	memset(out, 0, sizeof(WpCommitSecond));
	if (wp_commit_timing_slots.header == NULL || reader < 0 ||
		reader >= WP_COMMIT_NUM_READERS)
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
	if (reader_slot_commits[reader] != NULL)
		memset(reader_slot_commits[reader], 0,
			   wp_commit_timing_slots.shared->nslots);
}
