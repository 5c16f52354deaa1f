/*-------------------------------------------------------------------------
 *
 * probe.c
 *		Storage probe, sleep-resolution probe and the flush-latency
 *		estimate.
 *
 * The storage probe does what pg_test_fsync does, but the way this server
 * writes WAL: in the directory pg_wal really resolves to, into a
 * preallocated zero-filled file of wal_segment_size, XLOG_BLCKSZ writes at
 * an advancing offset, each file opened with the flags get_sync_bit()
 * (xlog.c) would give for the wal_sync_method under test -- O_DIRECT
 * exactly when the server would use it (open_* methods with
 * wal_level = minimal) -- and synced with the call issue_xlog_fsync()
 * would make.  It never calls issue_xlog_fsync() itself, which PANICs on
 * failure: every error here is an ordinary ERROR naming the path.
 *
 * The probe file is pg_wal/walpilot_probe.<pid>: the name is not hex, so
 * WAL recycling and archiving never touch it.  It is removed in a
 * PG_FINALLY block (errors, query cancel) and by a before_shmem_exit
 * callback (FATAL, pg_terminate_backend).  One probe runs at a time in the
 * whole server (probe_owner, an atomic pid).  A probing backend killed by
 * SIGKILL or the OOM killer leaves its file behind; the worker sweeps such
 * files when it starts (which it does after every crash restart).
 *
 * A probe never fills the WAL file system: before it creates its file it
 * checks with statvfs() that the file plus WP_PROBE_FREE_SEGMENTS WAL
 * segments fit in the space unprivileged processes may use, and refuses
 * otherwise.  (The server PANICs when it cannot write WAL; a probe that
 * took the last free blocks would hand that PANIC to the next commit.)
 * The worker's automatic probes (walpilot.probe_interval and the pilot's
 * confirmation) use a file of WP_PERIODIC_OPS pages, not a segment.
 *
 * The sleep probe times pg_usleep(), the primitive commit_delay uses, for
 * the delays a pilot would request.  The worker runs it once after it
 * starts, one sleep per tick so that it never stalls the worker for long;
 * walpilot.probe() also runs it in the calling backend.
 *
 * With walpilot.mode = off the worker neither probes nor estimates;
 * walpilot.probe() still works when called.
 *
 * The flush-latency estimate (one WAL flush, in microseconds) is kept by
 * the worker from the best source available: pg_stat_wal sync time per
 * sync when track_wal_io_timing is on, the share of wait-event samples in IO:WALSync
 * per flush, and finally the last probe of the configured method.
 *
 * Shared state: the region "walpilot storage".  probe_owner is atomic; the
 * rest is protected by wp_shared->lock, taken only to copy results in or
 * out, never across I/O.
 *
 * IDENTIFICATION
 *	  src/probe.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogdefs.h"
#include "catalog/pg_type.h"
#include "common/file_perm.h"
#include "common/pg_prng.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "walpilot.h"

/*---- GUC variable (defined in walpilot.c's list) ----*/
int			wp_probe_interval_s = 0;

#define WP_PROBE_FILE_PREFIX	"walpilot_probe"
#define WP_PROBE_METHODS		5
#define WP_PROBE_ROWS			(WP_PROBE_METHODS * 2)
#define WP_PROBE_MAX_SAMPLES	100000
#define WP_NOTE_LEN				160
#define WP_SLEEP_DELAYS			10
#define WP_SLEEP_SAMPLES		20
#define WP_PERIODIC_OPS			20
#define WP_PERIODIC_MAX_MS		250
#define WP_PERIODIC_FILE_SIZE	(WP_PERIODIC_OPS * XLOG_BLCKSZ)
#define WP_PROBE_FREE_SEGMENTS	8	/* WAL segments a probe leaves free */
#define WP_ESTIMATE_WINDOW_MS	5000
#define WP_ESTIMATE_MIN_FLUSHES	10

/* Delays (µs) the sleep probe asks pg_usleep for. */
static const int sleep_delays_us[WP_SLEEP_DELAYS] =
{10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000};

/*
 * Every wal_sync_method name PostgreSQL knows, in the server's order; the
 * ones this build lacks are reported, not probed.
 */
typedef struct WpMethodDef
{
	const char *name;
	int			method;			/* WP_SYNC_METHOD_* */
	bool		available;
} WpMethodDef;

static const WpMethodDef method_defs[WP_PROBE_METHODS] = {
	{"fsync", WP_SYNC_METHOD_FSYNC, true},
#ifdef HAVE_FSYNC_WRITETHROUGH
	{"fsync_writethrough", WP_SYNC_METHOD_FSYNC_WRITETHROUGH, true},
#else
	{"fsync_writethrough", WP_SYNC_METHOD_FSYNC_WRITETHROUGH, false},
#endif
#ifdef WP_HAVE_FDATASYNC
	{"fdatasync", WP_SYNC_METHOD_FDATASYNC, true},
#else
	{"fdatasync", WP_SYNC_METHOD_FDATASYNC, false},
#endif
#ifdef WP_HAVE_OPEN_SYNC
	{"open_sync", WP_SYNC_METHOD_OPEN, true},
#else
	{"open_sync", WP_SYNC_METHOD_OPEN, false},
#endif
#ifdef WP_HAVE_OPEN_DSYNC
	{"open_datasync", WP_SYNC_METHOD_OPEN_DSYNC, true},
#else
	{"open_datasync", WP_SYNC_METHOD_OPEN_DSYNC, false},
#endif
};

/* One result row: a method at 1 or 2 writes per sync. */
typedef struct WpProbeRow
{
	char		method[24];
	int32		writes;			/* 0: method not measured */
	bool		measured;
	int64		ops;
	double		mean_us;
	double		p50_us;
	double		p99_us;
	double		ops_per_sec;
	char		note[WP_NOTE_LEN];
} WpProbeRow;

/* Requested vs actual pg_usleep for one delay. */
typedef struct WpSleepRow
{
	int32		requested_us;
	int32		samples;
	double		mean_over_us;
	double		p50_over_us;
	double		p99_over_us;
} WpSleepRow;

typedef struct WpStorageShared
{
	pg_atomic_uint32 probe_owner;	/* pid running a probe, 0 = none */

	/* protected by wp_shared->lock */
	char		wal_dir[MAXPGPATH];
	TimestampTz probe_at;		/* last walpilot.probe(), 0 = never */
	int			probe_nrows;
	WpProbeRow	probe_rows[WP_PROBE_ROWS];

	TimestampTz periodic_at;	/* last periodic probe, 0 = never */
	WpProbeRow	periodic_row;

	TimestampTz sleep_at;		/* last sleep probe, 0 = never */
	WpSleepRow	sleep_rows[WP_SLEEP_DELAYS];

	TimestampTz estimate_at;	/* last flush estimate, 0 = none */
	double		estimate_us;
	uint64		estimate_flushes;
	char		estimate_source[32];
	char		estimate_note[WP_NOTE_LEN];
} WpStorageShared;

static WpStorageShared *wp_storage = NULL;

/*---- per-process probe state for cleanup ----*/
static char probe_path[MAXPGPATH] = "";
static int	probe_fd = -1;
static int	probe_file_size = 0;	/* bytes of the current probe file */
static bool probe_owned = false;
static bool probe_exit_registered = false;

/*---- worker-local state ----*/
static int	sleep_next = -1;	/* next sleep sample, -1 = not started */
static double *sleep_samples = NULL;
static TimestampTz next_estimate_at = 0;
static TimestampTz next_periodic_at = 0;
static bool have_prev_wal = false;
static WpWalCounters prev_wal;
static TimestampTz window_start = 0;
static uint64 window_walsync_samples = 0;
static uint64 window_sample_us = 0;

/*
 * wp_probe_shmem_size / wp_probe_shmem_init
 *		Size and create the "walpilot storage" region.  The init runs in the
 *		shmem startup hook under AddinShmemInitLock.
 */
Size
wp_probe_shmem_size(void)
{
	return MAXALIGN(sizeof(WpStorageShared));
}

void
wp_probe_shmem_init(void)
{
	bool		found;

	wp_storage = ShmemInitStruct("walpilot storage", sizeof(WpStorageShared),
								 &found);
	if (!found)
	{
		memset(wp_storage, 0, sizeof(WpStorageShared));
		pg_atomic_init_u32(&wp_storage->probe_owner, 0);
	}
}

/*---- small helpers ----*/

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/*
 * quantile_sorted
 *		Nearest-rank quantile q (0..1) of n sorted values.
 */
static double
quantile_sorted(const double *v, int n, double q)
{
	int			k;

	if (n <= 0)
		return 0;
	k = (int) ceil(q * n) - 1;
	if (k < 0)
		k = 0;
	if (k >= n)
		k = n - 1;
	return v[k];
}

static const WpMethodDef *
find_method(const char *name)
{
	int			i;

	for (i = 0; i < WP_PROBE_METHODS; i++)
	{
		if (strcmp(method_defs[i].name, name) == 0)
			return &method_defs[i];
	}
	return NULL;
}

static const char *
method_name(int method)
{
	int			i;

	for (i = 0; i < WP_PROBE_METHODS; i++)
	{
		if (method_defs[i].method == method)
			return method_defs[i].name;
	}
	return "unknown";
}

/*
 * sync_bit_for
 *		The open flags get_sync_bit() (xlog.c, static) gives a method: O_SYNC
 *		or O_DSYNC for the open_* methods, plus PG_O_DIRECT when WAL is not
 *		needed beyond crash recovery (wal_level = minimal).  Callers have
 *		checked that fsync is on (get_sync_bit returns 0 otherwise).
 */
static int
sync_bit_for(int method, bool *direct)
{
	int			flags = wp_wal_sync_bit(method);

	*direct = (flags & PG_O_DIRECT) != 0;
	return flags;
}

/*
 * sync_after_write
 *		The sync call issue_xlog_fsync() makes for a method, without its
 *		PANIC: returns 0 or -1 with errno set.
 */
static int
sync_after_write(int method, int fd)
{
	switch (method)
	{
		case WP_SYNC_METHOD_FSYNC:
			return pg_fsync_no_writethrough(fd);
#ifdef HAVE_FSYNC_WRITETHROUGH
		case WP_SYNC_METHOD_FSYNC_WRITETHROUGH:
			return pg_fsync_writethrough(fd);
#endif
#ifdef WP_HAVE_FDATASYNC
		case WP_SYNC_METHOD_FDATASYNC:
			return pg_fdatasync(fd);
#endif
		default:
			/* open_sync, open_datasync: the write was synchronous */
			return 0;
	}
}

/*
 * resolve_wal_dir
 *		The directory pg_wal really is, symlinks followed (cwd is the data
 *		directory).  Falls back to DataDir/pg_wal if realpath fails.
 */
static void
resolve_wal_dir(char *out)
{
	char		buf[PATH_MAX];

	if (realpath(XLOGDIR, buf) != NULL)
		strlcpy(out, buf, MAXPGPATH);
	else
		snprintf(out, MAXPGPATH, "%s/%s", DataDir, XLOGDIR);
}

/*
 * probe_release
 *		Close and remove the probe file and give up probe ownership.  Never
 *		raises an error: it runs in PG_FINALLY and at process exit.
 */
static void
probe_release(void)
{
	if (probe_fd >= 0)
	{
		close(probe_fd);
		probe_fd = -1;
	}
	if (probe_path[0] != '\0')
	{
		(void) unlink(probe_path);
		probe_path[0] = '\0';
	}
	if (probe_owned && wp_storage != NULL)
	{
		pgstat_report_wait_end();
		pg_atomic_write_u32(&wp_storage->probe_owner, 0);
		probe_owned = false;
	}
}

/*
 * probe_exit_cleanup
 *		before_shmem_exit callback: a FATAL (pg_terminate_backend, server
 *		shutdown) in the middle of a probe skips PG_FINALLY; remove the file
 *		here.
 */
static void
probe_exit_cleanup(int code, Datum arg)
{
	probe_release();
}

/*
 * probe_acquire
 *		Become the one process that probes and choose the file name.
 *		Errors if another probe runs.
 */
static void
probe_acquire(const char *wal_dir)
{
	uint32		expected = 0;

	if (!probe_exit_registered)
	{
		before_shmem_exit(probe_exit_cleanup, (Datum) 0);
		probe_exit_registered = true;
	}
	if (!pg_atomic_compare_exchange_u32(&wp_storage->probe_owner, &expected,
										(uint32) MyProcPid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("another walpilot probe is running"),
				 errdetail("Process %u is probing the WAL directory.",
						   expected)));
	probe_owned = true;
	/* the sampler sees the probe as Extension, not as WAL I/O */
	pgstat_report_wait_start(PG_WAIT_EXTENSION);
	snprintf(probe_path, MAXPGPATH, "%s/%s.%d",
			 wal_dir, WP_PROBE_FILE_PREFIX, MyProcPid);
}

/*
 * probe_write_error
 *		Report a failed or short write on the probe file.
 */
static void
probe_write_error(const char *path, ssize_t written, size_t wanted)
{
	if (written >= 0)
		errno = ENOSPC;			/* short write: assume the disk is full */
	ereport(ERROR,
			(errcode_for_file_access(),
			 errmsg("could not write walpilot probe file \"%s\": %m", path),
			 errhint("The probe needs %d kB of free space in the WAL directory.",
					 probe_file_size / 1024)));
}

/*
 * check_free_space
 *		Refuse to create a probe file of size bytes unless the WAL file
 *		system keeps at least WP_PROBE_FREE_SEGMENTS segments free beyond
 *		it.  f_bavail (blocks available to unprivileged users) is what the
 *		server, which never runs as root, can use.
 */
static void
check_free_space(const char *wal_dir, int size)
{
	struct statvfs fs;
	uint64		avail;
	uint64		needed;

	if (statvfs(wal_dir, &fs) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not determine free space in the WAL directory \"%s\": %m",
						wal_dir),
				 errhint("The walpilot probe runs only where it can check that it leaves room for WAL.")));
	avail = (uint64) fs.f_bavail * (fs.f_frsize ? fs.f_frsize : fs.f_bsize);
	needed = (uint64) size + (uint64) WP_PROBE_FREE_SEGMENTS * wal_segment_size;
	if (avail < needed)
		ereport(ERROR,
				(errcode(ERRCODE_DISK_FULL),
				 errmsg("not enough free space in the WAL directory \"%s\" for a walpilot probe",
						wal_dir),
				 errdetail("%llu kB are free; the probe needs %llu kB: its %d kB file and %d WAL segments left free for the server.",
						   (unsigned long long) (avail / 1024),
						   (unsigned long long) (needed / 1024),
						   size / 1024, WP_PROBE_FREE_SEGMENTS),
				 errhint("Free space in the WAL file system; the server stops with a PANIC when it cannot write WAL.")));
}

/*
 * create_probe_file
 *		Check the free space, then create the probe file, zero-fill it to
 *		size bytes and fsync it, as XLogFileInitInternal prepares a new
 *		segment.  Leaves it closed.
 */
static void
create_probe_file(const char *wal_dir, int size)
{
	char	   *zeros;
	int			off;

	check_free_space(wal_dir, size);
	probe_file_size = size;
	zeros = palloc0(XLOG_BLCKSZ * 8);

	probe_fd = BasicOpenFilePerm(probe_path,
								 O_RDWR | O_CREAT | O_TRUNC | PG_BINARY,
								 pg_file_create_mode);
	if (probe_fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create walpilot probe file \"%s\": %m",
						probe_path)));

	for (off = 0; off < size; off += XLOG_BLCKSZ * 8)
	{
		size_t		len = Min(XLOG_BLCKSZ * 8, size - off);
		ssize_t		rc;

		CHECK_FOR_INTERRUPTS();
		errno = 0;
		rc = pg_pwrite(probe_fd, zeros, len, off);
		if (rc != (ssize_t) len)
			probe_write_error(probe_path, rc, len);
	}
	if (pg_fsync(probe_fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not fsync walpilot probe file \"%s\": %m",
						probe_path)));
	close(probe_fd);
	probe_fd = -1;
	pfree(zeros);
}

/*
 * measure_method
 *		Time write(s)+sync for one method at "writes" XLOG_BLCKSZ writes per
 *		sync, for up to max_ms milliseconds and max_ops operations, on the
 *		prepared file of file_size bytes.  Fills row; returns false (with a
 *		note) when the server itself could not open WAL this way.
 */
static bool
measure_method(const WpMethodDef *def, int writes, double max_ms,
			   int max_ops, int file_size, WpProbeRow *row)
{
	bool		direct;
	int			flags = sync_bit_for(def->method, &direct);
	char	   *raw;
	char	   *buf;
	double	   *samples;
	int			n = 0;
	int			off = 0;
	int			i;
	instr_time	start,
				now;
	double		total_us = 0;
	double		elapsed_ms;

	memset(row, 0, sizeof(WpProbeRow));
	strlcpy(row->method, def->name, sizeof(row->method));
	row->writes = writes;

	probe_fd = BasicOpenFile(probe_path, O_RDWR | PG_BINARY | flags);
	if (probe_fd < 0)
	{
		if (direct && errno == EINVAL)
		{
			snprintf(row->note, WP_NOTE_LEN,
					 "not measured: the WAL file system does not support O_DIRECT");
			return false;
		}
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open walpilot probe file \"%s\": %m",
						probe_path)));
	}

	/* O_DIRECT needs an aligned buffer, like the server's WAL buffers. */
	raw = palloc(XLOG_BLCKSZ * (writes + 1));
	buf = (char *) TYPEALIGN(XLOG_BLCKSZ, raw);
	for (i = 0; i < XLOG_BLCKSZ * writes; i += sizeof(uint32))
	{
		uint32		r = pg_prng_uint32(&pg_global_prng_state);

		memcpy(buf + i, &r, sizeof(uint32));
	}
	samples = palloc(sizeof(double) * max_ops);

	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		instr_time	t0,
					t1;
		int			w;

		CHECK_FOR_INTERRUPTS();

		if (off + XLOG_BLCKSZ * writes > file_size)
			off = 0;
		INSTR_TIME_SET_CURRENT(t0);
		for (w = 0; w < writes; w++)
		{
			ssize_t		rc;

			errno = 0;
			rc = pg_pwrite(probe_fd, buf + w * XLOG_BLCKSZ, XLOG_BLCKSZ, off);
			if (rc != XLOG_BLCKSZ)
				probe_write_error(probe_path, rc, XLOG_BLCKSZ);
			off += XLOG_BLCKSZ;
		}
		if (sync_after_write(def->method, probe_fd) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not sync walpilot probe file \"%s\" with \"%s\": %m",
							probe_path, def->name)));
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		samples[n] = (double) INSTR_TIME_GET_MICROSEC(t1);
		total_us += samples[n];
		n++;

		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		elapsed_ms = INSTR_TIME_GET_MILLISEC(now);
		if (n >= max_ops || elapsed_ms >= max_ms)
			break;
	}

	close(probe_fd);
	probe_fd = -1;

	qsort(samples, n, sizeof(double), cmp_double);
	row->measured = true;
	row->ops = n;
	row->mean_us = total_us / n;
	row->p50_us = quantile_sorted(samples, n, 0.50);
	row->p99_us = quantile_sorted(samples, n, 0.99);
	row->ops_per_sec = elapsed_ms > 0 ? n / (elapsed_ms / 1000.0) : 0;
	snprintf(row->note, WP_NOTE_LEN, "%s%s",
			 flags == 0 ? "buffered writes, then the sync call" :
			 (flags & PG_O_DIRECT) == 0 ? "synchronous writes" :
			 "synchronous writes with O_DIRECT (wal_level = minimal)",
			 def->method == wp_wal_sync_method ? "; configured wal_sync_method" : "");
	pfree(samples);
	pfree(raw);
	return true;
}

/*
 * run_sleep_probe_now
 *		Time pg_usleep for every delay, samples_per_delay times, in this
 *		process, and publish the overshoot.
 */
static void
run_sleep_probe_now(int samples_per_delay)
{
	WpSleepRow	rows[WP_SLEEP_DELAYS];
	double	   *v = palloc(sizeof(double) * samples_per_delay);
	int			d,
				s;

	for (d = 0; d < WP_SLEEP_DELAYS; d++)
	{
		double		sum = 0;

		for (s = 0; s < samples_per_delay; s++)
		{
			instr_time	t0,
						t1;

			CHECK_FOR_INTERRUPTS();
			INSTR_TIME_SET_CURRENT(t0);
			pg_usleep(sleep_delays_us[d]);
			INSTR_TIME_SET_CURRENT(t1);
			INSTR_TIME_SUBTRACT(t1, t0);
			v[s] = (double) INSTR_TIME_GET_MICROSEC(t1) - sleep_delays_us[d];
			sum += v[s];
		}
		qsort(v, samples_per_delay, sizeof(double), cmp_double);
		rows[d].requested_us = sleep_delays_us[d];
		rows[d].samples = samples_per_delay;
		rows[d].mean_over_us = sum / samples_per_delay;
		rows[d].p50_over_us = quantile_sorted(v, samples_per_delay, 0.50);
		rows[d].p99_over_us = quantile_sorted(v, samples_per_delay, 0.99);
	}
	pfree(v);

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	memcpy(wp_storage->sleep_rows, rows, sizeof(rows));
	wp_storage->sleep_at = GetCurrentTimestamp();
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_probe_sleep_overshoot_us
 *		For the pilot: the measured p50 and p99 overshoot of a sleep of about
 *		requested_us (the nearest probed delay).  false when never measured.
 */
bool
wp_probe_sleep_overshoot_us(int requested_us, double *p50_us, double *p99_us)
{
	int			best = -1;
	int			d;
	bool		ok;

	for (d = 0; d < WP_SLEEP_DELAYS; d++)
	{
		if (best < 0 ||
			abs(sleep_delays_us[d] - requested_us) <
			abs(sleep_delays_us[best] - requested_us))
			best = d;
	}
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	ok = wp_storage->sleep_at != 0;
	*p50_us = wp_storage->sleep_rows[best].p50_over_us;
	*p99_us = wp_storage->sleep_rows[best].p99_over_us;
	LWLockRelease(wp_shared->lock);
	return ok;
}

/*
 * wp_probe_flush_estimate_us
 *		For the pilot: the current estimate of one WAL flush (µs) and its
 *		source.  false when there is none yet.
 */
bool
wp_probe_flush_estimate_us(double *us, char *source, int source_len)
{
	bool		ok;

	LWLockAcquire(wp_shared->lock, LW_SHARED);
	ok = wp_storage->estimate_at != 0;
	*us = wp_storage->estimate_us;
	strlcpy(source, wp_storage->estimate_source, source_len);
	LWLockRelease(wp_shared->lock);
	return ok;
}

/*---- walpilot.probe() ----*/

PG_FUNCTION_INFO_V1(walpilot_probe);

#define WP_PROBE_COLS 8

/*
 * walpilot_probe
 *		walpilot.probe(seconds float8, methods text[]): measure each
 *		requested wal_sync_method at 1 and 2 writes per sync in the real WAL
 *		directory, then the sleep overshoot; return one row per method and
 *		write count and keep the result for walpilot.storage.
 *
 * Superuser-only through the SQL grants.  Takes no lock during I/O.
 */
Datum
walpilot_probe(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	double		seconds = PG_ARGISNULL(0) ? 2.0 : PG_GETARG_FLOAT8(0);
	bool		selected[WP_PROBE_METHODS];
	int			nselected = 0;
	WpProbeRow	rows[WP_PROBE_ROWS];
	int			nrows = 0;
	char		wal_dir[MAXPGPATH];
	int			i;

	wp_require_shared_state();

	if (isnan(seconds) || seconds <= 0 || seconds > 600)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("probe duration must be between 0 and 600 seconds"),
				 errdetail("The requested duration was %g seconds.", seconds)));

	memset(selected, 0, sizeof(selected));
	if (PG_ARGISNULL(1))
	{
		for (i = 0; i < WP_PROBE_METHODS; i++)
			selected[i] = true;
		nselected = WP_PROBE_METHODS;
	}
	else
	{
		ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
		Datum	   *elems;
		bool	   *enulls;
		int			nelems;

		deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT,
						  &elems, &enulls, &nelems);
		for (i = 0; i < nelems; i++)
		{
			char	   *name;
			const WpMethodDef *def;

			if (enulls[i])
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("probe method names must not be null")));
			name = TextDatumGetCString(elems[i]);
			def = find_method(name);
			if (def == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("unrecognized wal_sync_method \"%s\"", name),
						 errhint("Valid methods are fsync, fsync_writethrough, fdatasync, open_sync and open_datasync.")));
			if (!selected[def - method_defs])
				nselected++;
			selected[def - method_defs] = true;
		}
		if (nselected == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("no wal_sync_method to probe"),
					 errhint("Pass NULL to probe every method.")));
	}

	resolve_wal_dir(wal_dir);
	memset(rows, 0, sizeof(rows));

	if (!enableFsync)
	{
		for (i = 0; i < WP_PROBE_METHODS; i++)
		{
			WpProbeRow *r;

			if (!selected[i])
				continue;
			r = &rows[nrows++];
			strlcpy(r->method, method_defs[i].name, sizeof(r->method));
			snprintf(r->note, WP_NOTE_LEN,
					 "not measured: fsync is off, so the server never flushes WAL");
		}
	}
	else
	{
		int			nmeasurable = 0;
		double		per_ms;

		for (i = 0; i < WP_PROBE_METHODS; i++)
			if (selected[i] && method_defs[i].available)
				nmeasurable++;
		per_ms = nmeasurable > 0 ? seconds * 1000.0 / (nmeasurable * 2) : 0;

		if (nmeasurable > 0)
			probe_acquire(wal_dir);

		PG_TRY();
		{
			if (nmeasurable > 0)
				create_probe_file(wal_dir, wal_segment_size);

			for (i = 0; i < WP_PROBE_METHODS; i++)
			{
				int			w;

				if (!selected[i])
					continue;
				if (!method_defs[i].available)
				{
					WpProbeRow *r = &rows[nrows++];

					strlcpy(r->method, method_defs[i].name, sizeof(r->method));
					snprintf(r->note, WP_NOTE_LEN,
							 "not measured: this platform has no %s",
							 method_defs[i].name);
					continue;
				}
				for (w = 1; w <= 2; w++)
				{
					WpProbeRow *r = &rows[nrows++];

					if (!measure_method(&method_defs[i], w, per_ms,
										WP_PROBE_MAX_SAMPLES,
										wal_segment_size, r))
						r->writes = w;
				}
			}
		}
		PG_FINALLY();
		{
			probe_release();
		}
		PG_END_TRY();
	}

	/* Sleep overshoot as a backend (a flush leader) sees it. */
	run_sleep_probe_now(WP_SLEEP_SAMPLES);

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	strlcpy(wp_storage->wal_dir, wal_dir, MAXPGPATH);
	memcpy(wp_storage->probe_rows, rows, sizeof(rows));
	wp_storage->probe_nrows = nrows;
	wp_storage->probe_at = GetCurrentTimestamp();
	LWLockRelease(wp_shared->lock);

	/* Form the result rows; no lock is held. */
	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < nrows; i++)
	{
		Datum		values[WP_PROBE_COLS];
		bool		nulls[WP_PROBE_COLS];
		WpProbeRow *r = &rows[i];

		memset(nulls, 0, sizeof(nulls));
		values[0] = CStringGetTextDatum(r->method);
		if (r->writes > 0)
			values[1] = Int32GetDatum(r->writes);
		else
			nulls[1] = true;
		if (r->measured)
		{
			values[2] = Float8GetDatum(r->mean_us);
			values[3] = Float8GetDatum(r->p50_us);
			values[4] = Float8GetDatum(r->p99_us);
			values[5] = Float8GetDatum(r->ops_per_sec);
		}
		else
			nulls[2] = nulls[3] = nulls[4] = nulls[5] = true;
		values[6] = CStringGetTextDatum(wal_dir);
		if (r->note[0] != '\0')
			values[7] = CStringGetTextDatum(r->note);
		else
			nulls[7] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*---- the worker's part ----*/

/*
 * periodic_probe
 *		walpilot.probe_interval: a short, low-duty probe of the configured
 *		wal_sync_method only (WP_PERIODIC_OPS single-page flushes, at most
 *		WP_PERIODIC_MAX_MS, on a file of WP_PERIODIC_OPS pages).  Runs in the worker; errors are
 *		logged and recorded, never fatal to the worker.
 */
static void
periodic_probe(void)
{
	const WpMethodDef *def = find_method(method_name(wp_wal_sync_method));
	WpProbeRow	row;
	char		wal_dir[MAXPGPATH];
	MemoryContext ctx = CurrentMemoryContext;

	if (def == NULL || !def->available || !enableFsync)
		return;
	if (pg_atomic_read_u32(&wp_storage->probe_owner) != 0)
		return;					/* a manual probe runs: skip this round */

	resolve_wal_dir(wal_dir);
	memset(&row, 0, sizeof(row));
	PG_TRY();
	{
		probe_acquire(wal_dir);
		create_probe_file(wal_dir, WP_PERIODIC_FILE_SIZE);
		if (measure_method(def, 1, WP_PERIODIC_MAX_MS, WP_PERIODIC_OPS,
						   WP_PERIODIC_FILE_SIZE, &row))
			strlcat(row.note, "; periodic probe", WP_NOTE_LEN);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(ctx);
		probe_release();
		edata = CopyErrorData();
		FlushErrorState();
		ereport(LOG,
				(errmsg("walpilot periodic probe failed: %s", edata->message)));
		memset(&row, 0, sizeof(row));
		strlcpy(row.method, def->name, sizeof(row.method));
		row.writes = 1;
		snprintf(row.note, WP_NOTE_LEN, "periodic probe failed: %s",
				 edata->message);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	probe_release();

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	strlcpy(wp_storage->wal_dir, wal_dir, MAXPGPATH);
	wp_storage->periodic_row = row;
	wp_storage->periodic_at = GetCurrentTimestamp();
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_probe_confirm_flush_us
 *		For the pilot, before it starts trials: probe the configured
 *		wal_sync_method now, as the periodic probe does (at most
 *		WP_PERIODIC_OPS flushes, WP_PERIODIC_MAX_MS), and return its p50.
 *		Passive estimates come from wait-event samples and commit timing,
 *		which a saturated CPU inflates; this one times the device itself.
 *		false when nothing could be measured (fsync off, an error, a manual
 *		probe running).  Worker only.
 */
bool
wp_probe_confirm_flush_us(double *p50_us)
{
	WpProbeRow	row;
	TimestampTz before,
				after;

	*p50_us = 0;
	if (wp_storage == NULL || !enableFsync)
		return false;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	before = wp_storage->periodic_at;
	LWLockRelease(wp_shared->lock);
	periodic_probe();
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	row = wp_storage->periodic_row;
	after = wp_storage->periodic_at;
	LWLockRelease(wp_shared->lock);
	/* skipped (a manual probe runs): an older row confirms nothing */
	if (after == before || !row.measured || row.ops == 0)
		return false;
	*p50_us = row.p50_us;
	return true;
}

/*
 * sleep_probe_step
 *		One sample of the worker's spread-out sleep probe per tick; publishes
 *		the rows once every delay has WP_SLEEP_SAMPLES samples.
 */
static void
sleep_probe_step(void)
{
	int			d,
				s;
	instr_time	t0,
				t1;

	if (sleep_next < 0 || sleep_next >= WP_SLEEP_DELAYS * WP_SLEEP_SAMPLES)
		return;
	if (sleep_samples == NULL)
		sleep_samples = MemoryContextAlloc(TopMemoryContext,
										   sizeof(double) * WP_SLEEP_DELAYS * WP_SLEEP_SAMPLES);
	d = sleep_next / WP_SLEEP_SAMPLES;
	INSTR_TIME_SET_CURRENT(t0);
	pg_usleep(sleep_delays_us[d]);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	sleep_samples[sleep_next] =
		(double) INSTR_TIME_GET_MICROSEC(t1) - sleep_delays_us[d];
	sleep_next++;

	if (sleep_next == WP_SLEEP_DELAYS * WP_SLEEP_SAMPLES)
	{
		WpSleepRow	rows[WP_SLEEP_DELAYS];

		for (d = 0; d < WP_SLEEP_DELAYS; d++)
		{
			double	   *v = sleep_samples + d * WP_SLEEP_SAMPLES;
			double		sum = 0;

			for (s = 0; s < WP_SLEEP_SAMPLES; s++)
				sum += v[s];
			qsort(v, WP_SLEEP_SAMPLES, sizeof(double), cmp_double);
			rows[d].requested_us = sleep_delays_us[d];
			rows[d].samples = WP_SLEEP_SAMPLES;
			rows[d].mean_over_us = sum / WP_SLEEP_SAMPLES;
			rows[d].p50_over_us = quantile_sorted(v, WP_SLEEP_SAMPLES, 0.50);
			rows[d].p99_over_us = quantile_sorted(v, WP_SLEEP_SAMPLES, 0.99);
		}
		LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
		/* a probe() run in a backend in the meantime is as good */
		if (wp_storage->sleep_at == 0)
		{
			memcpy(wp_storage->sleep_rows, rows, sizeof(rows));
			wp_storage->sleep_at = GetCurrentTimestamp();
		}
		LWLockRelease(wp_shared->lock);
	}
}

/*
 * count_wal_sync_waiters
 *		How many processes are in IO:WALSync right now (IO:WALWrite too for
 *		the open_* methods, whose writes are the sync).  A lock-free scan
 *		of the PGPROC array, like the wait-event sampler's.
 */
static int
count_wal_sync_waiters(void)
{
	int			n = 0;
	int			i;
	bool		open_method = wp_wal_sync_is_open();

	for (i = 0; i < (int) ProcGlobal->allProcCount; i++)
	{
		uint32		w = WP_READ_ONCE_U32(ProcGlobal->allProcs[i].wait_event_info);

		if (w == WAIT_EVENT_WAL_SYNC ||
			(open_method && w == WAIT_EVENT_WAL_WRITE))
			n++;
	}
	return n;
}

/*
 * publish_estimate
 *		Store a new flush-latency estimate.
 */
static void
publish_estimate(double us, uint64 flushes, const char *source,
				 const char *note, TimestampTz now)
{
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	wp_storage->estimate_us = us;
	wp_storage->estimate_flushes = flushes;
	strlcpy(wp_storage->estimate_source, source,
			sizeof(wp_storage->estimate_source));
	strlcpy(wp_storage->estimate_note, note, WP_NOTE_LEN);
	wp_storage->estimate_at = now;
	LWLockRelease(wp_shared->lock);
}

/*
 * update_estimate
 *		Once a second: refresh the flush-latency estimate from the best
 *		passive source that has enough flushes in the current window.
 */
static void
update_estimate(TimestampTz now)
{
	WpWalCounters cur;
	bool		open_method = wp_wal_sync_is_open();
	int64		dflush;
	char		note[WP_NOTE_LEN];

	wp_wal_counters(&cur);
	pgstat_clear_snapshot();

	if (!have_prev_wal || cur.syncs < prev_wal.syncs ||
		cur.writes < prev_wal.writes)
	{
		/* first look, or pg_stat_wal was reset: start a window */
		prev_wal = cur;
		have_prev_wal = true;
		window_start = now;
		window_walsync_samples = 0;
		window_sample_us = 0;
		return;
	}
	if (!TimestampDifferenceExceeds(window_start, now, WP_ESTIMATE_WINDOW_MS))
		return;

	dflush = open_method ? cur.writes - prev_wal.writes :
		cur.syncs - prev_wal.syncs;
	if (dflush >= WP_ESTIMATE_MIN_FLUSHES)
	{
		double		dtime = open_method ?
			(double) (cur.write_time_us - prev_wal.write_time_us) :
			(double) (cur.sync_time_us - prev_wal.sync_time_us);

		if (track_wal_io_timing && dtime > 0)
		{
			/* 1. pg_stat_wal's own timing (µs in the struct) */
			snprintf(note, WP_NOTE_LEN,
					 "mean %s time per %s over %ld s (track_wal_io_timing)",
					 open_method ? "write" : "sync",
					 open_method ? "write" : "sync",
					 (long) ((now - window_start) / USECS_PER_SEC));
			publish_estimate(dtime / dflush, (uint64) dflush, WP_WAL_IO_VIEW,
							 note, now);
		}
		else if (window_walsync_samples > 0)
		{
			/* 2. sampled time in IO:WALSync per flush */
			snprintf(note, WP_NOTE_LEN,
					 "%llu samples in IO:%s per %lld flushes over %ld s",
					 (unsigned long long) window_walsync_samples,
					 pgstat_get_wait_event(open_method ? WAIT_EVENT_WAL_WRITE :
										   WAIT_EVENT_WAL_SYNC),
					 (long long) dflush,
					 (long) ((now - window_start) / USECS_PER_SEC));
			publish_estimate((double) window_sample_us / dflush,
							 (uint64) dflush, "wait_sampling", note, now);
		}
	}

	prev_wal = cur;
	window_start = now;
	window_walsync_samples = 0;
	window_sample_us = 0;
}

/*
 * estimate_from_probe
 *		Without a passive estimate, use the newest probe of the configured
 *		method at one write per sync.
 */
static void
estimate_from_probe(TimestampTz now)
{
	const char *cfg = method_name(wp_wal_sync_method);
	double		us = 0;
	TimestampTz at = 0;
	bool		have_passive;
	int			i;

	LWLockAcquire(wp_shared->lock, LW_SHARED);
	have_passive = wp_storage->estimate_at != 0 &&
		strcmp(wp_storage->estimate_source, "probe") != 0;
	if (!have_passive)
	{
		for (i = 0; i < wp_storage->probe_nrows; i++)
		{
			WpProbeRow *r = &wp_storage->probe_rows[i];

			if (r->measured && r->writes == 1 && strcmp(r->method, cfg) == 0)
			{
				us = r->p50_us;
				at = wp_storage->probe_at;
			}
		}
		if (wp_storage->periodic_row.measured &&
			wp_storage->periodic_at > at &&
			strcmp(wp_storage->periodic_row.method, cfg) == 0)
		{
			us = wp_storage->periodic_row.p50_us;
			at = wp_storage->periodic_at;
		}
		if (at != 0 && at == wp_storage->estimate_at)
			at = 0;				/* already published */
	}
	LWLockRelease(wp_shared->lock);

	if (!have_passive && at != 0)
		publish_estimate(us, 0, "probe",
						 "p50 of the last probe of the configured wal_sync_method",
						 at);
}

/*
 * wp_probe_worker_start
 *		Remove the probe files of processes that died without removing
 *		theirs (SIGKILL, the OOM killer, a crash: their callbacks never
 *		ran).  Runs once when the worker starts, which it does after every
 *		crash restart.
 *
 * A file walpilot_probe.<pid> belongs to a live probe only while <pid> is
 * probe_owner: a probe takes ownership before it creates its file and
 * removes the file before it gives ownership up.  A file is removed when
 * its pid is not the owner and no process of that pid exists; a live
 * process that is not the owner keeps its file until the next sweep, as
 * its pid might just be becoming the owner.  Errors are logged, never
 * raised: a worker that fails here would restart in a loop.
 */
void
wp_probe_worker_start(void)
{
	DIR		   *dir;
	struct dirent *de;
	size_t		plen = strlen(WP_PROBE_FILE_PREFIX);

	if (wp_storage == NULL)
		return;
	dir = AllocateDir(XLOGDIR);
	while ((de = ReadDirExtended(dir, XLOGDIR, LOG)) != NULL)
	{
		char	   *end;
		long		pid;
		char		path[MAXPGPATH];

		if (strncmp(de->d_name, WP_PROBE_FILE_PREFIX, plen) != 0 ||
			de->d_name[plen] != '.')
			continue;
		errno = 0;
		pid = strtol(de->d_name + plen + 1, &end, 10);
		if (errno != 0 || *end != '\0' || pid <= 0 || pid > INT_MAX)
			continue;
		if ((uint32) pid == pg_atomic_read_u32(&wp_storage->probe_owner))
			continue;
		if (kill((pid_t) pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", XLOGDIR, de->d_name);
		if (unlink(path) == 0)
			ereport(LOG,
					(errmsg("removed stale walpilot probe file \"%s\"", path),
					 errdetail("Process %ld, which created it, no longer exists.",
							   pid)));
		else if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not remove stale walpilot probe file \"%s\": %m",
							path)));
	}
	FreeDir(dir);
}

/*
 * wp_probe_worker_tick
 *		Called by the worker on every tick: one sleep-probe sample while that
 *		runs, the IO:WALSync count, and once a second the flush estimate and
 *		the periodic probe when it is due.
 */
void
wp_probe_worker_tick(TimestampTz now)
{
	int			waiters;

	if (wp_storage == NULL)
		return;
	if (wp_mode == WP_MODE_OFF)
	{
		/* no probing; start a fresh estimate window when back on */
		have_prev_wal = false;
		next_periodic_at = 0;
		return;
	}

	if (sleep_next < 0)
		sleep_next = 0;
	sleep_probe_step();

	waiters = count_wal_sync_waiters();
	window_walsync_samples += waiters;
	window_sample_us += (uint64) waiters * wp_sample_interval_ms * 1000;

	if (now < next_estimate_at)
		return;
	next_estimate_at = now + USECS_PER_SEC;

	update_estimate(now);
	estimate_from_probe(now);

	if (wp_probe_interval_s > 0)
	{
		if (next_periodic_at == 0)
			next_periodic_at = now + (TimestampTz) wp_probe_interval_s * USECS_PER_SEC;
		else if (now >= next_periodic_at && !wp_pilot_trial_running())
		{
			/* never during a pilot's trial: it would stall and load a window */
			periodic_probe();
			next_periodic_at = now + (TimestampTz) wp_probe_interval_s * USECS_PER_SEC;
		}
	}
	else
		next_periodic_at = 0;
}

/*---- walpilot.storage ----*/

PG_FUNCTION_INFO_V1(walpilot_storage_data);

#define WP_STORAGE_COLS 12

static void
put_storage_row(ReturnSetInfo *rsinfo, const char *kind, const char *method,
				int writes, int requested_us, int64 samples,
				bool have_values, double mean, double p50, double p99,
				double ops_per_sec, TimestampTz at, const char *wal_dir,
				const char *note)
{
	Datum		values[WP_STORAGE_COLS];
	bool		nulls[WP_STORAGE_COLS];

	memset(nulls, 0, sizeof(nulls));
	values[0] = CStringGetTextDatum(kind);
	if (method && method[0])
		values[1] = CStringGetTextDatum(method);
	else
		nulls[1] = true;
	if (writes > 0)
		values[2] = Int32GetDatum(writes);
	else
		nulls[2] = true;
	if (requested_us > 0)
		values[3] = Int32GetDatum(requested_us);
	else
		nulls[3] = true;
	if (samples > 0)
		values[4] = Int64GetDatum(samples);
	else
		nulls[4] = true;
	if (have_values)
	{
		values[5] = Float8GetDatum(mean);
		values[6] = Float8GetDatum(p50);
		values[7] = Float8GetDatum(p99);
	}
	else
		nulls[5] = nulls[6] = nulls[7] = true;
	if (have_values && ops_per_sec > 0)
		values[8] = Float8GetDatum(ops_per_sec);
	else
		nulls[8] = true;
	if (at != 0)
		values[9] = TimestampTzGetDatum(at);
	else
		nulls[9] = true;
	if (wal_dir && wal_dir[0])
		values[10] = CStringGetTextDatum(wal_dir);
	else
		nulls[10] = true;
	if (note && note[0])
		values[11] = CStringGetTextDatum(note);
	else
		nulls[11] = true;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * walpilot_storage_data
 *		The rows of walpilot.storage: the flush-latency estimate, the last
 *		probe (and periodic probe) rows, and the sleep overshoot per delay.
 *		Copies the region under the lock, then forms rows.
 */
Datum
walpilot_storage_data(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WpStorageShared *copy;
	char		wal_dir[MAXPGPATH];
	char		note[WP_NOTE_LEN * 2];
	int			i;

	wp_require_shared_state();
	InitMaterializedSRF(fcinfo, 0);

	copy = palloc(sizeof(WpStorageShared));
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	memcpy(copy, wp_storage, sizeof(WpStorageShared));
	LWLockRelease(wp_shared->lock);

	if (copy->wal_dir[0] != '\0')
		strlcpy(wal_dir, copy->wal_dir, MAXPGPATH);
	else
		resolve_wal_dir(wal_dir);

	/* the current flush-latency estimate */
	if (copy->estimate_at != 0)
		put_storage_row(rsinfo, "flush_estimate", copy->estimate_source, 0, 0,
						(int64) copy->estimate_flushes, true,
						copy->estimate_us, copy->estimate_us,
						copy->estimate_us, 0, copy->estimate_at, wal_dir,
						copy->estimate_note);
	else
	{
		snprintf(note, sizeof(note), "%s",
				 !enableFsync ? "fsync is off: WAL is never flushed" :
				 "no estimate yet: no flushes seen and no probe run");
		put_storage_row(rsinfo, "flush_estimate", NULL, 0, 0, 0, false,
						0, 0, 0, 0, 0, wal_dir, note);
	}

	/* the last walpilot.probe() */
	for (i = 0; i < copy->probe_nrows; i++)
	{
		WpProbeRow *r = &copy->probe_rows[i];

		put_storage_row(rsinfo, "probe", r->method, r->writes, 0, r->ops,
						r->measured, r->mean_us, r->p50_us, r->p99_us,
						r->ops_per_sec, copy->probe_at, wal_dir, r->note);
	}

	/* the last periodic probe */
	if (copy->periodic_at != 0)
	{
		WpProbeRow *r = &copy->periodic_row;

		put_storage_row(rsinfo, "periodic_probe", r->method, r->writes, 0,
						r->ops, r->measured, r->mean_us, r->p50_us,
						r->p99_us, r->ops_per_sec, copy->periodic_at, wal_dir,
						r->note);
	}

	/* sleep overshoot */
	if (copy->sleep_at != 0)
	{
		for (i = 0; i < WP_SLEEP_DELAYS; i++)
		{
			WpSleepRow *s = &copy->sleep_rows[i];

			put_storage_row(rsinfo, "sleep", "pg_usleep", 0, s->requested_us,
							s->samples, true, s->mean_over_us, s->p50_over_us,
							s->p99_over_us, 0, copy->sleep_at, NULL,
							"values are the overshoot beyond the requested sleep");
		}
	}
	pfree(copy);
	return (Datum) 0;
}
