/*
 * leader-cost.c -- what PostgreSQL 18's flush-leader detection costs.
 *
 * Up to 17 walpilot reads PendingWalStats (a memory load) at PRE_COMMIT and
 * at COMMIT of each durable commit; on 18 it calls
 * getrusage(RUSAGE_THREAD) there instead (compat.h).  This times, side by
 * side in interleaved blocks: that system call, clock_gettime on the
 * monotonic clock (what commit timing already reads at both points, a
 * vDSO call) and a plain volatile load.  Prints ns per call, median
 * [min-max] over the blocks.
 *
 *   test/bench/leader-cost [BLOCKS [CALLS]]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static volatile long sink;
static volatile long pending = 1;

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double
time_getrusage(long n)
{
	struct rusage ru;
	double		t0 = now_ns();

	for (long i = 0; i < n; i++)
	{
		getrusage(RUSAGE_THREAD, &ru);
		sink += ru.ru_oublock;
	}
	return (now_ns() - t0) / n;
}

static double
time_clock(long n)
{
	struct timespec ts;
	double		t0 = now_ns();

	for (long i = 0; i < n; i++)
	{
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
	return (now_ns() - t0) / n;
}

static double
time_load(long n)
{
	double		t0 = now_ns();

	for (long i = 0; i < n; i++)
		sink += pending;
	return (now_ns() - t0) / n;
}

static int
cmp(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

static void
report(const char *name, double *v, int n)
{
	qsort(v, n, sizeof(double), cmp);
	printf("%-34s %8.1f ns [%.1f-%.1f]\n", name, v[n / 2], v[0], v[n - 1]);
}

int
main(int argc, char **argv)
{
	int			blocks = argc > 1 ? atoi(argv[1]) : 15;
	long		calls = argc > 2 ? atol(argv[2]) : 200000;
	double	   *g = calloc(blocks, sizeof(double));
	double	   *c = calloc(blocks, sizeof(double));
	double	   *l = calloc(blocks, sizeof(double));

	if (blocks < 1 || calls < 1 || !g || !c || !l)
		return 2;
	for (int b = 0; b < blocks; b++)
	{
		/* rotate the order so no variant always runs first */
		for (int k = 0; k < 3; k++)
		{
			switch ((b + k) % 3)
			{
				case 0:
					g[b] = time_getrusage(calls);
					break;
				case 1:
					c[b] = time_clock(calls);
					break;
				case 2:
					l[b] = time_load(calls);
					break;
			}
		}
	}
	printf("%d blocks of %ld calls each, interleaved\n", blocks, calls);
	report("getrusage(RUSAGE_THREAD) (18)", g, blocks);
	report("clock_gettime(CLOCK_MONOTONIC)", c, blocks);
	report("volatile load (15, 17)", l, blocks);
	return 0;
}
