/*
 * emu_pagecheck FILE SHM_NAME [--no-identity]: run under the shim
 * (LD_PRELOAD=walpilot_emu.so WALPILOT_STORAGE=...,shm=SHM_NAME); checks the
 * page cache model's dirty bytes step by step: rewriting a dirty page adds
 * nothing (also from another process), a page written back by
 * sync_file_range or fdatasync costs again when dirtied again.  With
 * --no-identity (page_identity=0) it expects every write to count.
 * Reads only the header counters, whose layout older versions share.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "walpilot_emu.h"

static struct emu_shared *s;
static int	failed;

static void
expect(const char *step, int64_t want_dirty)
{
	int64_t got = atomic_load(&s->total_dirty);

	printf("  %-58s dirty %6lld bytes (want %6lld)  %s\n", step, (long long) got,
		   (long long) want_dirty, got == want_dirty ? "ok" : "FAIL");
	if (got != want_dirty)
		failed = 1;
}

int
main(int argc, char **argv)
{
	char		path[300],
				buf[8192];
	int			fd,
				noid;
	int64_t		sfr0,
				sync0;
	pid_t		child;

	if (argc < 3)
	{
		fprintf(stderr, "usage: %s FILE SHM_NAME [--no-identity]\n", argv[0]);
		return 2;
	}
	noid = argc > 3 && strcmp(argv[3], "--no-identity") == 0;
	snprintf(path, sizeof(path), "/dev/shm/%s", argv[2]);
	fd = open(path, O_RDONLY);
	if (fd < 0)
	{
		perror(path);
		return 1;
	}
	s = mmap(NULL, sizeof(*s), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (s == MAP_FAILED || atomic_load(&s->total_dirty) != 0)
	{
		fprintf(stderr, "%s: not a fresh emulator segment (is the shim loaded?)\n", path);
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
	{
		perror(argv[1]);
		return 1;
	}

	pwrite(fd, buf, 8192, 0);
	expect("pwrite 8 kB at 0 (two clean pages)", 8192);
	pwrite(fd, buf, 8192, 0);
	expect("pwrite the same 8 kB again (dirty pages)", noid ? 16384 : 8192);
	child = fork();
	if (child == 0)
		_exit(pwrite(fd, buf, 4096, 4096) == 4096 ? 0 : 1);
	waitpid(child, NULL, 0);
	expect("another process rewrites page 1 (dirty)", noid ? 20480 : 8192);

	sfr0 = atomic_load(&s->bytes_writeback_sfr);
	sync_file_range(fd, 0, 8192, SYNC_FILE_RANGE_WRITE);
	expect("sync_file_range(0, 8 kB): written back", noid ? 12288 : 0);
	if (!noid && atomic_load(&s->bytes_writeback_sfr) - sfr0 != 8192)
	{
		printf("  sync_file_range wrote %lld bytes (want 8192)  FAIL\n",
			   (long long) (atomic_load(&s->bytes_writeback_sfr) - sfr0));
		failed = 1;
	}
	pwrite(fd, buf, 8192, 0);
	expect("pwrite 8 kB at 0 again (cleaned pages cost again)", noid ? 20480 : 8192);
	pwrite(fd, buf, 8192, 8192);
	expect("pwrite 8 kB at 8 kB (two more clean pages)", noid ? 28672 : 16384);

	sync0 = atomic_load(&s->bytes_flushed_sync);
	fdatasync(fd);
	expect("fdatasync: the whole file written back", 0);
	if (atomic_load(&s->bytes_flushed_sync) - sync0 != (noid ? 28672 : 16384))
	{
		printf("  fdatasync wrote %lld bytes  FAIL\n",
			   (long long) (atomic_load(&s->bytes_flushed_sync) - sync0));
		failed = 1;
	}
	pwrite(fd, buf, 8192, 0);
	expect("pwrite 8 kB at 0 after fdatasync (costs again)", 8192);
	lseek(fd, 4096, SEEK_SET);
	write(fd, buf, 8192);
	expect("write() 8 kB at 4 kB (page 1 dirty, page 2 clean)", noid ? 16384 : 12288);
	fsync(fd);
	expect("fsync", 0);
	close(fd);
	unlink(argv[1]);
	printf("%s\n", failed ? "emu_pagecheck: FAIL" : "emu_pagecheck: ok");
	return failed;
}
