/*-------------------------------------------------------------------------
 *
 * compat.h
 *		Every PostgreSQL version difference walpilot cares about, in one place.
 *
 * The logic files stay free of PG_VERSION_NUM tests: each difference is a
 * macro or a static inline wrapper here, or a function of compat_wal.c
 * where it needs more code.  Built and tested against PostgreSQL 15, 17
 * and 18 (test/run --all-versions); the 16 guards follow the release notes
 * and are not built; the 19 guards follow the development tree.
 *
 * IDENTIFICATION
 *	  src/core/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_COMPAT_H
#define WALPILOT_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 150000
#error "walpilot requires PostgreSQL 15 or later"
#endif

#include "funcapi.h"
#include "miscadmin.h"
#include "storage/proc.h"

/*
 * Headers that older releases' headers pulled in and 19's do not:
 * pgstat.h no longer includes utils/wait_event.h (the WAIT_EVENT_* names,
 * in the generated utils/wait_event_types.h from 17), funcapi.h no longer
 * utils/tuplestore.h (tuplestore_putvalues), and get_database_name moved
 * from commands/dbcommands.h to utils/lsyscache.h.  All three exist on
 * every supported version.
 */
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"
#include "utils/wait_event.h"

/* _PG_init is declared by fmgr.h only from 16 (18 certainly) on. */
#if PG_VERSION_NUM < 160000
extern void _PG_init(void);
#endif

/*
 * commit_delay and commit_siblings are exported by the server but declared
 * in a header only in later releases; an identical repeated extern
 * declaration is legal, so this line is safe on every version.
 */
extern PGDLLIMPORT int CommitDelay;
extern PGDLLIMPORT int CommitSiblings;

/* Index of a PGPROC in ProcGlobal->allProcs, and of our own. */
#if PG_VERSION_NUM >= 170000
#define wp_my_proc_number()		(MyProcNumber)
#else
#define wp_my_proc_number()		(MyProc->pgprocno)
#endif

/* Number of PGPROC slots, as sized in the shmem request hook. */
static inline int
wp_max_procs(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS;
}

/*
 * From 16 on PGXS builds extensions with -fvisibility=hidden: a function
 * outside the fmgr interface is then invisible to dlsym().  The few that
 * other loaded code looks up at run time (the TAP tests' probe modules
 * call walpilot's delivery and publish steps through dlsym) are declared
 * with this; up to 15 every global symbol is visible anyway.
 */
#define WP_VISIBLE				PGDLLEXPORT

/* Materialized set-returning function setup: 15.x has both names. */
#define wp_init_materialized_srf(fcinfo) InitMaterializedSRF((fcinfo), 0)

/* Our worker's wait event: custom events exist only from 17. */
#define WP_WAIT_EVENT_MAIN	PG_WAIT_EXTENSION

/* Read a 4-byte field another process writes without a lock, once. */
#define WP_READ_ONCE_U32(v) ((uint32) (*((volatile uint32 *) &(v))))
#define WP_READ_ONCE_I32(v) ((int32) (*((volatile int32 *) &(v))))

/*
 * wal_sync_method: the variable and its enum were renamed in 17
 * (sync_method, SYNC_METHOD_*).
 */
#include "access/xlog.h"
#include "pgstat.h"
#if PG_VERSION_NUM >= 170000
#define wp_wal_sync_method			wal_sync_method
#define WP_SYNC_METHOD_FSYNC		WAL_SYNC_METHOD_FSYNC
#define WP_SYNC_METHOD_FDATASYNC	WAL_SYNC_METHOD_FDATASYNC
#define WP_SYNC_METHOD_OPEN			WAL_SYNC_METHOD_OPEN
#define WP_SYNC_METHOD_FSYNC_WRITETHROUGH WAL_SYNC_METHOD_FSYNC_WRITETHROUGH
#define WP_SYNC_METHOD_OPEN_DSYNC	WAL_SYNC_METHOD_OPEN_DSYNC
#else
#define wp_wal_sync_method			sync_method
#define WP_SYNC_METHOD_FSYNC		SYNC_METHOD_FSYNC
#define WP_SYNC_METHOD_FDATASYNC	SYNC_METHOD_FDATASYNC
#define WP_SYNC_METHOD_OPEN			SYNC_METHOD_OPEN
#define WP_SYNC_METHOD_FSYNC_WRITETHROUGH SYNC_METHOD_FSYNC_WRITETHROUGH
#define WP_SYNC_METHOD_OPEN_DSYNC	SYNC_METHOD_OPEN_DSYNC
#endif

/*
 * Which sync methods the server offers: 16 dropped HAVE_FDATASYNC and the
 * OPEN_SYNC_FLAG/OPEN_DATASYNC_FLAG macros (fdatasync is assumed, O_SYNC
 * and O_DSYNC are used where the platform defines them).  Tested with
 * #ifdef.
 */
#include <fcntl.h>
#if PG_VERSION_NUM >= 160000
#define WP_HAVE_FDATASYNC 1
#ifdef O_SYNC
#define WP_HAVE_OPEN_SYNC 1
#endif
#ifdef O_DSYNC
#define WP_HAVE_OPEN_DSYNC 1
#endif
#else
#ifdef HAVE_FDATASYNC
#define WP_HAVE_FDATASYNC 1
#endif
#ifdef OPEN_SYNC_FLAG
#define WP_HAVE_OPEN_SYNC 1
#endif
#ifdef OPEN_DATASYNC_FLAG
#define WP_HAVE_OPEN_DSYNC 1
#endif
#endif

/* The open_* methods sync in the write: a WAL write is a flush there. */
#define wp_wal_sync_is_open() \
	(wp_wal_sync_method == WP_SYNC_METHOD_OPEN || \
	 wp_wal_sync_method == WP_SYNC_METHOD_OPEN_DSYNC)

/*
 * The open() flags the server uses for WAL under a sync method, as
 * xlog.c's static get_sync_bit() computes them (compat_wal.c): O_DIRECT
 * came with wal_level = minimal for open_* up to 15, with
 * debug_io_direct = wal for every method from 16.
 */
extern int	wp_wal_sync_bit(int method);

/*
 * Leader detection for commit timing: did this backend write and sync the
 * WAL for its own commit?  Up to 17 PendingWalStats holds this process's
 * not-yet-reported WAL write and sync counts.  18 moved WAL I/O to
 * pg_stat_io and made the pending counters static; there the kernel's
 * count of blocks this thread dirtied (getrusage RUSAGE_THREAD ru_oublock,
 * one system call) stands in for both: between PRE_COMMIT and COMMIT the
 * only writes a backend makes are its WAL writes as flush leader.  With an
 * open_* wal_sync_method the sync is part of the write and wal_sync never
 * moves, so the write count stands in.
 */
#define WP_HAVE_LEADER_DETECTION 1
#if PG_VERSION_NUM < 180000
#define WP_PENDING_WAL_ONE_COUNTER	0
#define wp_pending_wal_syncs()		((uint64) PendingWalStats.wal_sync)
#define wp_pending_wal_writes()		((uint64) PendingWalStats.wal_write)
#else
/* one counter for both: read it once (a system call each time) */
#define WP_PENDING_WAL_ONE_COUNTER	1
#include <sys/resource.h>
/*
 * RUSAGE_THREAD needs _GNU_SOURCE (which pg_config --cppflags gives on
 * Linux) and is not on every platform; a backend is a single-threaded
 * process, so RUSAGE_SELF counts the same blocks there.
 */
#ifdef RUSAGE_THREAD
#define WP_RUSAGE_WHO	RUSAGE_THREAD
#else
#define WP_RUSAGE_WHO	RUSAGE_SELF
#endif
static inline uint64
wp_thread_blocks_written(void)
{
	struct rusage ru;

	if (getrusage(WP_RUSAGE_WHO, &ru) != 0)
		return 0;
	return (uint64) ru.ru_oublock;
}
#define wp_pending_wal_syncs()		wp_thread_blocks_written()
#define wp_pending_wal_writes()		wp_thread_blocks_written()
#endif

/*
 * Cluster-wide WAL counters, as pg_stat_wal had them up to 17.  18 keeps
 * records, FPIs and buffers_full there and counts WAL writes and syncs in
 * pg_stat_io (object wal, context normal): compat_wal.c reads whichever
 * the server has.  Reads the statistics snapshot; the caller clears it
 * with pgstat_clear_snapshot().  Times are µs, non-zero only with
 * track_wal_io_timing.
 */
typedef struct WpWalCounters
{
	int64		records;
	int64		fpi;
	int64		buffers_full;
	int64		writes;
	int64		syncs;
	int64		write_time_us;
	int64		sync_time_us;
	TimestampTz reset_at;		/* last pg_stat_reset_shared() of them */
} WpWalCounters;

extern void wp_wal_counters(WpWalCounters *c);

/*
 * When an asynchronous commit wakes the WAL writer before its
 * wal_writer_delay is up: up to 16 whenever the commit completes a WAL
 * page, so under a steady load it flushes back to back; from 17 only once
 * wal_writer_flush_after of WAL is unflushed, so it sleeps the whole
 * delay after each flush and syncs about once per delay plus one sync.
 * The wording for walpilot's evidence.
 */
#if PG_VERSION_NUM >= 170000
#define WP_ASYNC_COMMIT_WAKES_WALWRITER \
	"only once wal_writer_flush_after of WAL is unflushed"
#else
#define WP_ASYNC_COMMIT_WAKES_WALWRITER "per filled WAL page"
#endif

/*
 * Whether synchronous_standby_names names a standby, as SyncRepWaitForLSN
 * tests it without a lock (the checkpointer publishes it): a bit of
 * sync_standbys_status in the minor releases from spring 2025 on (15.13,
 * 17.5, 18), a flag before.  Headers of walsender_private.h decide, so
 * it is included here, whatever the including file's order.
 */
#include "replication/walsender_private.h"
#ifdef SYNC_STANDBY_DEFINED
#define wp_sync_standbys_defined() \
	((((volatile WalSndCtlData *) WalSndCtl)->sync_standbys_status & \
	  SYNC_STANDBY_DEFINED) != 0)
#else
#define wp_sync_standbys_defined() \
	(((volatile WalSndCtlData *) WalSndCtl)->sync_standbys_defined)
#endif

/* The view those WAL write and sync counts are in. */
#if PG_VERSION_NUM >= 180000
#define WP_WAL_IO_VIEW	"pg_stat_io"
#else
#define WP_WAL_IO_VIEW	"pg_stat_wal"
#endif

/*
 * Checkpointer statistics (pg_stat_bgwriter up to 16, pg_stat_checkpointer
 * from 17, whose struct members were renamed): member names.
 */
#if PG_VERSION_NUM >= 170000
#define WP_CKPTSTAT_TIMED		num_timed
#define WP_CKPTSTAT_REQUESTED	num_requested
#define WP_CKPTSTAT_BUFFERS		buffers_written
#define WP_CKPTSTAT_WRITE_MS	write_time
#define WP_CKPTSTAT_SYNC_MS		sync_time
#else
#define WP_CKPTSTAT_TIMED		timed_checkpoints
#define WP_CKPTSTAT_REQUESTED	requested_checkpoints
#define WP_CKPTSTAT_BUFFERS		buf_written_checkpoints
#define WP_CKPTSTAT_WRITE_MS	checkpoint_write_time
#define WP_CKPTSTAT_SYNC_MS		checkpoint_sync_time
#endif

/*
 * The untranslated formats of the log_checkpoints messages
 * (ErrorData.message_id), kind being "checkpoint" or "restartpoint".
 * Start: up to 18 the flag words (" time", " wal", ...) are eight string
 * arguments; 19 joins them first and passes one.  End: 17 appended the
 * LSNs, 18 the SLRU buffers; 19 repeats the flag words after "complete:"
 * and prints LSNs zero-padded (%X/%08X, as LSN_FORMAT_ARGS' comment in
 * access/xlogdefs.h now says).  19 also renamed the immediate flag
 * (CHECKPOINT_IMMEDIATE became CHECKPOINT_FAST): its word is " fast".
 */
#if PG_VERSION_NUM >= 190000
#define WP_CKPT_START_FMT(kind)	kind " starting:%s"
#define WP_CKPT_FLAG_FAST		"fast"
#else
#define WP_CKPT_START_FMT(kind)	kind " starting:%s%s%s%s%s%s%s%s"
#define WP_CKPT_FLAG_FAST		"immediate"
#endif
#define WP_CKPT_END_FMT_15(kind) \
	kind " complete: wrote %d buffers (%.1f%%); " \
	"%d WAL file(s) added, %d removed, %d recycled; " \
	"write=%ld.%03d s, sync=%ld.%03d s, total=%ld.%03d s; " \
	"sync files=%d, longest=%ld.%03d s, average=%ld.%03d s; " \
	"distance=%d kB, estimate=%d kB"
#if PG_VERSION_NUM >= 190000
#define WP_CKPT_END_FMT(kind) \
	kind " complete:%s: wrote %d buffers (%.1f%%), wrote %d SLRU buffers; " \
	"%d WAL file(s) added, %d removed, %d recycled; " \
	"write=%ld.%03d s, sync=%ld.%03d s, total=%ld.%03d s; " \
	"sync files=%d, longest=%ld.%03d s, average=%ld.%03d s; " \
	"distance=%d kB, estimate=%d kB; lsn=%X/%08X, redo lsn=%X/%08X"
#elif PG_VERSION_NUM >= 180000
#define WP_CKPT_END_FMT(kind) \
	kind " complete: wrote %d buffers (%.1f%%), wrote %d SLRU buffers; " \
	"%d WAL file(s) added, %d removed, %d recycled; " \
	"write=%ld.%03d s, sync=%ld.%03d s, total=%ld.%03d s; " \
	"sync files=%d, longest=%ld.%03d s, average=%ld.%03d s; " \
	"distance=%d kB, estimate=%d kB; lsn=%X/%X, redo lsn=%X/%X"
#elif PG_VERSION_NUM >= 170000
#define WP_CKPT_END_FMT(kind) \
	WP_CKPT_END_FMT_15(kind) "; lsn=%X/%X, redo lsn=%X/%X"
#else
#define WP_CKPT_END_FMT(kind)	WP_CKPT_END_FMT_15(kind)
#endif

/*
 * The GUC table: 16 made get_guc_variables() return its length and
 * dropped GetNumConfigOptions().
 */
#include "utils/guc_tables.h"
static inline struct config_generic **
wp_guc_variables(int *n)
{
#if PG_VERSION_NUM >= 160000
	return get_guc_variables(n);
#else
	*n = GetNumConfigOptions();
	return get_guc_variables();
#endif
}

/*
 * An integer setting's descriptor and its generic part: up to 18 struct
 * config_int begins with the generic struct config_generic (member gen);
 * 19 turned that inside out, config_generic ending in a union of the
 * per-type structs (member _int), which no longer point back.  walpilot
 * keeps struct config_int pointers and reaches the generic fields
 * (source, sourcefile, sourceline) through wp_guc_int_gen.
 */
static inline struct config_int *
wp_guc_int_of(struct config_generic *g)
{
#if PG_VERSION_NUM >= 190000
	return &g->_int;
#else
	return (struct config_int *) g;
#endif
}

static inline struct config_generic *
wp_guc_int_gen(struct config_int *c)
{
#if PG_VERSION_NUM >= 190000
	return (struct config_generic *) ((char *) c - offsetof(struct config_generic, _int));
#else
	return &c->gen;
#endif
}

/*
 * log_min_messages: one level per process type from 19 (an array indexed
 * by BackendType, "warning, checkpointer:debug1"), one level before.
 */
#if PG_VERSION_NUM >= 190000
#define wp_log_min_messages_of(bt)	(log_min_messages[(bt)])
#else
#define wp_log_min_messages_of(bt)	(log_min_messages)
#endif

/*
 * Building a jsonb value with pushJsonbValue: up to 18 the state is a
 * JsonbParseState pointer and every push returns the value so far; 19
 * takes a zeroed JsonbInState, returns nothing and leaves the finished
 * value in its result member.
 */
#include "utils/jsonb.h"
#if PG_VERSION_NUM >= 190000
typedef JsonbInState WpJsonbBuild;
#define wp_jsonb_build_init(s)	memset((s), 0, sizeof(WpJsonbBuild))
static inline JsonbValue *
wp_jsonb_push(WpJsonbBuild *s, JsonbIteratorToken tok, JsonbValue *v)
{
	pushJsonbValue(s, tok, v);
	return s->result;
}
#else
typedef JsonbParseState *WpJsonbBuild;
#define wp_jsonb_build_init(s)	(*(s) = NULL)
#define wp_jsonb_push(s, tok, v)	pushJsonbValue((s), (tok), (v))
#endif

/*
 * allow_alter_system (17): off forbids ALTER SYSTEM, which walpilot then
 * does not use either.  Before 17 ALTER SYSTEM is always allowed.
 */
static inline bool
wp_alter_system_allowed(void)
{
#if PG_VERSION_NUM >= 170000
	return AllowAlterSystem;
#else
	return true;
#endif
}

/* A backend-status snapshot entry by 1-based index (renamed in 17). */
#if PG_VERSION_NUM >= 170000
#define wp_local_beentry(i)		pgstat_get_local_beentry_by_index(i)
#else
#define wp_local_beentry(i)		pgstat_fetch_stat_local_beentry(i)
#endif

/*
 * pg_usleep, the commit_delay sleep: select() up to 16, nanosleep() from 17.
 * Both return early on a signal, which the gather wake-up relies on
 * (test/t/005_commit_delay_signal.pl checks it on every version): nothing
 * to wrap.
 */

/*
 * The flush leader's commit_delay sleep: 19 reports it as wait event
 * Timeout:CommitDelay (an enum member, so tested by version, not #ifdef);
 * up to 18 the sleeper shows no wait event at all, and walpilot infers
 * it (sampler.c, pilot_commit_delay.c).
 */
#if PG_VERSION_NUM >= 190000
#define WP_HAVE_COMMIT_DELAY_EVENT 1
#define wp_wait_may_be_commit_delay(wei)	((wei) == WAIT_EVENT_COMMIT_DELAY)
#else
#define WP_HAVE_COMMIT_DELAY_EVENT 0
#define wp_wait_may_be_commit_delay(wei)	((wei) == 0)
#endif

/*
 * The flush leader in its commit_delay sleep or about to begin it: from
 * taking WALWriteLock to pgstat_report_wait_start() a 19 leader reports no
 * wait event either, and a gather wake-up in that window must reach it.
 */
#define wp_wait_may_be_leader_at_delay(wei) \
	(wp_wait_may_be_commit_delay(wei) || (wei) == 0)

/*
 * Backend type of the process owning a PGPROC.  15 keeps no type in the
 * PGPROC: the sampler derives it from the slot's index range, the
 * checkpointer/walwriter latch pointers and a pid map (sampler.c).  18
 * replaced the latch pointers by proc numbers.
 */
#if PG_VERSION_NUM >= 180000
#define wp_proc_is_checkpointer(i) \
	((int) ProcGlobal->checkpointerProc == (i))
#define wp_proc_is_walwriter(i) \
	((int) ProcGlobal->walwriterProc == (i))
#else
#define wp_proc_is_checkpointer(i) \
	(ProcGlobal->checkpointerLatch == &ProcGlobal->allProcs[(i)].procLatch)
#define wp_proc_is_walwriter(i) \
	(ProcGlobal->walwriterLatch == &ProcGlobal->allProcs[(i)].procLatch)
#endif

/* A relation file's identity: RelFileNode became RelFileLocator in 16. */
#if PG_VERSION_NUM >= 160000
#include "storage/relfilelocator.h"
typedef RelFileLocator WpRelFile;
#else
#include "storage/relfilenode.h"
typedef RelFileNode WpRelFile;
#endif

/*
 * PG_TEMP_FILE_PREFIX ("pgsql_tmp", the names pg_basebackup and pg_rewind
 * skip): storage/fd.h up to 15, common/file_utils.h from 16.
 */
#if PG_VERSION_NUM >= 160000
#include "common/file_utils.h"
#else
#include "storage/fd.h"
#endif

/*
 * Signal handlers: through 16 pqsignal installs the handler itself; from
 * 17 every handler it sets runs behind one wrapper function.
 */
#if PG_VERSION_NUM >= 170000
#define WP_PQSIGNAL_WRAPS_HANDLERS 1
#else
#define WP_PQSIGNAL_WRAPS_HANDLERS 0
#endif

/* Current WAL insert position (takes only the insertpos spinlock). */
#define wp_insert_lsn()			GetXLogInsertRecPtr()

#endif							/* WALPILOT_COMPAT_H */
