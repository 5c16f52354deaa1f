/*-------------------------------------------------------------------------
 *
 * sampler.c
 *		Wait-event sampling of every process, the wait profile, and the
 *		closing of each second of the timeline.
 *
 * Every walpilot.sample_interval the worker reads wait_event_info of every
 * PGPROC in ProcGlobal->allProcs (client backends, autovacuum, background
 * and parallel workers, WAL senders, checkpointer, WAL writer, background
 * writer, ...).  No lock is taken for the scan:
 * each field is read once through a volatile 4-byte load; a slot is live
 * when its latch has an owner and its pid is set.  A sample may attribute
 * a wait to a process that is just starting or exiting: acceptable for a
 * sampler, and it keeps the sampler off ProcArrayLock, which every commit
 * takes exclusively.
 *
 * The backend type of a slot is cached per slot and recomputed only when
 * the slot's pid changes: the index range of the slot tells client
 * backends and WAL senders apart from the rest, the latch pointers in
 * PROC_HDR name the checkpointer and WAL writer, background workers are
 * named by GetBackgroundWorkerTypeByPid, and the rest (autovacuum
 * launcher/workers, background writer, archiver, startup, WAL receiver)
 * through a pid -> BackendType map built from the backend-status snapshot
 * at most once a second, and only when such a slot has a new pid.
 *
 * Samples are counted per (backend type, wait_event_info) in a
 * worker-local table for the current second.  When a second ends the
 * worker merges that table into the cumulative wait profile in shared
 * memory (under wp_shared->lock), harvests the commit-timing slots, takes
 * WAL counters, and appends one WpSecond to the timeline.
 *
 * An active process with no wait event counts as CPU.  In PostgreSQL 15
 * to 18 the commit_delay sleep of a flush leader has no wait event; while
 * commit_delay > 0 (as seen by the worker) and no WAL I/O is in progress,
 * the sampler checks the scheduler state of the no-wait processes
 * (/proc/<pid>/stat, at most a few per sample): a sleeping one is taken
 * for the leader in its commit_delay and counted as Timeout:CommitDelay
 * instead of CPU.
 *
 * IDENTIFICATION
 *	  src/instruments/sampler.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <math.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/autovacuum.h"
#include "postmaster/bgworker.h"
#include "replication/walsender.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/backend_status.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "instruments.h"

#define WP_PROFILE_SIZE		1024	/* power of two */
#define WP_MAX_BTYPES		32
#define WP_MAX_CANDIDATES	4		/* /proc reads per sample, at most */

/* Pseudo wait event for the inferred commit_delay sleep. */
#define WP_WEI_COMMIT_DELAY	0xFF000001U

/* Backend types known without a lookup; interned at worker start. */
#define WP_BT_CLIENT		0
#define WP_BT_UNKNOWN		0xFF

typedef struct WpProfileEntry
{
	bool		used;
	uint8		btype;
	uint32		wei;
	uint64		samples;
	uint64		time_us;
} WpProfileEntry;

typedef struct WpSamplerShared
{
	pg_atomic_uint64 samples_taken; /* since reset */
	pg_atomic_uint64 missed_ticks;	/* since reset */
	pg_atomic_uint64 reset_generation;	/* bumped under wp_shared->lock */

	/* everything below: wp_shared->lock */
	int			nbtypes;
	char		btype_names[WP_MAX_BTYPES][NAMEDATALEN];
	uint64		dropped_samples;	/* profile table full */
	WpProfileEntry profile[WP_PROFILE_SIZE];
} WpSamplerShared;

static WpSamplerShared *sampler = NULL;

/*---- worker-local state ----*/
static bool initialized = false;
static int	nslots;
static int32 *slot_pid;			/* pid the cached type belongs to */
static uint8 *slot_btype;		/* cached backend type id */
static bool *slot_pending;		/* type awaits the pid map */
static bool map_wanted = false;
static TimestampTz last_map_refresh = 0;
static int	local_nbtypes = 0;
static char local_btype_names[WP_MAX_BTYPES][NAMEDATALEN];

static uint8 bt_client,
			bt_walsender,
			bt_checkpointer,
			bt_walwriter,
			bt_autovacuum,
			bt_bgworker,
			bt_aux;

static uint32 wei_wal_write_lock;
static uint32 wei_wal_insert_lock;

static WpProfileEntry local_profile[WP_PROFILE_SIZE];
static int	local_used[WP_PROFILE_SIZE];
static int	local_nused = 0;
static uint64 local_dropped = 0;

/* running totals of what this worker's samples saw (wp_sampler_totals) */
static WpSamplerTotals totals;

static int64 cur_second = -1;	/* second being accumulated */
static uint64 cur_generation = 0;
static WpSecond cur;
/* previous tick on the monotonic clock: a wall-clock step misses no tick */
static int64 last_tick_mono_us = 0;

/* handed in by the hub with each tick */
static bool tick_standby = false;
static bool tick_delay_managed = false;

static bool wal_primed = false;
static WpWalCounters prev_wal;
static XLogRecPtr prev_insert = InvalidXLogRecPtr;
static XLogRecPtr prev_redo = InvalidXLogRecPtr;

/*
 * wp_sampler_shmem_size / wp_sampler_shmem_init
 *		The cumulative profile and the backend-type names.  Init runs with
 *		AddinShmemInitLock held.
 */
Size
wp_sampler_shmem_size(void)
{
	return MAXALIGN(sizeof(WpSamplerShared));
}

void
wp_sampler_shmem_init(void)
{
	bool		found;

	sampler = ShmemInitStruct("walpilot sampler", sizeof(WpSamplerShared),
							  &found);
	if (!found)
	{
		memset(sampler, 0, sizeof(WpSamplerShared));
		pg_atomic_init_u64(&sampler->samples_taken, 0);
		pg_atomic_init_u64(&sampler->missed_ticks, 0);
		pg_atomic_init_u64(&sampler->reset_generation, 0);
	}
}

uint64
wp_sampler_samples_taken(void)
{
	return sampler ? pg_atomic_read_u64(&sampler->samples_taken) : 0;
}

uint64
wp_sampler_missed_ticks(void)
{
	return sampler ? pg_atomic_read_u64(&sampler->missed_ticks) : 0;
}

/*
 * wp_sampler_totals
 *		What the samples saw since this worker started, as running totals
 *		whose differences cover any span the caller likes (a pilot's
 *		window): how many samples found the checkpointer syncing data
 *		files.  The worker's own: only the worker samples.
 */
void
wp_sampler_totals(WpSamplerTotals *out)
{
	*out = totals;
}

/*
 * wp_sampler_reset
 *		Clear the cumulative profile and the sample counters.  The worker
 *		notices the new generation at its next tick and restarts the second
 *		in progress from there.
 */
void
wp_sampler_reset(void)
{
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	pg_atomic_fetch_add_u64(&sampler->reset_generation, 1);
	sampler->dropped_samples = 0;
	memset(sampler->profile, 0, sizeof(sampler->profile));
	LWLockRelease(wp_shared->lock);
	pg_atomic_write_u64(&sampler->samples_taken, 0);
	pg_atomic_write_u64(&sampler->missed_ticks, 0);
}

/*
 * wp_wait_event_names
 *		Type and event names of a sampled wait_event_info, including the
 *		sampler's own pseudo events (CPU, inferred CommitDelay).
 */
void
wp_wait_event_names(uint32 wei, const char **type, const char **event)
{
	if (wei == 0)
	{
		*type = "CPU";
		*event = "CPU";
	}
	else if (wei == WP_WEI_COMMIT_DELAY)
	{
		*type = "Timeout";
		*event = "CommitDelay";
	}
	else
	{
		*type = pgstat_get_wait_event_type(wei);
		*event = pgstat_get_wait_event(wei);
		if (*type == NULL)
			*type = "???";
		if (*event == NULL)
			*event = "???";
	}
}

/*
 * wp_wait_event_is_idle
 *		Idle waits are kept out of active shares: Activity and Client.
 */
bool
wp_wait_event_is_idle(uint32 wei)
{
	uint32		cls = wei & 0xFF000000U;

	return cls == PG_WAIT_ACTIVITY || cls == PG_WAIT_CLIENT;
}

/*
 * intern_btype
 *		Worker only: the id of a backend-type name, adding it to the shared
 *		name table when new.  Past WP_MAX_BTYPES names, "other".
 */
static uint8
intern_btype(const char *name)
{
	int			i;

	for (i = 0; i < local_nbtypes; i++)
		if (strcmp(local_btype_names[i], name) == 0)
			return (uint8) i;
	if (local_nbtypes >= WP_MAX_BTYPES - 1)
	{
		if (local_nbtypes == WP_MAX_BTYPES - 1)
			name = "other";
		else
			return WP_MAX_BTYPES - 1;
	}
	i = local_nbtypes++;
	strlcpy(local_btype_names[i], name, NAMEDATALEN);
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	strlcpy(sampler->btype_names[i], name, NAMEDATALEN);
	sampler->nbtypes = local_nbtypes;
	LWLockRelease(wp_shared->lock);
	return (uint8) i;
}

/*
 * sampler_init
 *		Worker only, first tick: per-slot caches and the fixed type ids.
 *		A restarted worker finds the names its predecessor interned.
 */
static void
sampler_init(void)
{
	nslots = (int) ProcGlobal->allProcCount;
	slot_pid = MemoryContextAllocZero(TopMemoryContext, sizeof(int32) * nslots);
	slot_btype = MemoryContextAllocZero(TopMemoryContext, sizeof(uint8) * nslots);
	slot_pending = MemoryContextAllocZero(TopMemoryContext, sizeof(bool) * nslots);

	LWLockAcquire(wp_shared->lock, LW_SHARED);
	local_nbtypes = sampler->nbtypes;
	memcpy(local_btype_names, sampler->btype_names, sizeof(local_btype_names));
	LWLockRelease(wp_shared->lock);

	bt_client = intern_btype(GetBackendTypeDesc(B_BACKEND));
	bt_walsender = intern_btype(GetBackendTypeDesc(B_WAL_SENDER));
	bt_checkpointer = intern_btype(GetBackendTypeDesc(B_CHECKPOINTER));
	bt_walwriter = intern_btype(GetBackendTypeDesc(B_WAL_WRITER));
	bt_autovacuum = intern_btype(GetBackendTypeDesc(B_AUTOVAC_WORKER));
	bt_bgworker = intern_btype(GetBackendTypeDesc(B_BG_WORKER));
	bt_aux = intern_btype("auxiliary process");

	wei_wal_write_lock = PG_WAIT_LWLOCK | WALWriteLock->tranche;
	wei_wal_insert_lock = PG_WAIT_LWLOCK | LWTRANCHE_WAL_INSERT;

	initialized = true;
}

/*
 * classify_slot
 *		Backend type of the process now in slot i (pid changed).  Slot
 *		ranges follow proc.c:InitProcGlobal.
 */
static void
classify_slot(int i, int32 pid)
{
	int			av_start = MaxConnections;
	int			bgw_start = av_start + autovacuum_max_workers + 1;
	int			wal_start = bgw_start + max_worker_processes;

	slot_pid[i] = pid;
	slot_pending[i] = false;
	if (i < av_start)
		slot_btype[i] = bt_client;
	else if (i < bgw_start)
	{
		slot_btype[i] = bt_autovacuum;
		slot_pending[i] = map_wanted = true;
	}
	else if (i < wal_start)
	{
		const char *name = GetBackgroundWorkerTypeByPid((pid_t) pid);

		slot_btype[i] = name ? intern_btype(name) : bt_bgworker;
	}
	else if (i < MaxBackends)
		slot_btype[i] = bt_walsender;
	else if (wp_proc_is_checkpointer(i))
		slot_btype[i] = bt_checkpointer;
	else if (wp_proc_is_walwriter(i))
		slot_btype[i] = bt_walwriter;
	else
	{
		slot_btype[i] = bt_aux;
		slot_pending[i] = map_wanted = true;
	}
}

/*
 * refresh_pid_map
 *		Resolve the slots waiting for a type through the backend-status
 *		snapshot (a copy of every status slot: at most once a second).
 *		The caller clears the snapshot with pgstat_clear_snapshot().
 */
static void
refresh_pid_map(void)
{
	int			n = pgstat_fetch_stat_numbackends();
	int			i,
				j;

	for (i = 0; i < nslots; i++)
	{
		if (!slot_pending[i])
			continue;
		for (j = 1; j <= n; j++)
		{
			LocalPgBackendStatus *e = wp_local_beentry(j);

			if (e && e->backendStatus.st_procpid == slot_pid[i])
			{
				slot_btype[i] = intern_btype(
					GetBackendTypeDesc(e->backendStatus.st_backendType));
				break;
			}
		}
		slot_pending[i] = false;
	}
	map_wanted = false;
}

/*
 * profile_add
 *		Count one sample in the worker-local table of the current second.
 */
static void
profile_add(uint8 btype, uint32 wei, uint64 time_us)
{
	uint64		key = ((uint64) btype << 32) | wei;
	uint32		h = (uint32) ((key * UINT64CONST(0x9E3779B97F4A7C15)) >> 54);
	int			probes;

	for (probes = 0; probes < WP_PROFILE_SIZE; probes++)
	{
		WpProfileEntry *e = &local_profile[h];

		if (!e->used)
		{
			e->used = true;
			e->btype = btype;
			e->wei = wei;
			e->samples = 1;
			e->time_us = time_us;
			local_used[local_nused++] = h;
			return;
		}
		if (e->btype == btype && e->wei == wei)
		{
			e->samples++;
			e->time_us += time_us;
			return;
		}
		h = (h + 1) & (WP_PROFILE_SIZE - 1);
	}
	local_dropped++;
}

/*
 * merge_profile
 *		Add the second's local counts to the shared cumulative profile,
 *		unless walpilot.reset() ran during that second; returns false in
 *		that case.  Same hashing as
 *		profile_add, so slots line up; takes wp_shared->lock exclusively
 *		once per second.
 */
static bool
merge_profile(void)
{
	int			k;
	bool		same;

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	same = (pg_atomic_read_u64(&sampler->reset_generation) == cur_generation);
	if (same)
	{
		for (k = 0; k < local_nused; k++)
		{
			WpProfileEntry *l = &local_profile[local_used[k]];
			uint64		key = ((uint64) l->btype << 32) | l->wei;
			uint32		h = (uint32) ((key * UINT64CONST(0x9E3779B97F4A7C15)) >> 54);
			int			probes;

			for (probes = 0; probes < WP_PROFILE_SIZE; probes++)
			{
				WpProfileEntry *e = &sampler->profile[h];

				if (!e->used)
				{
					*e = *l;
					break;
				}
				if (e->btype == l->btype && e->wei == l->wei)
				{
					e->samples += l->samples;
					e->time_us += l->time_us;
					break;
				}
				h = (h + 1) & (WP_PROFILE_SIZE - 1);
			}
			if (probes == WP_PROFILE_SIZE)
				sampler->dropped_samples += l->samples;
		}
		sampler->dropped_samples += local_dropped;
	}
	LWLockRelease(wp_shared->lock);

	for (k = 0; k < local_nused; k++)
		local_profile[local_used[k]].used = false;
	local_nused = 0;
	local_dropped = 0;
	return same;
}

/*
 * proc_is_sleeping
 *		Linux: whether a process is in interruptible sleep ('S') rather
 *		than running or runnable.  false when unknown.
 */
static bool
proc_is_sleeping(int32 pid)
{
#ifdef __linux__
	char		path[64];
	char		buf[128];
	int			fd;
	ssize_t		n;
	char	   *p;

	/* plain syscalls: no stdio buffer, nothing allocated */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	fd = open(path, O_RDONLY, 0);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')' */
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' && p[2] == 'S';
#else
	return false;
#endif
}

/*
 * take_sample
 *		One scan of every PGPROC; counts into the local profile and the
 *		current second.  No lock taken.
 */
static void
take_sample(uint64 time_us)
{
	PGPROC	   *procs = ProcGlobal->allProcs;
	int			cand_slot[WP_MAX_CANDIDATES];
	int			ncand = 0;
	uint32		wal_io = 0;
	bool		delay_in_force = CommitDelay > 0 || tick_delay_managed;
	int			i;

	for (i = 0; i < nslots; i++)
	{
		PGPROC	   *proc = &procs[i];
		int32		owner = WP_READ_ONCE_I32(proc->procLatch.owner_pid);
		int32		pid;
		uint32		wei;
		uint8		bt;

		if (owner == 0)
			continue;
		pid = WP_READ_ONCE_I32(proc->pid);
		if (pid == 0 || pid == MyProcPid)
			continue;
		wei = WP_READ_ONCE_U32(proc->wait_event_info);

		if (slot_pid[i] != pid)
			classify_slot(i, pid);
		bt = slot_btype[i];

		if (bt == bt_client && !wp_wait_event_is_idle(wei))
		{
			cur.active_sum++;
			if (wei == 0)
				cur.cpu_sum++;
		}
		if (bt == bt_checkpointer && (wei & 0xFF000000U) != PG_WAIT_ACTIVITY)
			cur.checkpointer_busy++;
		if (bt == bt_checkpointer && wei == WAIT_EVENT_DATA_FILE_SYNC)
			totals.checkpoint_sync_samples++;

		if (wei == wei_wal_write_lock)
			cur.wal_write_lock_sum++;
		else if (wei == wei_wal_insert_lock)
			cur.wal_insert_lock_sum++;
		else if (wei == WAIT_EVENT_WAL_SYNC)
		{
			cur.wal_sync_sum++;
			wal_io++;
		}
		else if (wei == WAIT_EVENT_WAL_WRITE)
		{
			cur.wal_write_sum++;
			wal_io++;
		}
		else if (wei == WAIT_EVENT_SYNC_REP)
			cur.sync_rep_sum++;
		else if (WP_HAVE_COMMIT_DELAY_EVENT && wei != 0 &&
				 wp_wait_may_be_commit_delay(wei))
			cur.commit_delay_sum++;	/* reported by the server itself */

		/* a possible commit_delay sleeper: decided after the scan */
		if (wei == 0 && delay_in_force && !WP_HAVE_COMMIT_DELAY_EVENT &&
			ncand < WP_MAX_CANDIDATES &&
			bt != bt_checkpointer && bt != bt_walwriter)
		{
			cand_slot[ncand++] = i;
			continue;
		}
		profile_add(bt, wei, time_us);
	}

	/*
	 * Only the holder of WALWriteLock sleeps in commit_delay, so at most one
	 * process can.  While no one does WAL I/O (which the holder would be
	 * doing otherwise), a no-wait process that the kernel shows asleep is
	 * in an uninstrumented sleep: the commit_delay of a flush leader (or,
	 * rarely, a spinlock back-off).
	 */
	{
		bool		found = (wal_io > 0 || !enableFsync);
		int			c;

		for (c = 0; c < ncand; c++)
		{
			int			s = cand_slot[c];

			if (!found && proc_is_sleeping(slot_pid[s]))
			{
				found = true;
				cur.commit_delay_sum++;
				if (slot_btype[s] == bt_client)
					cur.cpu_sum--;	/* counted as CPU in the scan */
				profile_add(slot_btype[s], WP_WEI_COMMIT_DELAY, time_us);
			}
			else
				profile_add(slot_btype[s], 0, time_us);
		}
	}

	cur.samples++;
	pg_atomic_fetch_add_u64(&sampler->samples_taken, 1);
}

/*
 * fill_commit_and_wal
 *		Commit timing and WAL counters of the second being closed.
 */
static void
fill_commit_and_wal(WpSecond *sec)
{
	WpCommitSecond cs;
	uint64		phase_us[WP_PHASE_COUNT];
	WpWalCounters w;
	XLogRecPtr	insert;
	XLogRecPtr	redo;

	wp_commit_take(WP_COMMIT_READER_TIMELINE, &cs);
	sec->commits = cs.durable;
	sec->async_commits = cs.async;
	sec->commit_flushes = cs.led_flush;
	sec->committers = (uint32) cs.committers;
	if (cs.outside_n > 0)
	{
		double		mean = (double) cs.outside_sum_us / cs.outside_n;
		double		var = (double) cs.outside_sq_us2 / cs.outside_n - mean * mean;

		sec->outside_mean_us = (uint32) mean;
		sec->outside_sd_us = (uint32) sqrt(Max(var, 0.0));
	}
	wp_commit_groups_take(sec->groups);
	/* Little's law: waiters per sample times the sample interval */
	sec->sync_rep_wait_us = (uint64) sec->sync_rep_sum *
		(uint64) wp_sample_interval_ms * 1000;
	wp_commit_phases_take(phase_us, sec->sync_rep_wait_us);
	sec->standby_wait_us = phase_us[WP_PHASE_STANDBY_WAIT];
	sec->commit_time_us = phase_us[WP_PHASE_COMMIT_DELAY] +
		phase_us[WP_PHASE_WAL_FLUSH] + phase_us[WP_PHASE_STANDBY_WAIT];
	sec->commit_p50_us = (uint32)
		wp_hist_percentile(cs.hist, cs.durable, 0.50, cs.max_us);
	sec->commit_p95_us = (uint32)
		wp_hist_percentile(cs.hist, cs.durable, 0.95, cs.max_us);
	sec->commit_p99_us = (uint32)
		wp_hist_percentile(cs.hist, cs.durable, 0.99, cs.max_us);
	sec->commit_max_us = (uint32) Min(cs.max_us, PG_UINT32_MAX);
	/* a maximum taken a second early (harvest race) must not undercut p99 */
	if (sec->commit_max_us < sec->commit_p99_us)
		sec->commit_max_us = sec->commit_p99_us;

	/* a standby inserts no WAL: count what it replayed */
	insert = tick_standby ? GetXLogReplayRecPtr(NULL) : wp_insert_lsn();
	if (prev_insert != InvalidXLogRecPtr && insert >= prev_insert)
		sec->wal_bytes = insert - prev_insert;
	prev_insert = insert;

	redo = GetRedoRecPtr();
	sec->checkpoint_started = (prev_redo != InvalidXLogRecPtr && redo > prev_redo);
	prev_redo = redo;

	if (map_wanted && GetCurrentTimestamp() - last_map_refresh >= USECS_PER_SEC)
	{
		refresh_pid_map();
		last_map_refresh = GetCurrentTimestamp();
	}

	/*
	 * pg_stat_wal: backends publish their WAL counters when idle, at most
	 * once a second, so these deltas lag by about a second (more for busy
	 * or contended backends).  A reset (pg_stat_reset_shared) restarts the
	 * deltas: its timestamp tells it, since the counters after a reset can
	 * already exceed the old ones in some fields and not in others.
	 */
	wp_wal_counters(&w);
	if (wal_primed &&
		w.reset_at == prev_wal.reset_at &&
		w.records >= prev_wal.records &&
		w.writes >= prev_wal.writes)
	{
		sec->wal_records = w.records - prev_wal.records;
		sec->wal_fpi = w.fpi - prev_wal.fpi;
		sec->wal_buffers_full = w.buffers_full - prev_wal.buffers_full;
		sec->wal_writes = w.writes - prev_wal.writes;
		sec->wal_syncs = w.syncs - prev_wal.syncs;
		sec->wal_write_time_us = w.write_time_us - prev_wal.write_time_us;
		sec->wal_sync_time_us = w.sync_time_us - prev_wal.sync_time_us;
	}
	prev_wal = w;
	wal_primed = true;
	pgstat_clear_snapshot();
}

/*
 * close_second
 *		Finish the current second: merge its profile and append it to the
 *		timeline (with empty rows for seconds the worker slept through).
 *		A second during which walpilot.reset() ran is dropped, so a reset
 *		leaves nothing from before it.
 */
static void
close_second(int64 new_second)
{
	int64		gap;

	fill_commit_and_wal(&cur);
	if (!merge_profile())
		return;

	/* seconds with no tick at all get a row with samples = 0 */
	gap = new_second - cur_second - 1;
	if (gap > wp_history_size_s)
		gap = wp_history_size_s;
	wp_timeline_append(&cur);
	while (gap-- > 0)
	{
		WpSecond	empty;

		memset(&empty, 0, sizeof(empty));
		empty.ts = (new_second - gap - 1) * USECS_PER_SEC;
		wp_timeline_append(&empty);
	}
}

/*
 * wp_sampler_tick
 *		Worker: called every tick.  Takes one sample and, when a new second
 *		began, closes the previous one.  Does nothing when mode is off.
 *		The hub says whether the server is a standby and whether walpilot
 *		publishes a commit_delay (the settings decide that, not the sampler).
 */
void
wp_sampler_tick(TimestampTz now, bool standby, bool delay_managed)
{
	int64		second = now / USECS_PER_SEC;
	int64		interval_us = (int64) wp_sample_interval_ms * 1000;
	uint64		gen;
	instr_time	mono;
	int64		mono_us;

	tick_standby = standby;
	tick_delay_managed = delay_managed;
	if (sampler == NULL || wp_mode == WP_MODE_OFF)
	{
		last_tick_mono_us = 0;
		return;
	}
	if (!initialized)
		sampler_init();

	/* a tick later than twice the interval means ticks were missed */
	INSTR_TIME_SET_CURRENT(mono);
	mono_us = (int64) INSTR_TIME_GET_MICROSEC(mono);
	if (last_tick_mono_us != 0 &&
		mono_us - last_tick_mono_us >= 2 * interval_us)
	{
		int64		missed = (mono_us - last_tick_mono_us) / interval_us - 1;

		pg_atomic_fetch_add_u64(&sampler->missed_ticks, (uint64) missed);
		cur.missed_ticks += (int32) Min(missed, PG_INT32_MAX);
	}
	last_tick_mono_us = mono_us;

	if (second != cur_second)
	{
		if (cur_second >= 0)
			close_second(second);
		else
		{
			/* first tick: prime the deltas, start clean */
			WpSecond	dummy;

			memset(&dummy, 0, sizeof(dummy));
			fill_commit_and_wal(&dummy);
		}
		memset(&cur, 0, sizeof(cur));
		cur.ts = second * USECS_PER_SEC;
		cur_second = second;
		cur_generation = pg_atomic_read_u64(&sampler->reset_generation);
	}
	else if ((gen = pg_atomic_read_u64(&sampler->reset_generation)) !=
			 cur_generation)
	{
		/* walpilot.reset() ran: the second restarts from now */
		WpSecond	dummy;
		int			k;

		memset(&dummy, 0, sizeof(dummy));
		fill_commit_and_wal(&dummy);
		for (k = 0; k < local_nused; k++)
			local_profile[local_used[k]].used = false;
		local_nused = 0;
		local_dropped = 0;
		memset(&cur, 0, sizeof(cur));
		cur.ts = second * USECS_PER_SEC;
		cur_generation = gen;
	}

	take_sample((uint64) interval_us);
}

/*
 * wp_sampler_profile_snapshot
 *		Copy the cumulative profile with its type names into a palloc'd
 *		array (current memory context); returns the row count.  Allocates
 *		before taking wp_shared->lock, copies under it, names after.
 */
int
wp_sampler_profile_snapshot(WpProfileRow **rows)
{
	WpProfileEntry *copy = palloc(sizeof(WpProfileEntry) * WP_PROFILE_SIZE);
	char	  (*names)[NAMEDATALEN] = palloc(sizeof(sampler->btype_names));
	int			nbtypes;
	int			i,
				n = 0;
	WpProfileRow *out;

	LWLockAcquire(wp_shared->lock, LW_SHARED);
	memcpy(copy, sampler->profile, sizeof(WpProfileEntry) * WP_PROFILE_SIZE);
	memcpy(names, sampler->btype_names, sizeof(sampler->btype_names));
	nbtypes = sampler->nbtypes;
	LWLockRelease(wp_shared->lock);

	out = palloc(sizeof(WpProfileRow) * WP_PROFILE_SIZE);
	for (i = 0; i < WP_PROFILE_SIZE; i++)
	{
		if (!copy[i].used)
			continue;
		if (copy[i].btype < nbtypes)
			strlcpy(out[n].backend_type, names[copy[i].btype], NAMEDATALEN);
		else
			strlcpy(out[n].backend_type, "other", NAMEDATALEN);
		out[n].wait_event_info = copy[i].wei;
		out[n].samples = copy[i].samples;
		out[n].time_us = copy[i].time_us;
		n++;
	}
	pfree(copy);
	pfree(names);
	*rows = out;
	return n;
}
