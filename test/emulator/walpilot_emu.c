/*
 * walpilot_emu.c — LD_PRELOAD storage emulator for PostgreSQL benchmarks.
 *
 * Gives every process that loads it (postmaster and all its children, or
 * pg_test_fsync) one shared emulated disk, chosen by WALPILOT_STORAGE:
 *
 *   WALPILOT_STORAGE=hdd | ssd | cloud | tbucket | real | off
 *   WALPILOT_STORAGE=hdd,bw_mbps=25            (profile + overrides)
 *   WALPILOT_STORAGE=flush_us=3000,jitter_us=500,bw_mbps=200
 *
 * Model (see README.md next to this file):
 *  - One device queue shared by all processes: a shared "busy_until" clock.
 *    Each device request reserves [max(now, busy_until), +cost) with a CAS;
 *    synchronous requests then sleep until the end of their slot, so they are
 *    served one at a time, in arrival order, without holding a lock.
 *  - Token bucket (iops=N, burst=B; profile tbucket): every device request
 *    first takes a token from a shared bucket of B tokens refilled at N per
 *    second; with none left it is served when the next one arrives.  The
 *    bucket is one shared clock moved by CAS, like busy_until.
 *  - Page cache: buffered writes to regular files dirty 4 kB pages, tracked
 *    in a shared table with page identity (a page rewritten while dirty costs
 *    nothing more; once written back, dirtying it costs again), and add the
 *    newly dirtied bytes to a shared per-inode table.  fsync/fdatasync costs flush_us (+ jitter) plus
 *    dirty/bandwidth.  Writes through O_DSYNC/O_SYNC fds cost flush_us + len/bw
 *    each.  sync_file_range(SYNC_FILE_RANGE_WRITE) queues the writeback on the
 *    device without blocking the caller.  Dirty data older than expire_ms is
 *    queued for writeback by a lazy scan every wb_interval_ms (like the
 *    kernel's dirty_expire/dirty_writeback), and above dirty_bg_mb of total
 *    dirty data everything is queued.  A WAL flush queued behind writeback
 *    waits for it: that is how checkpoints hurt commits.
 *  - real_sync=1 (default): the real fsync/fdatasync/sync_file_range is still
 *    issued (data stays durable); the caller returns at the later of the real
 *    call's end and the emulated slot's end.  real_sync=0 skips real flushes
 *    and opens O_DSYNC/O_SYNC files without those flags (their cost is
 *    still emulated).
 *
 * Safety: if WALPILOT_STORAGE is unset/off or the shared file can't be set
 * up, every call is passed through unchanged (one message on stderr).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "walpilot_emu.h"

/* ---- real functions ---- */
static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_pwritev64)(int, const struct iovec *, int, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_sync_file_range)(int, off_t, off_t, unsigned int);
static int (*real_unlink)(const char *);
static int (*real_unlinkat)(int, const char *, int);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off_t);

/* ---- configuration (per process, parsed from the environment) ---- */
static int emu_on;              /* emulation active */
static int64_t cfg_flush_ns;    /* fixed cost of a cache flush */
static int64_t cfg_jitter_ns;   /* + uniform [0, jitter) */
static int64_t cfg_fdatasync_ns = -1;	/* fdatasync's own flush cost; <0 = flush_ns */
static double cfg_ns_per_byte;  /* 0 = infinite bandwidth */
static double cfg_wal_ns_per_byte = -1;	/* pg_wal files; <0 = same as data */
static int64_t cfg_expire_ns = 30LL * 1000000000;
static int64_t cfg_wb_interval_ns = 5LL * 1000000000;
static int64_t cfg_dirty_bg = 0;        /* bytes; 0 = off */
static int cfg_real_sync = 1;
static int cfg_page_identity = 1;	/* 0: count every write's bytes (no identity) */
static int cfg_verbose = 0;
static char cfg_shm[200];
static char cfg_pass[200];		/* pass=SUBSTR: such paths are not emulated */
static double cfg_statvfs_free_mb = -1;	/* <0: report the real free space */
static double cfg_iops = 0;		/* token bucket: requests per second, 0 = no cap */
static double cfg_burst = -1;	/* bucket size in requests; <0 = iops (one second) */
static int64_t tb_interval_ns;	/* 1e9 / iops; 0 = no token bucket */
static int64_t tb_burst;		/* bucket size, >= 1 */
static char cfg_spec[EMU_SPEC_LEN];

static struct emu_shared *shm;  /* NULL = passthrough */

/* ---- per-process fd table ---- */
#define FD_MAX 65536
#define FDF_TRACKED 0x80000000u
#define FDF_DSYNC   0x40000000u
#define FDF_WAL     0x20000000u
#define FDF_DIRECT  0x10000000u
#define FDF_PASS    0x08000000u	/* pass=: a file on another, real device */
#define FDF_SLOT    0x00ffffffu
static uint32_t fdinfo[FD_MAX];

static pid_t rng_pid;
static uint64_t rng_state;

static void
emu_log(const char *fmt, const char *arg)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "walpilot_emu[%d]: ", (int) getpid());
	n += snprintf(buf + n, sizeof(buf) - n, fmt, arg);
	if (n > (int) sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (real_write)
		(void) real_write(2, buf, n);
}

static inline int64_t
now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t) t.tv_sec * 1000000000LL + t.tv_nsec;
}

static uint64_t
rnd(void)
{
	pid_t p = getpid();
	if (p != rng_pid)
	{
		rng_pid = p;
		rng_state = (uint64_t) now_ns() ^ ((uint64_t) p << 32) ^ 0x9e3779b97f4a7c15ULL;
	}
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* ---- profile parsing ---- */
#define TBUCKET_IOPS  500		/* see README.md: below 1 / flush, so the cap binds */
#define TBUCKET_BURST 1000		/* two seconds of baseline */

static int
apply_kv(const char *k, const char *v)
{
	double x = atof(v);
	if (!strcmp(k, "flush_us")) cfg_flush_ns = (int64_t) (x * 1000);
	else if (!strcmp(k, "jitter_us")) cfg_jitter_ns = (int64_t) (x * 1000);
	else if (!strcmp(k, "fdatasync_us")) cfg_fdatasync_ns = (int64_t) (x * 1000);
	else if (!strcmp(k, "bw_mbps")) cfg_ns_per_byte = x > 0 ? 1e9 / (x * 1e6) : 0;
	else if (!strcmp(k, "wal_bw_mbps")) cfg_wal_ns_per_byte = x > 0 ? 1e9 / (x * 1e6) : 0;
	else if (!strcmp(k, "expire_ms")) cfg_expire_ns = (int64_t) (x * 1e6);
	else if (!strcmp(k, "wb_interval_ms")) cfg_wb_interval_ns = (int64_t) (x * 1e6);
	else if (!strcmp(k, "dirty_bg_mb")) cfg_dirty_bg = (int64_t) (x * 1e6);
	else if (!strcmp(k, "real_sync")) cfg_real_sync = (int) x;
	else if (!strcmp(k, "page_identity")) cfg_page_identity = (int) x;
	else if (!strcmp(k, "verbose")) cfg_verbose = (int) x;
	else if (!strcmp(k, "statvfs_free_mb")) cfg_statvfs_free_mb = x;
	else if (!strcmp(k, "iops")) cfg_iops = x;
	else if (!strcmp(k, "burst")) cfg_burst = x;
	else if (!strcmp(k, "shm")) snprintf(cfg_shm, sizeof(cfg_shm), "%s", v);
	else if (!strcmp(k, "pass")) snprintf(cfg_pass, sizeof(cfg_pass), "%s", v);
	else return -1;
	return 0;
}

static int
apply_profile(const char *name)
{
	if (!strcmp(name, "hdd"))
	{ cfg_flush_ns = 8000000; cfg_jitter_ns = 0; cfg_ns_per_byte = 1e9 / 150e6; }
	else if (!strcmp(name, "ssd"))
	{ cfg_flush_ns = 200000; cfg_jitter_ns = 0; cfg_ns_per_byte = 1e9 / 500e6; }
	else if (!strcmp(name, "cloud"))
	{ cfg_flush_ns = 1000000; cfg_jitter_ns = 1000000; cfg_ns_per_byte = 1e9 / 125e6; }
	else if (!strcmp(name, "tbucket"))
	{ cfg_flush_ns = 1000000; cfg_jitter_ns = 0; cfg_ns_per_byte = 1e9 / 125e6; cfg_iops = TBUCKET_IOPS; cfg_burst = TBUCKET_BURST; }
	else if (!strcmp(name, "real"))
	{ cfg_flush_ns = 0; cfg_jitter_ns = 0; cfg_ns_per_byte = 0; }
	else return -1;
	return 0;
}

/* the token bucket's interval and size from iops= and burst= */
static void
tb_config(void)
{
	if (cfg_iops <= 0)
		return;
	tb_interval_ns = (int64_t) (1e9 / cfg_iops);
	if (tb_interval_ns < 1)
		tb_interval_ns = 1;
	tb_burst = (int64_t) (cfg_burst < 0 ? cfg_iops : cfg_burst);
	if (tb_burst < 1)
		tb_burst = 1;
}

/* returns 1 if emulation requested */
static int
parse_spec(const char *spec)
{
	char buf[EMU_SPEC_LEN];
	char *save = NULL, *tok;

	if (!spec || !*spec || !strcmp(spec, "off") || !strcmp(spec, "none"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
	{
		char *eq = strchr(tok, '=');
		if (eq)
		{
			*eq = '\0';
			if (apply_kv(tok, eq + 1) < 0)
				emu_log("unknown key \"%s\" in WALPILOT_STORAGE (ignored)", tok);
		}
		else if (apply_profile(tok) < 0)
			emu_log("unknown profile \"%s\" in WALPILOT_STORAGE (ignored)", tok);
	}
	tb_config();
	return 1;
}

/* ---- shared segment ---- */
static void
setup_shm(void)
{
	const char *env = getenv("WALPILOT_STORAGE_SHM");
	char path[256];
	int fd;
	struct stat st;
	void *p;
	struct emu_shared *s;

	if (!cfg_shm[0])
	{
		if (env && *env)
			snprintf(cfg_shm, sizeof(cfg_shm), "%s", env);
		else
			snprintf(cfg_shm, sizeof(cfg_shm), "walpilot-emu-%d", (int) getuid());
	}
	if (cfg_shm[0] == '/')
		snprintf(path, sizeof(path), "%s", cfg_shm);
	else
		snprintf(path, sizeof(path), "/dev/shm/%s", cfg_shm);

	fd = real_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
	{
		emu_log("cannot open shared file %s; storage emulation disabled", path);
		return;
	}
	if (fstat(fd, &st) < 0 || (st.st_size < (off_t) sizeof(struct emu_shared) &&
							   ftruncate(fd, sizeof(struct emu_shared)) < 0))
	{
		emu_log("cannot size shared file %s; storage emulation disabled", path);
		real_close(fd);
		return;
	}
	p = mmap(NULL, sizeof(struct emu_shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	real_close(fd);
	if (p == MAP_FAILED)
	{
		emu_log("cannot map shared file %s; storage emulation disabled", path);
		return;
	}
	s = p;
	/* zero-filled memory is a valid initial state; claim the header once */
	{
		uint64_t expect = 0;
		if (atomic_compare_exchange_strong(&s->magic, &expect, EMU_INITIALIZING))
		{
			snprintf(s->spec, sizeof(s->spec), "%s", cfg_spec);
			s->flush_ns = cfg_flush_ns;
			s->jitter_ns = cfg_jitter_ns;
			s->ns_per_byte_x1000 = (int64_t) (cfg_ns_per_byte * 1000);
			s->created_pid = getpid();
			s->iops = tb_interval_ns ? (int64_t) cfg_iops : 0;
			s->burst = tb_interval_ns ? tb_burst : 0;
			atomic_store(&s->magic, EMU_MAGIC);
			if (cfg_verbose)
				emu_log("created emulated device %s", path);
		}
		else
		{
			int i;
			for (i = 0; i < 1000 && atomic_load(&s->magic) == EMU_INITIALIZING; i++)
				usleep(100);
			if (atomic_load(&s->magic) != EMU_MAGIC)
			{
				emu_log("shared file %s has a foreign layout; storage emulation disabled", path);
				munmap(p, sizeof(struct emu_shared));
				return;
			}
		}
	}
	shm = s;
}

#define RESOLVE(name) real_##name = dlsym(RTLD_NEXT, #name)

__attribute__((constructor)) static void
emu_init(void)
{
	const char *spec = getenv("WALPILOT_STORAGE");

	RESOLVE(open); RESOLVE(open64); RESOLVE(openat); RESOLVE(openat64);
	RESOLVE(close); RESOLVE(write); RESOLVE(pwrite); RESOLVE(pwrite64);
	RESOLVE(pwritev); RESOLVE(pwritev64); RESOLVE(writev);
	RESOLVE(fsync); RESOLVE(fdatasync); RESOLVE(sync_file_range);
	RESOLVE(unlink); RESOLVE(unlinkat); RESOLVE(ftruncate); RESOLVE(ftruncate64);

	if (!real_open || !real_close || !real_write || !real_pwrite || !real_fsync ||
		!real_fdatasync)
		return;					/* cannot even pass through safely: stay inert */
	if (spec)
		snprintf(cfg_spec, sizeof(cfg_spec), "%s", spec);
	if (!parse_spec(spec))
		return;
	setup_shm();
	emu_on = shm != NULL;
}

/* ---- file table ---- */
/* where a file's probe sequence starts in the open-addressed table */
static uint64_t
slot_hash(dev_t dev, ino_t ino)
{
	return ((uint64_t) dev * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t) ino * 0xc2b2ae3d27d4eb4fULL);
}

static int
slot_for(dev_t dev, ino_t ino)
{
	uint64_t h = slot_hash(dev, ino);
	uint32_t i, n;

	for (n = 0; n < EMU_NSLOTS; n++)
	{
		struct emu_slot *sl;
		uint32_t st;

		i = (uint32_t) ((h + n) % EMU_NSLOTS);
		sl = &shm->slots[i];
		st = atomic_load(&sl->state);
		if (st == 0)
		{
			uint32_t z = 0;
			if (atomic_compare_exchange_strong(&sl->state, &z, 1))
			{
				sl->dev = (uint64_t) dev;
				sl->ino = (uint64_t) ino;
				atomic_store(&sl->state, 2);
				return (int) i;
			}
			st = atomic_load(&sl->state);
		}
		while (st == 1)
			st = atomic_load(&sl->state);
		if (sl->dev == (uint64_t) dev && sl->ino == (uint64_t) ino)
			return (int) i;
	}
	atomic_fetch_add(&shm->table_full, 1);
	return -1;
}

/* find an existing slot, -1 if none */
static int
slot_find(dev_t dev, ino_t ino)
{
	uint64_t h = slot_hash(dev, ino);
	uint32_t i, n;

	for (n = 0; n < EMU_NSLOTS; n++)
	{
		struct emu_slot *sl;

		i = (uint32_t) ((h + n) % EMU_NSLOTS);
		sl = &shm->slots[i];
		if (atomic_load(&sl->state) == 0)
			return -1;
		if (atomic_load(&sl->state) == 2 && sl->dev == (uint64_t) dev && sl->ino == (uint64_t) ino)
			return (int) i;
	}
	return -1;
}

static int64_t take_dirty(struct emu_slot *sl, int64_t max);
static int64_t take_file(uint32_t slot);
static void update_max(_Atomic int64_t *m, int64_t v);

/* the kernel drops dirty pages of a deleted or truncated file */
static void
discard_dirty(int s)
{
	if (s >= 0)
		atomic_fetch_add(&shm->bytes_discarded, take_file((uint32_t) s));
}

/* pass=SUBSTR: such files stay on the real disk, unemulated */
static int
passed_through(const char *path)
{
	return path && cfg_pass[0] && strstr(path, cfg_pass) != NULL;
}

static void
track_fd(int fd, const char *path, int flags)
{
	struct stat st;
	int s;
	uint32_t info;

	if (!emu_on || fd < 0 || fd >= FD_MAX)
		return;
	fdinfo[fd] = 0;
	if (passed_through(path))
	{
		fdinfo[fd] = FDF_PASS;
		return;
	}
	if (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
		return;
	s = slot_for(st.st_dev, st.st_ino);
	if (s < 0)
		return;
	info = FDF_TRACKED | (uint32_t) s;
	if (flags & (O_DSYNC | O_SYNC))
		info |= FDF_DSYNC;
#ifdef O_DIRECT
	if (flags & O_DIRECT)
		info |= FDF_DIRECT;
#endif
	if (path && (strncmp(path, "pg_wal/", 7) == 0 || strstr(path, "/pg_wal/")))
	{
		info |= FDF_WAL;
		shm->slots[s].is_wal = 1;
	}
	fdinfo[fd] = info;
}

static inline uint32_t
fd_info(int fd)
{
	if (!emu_on || fd < 0 || fd >= FD_MAX)
		return 0;
	return fdinfo[fd];
}

/* ---- the device ---- */
/*
 * Token bucket (iops=, burst=): the time at which a request arriving at now
 * gets its token, >= now.  The bucket holds min(burst, (t - tb_zero_at) /
 * interval) tokens at time t; taking one moves tb_zero_at one interval on
 * from where it was or, if the bucket was full, from the time it became
 * full (so it never holds more than burst).  A request finding it empty
 * gets the next token to arrive; requests queue in the order of their CAS.
 * Lock-free like busy_until: one CAS, no lock held while the caller sleeps.
 */
static int64_t
tb_take(int64_t now)
{
	int64_t z = atomic_load(&shm->tb_zero_at), full = now - tb_burst * tb_interval_ns, nz;

	do
		nz = (z > full ? z : full) + tb_interval_ns;
	while (!atomic_compare_exchange_weak(&shm->tb_zero_at, &z, nz));
	atomic_fetch_add(&shm->tb_requests, 1);
	if (nz <= now)
		return now;
	atomic_fetch_add(&shm->tb_waited, 1);
	atomic_fetch_add(&shm->tb_wait_ns, nz - now);
	update_max(&shm->tb_wait_max_ns, nz - now);
	return nz;
}

/*
 * Reserve the device for one request arriving at now (a flush, an O_DSYNC or
 * O_DIRECT write, a writeback transfer): with a token bucket it first waits
 * for its token, then for the requests queued before it.  Returns the end of
 * its slot.
 */
static int64_t
dev_reserve(int64_t cost, int64_t now)
{
	int64_t b, start, end;

	if (tb_interval_ns)
		now = tb_take(now);
	b = atomic_load(&shm->busy_until);
	do
	{
		start = b > now ? b : now;
		end = start + cost;
	} while (!atomic_compare_exchange_weak(&shm->busy_until, &b, end));
	atomic_fetch_add(&shm->device_busy_ns, cost);
	return end;
}

static void
sleep_until(int64_t end)
{
	struct timespec ts;
	int old, r;

	if (end <= now_ns())
		return;
	ts.tv_sec = end / 1000000000LL;
	ts.tv_nsec = end % 1000000000LL;
	old = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	do
		r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	while (r == EINTR);
	if (old > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long) old, 0, 0, 0);
}

/* transfer time; pg_wal files may have their own (sequential) bandwidth */
static inline int64_t
bytes_cost_cls(int64_t bytes, int wal)
{
	if (wal && cfg_wal_ns_per_byte >= 0)
		return (int64_t) (bytes * cfg_wal_ns_per_byte);
	return (int64_t) (bytes * cfg_ns_per_byte);
}
#define bytes_cost(b) bytes_cost_cls((b), 0)

static inline int64_t
flush_cost(void)
{
	int64_t set = shm ? atomic_load_explicit(&shm->flush_set_ns, memory_order_relaxed) : 0;
	int64_t c = set > 0 ? set : cfg_flush_ns;

	if (cfg_jitter_ns > 0)
		c += (int64_t) (rnd() % (uint64_t) cfg_jitter_ns);
	return c;
}

/* take up to max bytes (max<=0: all) of a slot's dirty data */
static int64_t
take_dirty(struct emu_slot *sl, int64_t max)
{
	int64_t d = atomic_load(&sl->dirty), t;

	do
	{
		if (d <= 0)
			return 0;
		t = (max > 0 && max < d) ? max : d;
	} while (!atomic_compare_exchange_weak(&sl->dirty, &d, d - t));
	if (t == d)
		atomic_store(&sl->first_dirty_ns, 0);
	atomic_fetch_sub(&shm->total_dirty, t);
	return t;
}

/* ---- page identity (layout in walpilot_emu.h) ---- */
#define GEN_MASK ((1u << EMU_GEN_BITS) - 1)
#define PAGE_LIMIT ((1ULL << EMU_PAGE_BITS) - 1)	/* page + 1 must fit */

static inline uint64_t
page_key(uint32_t slot, uint64_t page)
{
	return ((uint64_t) slot << EMU_PAGE_BITS) | (page + 1);
}

static inline uint32_t
slot_gen(uint32_t slot)
{
	return atomic_load(&shm->slots[slot].gen) & GEN_MASK;
}

static inline uint64_t
entry_key(uint64_t e)
{
	return e >> EMU_GEN_BITS;
}

static inline int
entry_dirty(uint64_t e)
{
	uint32_t slot = (uint32_t) (e >> (EMU_GEN_BITS + EMU_PAGE_BITS));

	return e != 0 && slot < EMU_NSLOTS && (uint32_t) (e & GEN_MASK) == slot_gen(slot);
}

static inline uint32_t
page_hash(uint64_t key)
{
	return (uint32_t) ((key * 0x9e3779b97f4a7c15ULL) >> 40) & (EMU_NPAGES - 1);
}

/*
 * Mark a page dirty.  1: it was clean (its bytes cost), 0: it was already
 * dirty (absorbed), -1: no identity (table full along its probe sequence,
 * or a page beyond 4 TB): the caller counts bytes as without identity.
 * Lock-free: an entry is one 64-bit word changed by CAS, so a process killed
 * anywhere leaves the table consistent.
 */
static int
page_mark_dirty(uint32_t slot, uint64_t page)
{
	uint64_t key, h;
	int tries;

	if (page >= PAGE_LIMIT)
		return -1;
	key = page_key(slot, page);
	h = page_hash(key);
	for (tries = 0; tries < 8; tries++)
	{
		uint32_t n, i = 0, g = slot_gen(slot);
		int64_t target = -1;
		uint64_t expect = 0, want = (key << EMU_GEN_BITS) | g;

		for (n = 0; n < EMU_PAGE_PROBE; n++)
		{
			uint64_t e;

			i = (uint32_t) ((h + n) & (EMU_NPAGES - 1));
			e = atomic_load(&shm->pages[i]);
			if (e == 0)
				break;
			if (entry_key(e) == key)
			{
				if ((uint32_t) (e & GEN_MASK) == g)
					return 0;
				target = i;		/* ours, clean: dirty it again */
				expect = e;
				break;
			}
			if (target < 0 && !entry_dirty(e))
			{
				target = i;		/* a clean page of any file: reusable */
				expect = e;
			}
		}
		if (target < 0 && n < EMU_PAGE_PROBE)
		{
			target = i;			/* end of the chain: empty entry */
			expect = 0;
		}
		if (target < 0)
			return -1;
		if (atomic_compare_exchange_strong(&shm->pages[target], &expect, want))
			return 1;
	}
	return -1;
}

/* clean one page if dirty (written back by sync_file_range); 1 if it was */
static int
page_clean(uint32_t slot, uint64_t page)
{
	uint64_t key, h;
	uint32_t n;

	if (page >= PAGE_LIMIT)
		return 0;
	key = page_key(slot, page);
	h = page_hash(key);
	for (n = 0; n < EMU_PAGE_PROBE; n++)
	{
		uint32_t i = (uint32_t) ((h + n) & (EMU_NPAGES - 1));
		uint64_t e = atomic_load(&shm->pages[i]);

		if (e == 0)
			return 0;
		if (entry_key(e) == key)
		{
			uint32_t g = slot_gen(slot);

			if ((uint32_t) (e & GEN_MASK) != g)
				return 0;
			/* a generation the file does not have: clean, reusable */
			return atomic_compare_exchange_strong(&shm->pages[i], &e,
												  (key << EMU_GEN_BITS) | ((g - 1) & GEN_MASK));
		}
	}
	return 0;
}

/* dirty [off, off+n) of a slot; returns the bytes this write adds */
static int64_t
pages_write(uint32_t slot, int64_t off, int64_t n)
{
	int64_t first = off >> EMU_PAGE_SHIFT, last = (off + n - 1) >> EMU_PAGE_SHIFT, p;
	int64_t add = 0, untracked = 0, nd = 0, nr = 0, nu = 0;

	for (p = first; p <= last; p++)
	{
		int r = p - first < 65536 ? page_mark_dirty(slot, (uint64_t) p) : -1;

		if (r == 1)
		{
			add += EMU_PAGE_SIZE;
			nd++;
		}
		else if (r == 0)
			nr++;
		else
		{
			/* the part of this write within the page, as without identity */
			int64_t lo = p << EMU_PAGE_SHIFT, hi = lo + EMU_PAGE_SIZE;

			lo = lo > off ? lo : off;
			hi = hi < off + n ? hi : off + n;
			untracked += hi - lo;
			nu++;
		}
	}
	if (nd)
		atomic_fetch_add(&shm->pages_dirtied, nd);
	if (nr)
	{
		atomic_fetch_add(&shm->pages_redirtied, nr);
		if (shm->slots[slot].is_wal)
			atomic_fetch_add(&shm->pages_redirtied_wal, nr);
	}
	if (nu)
	{
		atomic_fetch_add(&shm->pages_untracked, nu);
		atomic_fetch_add(&shm->slots[slot].untracked, untracked);
	}
	return add + untracked;
}

/*
 * Write back a whole file: all its pages clean (new generation), all its
 * dirty bytes taken.  The generation moves first, so a page dirtied in
 * between is charged now and may be rewritten once for free (never twice).
 */
static int64_t
take_file(uint32_t slot)
{
	struct emu_slot *sl = &shm->slots[slot];

	if (cfg_page_identity)
	{
		atomic_fetch_add(&sl->gen, 1);
		atomic_store(&sl->untracked, 0);
	}
	return take_dirty(sl, 0);
}

/* sync_file_range(off, nbytes): the range's dirty pages */
static int64_t
take_range(uint32_t slot, int64_t off, int64_t nbytes)
{
	struct emu_slot *sl = &shm->slots[slot];
	int64_t first, last, p, c = 0, u, want;

	if (!cfg_page_identity)
		return take_dirty(sl, nbytes > 0 ? nbytes : 0);
	if (nbytes <= 0 || (nbytes >> EMU_PAGE_SHIFT) > 65536)
		return take_file(slot);	/* to end of file, or huge: all of it */
	first = off >> EMU_PAGE_SHIFT;
	last = (off + nbytes - 1) >> EMU_PAGE_SHIFT;
	for (p = first; p <= last; p++)
		c += page_clean(slot, (uint64_t) p);
	if (c)
		atomic_fetch_add(&shm->pages_cleaned_sfr, c);
	want = c * EMU_PAGE_SIZE;
	/* bytes counted without identity: taken like before, up to the range */
	u = atomic_load(&sl->untracked);
	while (u > 0)
	{
		int64_t t = u < nbytes - want ? u : nbytes - want;

		if (t <= 0)
			break;
		if (atomic_compare_exchange_weak(&sl->untracked, &u, u - t))
		{
			want += t;
			break;
		}
	}
	return want > 0 ? take_dirty(sl, want) : 0;
}

static inline void
account_device(int64_t bytes, int wal)
{
	if (bytes > 0)
		atomic_fetch_add(wal ? &shm->bytes_device_wal : &shm->bytes_device_data, bytes);
}

static void
record_hist(_Atomic int64_t *hist, int64_t ns)
{
	int64_t us = ns / 1000;
	int b = 0;
	while (us > 0 && b < EMU_HIST - 1)
	{
		us >>= 1;
		b++;
	}
	atomic_fetch_add(&hist[b], 1);
}

static void
update_max(_Atomic int64_t *m, int64_t v)
{
	int64_t o = atomic_load(m);
	while (v > o && !atomic_compare_exchange_weak(m, &o, v))
		;
}

/* lazy kernel-flusher emulation: expire old dirty data, enforce dirty_bg */
static void
background_writeback(int64_t now)
{
	int64_t last = atomic_load(&shm->last_wb_scan_ns);
	int force = cfg_dirty_bg > 0 && atomic_load(&shm->total_dirty) > cfg_dirty_bg;
	uint32_t i;

	if (!force && now - last < cfg_wb_interval_ns)
		return;
	if (!atomic_compare_exchange_strong(&shm->last_wb_scan_ns, &last, now))
		return;
	for (i = 0; i < EMU_NSLOTS; i++)
	{
		struct emu_slot *sl = &shm->slots[i];
		int64_t fd0, t;

		if (atomic_load(&sl->state) != 2 || atomic_load(&sl->dirty) <= 0)
			continue;
		fd0 = atomic_load(&sl->first_dirty_ns);
		if (!force && (fd0 == 0 || now - fd0 < cfg_expire_ns))
			continue;
		t = take_file(i);
		if (t > 0)
		{
			dev_reserve(bytes_cost_cls(t, sl->is_wal), now);
			account_device(t, sl->is_wal);
			atomic_fetch_add(&shm->bytes_writeback_bg, t);
			atomic_fetch_add(&shm->n_writeback_bg, 1);
		}
		if (force && atomic_load(&shm->total_dirty) <= cfg_dirty_bg / 2)
			break;
	}
}

static void
after_write(int fd, uint32_t info, ssize_t n, int64_t now, int64_t off)
{
	if (n <= 0)
		return;
	if (info & FDF_WAL)
		atomic_fetch_add(&shm->bytes_written_wal, n);
	else
		atomic_fetch_add(&shm->bytes_written_data, n);
	if (info & FDF_DSYNC)
	{
		/* synchronous write: one device request, flush + transfer */
		int64_t end = dev_reserve(flush_cost() + bytes_cost_cls(n, info & FDF_WAL), now);
		sleep_until(end);
		atomic_fetch_add(&shm->n_dsync_writes, 1);
		if (info & FDF_WAL)
		{
			int64_t w = now_ns() - now;
			atomic_fetch_add(&shm->n_flush_wal, 1);
			atomic_fetch_add(&shm->wal_flush_ns, w);
			update_max(&shm->wal_flush_max_ns, w);
			record_hist(shm->wal_flush_hist, w);
		}
	}
	else if (info & FDF_DIRECT)
	{
		/* O_DIRECT: bypasses the cache, waits for the transfer only */
		sleep_until(dev_reserve(bytes_cost_cls(n, info & FDF_WAL), now));
	}
	else
	{
		struct emu_slot *sl = &shm->slots[info & FDF_SLOT];
		int64_t z = 0, add = n;

		if (cfg_page_identity && off < 0)
			off = lseek(fd, 0, SEEK_CUR) - n;	/* write()/writev(): the position moved */
		if (cfg_page_identity && off >= 0)
			add = pages_write(info & FDF_SLOT, off, n);
		if (add > 0)
		{
			atomic_fetch_add(&sl->dirty, add);
			atomic_fetch_add(&shm->total_dirty, add);
			atomic_compare_exchange_strong(&sl->first_dirty_ns, &z, now);
		}
	}
	background_writeback(now);
}

/* fsync / fdatasync */
static int
do_sync(int fd, int data_only)
{
	uint32_t info = fd_info(fd);
	int64_t now, end, bytes = 0, w;
	int r = 0;

	if (info & FDF_PASS)
		return data_only ? real_fdatasync(fd) : real_fsync(fd);
	if (!(info & FDF_TRACKED))
	{
		if (emu_on && fd >= 0 && fd < FD_MAX)
		{
			struct stat st;
			if (fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			{
				track_fd(fd, NULL, 0);
				info = fd_info(fd);
			}
		}
		if (!(info & FDF_TRACKED))
			return data_only ? real_fdatasync(fd) : real_fsync(fd);
	}
	now = now_ns();
	background_writeback(now);
	bytes = take_file(info & FDF_SLOT);
	account_device(bytes, info & FDF_WAL);
	end = dev_reserve((data_only && cfg_fdatasync_ns >= 0 ?
					   cfg_fdatasync_ns : flush_cost()) +
					  bytes_cost_cls(bytes, info & FDF_WAL), now);
	if (cfg_real_sync)
		r = data_only ? real_fdatasync(fd) : real_fsync(fd);
	else if (fcntl(fd, F_GETFD) < 0)
		r = -1;					/* keep EBADF semantics */
	{
		int saved = errno;
		sleep_until(end);
		errno = saved;
	}
	w = now_ns() - now;
	atomic_fetch_add(&shm->bytes_flushed_sync, bytes);
	if (info & FDF_WAL)
	{
		atomic_fetch_add(&shm->n_flush_wal, 1);
		atomic_fetch_add(&shm->wal_flush_ns, w);
		update_max(&shm->wal_flush_max_ns, w);
		record_hist(shm->wal_flush_hist, w);
	}
	else
	{
		atomic_fetch_add(&shm->n_flush_data, 1);
		atomic_fetch_add(&shm->data_flush_ns, w);
		update_max(&shm->data_flush_max_ns, w);
	}
	return r;
}

/* ---- interposed functions ---- */

/*
 * The flags the real open gets: with real_sync=0 a synchronous write must
 * not wait for the real disk either (a busy shared disk would otherwise
 * make O_DSYNC writes slow while fdatasync stays emulated), so O_DSYNC and
 * O_SYNC are dropped; track_fd still sees them and emulates their cost.
 */
static int
real_open_flags(const char *path, int flags)
{
	if (!emu_on || cfg_real_sync || passed_through(path))
		return flags;
	return flags & ~(O_DSYNC | O_SYNC);
}

static int
open_common(int (*fn)(const char *, int, ...), const char *path, int flags, mode_t mode)
{
	int fd = fn(path, real_open_flags(path, flags), mode);
	if (emu_on && fd >= 0)
		track_fd(fd, path, flags);
	return fd;
}

static int
openat_common(int (*fn)(int, const char *, int, ...), int dirfd, const char *path, int flags, mode_t mode)
{
	int fd = fn(dirfd, path, real_open_flags(path, flags), mode);
	if (emu_on && fd >= 0)
		track_fd(fd, path, flags);
	return fd;
}

#define GET_MODE(flags) \
	mode_t mode = 0; \
	if ((flags) & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, int); va_end(ap); }

int
open(const char *path, int flags, ...)
{
	GET_MODE(flags);
	if (!real_open) { RESOLVE(open); if (!real_open) { errno = ENOSYS; return -1; } }
	return open_common(real_open, path, flags, mode);
}

int
open64(const char *path, int flags, ...)
{
	GET_MODE(flags);
	if (!real_open64) { RESOLVE(open64); if (!real_open64) { errno = ENOSYS; return -1; } }
	return open_common(real_open64, path, flags, mode);
}

int
openat(int dirfd, const char *path, int flags, ...)
{
	GET_MODE(flags);
	if (!real_openat) { RESOLVE(openat); if (!real_openat) { errno = ENOSYS; return -1; } }
	return openat_common(real_openat, dirfd, path, flags, mode);
}

int
openat64(int dirfd, const char *path, int flags, ...)
{
	GET_MODE(flags);
	if (!real_openat64) { RESOLVE(openat64); if (!real_openat64) { errno = ENOSYS; return -1; } }
	return openat_common(real_openat64, dirfd, path, flags, mode);
}

int
close(int fd)
{
	if (!real_close) RESOLVE(close);
	if (fd >= 0 && fd < FD_MAX)
		fdinfo[fd] = 0;
	return real_close(fd);
}

ssize_t
write(int fd, const void *buf, size_t n)
{
	uint32_t info;
	ssize_t r;
	int64_t t0;

	if (!real_write) RESOLVE(write);
	info = fd_info(fd);
	t0 = (info & FDF_TRACKED) ? now_ns() : 0;
	r = real_write(fd, buf, n);
	if (info & FDF_TRACKED)
	{
		int saved = errno;
		after_write(fd, info, r, t0, -1);
		errno = saved;
	}
	return r;
}

#define PWRITE_LIKE(name, OFF, ...) \
	uint32_t info; ssize_t r; int64_t t0; \
	if (!real_##name) RESOLVE(name); \
	info = fd_info(fd); \
	t0 = (info & FDF_TRACKED) ? now_ns() : 0; \
	r = real_##name(__VA_ARGS__); \
	if (info & FDF_TRACKED) { int saved = errno; after_write(fd, info, r, t0, OFF); errno = saved; } \
	return r;

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) { PWRITE_LIKE(pwrite, off, fd, buf, n, off) }
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) { PWRITE_LIKE(pwrite64, off, fd, buf, n, off) }
ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) { PWRITE_LIKE(pwritev, off, fd, iov, cnt, off) }
ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off) { PWRITE_LIKE(pwritev64, off, fd, iov, cnt, off) }
ssize_t writev(int fd, const struct iovec *iov, int cnt) { PWRITE_LIKE(writev, -1, fd, iov, cnt) }

int
fsync(int fd)
{
	if (!real_fsync) RESOLVE(fsync);
	if (!emu_on) return real_fsync(fd);
	return do_sync(fd, 0);
}

int
fdatasync(int fd)
{
	if (!real_fdatasync) RESOLVE(fdatasync);
	if (!emu_on) return real_fdatasync(fd);
	return do_sync(fd, 1);
}

int
sync_file_range(int fd, off_t off, off_t nbytes, unsigned int flags)
{
	uint32_t info;
	int r = 0;

	if (!real_sync_file_range) RESOLVE(sync_file_range);
	info = fd_info(fd);
	if (!(info & FDF_TRACKED))
		return real_sync_file_range(fd, off, nbytes, flags);
	if (cfg_real_sync)
		r = real_sync_file_range(fd, off, nbytes, flags);
	{
		int saved = errno;
		int64_t now = now_ns(), t, end = 0;

		atomic_fetch_add(&shm->n_sfr, 1);
		if (flags & SYNC_FILE_RANGE_WRITE)
		{
			t = take_range(info & FDF_SLOT, (int64_t) off, (int64_t) nbytes);
			if (t > 0)
			{
				end = dev_reserve(bytes_cost_cls(t, info & FDF_WAL), now);
				account_device(t, info & FDF_WAL);
				atomic_fetch_add(&shm->bytes_writeback_sfr, t);
			}
		}
		if ((flags & SYNC_FILE_RANGE_WAIT_AFTER) && end)
			sleep_until(end);
		background_writeback(now);
		errno = saved;
	}
	return r;
}

int
unlink(const char *path)
{
	struct stat st;
	int s = -1, r;

	if (!real_unlink) RESOLVE(unlink);
	if (emu_on && lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1)
		s = slot_find(st.st_dev, st.st_ino);
	r = real_unlink(path);
	if (r == 0 && s >= 0)
		discard_dirty(s);
	return r;
}

int
unlinkat(int dirfd, const char *path, int flags)
{
	struct stat st;
	int s = -1, r;

	if (!real_unlinkat) RESOLVE(unlinkat);
	if (emu_on && !(flags & AT_REMOVEDIR) &&
		fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1)
		s = slot_find(st.st_dev, st.st_ino);
	r = real_unlinkat(dirfd, path, flags);
	if (r == 0 && s >= 0)
		discard_dirty(s);
	return r;
}

static int
truncate_common(int (*fn)(int, off_t), int fd, off_t len)
{
	uint32_t info = fd_info(fd);
	int r = fn(fd, len);

	if (r == 0 && len == 0 && (info & FDF_TRACKED))
	{
		int saved = errno;
		discard_dirty((int) (info & FDF_SLOT));
		errno = saved;
	}
	return r;
}

int ftruncate(int fd, off_t len) { if (!real_ftruncate) RESOLVE(ftruncate); return truncate_common(real_ftruncate, fd, len); }
int ftruncate64(int fd, off_t len) { if (!real_ftruncate64) RESOLVE(ftruncate64); return truncate_common(real_ftruncate64, fd, len); }

/* ---- statvfs: an emulated amount of free space (statvfs_free_mb=) ---- */
static void
cap_free(struct statvfs *buf)
{
	unsigned long frsize = buf->f_frsize ? buf->f_frsize : buf->f_bsize;
	fsblkcnt_t blocks;

	if (cfg_statvfs_free_mb < 0 || frsize == 0)
		return;
	blocks = (fsblkcnt_t) (cfg_statvfs_free_mb * 1024 * 1024 / frsize);
	if (buf->f_bavail > blocks)
		buf->f_bavail = blocks;
	if (buf->f_bfree > blocks)
		buf->f_bfree = blocks;
}

int
statvfs(const char *path, struct statvfs *buf)
{
	static int (*real_statvfs)(const char *, struct statvfs *);
	int rc;

	if (!real_statvfs)
		RESOLVE(statvfs);
	if (!real_statvfs)
	{
		errno = ENOSYS;
		return -1;
	}
	rc = real_statvfs(path, buf);
	if (rc == 0)
		cap_free(buf);
	return rc;
}

int
fstatvfs(int fd, struct statvfs *buf)
{
	static int (*real_fstatvfs)(int, struct statvfs *);
	int rc;

	if (!real_fstatvfs)
		RESOLVE(fstatvfs);
	if (!real_fstatvfs)
	{
		errno = ENOSYS;
		return -1;
	}
	rc = real_fstatvfs(fd, buf);
	if (rc == 0)
		cap_free(buf);
	return rc;
}
