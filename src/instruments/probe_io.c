/*-------------------------------------------------------------------------
 *
 * probe_io.c
 *		The storage probe: walpilot.probe(), the periodic probe and the
 *		pilot's confirming probe.
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
 * The sleep probe, which walpilot.probe() and the worker's tick also run,
 * is in probe_sleep.c; probe_internal.h is what the two files share.
 *
 * With walpilot.mode = off the worker neither probes nor estimates;
 * walpilot.probe() still works when called.
 *
 * Shared state: the region "walpilot storage".  probe_owner is atomic; the
 * rest is protected by wp_shared->lock, taken only to copy results in or
 * out, never across I/O.  walpilot.probe() and walpilot.storage form their
 * rows in views/probe_sql.c from wp_probe_run() and wp_probe_snapshot().
 *
 * IDENTIFICATION
 *	  src/instruments/probe_io.c
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

#include "probe_internal.h"

#define WP_PROBE_FILE_PREFIX	"walpilot_probe"
#define WP_PROBE_MAX_SAMPLES	100000
#define WP_PERIODIC_OPS			20
#define WP_PERIODIC_MAX_MS		250
#define WP_PERIODIC_FILE_SIZE	(WP_PERIODIC_OPS * XLOG_BLCKSZ)
#define WP_PROBE_FREE_SEGMENTS	8	/* WAL segments a probe leaves free */

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

WpStorageShared *wp_storage = NULL;

/*---- per-process probe state for cleanup ----*/
static char probe_path[MAXPGPATH] = "";
static int	probe_fd = -1;
static int	probe_file_size = 0;	/* bytes of the current probe file */
static bool probe_owned = false;
static bool probe_exit_registered = false;

/*---- worker-local state ----*/
static TimestampTz next_periodic_at = 0;
static TimestampTz next_second_at = 0;

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

const char *
wp_probe_method_name(int method)
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
void
wp_probe_resolve_wal_dir(char *out)
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
			snprintf(row->note, WP_PROBE_NOTE_LEN,
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
	snprintf(row->note, WP_PROBE_NOTE_LEN, "%s%s",
			 flags == 0 ? "buffered writes, then the sync call" :
			 (flags & PG_O_DIRECT) == 0 ? "synchronous writes" :
			 "synchronous writes with O_DIRECT (wal_level = minimal)",
			 def->method == wp_wal_sync_method ? "; configured wal_sync_method" : "");
	pfree(samples);
	pfree(raw);
	return true;
}

/*---- walpilot.probe() and walpilot.storage ----*/

/*
 * wp_probe_run
 *		walpilot.probe()'s measurement: each selected wal_sync_method (by
 *		index, see wp_probe_method_index) at 1 and 2 writes per sync in the
 *		real WAL directory, for about "seconds" in all, then the sleep
 *		overshoot.  Fills rows[WP_PROBE_ROWS] and wal_dir[MAXPGPATH], keeps
 *		the result for walpilot.storage, returns the number of rows.  Takes
 *		no lock during I/O; errors are ordinary ERRORs naming the path.
 */
int
wp_probe_run(double seconds, const bool *selected, WpProbeRow *rows,
			 char *wal_dir)
{
	int			nrows = 0;
	int			i;

	wp_probe_resolve_wal_dir(wal_dir);
	memset(rows, 0, sizeof(WpProbeRow) * WP_PROBE_ROWS);

	if (!enableFsync)
	{
		for (i = 0; i < WP_PROBE_METHODS; i++)
		{
			WpProbeRow *r;

			if (!selected[i])
				continue;
			r = &rows[nrows++];
			strlcpy(r->method, method_defs[i].name, sizeof(r->method));
			snprintf(r->note, WP_PROBE_NOTE_LEN,
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
					snprintf(r->note, WP_PROBE_NOTE_LEN,
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
	wp_probe_sleep_run(WP_SLEEP_SAMPLES);

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	strlcpy(wp_storage->res.wal_dir, wal_dir, MAXPGPATH);
	memcpy(wp_storage->res.probe_rows, rows, sizeof(WpProbeRow) * WP_PROBE_ROWS);
	wp_storage->res.probe_nrows = nrows;
	wp_storage->res.probe_at = GetCurrentTimestamp();
	LWLockRelease(wp_shared->lock);

	return nrows;
}

/*
 * wp_probe_method_index
 *		The index (0 .. WP_PROBE_METHODS - 1) of a wal_sync_method name, -1
 *		when PostgreSQL has no such method.
 */
int
wp_probe_method_index(const char *name)
{
	const WpMethodDef *def = find_method(name);

	return def == NULL ? -1 : (int) (def - method_defs);
}

/*
 * wp_probe_newest_p50
 *		The newest measured p50 of "method" at one write per sync, from
 *		walpilot.probe() or the periodic probe, and when it was taken.
 *		false when there is none.
 */
bool
wp_probe_newest_p50(const char *method, double *p50_us, TimestampTz *at)
{
	int			i;

	*p50_us = 0;
	*at = 0;
	if (wp_storage == NULL)
		return false;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	for (i = 0; i < wp_storage->res.probe_nrows; i++)
	{
		WpProbeRow *r = &wp_storage->res.probe_rows[i];

		if (r->measured && r->writes == 1 && strcmp(r->method, method) == 0)
		{
			*p50_us = r->p50_us;
			*at = wp_storage->res.probe_at;
		}
	}
	if (wp_storage->res.periodic_row.measured &&
		wp_storage->res.periodic_at > *at &&
		strcmp(wp_storage->res.periodic_row.method, method) == 0)
	{
		*p50_us = wp_storage->res.periodic_row.p50_us;
		*at = wp_storage->res.periodic_at;
	}
	LWLockRelease(wp_shared->lock);
	return *at != 0;
}

/*
 * wp_probe_snapshot
 *		Copy every probe result under the lock, for walpilot.storage.
 */
void
wp_probe_snapshot(WpProbeSnapshot *out)
{
	memset(out, 0, sizeof(WpProbeSnapshot));
	if (wp_storage == NULL)
		return;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	*out = wp_storage->res;
	LWLockRelease(wp_shared->lock);
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
	const WpMethodDef *def = find_method(wp_probe_method_name(wp_wal_sync_method));
	WpProbeRow	row;
	char		wal_dir[MAXPGPATH];
	MemoryContext ctx = CurrentMemoryContext;

	if (def == NULL || !def->available || !enableFsync)
		return;
	if (pg_atomic_read_u32(&wp_storage->probe_owner) != 0)
		return;					/* a manual probe runs: skip this round */

	wp_probe_resolve_wal_dir(wal_dir);
	memset(&row, 0, sizeof(row));
	PG_TRY();
	{
		probe_acquire(wal_dir);
		create_probe_file(wal_dir, WP_PERIODIC_FILE_SIZE);
		if (measure_method(def, 1, WP_PERIODIC_MAX_MS, WP_PERIODIC_OPS,
						   WP_PERIODIC_FILE_SIZE, &row))
			strlcat(row.note, "; periodic probe", WP_PROBE_NOTE_LEN);
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
		snprintf(row.note, WP_PROBE_NOTE_LEN, "periodic probe failed: %s",
				 edata->message);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	probe_release();

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	strlcpy(wp_storage->res.wal_dir, wal_dir, MAXPGPATH);
	wp_storage->res.periodic_row = row;
	wp_storage->res.periodic_at = GetCurrentTimestamp();
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
	before = wp_storage->res.periodic_at;
	LWLockRelease(wp_shared->lock);
	periodic_probe();
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	row = wp_storage->res.periodic_row;
	after = wp_storage->res.periodic_at;
	LWLockRelease(wp_shared->lock);
	/* skipped (a manual probe runs): an older row confirms nothing */
	if (after == before || !row.measured || row.ops == 0)
		return false;
	*p50_us = row.p50_us;
	return true;
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
 *		runs, and once a second the periodic probe when it is due, unless a
 *		pilot is in a trial (the hub says).
 */
void
wp_probe_worker_tick(TimestampTz now, bool pilot_in_trial)
{
	if (wp_storage == NULL)
		return;
	if (wp_mode == WP_MODE_OFF)
	{
		next_periodic_at = 0;
		return;
	}

	wp_probe_sleep_step();

	if (now < next_second_at)
		return;
	next_second_at = now + USECS_PER_SEC;

	if (wp_probe_interval_s > 0)
	{
		if (next_periodic_at == 0)
			next_periodic_at = now + (TimestampTz) wp_probe_interval_s * USECS_PER_SEC;
		else if (now >= next_periodic_at && !pilot_in_trial)
		{
			/* never during a pilot's trial: it would stall and load a window */
			periodic_probe();
			next_periodic_at = now + (TimestampTz) wp_probe_interval_s * USECS_PER_SEC;
		}
	}
	else
		next_periodic_at = 0;
}
