/*
 * emu_tbcheck DIR SHM_NAME IOPS BURST [WRITERS]: check the token bucket
 * (iops=, burst=).  Run under the shim with a fresh shared file SHM_NAME and
 * real_sync=0:
 *
 *   LD_PRELOAD=walpilot_emu.so WALPILOT_STORAGE=tbucket,flush_us=250,real_sync=0,shm=NAME \
 *       emu_tbcheck /tmp/dir NAME 500 1000
 *
 * IOPS and BURST are what the device must show (the shared file's own
 * figures are printed beside them).
 *
 * WRITERS (default 8) processes loop fdatasync() on their own files, each
 * one device request, for PHASE_S seconds; then nothing for IDLE_S seconds
 * (more than BURST / IOPS: the bucket refills, and not beyond BURST); then
 * the same again.  The flush cost must be well under 1 / IOPS, so that the
 * writers ask for more than the cap.  Each phase must show:
 *
 *   burst:   the first BURST requests complete at the device's speed,
 *            at least max(2 x IOPS, 0.5 / flush) per second, not at the cap;
 *   cap:     after the bucket is empty (from the later of the phase's
 *            middle and the knee, the first completion k with k + 1 >=
 *            0.95 x BURST + IOPS x elapsed) the aggregate rate is at most
 *            1.1 x IOPS (and at least 0.8 x IOPS over at least 0.3 s:
 *            otherwise the writers did not ask for enough to test it);
 *   surplus: requests completed minus IOPS x elapsed time = the tokens
 *            the bucket held at the start = BURST within 10 %.
 *
 * Prints one line per phase and per criterion; exit status 1 on a failure.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "walpilot_emu.h"

#define MAXREQ   200000
#define MAXW     64
#define PHASE_S  1.5
#define IDLE_S   2.5

struct board
{
	_Atomic int stop;
	_Atomic int64_t n;
	int64_t		t[MAXREQ];		/* completion times, CLOCK_MONOTONIC ns */
};

static struct board *b;
static int	failed;
static double flush_s;			/* the device's flush cost, from its shared file */

static int64_t
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t) t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int
cmp64(const void *a, const void *c)
{
	int64_t x = *(const int64_t *) a, y = *(const int64_t *) c;

	return x < y ? -1 : x > y;
}

static void
verdict(const char *what, int ok)
{
	printf("  %-14s %s\n", what, ok ? "ok" : "FAIL");
	if (!ok)
		failed = 1;
}

static void
phase(const char *dir, int nw, double iops, double burst, const char *name)
{
	pid_t		pids[MAXW];
	int64_t		t0, t1, n, i, nb, tail0, ntail, knee = 0;
	double		dur, rate_b, rate_tail, surplus, flush = flush_s,
				want_b = 2 * iops > 0.5 / flush ? 2 * iops : 0.5 / flush;
	int			w;

	atomic_store(&b->stop, 0);
	atomic_store(&b->n, 0);
	t0 = now_ns();
	for (w = 0; w < nw; w++)
	{
		pids[w] = fork();
		if (pids[w] == 0)
		{
			char		path[300];
			int			fd;

			snprintf(path, sizeof(path), "%s/tb.%d", dir, w);
			fd = open(path, O_RDWR | O_CREAT, 0600);
			if (fd < 0)
			{
				perror(path);
				_exit(1);
			}
			while (!atomic_load(&b->stop))
			{
				int64_t		k;

				if (fdatasync(fd) != 0)
				{
					perror("fdatasync");
					_exit(1);
				}
				k = atomic_fetch_add(&b->n, 1);
				if (k < MAXREQ)
					b->t[k] = now_ns();
			}
			_exit(0);
		}
	}
	usleep((useconds_t) (PHASE_S * 1e6));
	t1 = now_ns();
	atomic_store(&b->stop, 1);
	for (w = 0; w < nw; w++)
	{
		int			st;

		if (pids[w] > 0 && (waitpid(pids[w], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0))
		{
			printf("  writer %d failed\n", w);
			failed = 1;
		}
	}
	n = atomic_load(&b->n);
	if (n > MAXREQ)
		n = MAXREQ;
	qsort(b->t, n, sizeof(int64_t), cmp64);
	/* completions within [t0, t1] only */
	while (n > 0 && b->t[n - 1] > t1)
		n--;
	dur = (t1 - t0) / 1e9;
	nb = (int64_t) burst;
	rate_b = n >= nb && b->t[nb - 1] > t0 ? nb / ((b->t[nb - 1] - t0) / 1e9) : 0;
	for (i = 0; i < n; i++)
		if (i + 1 >= 0.95 * burst + iops * ((b->t[i] - t0) / 1e9))
		{
			knee = b->t[i];
			break;
		}
	tail0 = t0 + (t1 - t0) / 2;
	if (knee > tail0)
		tail0 = knee;
	for (i = 0; i < n && b->t[i] < tail0; i++)
		;
	ntail = n - i;
	rate_tail = ntail / ((t1 - tail0) / 1e9);
	surplus = n - iops * dur;
	printf("%s: %d writers, %.2f s: %lld requests, %.0f/s overall\n", name, nw, dur,
		   (long long) n, n / dur);
	if (n < nb)
		printf("  burst: only %lld requests in the phase, fewer than the burst's %lld (want >= %.0f/s)\n",
			   (long long) n, (long long) nb, want_b);
	else
		printf("  burst: first %lld at %.0f/s (%.0f us each; flush cost %.0f us, cap %.0f/s; want >= %.0f/s)\n",
			   (long long) nb, rate_b, 1e6 / rate_b, flush * 1e6, iops, want_b);
	verdict("burst", rate_b >= want_b);
	if (!knee)
	{
		/* no burst to spend, or writers too slow to spend it in time */
		printf("  cap: completions never reached 0.95 x burst + iops x elapsed (last %.2f s at %.0f/s):"
			   " the cap was not tested\n", (t1 - tail0) / 1e9, rate_tail);
		verdict("cap demand", 0);
	}
	else
	{
		printf("  cap: bucket empty at %.2f s; last %.2f s at %.0f/s (%lld requests; want %.0f..%.0f/s)\n",
			   (knee - t0) / 1e9, (t1 - tail0) / 1e9, rate_tail, (long long) ntail,
			   0.8 * iops, 1.1 * iops);
		verdict("cap", rate_tail <= 1.1 * iops);
		if (rate_tail < 0.8 * iops || t1 - tail0 < 300000000)
			printf("  (writers asked for less than the cap, or emptied the bucket late: the cap was not tested)\n");
		verdict("cap demand", rate_tail >= 0.8 * iops && t1 - tail0 >= 300000000);
	}
	printf("  surplus: %lld - %.0f/s x %.2f s = %.0f tokens (want burst %.0f +- 10 %%)\n",
		   (long long) n, iops, dur, surplus, burst);
	verdict("surplus", surplus >= 0.9 * burst && surplus <= 1.1 * burst);
}

int
main(int argc, char **argv)
{
	double		iops, burst;
	int			nw = 8, fd;
	char		path[300];
	struct emu_shared *s;

	if (argc < 5)
	{
		fprintf(stderr, "usage: %s DIR SHM_NAME IOPS BURST [WRITERS]\n", argv[0]);
		return 2;
	}
	iops = atof(argv[3]);
	burst = atof(argv[4]);
	if (argc > 5)
		nw = atoi(argv[5]);
	if (iops <= 0 || burst < 1 || nw < 1 || nw > MAXW)
	{
		fprintf(stderr, "%s: bad arguments\n", argv[0]);
		return 2;
	}
	if (burst / iops >= IDLE_S)
	{
		fprintf(stderr, "%s: burst / iops must be under %.1f s (the idle period)\n", argv[0], IDLE_S);
		return 2;
	}
	/* the shim, loaded into this process, has made the shared file */
	snprintf(path, sizeof(path), "/dev/shm/%s", argv[2]);
	fd = open(path, O_RDONLY);
	s = fd < 0 ? MAP_FAILED : mmap(NULL, sizeof(*s), PROT_READ, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED || atomic_load(&s->magic) != EMU_MAGIC)
	{
		fprintf(stderr, "%s: %s is not an emulator device of this version (shim not loaded?)\n",
				argv[0], path);
		return 1;
	}
	flush_s = (s->flush_ns + s->jitter_ns / 2) / 1e9;
	printf("device %s: spec \"%s\": flush %.0f us, iops %lld, burst %lld; checked against iops %.0f, burst %.0f\n",
		   argv[2], s->spec, flush_s * 1e6, (long long) s->iops, (long long) s->burst, iops, burst);
	if (flush_s <= 0 || flush_s * iops > 0.5)
	{
		fprintf(stderr, "%s: the flush cost must be under half of 1 / iops (writers must ask for more than the cap)\n",
				argv[0]);
		return 2;
	}
	b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
	{
		perror("mmap");
		return 1;
	}
	phase(argv[1], nw, iops, burst, "fresh device (full bucket)");
	usleep((useconds_t) (IDLE_S * 1e6));
	phase(argv[1], nw, iops, burst, "after 2.5 s idle (refilled to burst, not beyond)");
	return failed;
}
