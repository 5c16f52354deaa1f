/*
 * walpilot_emu.h — layout of the emulator's shared file (/dev/shm/<name>).
 * Zero-filled memory is a valid initial state.
 */
#ifndef WALPILOT_EMU_H
#define WALPILOT_EMU_H

#include <stdatomic.h>
#include <stdint.h>

#define EMU_MAGIC        0x57504c454d550007ULL	/* "WPLEMU" v7 */
#define EMU_MAGIC_V6     0x57504c454d550006ULL	/* same header, emu_stat reads it */
#define EMU_MAGIC_V5     0x57504c454d550005ULL	/* same header, emu_stat reads it */
#define EMU_MAGIC_V4     0x57504c454d550004ULL	/* same header, emu_stat reads it */
#define EMU_MAGIC_V3     0x57504c454d550003ULL	/* same header, emu_stat reads it */
#define EMU_INITIALIZING 1ULL
#define EMU_NSLOTS       16384
#define EMU_HIST         32		/* log2(us) buckets */
#define EMU_SPEC_LEN     256

/*
 * Page identity: one shared open-addressed table of (file slot, page) entries,
 * each carrying the file's writeback generation at the time the page was
 * dirtied.  A page is dirty while its generation equals its file's; writing
 * back a whole file (fsync, fdatasync, expiry, unlink) bumps the file's
 * generation, which cleans all its pages at once.  Clean entries are reused.
 *
 * entry (64 bits): slot (14) | page + 1 (30) | generation (20); 0 = empty
 */
#define EMU_PAGE_SHIFT   12		/* 4 kB pages, like the kernel's */
#define EMU_PAGE_SIZE    (1 << EMU_PAGE_SHIFT)
#define EMU_NPAGES       (1u << 20)	/* 8 MB of entries: 4 GB of dirty pages */
#define EMU_PAGE_PROBE   64		/* probe length before giving up */
#define EMU_GEN_BITS     20
#define EMU_PAGE_BITS    30
struct emu_slot
{
	_Atomic uint32_t state;		/* 0 empty, 1 being claimed, 2 ready */
	uint32_t	is_wal;		/* file under pg_wal/ (own bandwidth) */
	uint64_t	dev;
	uint64_t	ino;
	_Atomic int64_t dirty;		/* bytes in the page cache not yet queued */
	_Atomic int64_t first_dirty_ns;	/* CLOCK_MONOTONIC, 0 = clean */
	_Atomic uint32_t gen;		/* writeback generation (page identity) */
	uint32_t	pad;
	_Atomic int64_t untracked;	/* part of dirty counted without page identity */
};

struct emu_shared
{
	_Atomic uint64_t magic;
	char		spec[EMU_SPEC_LEN];	/* WALPILOT_STORAGE of the creator */
	int64_t		flush_ns;
	int64_t		jitter_ns;
	int64_t		ns_per_byte_x1000;
	int64_t		created_pid;

	_Atomic int64_t busy_until;	/* device clock, CLOCK_MONOTONIC ns */
	_Atomic int64_t device_busy_ns;	/* total reserved device time */
	_Atomic int64_t total_dirty;
	_Atomic int64_t last_wb_scan_ns;

	_Atomic int64_t n_flush_wal;	/* fsync/fdatasync/O_DSYNC writes on pg_wal files */
	_Atomic int64_t wal_flush_ns;	/* caller-visible time, summed */
	_Atomic int64_t wal_flush_max_ns;
	_Atomic int64_t n_flush_data;	/* fsync/fdatasync on other files */
	_Atomic int64_t data_flush_ns;
	_Atomic int64_t data_flush_max_ns;
	_Atomic int64_t n_dsync_writes;
	_Atomic int64_t n_sfr;
	_Atomic int64_t n_writeback_bg;
	_Atomic int64_t bytes_written_wal;
	_Atomic int64_t bytes_written_data;
	_Atomic int64_t bytes_flushed_sync;	/* dirty bytes paid by fsync callers */
	_Atomic int64_t bytes_writeback_sfr;	/* queued by sync_file_range */
	_Atomic int64_t bytes_writeback_bg;	/* queued by expiry / dirty_bg */
	_Atomic int64_t table_full;
	_Atomic int64_t bytes_discarded;	/* dirty bytes of unlinked/truncated files */
	_Atomic int64_t wal_flush_hist[EMU_HIST];

	struct emu_slot slots[EMU_NSLOTS];

	/* v5: page identity (see above); counters in pages of EMU_PAGE_SIZE */
	_Atomic int64_t pages_dirtied;	/* clean -> dirty: cost bytes */
	_Atomic int64_t pages_redirtied;	/* already dirty: absorbed, no bytes */
	_Atomic int64_t pages_untracked;	/* table full: counted by bytes written */
	_Atomic int64_t pages_cleaned_sfr;	/* cleaned by sync_file_range */
	_Atomic int64_t bytes_device_data;	/* dirty bytes of non-WAL files sent to the device */
	_Atomic int64_t bytes_device_wal;	/* same for pg_wal files */
	_Atomic int64_t pages_redirtied_wal;	/* the part of pages_redirtied in pg_wal files */
	_Atomic uint64_t pages[EMU_NPAGES];

	/*
	 * v6: token bucket (iops=, burst=), after the page table so that the
	 * header of versions 3 to 5 keeps its offsets.  The bucket is one
	 * clock, tb_zero_at: at time t it holds min(burst, (t - tb_zero_at) /
	 * interval) tokens; a request moves it by one interval (GCRA).
	 */
	int64_t		iops;			/* of the creator; 0 = no cap */
	int64_t		burst;			/* bucket size, requests */
	_Atomic int64_t tb_zero_at;	/* CLOCK_MONOTONIC ns; 0 = a full bucket */
	_Atomic int64_t tb_requests;	/* device requests that took a token */
	_Atomic int64_t tb_waited;	/* of those, found the bucket empty */
	_Atomic int64_t tb_wait_ns;	/* their waits for a token, summed */
	_Atomic int64_t tb_wait_max_ns;

	/*
	 * v7: the flush time set while the device runs (emu_stat --set-flush-us):
	 * a volume whose latency changes under a running server.  0: the
	 * creator's flush_ns.  The jitter is kept.
	 */
	_Atomic int64_t flush_set_ns;
};

#endif
