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
 * for its last member, and the cycle is F + S, S the last arrival.  How
 * far S lies beyond T depends on how much the outside times vary: commit
 * timing measures each backend's gaps between durable commits, and with
 * their coefficient of variation v the model takes
 *
 *		S = T x (1 + v x (H(G) - 1))	(H: the harmonic number)
 *
 * which is T for clients that all take the same time (v = 0) and the
 * largest of G exponential times, T x H(G), for v = 1.  The gather waits
 * for the group from its first arrival, T x (1 - v x (1 - 1/G)), at most
 * its cap W (half the flush time, wp_gather_cap_us).  When the group
 * arrives within the cap,
 *
 *		predicted C = G / (F + S),	never above G / F;
 *
 * when it does not, the cap closes every group: the cycle is F + W, a
 * committer that arrives after the sleep waits for the next group, and
 * with exponential outside times a committer's turn takes
 * (F + W) x (1 + e^(-W/T) / (1 - e^(-(F+W)/T))) on average, so
 *
 *		predicted C = G / that turn
 *
 * (x1 or a little under for long outside times: the gather cannot make a
 * load whose commits arrive at random group better than PostgreSQL does).
 * The commit p99 keeps its ratio to the mean commit time, which becomes
 * the turn minus T.  This is the bound the gather approaches; a static
 * delay reaches less of it.
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
/* the gather's shortest cap: below it a cap is pointless */
#define WP_GATHER_MIN_CAP_US	50
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

/*
 * wp_gather_cap_us
 *		The gather's cap for a flush time: half of it, at least
 *		WP_GATHER_MIN_CAP_US, at most walpilot.commit_delay_max (0: no
 *		delay may be set).
 */
int
wp_gather_cap_us(double flush_us)
{
	if (wp_commit_delay_max_us <= 0)
		return 0;
	return Min(wp_commit_delay_max_us,
			   (int) Max(flush_us / 2, (double) WP_GATHER_MIN_CAP_US));
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
				committers = 0,
				gap_weight = 0,
				gap_mean = 0,
				gap_sq = 0;
	int			i;
	double		g,
				t,
				v,
				first,
				turn;

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
		if (s->outside_mean_us > 0)
		{
			double		mean = s->outside_mean_us;
			double		sd = s->outside_sd_us;

			gap_weight += (double) s->commits;
			gap_mean += (double) s->commits * mean;
			gap_sq += (double) s->commits * (sd * sd + mean * mean);
		}
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

	/* how much the gaps vary: pooled over the seconds, by their commits */
	m->outside_cv = 1.0;
	if (gap_weight > 0 && gap_mean > 0)
	{
		double		mean = gap_mean / gap_weight;
		double		var = gap_sq / gap_weight - mean * mean;

		m->outside_measured = true;
		m->outside_cv = Min(sqrt(Max(var, 0.0)) / mean, 1.0);
	}
	v = m->outside_cv;
	m->gather_cap_us = wp_gather_cap_us(m->flush_us);
	m->arrival_spread_us = t * (1 + v * (harmonic(g) - 1));
	first = t * (1 - v * (1 - 1 / Max(g, 1.0)));
	m->flush_cycle_limit = g / (m->flush_us / 1e6);
	if (m->arrival_spread_us - first <= m->gather_cap_us || t <= 0)
		turn = m->flush_us + m->arrival_spread_us;
	else
	{
		double		f = m->flush_us;
		double		w = m->gather_cap_us;

		m->capped = true;
		turn = (f + w) * (1 + exp(-w / t) / (1 - exp(-(f + w) / t)));
	}
	m->predicted_commits_per_s = Min(g / (turn / 1e6), m->flush_cycle_limit);
	m->predicted_gain = m->predicted_commits_per_s / m->commits_per_s;
	/* the commit time: a committer's turn less its time outside */
	m->predicted_p99_us = m->commit_mean_us > 0 ?
		m->commit_p99_us * Max(turn - t, m->flush_us) / m->commit_mean_us : 0;

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
	wp_ev_num(e, "outside_cv", round(m->outside_cv * 100) / 100);
	wp_ev_str(e, "outside_cv_source", m->outside_measured ?
			  "the committers' gaps between durable commits" :
			  "none measured: 1, exponential");
	wp_ev_num(e, "arrival_spread_us", round(m->arrival_spread_us));
	wp_ev_num(e, "gather_cap_us", round(m->gather_cap_us));
	wp_ev_str(e, "group_closed_by", m->capped ? "the cap" : "its last arrival");
	wp_ev_num(e, "commits_per_flush", round(m->commits_per_flush * 100) / 100);
	wp_ev_num(e, "flush_cycle_limit", round(m->flush_cycle_limit));
	wp_ev_num(e, "wal_wait_share", round(m->wal_wait_share * 1000) / 1000);
	wp_ev_num(e, "cpu_share", round(m->cpu_share * 1000) / 1000);
	wp_ev_num(e, "other_wait_share", round(m->other_wait_share * 1000) / 1000);
	wp_ev_num(e, "standby_wait_share", round(m->standby_share * 1000) / 1000);
	wp_ev_str(e, "model", "closed loop of G committers, T = G / C - mean commit time: the group's last arrival S = T x (1 + v x (H(G) - 1)), v the gaps' coefficient of variation, H the harmonic number; arriving within the gather's cap W: predicted commits/s = G / (F + S), at most G / F; else G / ((F + W) x (1 + e^(-W/T) / (1 - e^(-(F+W)/T)))); p99 scaled with the mean commit time");
}
