/*-------------------------------------------------------------------------
 *
 * commit_model.c
 *		A model of the commit path: the commits/s and p99 this load would
 *		reach with every commit of a group in one flush, from what the
 *		instruments measured in the last WP_MODEL_WINDOW_S seconds.
 *
 * The load is closed-loop: G committers (the backends with two durable
 * commits or more in a second, averaged over the seconds used; one that
 * commits once, autovacuum say, is no part of the cycle) each cycle through
 * work outside the commit (the client's turn, the statements, a pause
 * between transactions) and a commit, so that
 * C = G / (T + Lc), with C the durable commits/s and Lc the mean commit
 * time (commit record insert to flush return).  T = G / C - Lc is what
 * the measurements leave for the outside work.
 *
 * Without a delay a commit that arrives while a flush runs waits for it
 * and then for a flush of its own (Lc between F and 2F).  With ideal
 * grouping the committers a flush released arrive again after their own
 * outside time and all go into the next flush together: the group waits
 * for its last member, and the cycle is F + max(outside times).  The
 * model takes the outside times as exponential with mean T, whose maximum
 * over G is T x H(G) (H: the harmonic number), so
 *
 *		predicted C = G / (F + T x H(G)),	never above G / F
 *
 * and the commit p99 keeps its ratio to the mean commit time, which
 * becomes F + T x H(G).  This is the bound the gather approaches (it
 * sleeps until the group has arrived); a static delay reaches less of it.
 *
 * What it leaves out, and says so rather than predicting: a load whose
 * committers are not mostly waiting on the WAL flush (CPU saturation, row
 * locks, data I/O: the WAL wait share under WP_MODEL_MIN_WAL_SHARE), and
 * a synchronous standby that dominates the commit time (the standby
 * already groups its own flushes).  Checkpoints are in the measurements
 * as they come.
 *
 * Computed on read, like the recommendations: a copy of the timeline's
 * last seconds (wp_timeline_last: a short shared lock), no lock while
 * computing.
 *
 * IDENTIFICATION
 *	  src/pilots/commit_model.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xlog.h"
#include "utils/timestamp.h"

#include "instruments.h"
#include "pilots.h"
#include "commit_model.h"

/* the pilot's engage test (pilot_commit_delay.c), per second */
#define WP_MODEL_MIN_COMMITS	20
#define WP_MODEL_MIN_ACTIVE		1.5
#define WP_MODEL_MIN_FLUSH_US	500
#define WP_MODEL_MIN_FLUSH_BUSY 0.5
/* the committers' WAL waits the model needs, and a standby's share it does not */
#define WP_MODEL_MIN_WAL_SHARE	0.5
#define WP_MODEL_MAX_STANDBY_SHARE 0.5

static double
harmonic(double g)
{
	double		h = 0;
	int			k;

	for (k = 1; k <= (int) g; k++)
		h += 1.0 / k;
	return h;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/*
 * wp_commit_model
 *		Measure the inputs and predict; m->verdict says whether a
 *		prediction was made and m->why says why in words.
 */
void
wp_commit_model(WpCommitModel *m)
{
	WpSecond   *tl = palloc(sizeof(WpSecond) * WP_MODEL_WINDOW_S);
	double	   *p99 = palloc(sizeof(double) * WP_MODEL_WINDOW_S);
	TimestampTz since = GetCurrentTimestamp() -
		(int64) WP_MODEL_WINDOW_S * USECS_PER_SEC;
	int			ntl = wp_timeline_last(WP_MODEL_WINDOW_S, tl);
	bool		have_flush;
	double		commits = 0,
				flushes = 0,
				commit_us = 0,
				standby_us = 0,
				active = 0,
				cpu = 0,
				wal = 0,
				active_mean = 0,
				committers = 0;
	int			i;
	double		g,
				t,
				cycle;

	memset(m, 0, sizeof(WpCommitModel));
	have_flush = wp_flush_estimate_us(&m->flush_us, m->flush_source,
									  sizeof(m->flush_source));
	for (i = 0; i < ntl; i++)
	{
		const WpSecond *s = &tl[i];
		double		act = s->samples > 0 ? (double) s->active_sum / s->samples : 0;

		if (s->samples == 0 || s->ts < since)
			continue;
		m->window_seconds++;
		if (s->commits < WP_MODEL_MIN_COMMITS || act < WP_MODEL_MIN_ACTIVE)
			continue;
		/* the commit-led flushes busy for half the second or more */
		if (have_flush && s->commit_flushes > 0 &&
			s->commit_flushes * m->flush_us < WP_MODEL_MIN_FLUSH_BUSY * 1e6)
			continue;
		p99[m->seconds++] = s->commit_p99_us;
		commits += (double) s->commits;
		flushes += (double) s->commit_flushes;
		commit_us += (double) s->commit_time_us;
		standby_us += (double) s->sync_rep_wait_us;
		active += s->active_sum;
		cpu += s->cpu_sum;
		wal += (double) s->wal_write_lock_sum + s->wal_sync_sum +
			s->wal_write_sum + s->commit_delay_sum;
		active_mean += act;
		committers += s->committers;
	}
	pfree(tl);

	if (!enableFsync)
	{
		strlcpy(m->why, "fsync is off: no commit waits for a flush", sizeof(m->why));
		pfree(p99);
		return;
	}
	if (!have_flush || m->flush_us < WP_MODEL_MIN_FLUSH_US)
	{
		if (have_flush)
			snprintf(m->why, sizeof(m->why),
					 "the WAL flush takes %.0f us (from %s): under %d us there is little to group",
					 m->flush_us, m->flush_source, WP_MODEL_MIN_FLUSH_US);
		else
			strlcpy(m->why, "no flush time measured yet", sizeof(m->why));
		pfree(p99);
		return;
	}
	if (m->seconds < WP_MODEL_MIN_SECONDS || commits <= 0)
	{
		snprintf(m->why, sizeof(m->why),
				 "flush-bound in %d of the last %d s, needs %d (%d durable commits/s from %.1f active backends, the flushes busy half the second)",
				 m->seconds, m->window_seconds, WP_MODEL_MIN_SECONDS,
				 WP_MODEL_MIN_COMMITS, WP_MODEL_MIN_ACTIVE);
		pfree(p99);
		return;
	}

	qsort(p99, m->seconds, sizeof(double), cmp_double);
	m->commit_p99_us = p99[m->seconds / 2];
	pfree(p99);
	m->commits_per_s = commits / m->seconds;
	m->commit_mean_us = commit_us / commits;
	m->commits_per_flush = flushes > 0 ? commits / flushes : 0;
	m->cpu_share = active > 0 ? cpu / active : 0;
	m->wal_wait_share = active > 0 ? Min(wal / active, 1.0) : 0;
	m->other_wait_share = Max(1.0 - m->cpu_share - m->wal_wait_share, 0.0);
	m->standby_share = commit_us > 0 ? Min(standby_us / commit_us, 1.0) : 0;

	/*
	 * G: every backend that committed repeatedly, idle in between or not.
	 * Counting only the active ones would take a load paced by its clients
	 * for a few committers with no time outside the commit.
	 */
	g = committers > 0 ? committers / m->seconds : active_mean / m->seconds;
	m->committers = g;
	t = Max(g / m->commits_per_s * 1e6 - m->commit_mean_us, 0.0);
	m->outside_us = t;
	m->arrival_spread_us = t * harmonic(g);
	m->flush_cycle_limit = g / (m->flush_us / 1e6);
	cycle = m->flush_us + m->arrival_spread_us;
	m->predicted_commits_per_s = Min(g / (cycle / 1e6), m->flush_cycle_limit);
	m->predicted_gain = m->predicted_commits_per_s / m->commits_per_s;
	m->predicted_p99_us = m->commit_mean_us > 0 ?
		m->commit_p99_us * cycle / m->commit_mean_us : 0;

	if (m->standby_share >= WP_MODEL_MAX_STANDBY_SHARE)
	{
		m->verdict = WP_MODEL_OUT_OF_SCOPE;
		snprintf(m->why, sizeof(m->why),
				 "a synchronous standby takes %.0f %% of the commit time: it groups its own flushes, which the model leaves out",
				 m->standby_share * 100);
	}
	else if (m->wal_wait_share < WP_MODEL_MIN_WAL_SHARE)
	{
		m->verdict = WP_MODEL_OUT_OF_SCOPE;
		snprintf(m->why, sizeof(m->why),
				 "the committers wait on the WAL flush in %.0f %% of their active samples (CPU %.0f %%, other waits %.0f %%), needs %.0f %%: what bounds this load (CPU, row locks, data I/O) is what the model leaves out",
				 m->wal_wait_share * 100, m->cpu_share * 100,
				 m->other_wait_share * 100, WP_MODEL_MIN_WAL_SHARE * 100);
	}
	else if (m->predicted_gain < WP_MODEL_WORTH_GAIN)
	{
		m->verdict = WP_MODEL_NOTHING_TO_WIN;
		snprintf(m->why, sizeof(m->why),
				 "nothing to win: grouping every commit would give x%.2f (%.0f commits/s from %.0f), under x%.2f",
				 m->predicted_gain, m->predicted_commits_per_s,
				 m->commits_per_s, WP_MODEL_WORTH_GAIN);
	}
	else
	{
		m->verdict = WP_MODEL_GAIN;
		snprintf(m->why, sizeof(m->why),
				 "grouping the commits would give about x%.2f: %.0f commits/s from %.0f, p99 about %.0f us from %.0f",
				 m->predicted_gain, m->predicted_commits_per_s,
				 m->commits_per_s, m->predicted_p99_us, m->commit_p99_us);
	}
}

const char *
wp_commit_model_verdict_name(WpModelVerdict v)
{
	switch (v)
	{
		case WP_MODEL_NO_EVIDENCE:
			return "no evidence";
		case WP_MODEL_OUT_OF_SCOPE:
			return "out of the model's scope";
		case WP_MODEL_NOTHING_TO_WIN:
			return "nothing to win";
		case WP_MODEL_GAIN:
			return "tune would win";
	}
	return "?";
}

/*
 * wp_commit_model_evidence
 *		The prediction, its inputs and the seconds they rest on, as
 *		evidence keys (the caller began e).
 */
void
wp_commit_model_evidence(const WpCommitModel *m, WpEvidence *e)
{
	wp_ev_str(e, "verdict", wp_commit_model_verdict_name(m->verdict));
	wp_ev_str(e, "why", m->why);
	wp_ev_num(e, "seconds", m->seconds);
	wp_ev_num(e, "window_seconds", m->window_seconds);
	if (m->seconds < WP_MODEL_MIN_SECONDS)
		return;
	wp_ev_num(e, "predicted_commits_per_s", round(m->predicted_commits_per_s));
	wp_ev_num(e, "current_commits_per_s", round(m->commits_per_s));
	wp_ev_num(e, "predicted_gain", round(m->predicted_gain * 1000) / 1000);
	wp_ev_num(e, "predicted_p99_us", round(m->predicted_p99_us));
	wp_ev_num(e, "current_p99_us", round(m->commit_p99_us));
	wp_ev_num(e, "flush_us", round(m->flush_us));
	wp_ev_str(e, "flush_source", m->flush_source);
	wp_ev_num(e, "committers", round(m->committers * 10) / 10);
	wp_ev_num(e, "commit_mean_us", round(m->commit_mean_us));
	wp_ev_num(e, "outside_us", round(m->outside_us));
	wp_ev_num(e, "arrival_spread_us", round(m->arrival_spread_us));
	wp_ev_num(e, "commits_per_flush", round(m->commits_per_flush * 100) / 100);
	wp_ev_num(e, "flush_cycle_limit", round(m->flush_cycle_limit));
	wp_ev_num(e, "wal_wait_share", round(m->wal_wait_share * 1000) / 1000);
	wp_ev_num(e, "cpu_share", round(m->cpu_share * 1000) / 1000);
	wp_ev_num(e, "other_wait_share", round(m->other_wait_share * 1000) / 1000);
	wp_ev_num(e, "standby_wait_share", round(m->standby_share * 1000) / 1000);
	wp_ev_str(e, "model", "closed loop of G committers: predicted commits/s = G / (F + T x H(G)), T = G / C - mean commit time, H the harmonic number, at most G / F; p99 scaled with the mean commit time");
}
