/*
 * emu_stat NAME|PATH: print the emulator's shared counters as key=value.
 * --unlink removes the file, --reset-max zeroes the maxima,
 * --set-flush-us N makes every later flush take N us (0: the profile's again).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "walpilot_emu.h"

/* a header this program can read: v3 to v7 share their common fields */
static int
known_layout(const struct emu_shared *s)
{
	return s->magic == EMU_MAGIC || s->magic == EMU_MAGIC_V6 ||
		s->magic == EMU_MAGIC_V5 || s->magic == EMU_MAGIC_V4 ||
		s->magic == EMU_MAGIC_V3;
}

int
main(int argc, char **argv)
{
	char path[300];
	int fd, i;
	struct emu_shared *s;

	if (argc < 2)
	{
		fprintf(stderr, "usage: %s SHM_NAME|PATH [--unlink|--reset-max|--set-flush-us N]\n", argv[0]);
		return 2;
	}
	if (argv[1][0] == '/')
		snprintf(path, sizeof(path), "%s", argv[1]);
	else
		snprintf(path, sizeof(path), "/dev/shm/%s", argv[1]);
	if (argc > 2 && strcmp(argv[2], "--unlink") == 0)
		return unlink(path) == 0 ? 0 : 1;
	if (argc > 2 && strcmp(argv[2], "--reset-max") == 0)
	{
		fd = open(path, O_RDWR);
		if (fd < 0) { perror(path); return 1; }
		s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (s == MAP_FAILED || !known_layout(s)) { fprintf(stderr, "%s: not an emulator segment\n", path); return 1; }
		atomic_store(&s->wal_flush_max_ns, 0);
		atomic_store(&s->data_flush_max_ns, 0);
		if (s->magic == EMU_MAGIC || s->magic == EMU_MAGIC_V6)
			atomic_store(&s->tb_wait_max_ns, 0);
		return 0;
	}
	if (argc > 3 && strcmp(argv[2], "--set-flush-us") == 0)
	{
		long long us = atoll(argv[3]);

		fd = open(path, O_RDWR);
		if (fd < 0) { perror(path); return 1; }
		s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (s == MAP_FAILED || s->magic != EMU_MAGIC || us < 0) { fprintf(stderr, "%s: not an emulator segment of this version, or a negative time\n", path); return 1; }
		atomic_store(&s->flush_set_ns, (int64_t) us * 1000);
		return 0;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0)
	{
		perror(path);
		return 1;
	}
	s = mmap(NULL, sizeof(*s), PROT_READ, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED || !known_layout(s))
	{
		fprintf(stderr, "%s: not an emulator segment\n", path);
		return 1;
	}
#define P(f) printf(#f "=%lld\n", (long long) s->f)
	printf("spec=%s\n", s->spec);
	P(flush_ns); P(jitter_ns); P(ns_per_byte_x1000); P(created_pid);
	P(busy_until); P(device_busy_ns); P(total_dirty);
	P(n_flush_wal); P(wal_flush_ns); P(wal_flush_max_ns);
	P(n_flush_data); P(data_flush_ns); P(data_flush_max_ns);
	P(n_dsync_writes); P(n_sfr); P(n_writeback_bg);
	P(bytes_written_wal); P(bytes_written_data); P(bytes_flushed_sync);
	P(bytes_writeback_sfr); P(bytes_writeback_bg); P(table_full); P(bytes_discarded);
	if (s->magic == EMU_MAGIC || s->magic == EMU_MAGIC_V6 || s->magic == EMU_MAGIC_V5)
	{
		P(pages_dirtied); P(pages_redirtied); P(pages_untracked); P(pages_cleaned_sfr);
		P(bytes_device_data); P(bytes_device_wal); P(pages_redirtied_wal);
	}
	if (s->magic == EMU_MAGIC || s->magic == EMU_MAGIC_V6)
	{
		P(iops); P(burst); P(tb_zero_at);
		P(tb_requests); P(tb_waited); P(tb_wait_ns); P(tb_wait_max_ns);
	}
	if (s->magic == EMU_MAGIC)
		P(flush_set_ns);
	printf("wal_flush_hist=");
	for (i = 0; i < EMU_HIST; i++)
		printf("%s%lld", i ? "," : "", (long long) s->wal_flush_hist[i]);
	printf("\n");
	{
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		printf("now_ns=%lld\n", (long long) t.tv_sec * 1000000000LL + t.tv_nsec);
	}
	return 0;
}
