/*-------------------------------------------------------------------------
 *
 * advice.c
 *		walpilot.recommendations: settings walpilot does not tune itself,
 *		each recommended only from what it measured here.
 *
 * Computed on read, in the SQL function, not by the worker: the inputs
 * (the per-second timeline, the checkpoint records, the last probe) are
 * already in shared memory, the computation is a pass over at most
 * WP_ADVICE_WINDOW_S seconds and 64 checkpoints, and a reader then always
 * sees the current settings and evidence -- nothing to size at start,
 * nothing for the worker to do each tick.  The timeline is copied with
 * wp_timeline_last() (a short shared lock), the checkpoint records with
 * wp_checkpoints_copy() and the probe's rows with wp_probe_snapshot(); no
 * lock is held while the rules run, and the view forms the SQL rows
 * (views/recommendations_sql.c).
 *
 * Every rule below has three parts: the evidence it needs (a row appears
 * only with it, and disappears when a newer measurement or the current
 * setting no longer shows it), the recommended value (computed from the
 * measured rates), and a confidence in [0, 1]: the share of the evidence
 * that agrees, times how much evidence there is relative to what the rule
 * wants.  docs/advice.md describes each one.
 *
 * IDENTIFICATION
 *	  src/advice/advice.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "postmaster/bgwriter.h"
#include "postmaster/walwriter.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/tuplestore.h"

#include "advice.h"
#include "commit_model.h"

/* Timeline-based rules look at this many most recent seconds. */
#define WP_ADVICE_WINDOW_S		300
/* commit_delay looks at the last minute, as the pilot's engage test would */
#define WP_ADVICE_COMMIT_WINDOW_S 60
#define WP_ADVICE_MAX_PROBE		16

/* The pilot's engage thresholds (pilot_commit_delay.c), for commit_delay. */
#define WP_ADVICE_MIN_COMMITS	20
#define WP_ADVICE_MIN_FLUSH_US	500
#define WP_ADVICE_CONFIRM_FLUSH_US 400	/* a probe faster than this: no */

typedef struct AdvProbe
{
	char		method[24];
	int			writes;
	double		p50_us;
	double		p99_us;
	double		samples;
	double		age_s;
} AdvProbe;

/*---- small helpers ----*/

static WpAdviceRow *
new_row(List **rows, const char *setting)
{
	WpAdviceRow	   *r = palloc0(sizeof(WpAdviceRow));

	r->setting = setting;
	wp_ev_begin(&r->evidence);
	*rows = lappend(*rows, r);
	return r;
}

/* a size in kB as the server prints it: kB, MB or GB when exact */
static void
format_kb(char *buf, size_t len, int64 kb)
{
	if (kb >= 1024 * 1024 && kb % (1024 * 1024) == 0)
		snprintf(buf, len, INT64_FORMAT "GB", kb / (1024 * 1024));
	else if (kb >= 1024 && kb % 1024 == 0)
		snprintf(buf, len, INT64_FORMAT "MB", kb / 1024);
	else
		snprintf(buf, len, INT64_FORMAT "kB", kb);
}

/*---- inputs ----*/

/*
 * unix_epoch_s
 *		A timestamp as extract(epoch FROM ...) gives it.
 */
static double
unix_epoch_s(TimestampTz t)
{
	return (double) t / USECS_PER_SEC +
		(double) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
}

/*
 * read_inputs
 *		Checkpoints started in the last hour (the instrument's copy, oldest
 *		first) and the last walpilot.probe()'s measured rows, copied into
 *		the caller's arrays.
 */
static void
read_inputs(WpCheckpointRecord *ck, int *nck, AdvProbe *pr, int *npr)
{
	WpCheckpointRow *rows = palloc(sizeof(WpCheckpointRow) * WP_CKPT_HISTORY);
	WpProbeSnapshot *probe = palloc(sizeof(WpProbeSnapshot));
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz since = now - (TimestampTz) WP_CKPT_WINDOW_S * USECS_PER_SEC;
	int			n;
	int			i;

	*nck = *npr = 0;
	n = wp_checkpoints_copy(rows);
	for (i = 0; i < n && *nck < WP_CKPT_MAX_RECORDS; i++)
	{
		WpCheckpointRow *r = &rows[i];
		WpCheckpointRecord *c;

		if (r->started_at <= since)
			continue;
		c = &ck[(*nck)++];
		c->started = unix_epoch_s(r->started_at);
		c->finished = r->finished_at != 0 ? unix_epoch_s(r->finished_at) : 0;
		strlcpy(c->reason, r->reason, sizeof(c->reason));
		c->wal_bytes = r->wal_bytes >= 0 ? (double) r->wal_bytes : -1;
		c->write_ms = Max(r->write_ms, 0);
		c->sync_ms = Max(r->sync_ms, 0);
		c->stall_seconds = r->have_stall ? r->stall_seconds : -1;
	}

	wp_probe_snapshot(probe);
	for (i = 0; i < probe->probe_nrows && *npr < WP_ADVICE_MAX_PROBE; i++)
	{
		WpProbeRow *r = &probe->probe_rows[i];
		AdvProbe   *p;

		if (r->writes <= 0 || !r->measured || !(r->p50_us > 0))
			continue;
		p = &pr[(*npr)++];
		strlcpy(p->method, r->method, sizeof(p->method));
		p->writes = r->writes;
		p->p50_us = r->p50_us;
		p->p99_us = r->p99_us;
		p->samples = r->ops > 0 ? (double) r->ops : 0;
		p->age_s = (double) (now - probe->probe_at) / USECS_PER_SEC;
	}
	pfree(rows);
	pfree(probe);
}

/*---- max_wal_size ----*/

static void
advise_max_wal_size(List **rows, const WpCheckpointRecord *ck, int nck)
{
	WpWalSizeAnalysis a;
	WpAdviceRow	   *r;

	if (!wp_ckpt_max_wal_size(ck, nck, &a))
		return;
	r = new_row(rows, "max_wal_size");
	format_kb(r->current, sizeof(r->current), (int64) max_wal_size_mb * 1024);
	format_kb(r->recommended, sizeof(r->recommended), a.recommended_mb * 1024);
	r->restart = false;
	r->confidence = a.confidence;
	wp_ckpt_max_wal_size_evidence(&a, &r->evidence);
	/* walpilot.tune_max_wal_size: the worker applies this very row */
	{
		char		note[WP_AS_NOTE_LEN];

		(void) wp_alter_system_state(NULL, NULL, note);
		wp_ev_bool(&r->evidence, "walpilot_applies_it",
				   wp_mode == WP_MODE_TUNE && wp_tune_max_wal_size &&
				   strncmp(note, "hands off", 9) != 0);
		if (note[0] != '\0')
			wp_ev_str(&r->evidence, "walpilot_holds", note);
	}
	wp_ev_str(&r->evidence, "rule", "max_wal_size = wal_bytes_per_s x checkpoint_timeout x (1 + checkpoint_completion_target) x 1.1, at least twice the current; pg_wal may grow to about this size");
	wp_ev_str(&r->evidence, "confidence_rule", "wal / (wal + timed checkpoints) x min(1, wal checkpoints / 4)");
}

/*---- checkpoint_completion_target and checkpoint_timeout ----*/

/*
 * checkpoint_completion_target below 0.9 packs a checkpoint's writes into
 * a shorter part of the interval.  Evidence: checkpoints of the last hour
 * during which durable commits stalled (stall_seconds > 0).
 */
static void
advise_completion_target(List **rows, WpCheckpointRecord *ck, int nck)
{
	int			n = 0,
				stalled = 0,
				stall_s = 0;
	double		sync_ms = 0;
	WpAdviceRow	   *r;
	int			i;

	if (CheckPointCompletionTarget >= 0.9)
		return;
	for (i = 0; i < nck; i++)
	{
		if (ck[i].finished == 0 || ck[i].stall_seconds < 0 ||
			(strcmp(ck[i].reason, "time") != 0 &&
			 strcmp(ck[i].reason, "wal") != 0))
			continue;
		n++;
		if (ck[i].stall_seconds > 0)
		{
			stalled++;
			stall_s += ck[i].stall_seconds;
			sync_ms += ck[i].sync_ms;
		}
	}
	if (stalled < 2)
		return;

	r = new_row(rows, "checkpoint_completion_target");
	snprintf(r->current, sizeof(r->current), "%g", CheckPointCompletionTarget);
	strlcpy(r->recommended, "0.9", sizeof(r->recommended));
	r->confidence = ((double) stalled / n) * wp_clamp01(stalled / 3.0);
	wp_ev_num(&r->evidence, "checkpoints", n);
	wp_ev_num(&r->evidence, "checkpoints_with_stalls", stalled);
	wp_ev_num(&r->evidence, "stall_seconds", stall_s);
	wp_ev_num(&r->evidence, "mean_sync_ms_of_stalled", sync_ms / stalled);
	wp_ev_str(&r->evidence, "rule", "commits stalled during checkpoints whose writes were packed into the first checkpoint_completion_target of the interval; 0.9 spreads them (the server default)");
	wp_ev_str(&r->evidence, "confidence_rule", "stalled / checkpoints x min(1, stalled / 3)");
}

/*
 * checkpoint_timeout: checkpoints are timed (max_wal_size is not what
 * triggers them) and full-page images -- written for the first change of
 * each page after every checkpoint -- are most of the WAL.  A longer
 * interval writes fewer of them.  Evidence: at least three timed
 * checkpoints in the last hour, none WAL-triggered, and the FPI share of
 * the WAL bytes over the timeline window.
 */
static void
advise_checkpoint_timeout(List **rows, WpCheckpointRecord *ck, int nck,
						  const WpSecond *tl, int ntl)
{
	int			n_timed = 0,
				n_wal = 0,
				i;
	double		fpi = 0,
				bytes = 0,
				share,
				rate;
	int			rec_s;
	WpAdviceRow	   *r;

	if (CheckPointTimeout >= 1800)
		return;
	for (i = 0; i < nck; i++)
	{
		/* timed at the current interval: older settings' are no evidence */
		if (strcmp(ck[i].reason, "time") == 0 && i > 0 &&
			ck[i].started - ck[i - 1].started >= 0.9 * CheckPointTimeout)
			n_timed++;
		else if (strcmp(ck[i].reason, "wal") == 0)
			n_wal++;
	}
	if (n_timed < 2 || n_wal > 0)
		return;
	for (i = 0; i < ntl; i++)
	{
		fpi += (double) tl[i].wal_fpi;
		bytes += (double) tl[i].wal_bytes;
	}
	if (bytes < 16.0 * 1024 * 1024)
		return;
	share = wp_clamp01(fpi * BLCKSZ / bytes);
	if (share < 0.5)
		return;
	rec_s = Min(CheckPointTimeout * 2, 1800);
	rate = bytes / Max(ntl, 1);

	r = new_row(rows, "checkpoint_timeout");
	snprintf(r->current, sizeof(r->current), "%ds", CheckPointTimeout);
	snprintf(r->recommended, sizeof(r->recommended), "%ds", rec_s);
	r->confidence = wp_clamp01((share - 0.5) / 0.3) * wp_clamp01(n_timed / 4.0);
	wp_ev_num(&r->evidence, "checkpoint_timeout_s", CheckPointTimeout);
	wp_ev_num(&r->evidence, "timed_checkpoints", n_timed);
	wp_ev_num(&r->evidence, "wal_checkpoints", n_wal);
	wp_ev_num(&r->evidence, "fpi_share_of_wal_bytes", share);
	wp_ev_num(&r->evidence, "wal_bytes_per_s", rate);
	wp_ev_num(&r->evidence, "max_wal_size_needed_mb",
		   rate * rec_s * (1.0 + CheckPointCompletionTarget) * 1.1 / (1024.0 * 1024.0));
	wp_ev_str(&r->evidence, "rule", "timed checkpoints and full-page images (counted as BLCKSZ each, an upper bound) at least half the WAL: double checkpoint_timeout, at most 30 min; max_wal_size must then hold max_wal_size_needed_mb; crash recovery gets longer");
	wp_ev_str(&r->evidence, "confidence_rule", "min(1, (fpi share - 0.5) / 0.3) x min(1, timed checkpoints / 4)");
}

/*---- wal_buffers ----*/

/*
 * Evidence: pg_stat_wal's wal_buffers_full (a backend had to write WAL
 * out itself because no buffer was free) as a share of the WAL pages
 * generated, over the seconds with WAL traffic (a long statement's counts
 * arrive at its end, so pages count, not seconds); and the time processes
 * spent waiting on WALWrite (lock and I/O) in those seconds.  Recommended: the
 * next power of two that holds the WAL of the busiest second for twice
 * the WAL writer's cycle, at least double the current.
 */
static void
advise_wal_buffers(List **rows, const WpSecond *tl, int ntl)
{
	double		full = 0,
				bytes = 0,
				peak = 0,
				ww_sum = 0,
				active_sum = 0,
				commits = 0;
	int			secs = 0,
				secs_full = 0,
				i;
	double		share,
				wait_share,
				cur_kb = (double) XLOGbuffers * XLOG_BLCKSZ / 1024.0;
	int64		rec_kb;
	WpAdviceRow	   *r;

	for (i = 0; i < ntl; i++)
	{
		const WpSecond *s = &tl[i];

		/*
		 * pg_stat_wal's counts arrive when the backend publishes them, often
		 * in a later second than the WAL they describe (a bulk load's at
		 * its end, maybe in an idle second): count them in every second.
		 */
		full += (double) s->wal_buffers_full;
		if (s->wal_bytes < XLOG_BLCKSZ)
			continue;
		secs++;
		bytes += (double) s->wal_bytes;
		commits += (double) s->commits;
		peak = Max(peak, (double) s->wal_bytes);
		if (s->wal_buffers_full > 0)
			secs_full++;
		ww_sum += (double) s->wal_write_sum + (double) s->wal_write_lock_sum;
		active_sum += (double) s->active_sum;
	}
	if (secs < 3 || bytes <= 0)
		return;
	share = full * XLOG_BLCKSZ / bytes;
	wait_share = active_sum > 0 ? ww_sum / active_sum : 0;
	/* a long statement publishes its counts at its end: count pages, not seconds */
	if (share < 0.02 || full < 256)
		return;

	rec_kb = wp_pow2_at_least(Max(2.0 * cur_kb,
							   peak * 2.0 * WalWriterDelay / 1000.0 / 1024.0));
	rec_kb = Min(rec_kb, (int64) 1024 * 1024);
	if ((double) rec_kb <= cur_kb)
		return;

	r = new_row(rows, "wal_buffers");
	format_kb(r->current, sizeof(r->current), (int64) cur_kb);
	format_kb(r->recommended, sizeof(r->recommended), rec_kb);
	r->restart = true;
	r->confidence = wp_clamp01(share / 0.2) * wp_clamp01(full / 4096.0) *
		(wait_share >= 0.02 ? 1.0 : 0.5);
	wp_ev_num(&r->evidence, "seconds", secs);
	wp_ev_num(&r->evidence, "seconds_with_buffers_full", secs_full);
	wp_ev_num(&r->evidence, "wal_buffers_full_per_s", full / secs);
	wp_ev_num(&r->evidence, "share_of_wal_pages_written_by_full_buffers", share);
	wp_ev_num(&r->evidence, "wal_bytes_per_s", bytes / secs);
	wp_ev_num(&r->evidence, "wal_bytes_peak_second", peak);
	wp_ev_num(&r->evidence, "walwrite_waiters_share_of_active", wait_share);
	wp_ev_num(&r->evidence, "durable_commits_per_s", commits / secs);
	wp_ev_str(&r->evidence, "rule", "wal_buffers_full at least 2 % of the WAL pages, and 256 pages or more: the next power of two holding the busiest second's WAL for 2 x wal_writer_delay, at least double the current");
	wp_ev_str(&r->evidence, "confidence_rule", "min(1, full share / 0.2) x min(1, full pages / 4096), halved when WALWrite waits are under 2 % of active time");
}

/*---- wal_sync_method ----*/

static const AdvProbe *
probe_row(const AdvProbe *pr, int npr, const char *method, int writes)
{
	int			i;

	for (i = 0; i < npr; i++)
		if (pr[i].writes == writes && strcmp(pr[i].method, method) == 0)
			return &pr[i];
	return NULL;
}

/*
 * Evidence: the last walpilot.probe() timed every method the platform
 * has (the others are rows with NULLs, so they are never candidates),
 * as this server would write and sync WAL.  Recommended: the method with
 * the lowest p50 at both 1 and 2 writes per sync, if it beats the
 * configured one by at least 20 % at both.
 */
static void
advise_sync_method(List **rows, const AdvProbe *pr, int npr)
{
	const char *cur = GetConfigOption("wal_sync_method", false, false);
	const AdvProbe *c1 = probe_row(pr, npr, cur, 1);
	const AdvProbe *c2 = probe_row(pr, npr, cur, 2);
	const AdvProbe *b1 = NULL,
			   *b2 = NULL;
	double		best = 0;
	int			i;
	WpAdviceRow	   *r;
	char		key[64];

	if (!enableFsync || c1 == NULL || c2 == NULL)
		return;
	for (i = 0; i < npr; i++)
	{
		const AdvProbe *p1 = &pr[i];
		const AdvProbe *p2;
		double		score;

		if (p1->writes != 1 || strcmp(p1->method, cur) == 0)
			continue;
		p2 = probe_row(pr, npr, p1->method, 2);
		if (p2 == NULL)
			continue;
		if (p1->p50_us > 0.8 * c1->p50_us || p2->p50_us > 0.8 * c2->p50_us)
			continue;
		score = p1->p50_us + p2->p50_us;
		if (b1 == NULL || score < best)
		{
			b1 = p1;
			b2 = p2;
			best = score;
		}
	}
	if (b1 == NULL)
		return;

	r = new_row(rows, "wal_sync_method");
	strlcpy(r->current, cur, sizeof(r->current));
	strlcpy(r->recommended, b1->method, sizeof(r->recommended));
	r->confidence = wp_clamp01(Min(Min(b1->samples, b2->samples),
								Min(c1->samples, c2->samples)) / 20.0) *
		(b1->p99_us < c1->p50_us && b2->p99_us < c2->p50_us ? 1.0 : 0.5) *
		(c1->age_s > 86400 ? 0.5 : 1.0);
	wp_ev_num(&r->evidence, "probe_age_s", c1->age_s);
	for (i = 0; i < npr; i++)
	{
		snprintf(key, sizeof(key), "%s_%dw_p50_us", pr[i].method, pr[i].writes);
		wp_ev_num(&r->evidence, key, pr[i].p50_us);
	}
	wp_ev_num(&r->evidence, "current_1w_p50_us", c1->p50_us);
	wp_ev_num(&r->evidence, "current_2w_p50_us", c2->p50_us);
	wp_ev_num(&r->evidence, "recommended_1w_p50_us", b1->p50_us);
	wp_ev_num(&r->evidence, "recommended_2w_p50_us", b2->p50_us);
	wp_ev_num(&r->evidence, "current_1w_p99_us", c1->p99_us);
	wp_ev_num(&r->evidence, "recommended_1w_p99_us", b1->p99_us);
	wp_ev_str(&r->evidence, "rule", "the method with the lowest p50 at 1 and 2 writes per sync, at least 20 % faster than the configured one at both, among those the probe could run here");
	wp_ev_str(&r->evidence, "confidence_rule", "min(1, fewest samples / 20), halved unless its p99 is below the configured p50 at both write counts, halved for a probe older than a day");
}

/*---- commit_delay / commit_siblings ----*/

/*
 * When the pilot may not tune (observe mode or tune_commit_delay off):
 * what it would try.  Evidence: flush-bound seconds in the last minute by
 * the pilot's own engage test (at least 20 durable commits/s, two or more
 * backends committing, a WAL flush of 500 us or more), and no probe of
 * the configured method finding it under 400 us (the pilot's confirm
 * probe would refuse a trial then).  The pilot's first
 * candidate is its gather mode (a commit_delay cap of half the flush,
 * commit_siblings 0, cut short when the group has arrived), which exists
 * only while walpilot tunes; the first candidate a static setting can
 * express is its next one: commit_delay = flush / 4, commit_siblings 1.
 */
static void
advise_commit_delay(List **rows, const WpSecond *tl, int ntl,
					const AdvProbe *pr, int npr)
{
	const AdvProbe *probe = probe_row(pr, npr,
									  GetConfigOption("wal_sync_method", false, false), 1);
	double		probe_factor = probe ? 1.0 : 0.5;
	TimestampTz since = GetCurrentTimestamp() -
		(int64) WP_ADVICE_COMMIT_WINDOW_S * USECS_PER_SEC;
	double		flush_us = 0;
	char		source[32];
	int			secs = 0,
				bound = 0,
				i;
	double		commits = 0,
				flushes = 0,
				active = 0;
	double		group,
				cap;
	int			delay_us,
				gather_cap;
	WpAdviceRow	   *r;

	if (wp_mode == WP_MODE_TUNE && wp_tune_commit_delay)
		return;
	if (!enableFsync || RecoveryInProgress())
		return;
	if (!wp_flush_estimate_us(&flush_us, source, sizeof(source)) ||
		flush_us < WP_ADVICE_MIN_FLUSH_US)
		return;
	/* as the pilot's confirm probe: a device that syncs fast is not slow */
	if (probe && probe->p50_us < WP_ADVICE_CONFIRM_FLUSH_US)
		return;
	for (i = 0; i < ntl; i++)
	{
		const WpSecond *s = &tl[i];
		double		act = s->samples > 0 ? (double) s->active_sum / s->samples : 0;

		if (s->samples == 0 || s->ts < since)
			continue;
		secs++;
		if (s->commits >= WP_ADVICE_MIN_COMMITS && act >= 1.5)
		{
			bound++;
			commits += (double) s->commits;
			flushes += (double) s->commit_flushes;
			active += act;
		}
	}
	if (bound < 5)
		return;
	group = flushes > 0 ? commits / flushes : active / bound;
	cap = Min((double) wp_commit_delay_max_us, flush_us);
	delay_us = (int) Min((double) wp_commit_delay_max_us, flush_us / 4);
	gather_cap = (int) (cap / 2);
	if (delay_us <= 0)
		return;

	if (CommitDelay < delay_us * 3 / 4 || CommitDelay > delay_us * 5 / 4)
	{
		r = new_row(rows, "commit_delay");
		snprintf(r->current, sizeof(r->current), "%d", CommitDelay);
		snprintf(r->recommended, sizeof(r->recommended), "%d", delay_us);
		r->confidence = 0.5 * probe_factor * (double) bound / secs;
		wp_ev_num(&r->evidence, "flush_us", flush_us);
		wp_ev_str(&r->evidence, "flush_source", source);
		wp_ev_num(&r->evidence, "probe_p50_us", probe ? probe->p50_us : NAN);
		wp_ev_num(&r->evidence, "flush_bound_seconds", bound);
		wp_ev_num(&r->evidence, "seconds", secs);
		wp_ev_num(&r->evidence, "commits_per_s", commits / bound);
		wp_ev_num(&r->evidence, "commits_per_flush", flushes > 0 ? commits / flushes : NAN);
		wp_ev_num(&r->evidence, "active_backends", active / bound);
		wp_ev_num(&r->evidence, "group_size", group);
		wp_ev_num(&r->evidence, "pilot_gather_cap_us", gather_cap);
		wp_ev_str(&r->evidence, "pilot_first_candidate", "gather mode (commit_delay cap = min(commit_delay_max, flush) / 2, commit_siblings 0), which needs walpilot.mode = 'tune'");
		wp_ev_str(&r->evidence, "rule", "flush-bound by the pilot's engage test in at least 5 of the last 60 s: commit_delay = min(walpilot.commit_delay_max, flush / 4), the pilot's first static candidate; not verified by a trial here");
		wp_ev_str(&r->evidence, "confidence_rule", "0.5 x flush-bound seconds / seconds (0.5: a trial, which only tune mode runs, would decide), halved again without a probe of the configured wal_sync_method (none when the probe finds it under 400 us)");
	}
	if (CommitSiblings != 1)
	{
		r = new_row(rows, "commit_siblings");
		snprintf(r->current, sizeof(r->current), "%d", CommitSiblings);
		strlcpy(r->recommended, "1", sizeof(r->recommended));
		r->confidence = 0.5 * probe_factor * (double) bound / secs;
		wp_ev_num(&r->evidence, "flush_bound_seconds", bound);
		wp_ev_num(&r->evidence, "group_size", group);
		wp_ev_str(&r->evidence, "rule", "with the commit_delay above: sleep whenever one other transaction is open (the pilot's static candidates use 1)");
		wp_ev_str(&r->evidence, "confidence_rule", "as for commit_delay");
	}
}

/*---- the WAL writer under asynchronous commits ----*/

/* the seconds of the window, summed, as both WAL writer rules read them */
typedef struct AdvAsyncLoad
{
	int			seconds;
	double		async;			/* asynchronous commits */
	double		durable;
	double		other_syncs_per_s;	/* syncs no durable commit led */
	double		syncs;
	double		wal_bytes;
	double		sync_time_us;
	double		wal_write_lock_sum;
	double		active_sum;
} AdvAsyncLoad;

/*
 * async_load
 *		Sum the seconds of the window that committed anything; false unless
 *		it is an asynchronous-commit load (at least 10 such seconds, 20
 *		asynchronous commits/s, twice as many as durable ones) whose syncs
 *		walpilot can tell from the commits'.  The rates are per second of
 *		load: the idle seconds around a batch would dilute them, and how
 *		much depends on how far back the window reaches.
 */
static bool
async_load(const WpSecond *tl, int ntl, AdvAsyncLoad *a)
{
	double		led = 0;
	int			i;

	memset(a, 0, sizeof(*a));
#if !WP_HAVE_LEADER_DETECTION
	return false;				/* no way to tell the commits' syncs apart */
#endif
	if (!enableFsync || RecoveryInProgress())
		return false;
	for (i = 0; i < ntl; i++)
	{
		if (tl[i].samples == 0 ||
			tl[i].async_commits + tl[i].commits == 0)
			continue;
		a->seconds++;
		a->async += (double) tl[i].async_commits;
		a->durable += (double) tl[i].commits;
		a->syncs += (double) tl[i].wal_syncs;
		led += (double) tl[i].commit_flushes;
		a->wal_bytes += (double) tl[i].wal_bytes;
		a->sync_time_us += (double) tl[i].wal_sync_time_us;
		a->wal_write_lock_sum += (double) tl[i].wal_write_lock_sum;
		a->active_sum += (double) tl[i].active_sum;
	}
	if (a->seconds < 10 || a->async / a->seconds < WP_ADVICE_MIN_COMMITS ||
		a->async < 2 * a->durable)
		return false;
	a->other_syncs_per_s = Max(0.0, a->syncs - led) / a->seconds;
	return true;
}

/*---- wal_writer_flush_after ----*/

/*
 * Asynchronous commits leave the flush to the WAL writer, which flushes
 * every wal_writer_delay, or sooner once wal_writer_flush_after of WAL is
 * written.  WAL writer wake-ups are not visible to walpilot; WAL syncs
 * are (pg_stat_wal), and so are the syncs durable commits led.  Evidence:
 * most commits asynchronous, and syncs not led by a durable commit well
 * above one per wal_writer_delay, which means wal_writer_flush_after is
 * what triggers them.  Recommended: the WAL of one wal_writer_delay, so
 * the WAL writer flushes about once per cycle.
 */
static void
advise_wal_writer(List **rows, const WpSecond *tl, int ntl)
{
	AdvAsyncLoad a;
	int			secs;
	double		async,
				durable,
				bytes,
				other_syncs,
				per_cycle,
				cur_kb = (double) WalWriterFlushAfter * XLOG_BLCKSZ / 1024.0;
	int64		rec_kb;
	WpAdviceRow	   *r;

	if (WalWriterFlushAfter == 0 || !async_load(tl, ntl, &a))
		return;
	secs = a.seconds;
	async = a.async;
	durable = a.durable;
	bytes = a.wal_bytes;
	other_syncs = a.other_syncs_per_s;
	per_cycle = 1000.0 / WalWriterDelay;
	if (other_syncs < 2.0 * per_cycle)
		return;
	rec_kb = wp_pow2_at_least(bytes / secs * WalWriterDelay / 1000.0 / 1024.0);
	rec_kb = Min(rec_kb, (int64) 64 * 1024);
	if ((double) rec_kb <= 2.0 * cur_kb)
		return;

	r = new_row(rows, "wal_writer_flush_after");
	format_kb(r->current, sizeof(r->current), (int64) cur_kb);
	format_kb(r->recommended, sizeof(r->recommended), rec_kb);
	r->confidence = wp_clamp01(async / (async + durable)) *
		wp_clamp01(other_syncs / (4.0 * per_cycle)) * wp_clamp01(secs / 60.0);
	wp_ev_num(&r->evidence, "seconds", secs);
	wp_ev_num(&r->evidence, "async_commits_per_s", async / secs);
	wp_ev_num(&r->evidence, "durable_commits_per_s", durable / secs);
	wp_ev_num(&r->evidence, "syncs_not_led_by_commits_per_s", other_syncs);
	wp_ev_num(&r->evidence, "wal_writer_cycles_per_s", per_cycle);
	wp_ev_num(&r->evidence, "wal_bytes_per_s", bytes / secs);
	wp_ev_str(&r->evidence, "not_measured", "WAL writer wake-ups that write nothing (only writes and syncs are counted)");
	wp_ev_str(&r->evidence, "rule", "most commits asynchronous and more than 2 syncs per wal_writer_delay not led by a durable commit: wal_writer_flush_after = the WAL of one wal_writer_delay (power of two, at most 64MB)");
	wp_ev_str(&r->evidence, "confidence_rule", "async share x min(1, syncs / (4 per cycle)) x min(1, seconds / 60)");
}

/*---- wal_writer_delay ----*/

/*
 * With asynchronous commits the WAL writer flushes the WAL once per
 * wal_writer_delay (when wal_writer_flush_after is not reached sooner),
 * holding WALWriteLock through the sync.  A short wal_writer_delay on a
 * slow device keeps it syncing much of the time; backends that must write
 * WAL themselves (full buffers, durable commits) wait on that lock.
 * Evidence: most commits asynchronous, about one sync per cycle not led
 * by a durable commit (so the delay, not wal_writer_flush_after, times
 * them), and those syncs taking at least a quarter of the time, by their
 * own measured duration (pg_stat_wal, pg_stat_io from 18, with
 * track_wal_io_timing) or the flush estimate.  Recommended: the delay at
 * which they take a tenth, at most 200 ms (the server default: a longer
 * one widens the window of asynchronous commits a crash loses, which is
 * the DBA's call).
 */
static void
advise_wal_writer_delay(List **rows, const WpSecond *tl, int ntl)
{
	AdvAsyncLoad a;
	int			secs;
	double		async,
				durable,
				other_syncs,
				per_cycle,
				sync_us,
				busy,
				lock_share;
	char		source[48];
	int			rec_ms;
	WpAdviceRow	   *r;

	if (WalWriterDelay >= 200 || !async_load(tl, ntl, &a) || a.syncs <= 0)
		return;
	secs = a.seconds;
	async = a.async;
	durable = a.durable;
	other_syncs = a.other_syncs_per_s;
	per_cycle = 1000.0 / WalWriterDelay;
	if (track_wal_io_timing && a.sync_time_us > 0)
	{
		sync_us = a.sync_time_us / a.syncs;
		strlcpy(source, WP_WAL_IO_VIEW " (track_wal_io_timing)", sizeof(source));
	}
	else if (!wp_flush_estimate_us(&sync_us, source, sizeof(source)))
		return;

	/*
	 * More than two per delay: wal_writer_flush_after times them.  Fewer
	 * than a quarter per cycle: the WAL writer is mostly idle.  A cycle is
	 * the delay plus the sync when nothing wakes the WAL writer early (see
	 * WP_ASYNC_COMMIT_WAKES_WALWRITER), so a sync much longer than the
	 * delay must not read as too few syncs.
	 */
	if (other_syncs < 0.25 * 1e6 / (WalWriterDelay * 1000.0 + sync_us) ||
		other_syncs > 2.0 * per_cycle)
		return;
	busy = other_syncs * sync_us / 1e6;
	if (busy < 0.25)
		return;
	/* the delay at which the syncs take a tenth of the time */
	rec_ms = (int) ceil(sync_us * 10.0 / 1000.0 / 10.0) * 10;
	rec_ms = Max(rec_ms, 2 * WalWriterDelay);
	rec_ms = Min(rec_ms, 200);
	if (rec_ms <= WalWriterDelay)
		return;
	lock_share = a.active_sum > 0 ? a.wal_write_lock_sum / a.active_sum : 0;

	r = new_row(rows, "wal_writer_delay");
	snprintf(r->current, sizeof(r->current), "%dms", WalWriterDelay);
	snprintf(r->recommended, sizeof(r->recommended), "%dms", rec_ms);
	r->confidence = wp_clamp01(async / (async + durable)) * wp_clamp01(busy / 0.5) *
		wp_clamp01(secs / 60.0) * (lock_share >= 0.02 ? 1.0 : 0.5);
	wp_ev_num(&r->evidence, "seconds", secs);
	wp_ev_num(&r->evidence, "async_commits_per_s", async / secs);
	wp_ev_num(&r->evidence, "durable_commits_per_s", durable / secs);
	wp_ev_num(&r->evidence, "syncs_not_led_by_commits_per_s", other_syncs);
	wp_ev_num(&r->evidence, "wal_writer_cycles_per_s", per_cycle);
	wp_ev_num(&r->evidence, "sync_us", sync_us);
	wp_ev_str(&r->evidence, "sync_us_source", source);
	wp_ev_num(&r->evidence, "share_of_time_syncing", busy);
	wp_ev_num(&r->evidence, "walwrite_lock_waiters_share_of_active", lock_share);
	wp_ev_str(&r->evidence, "not_measured", "WAL writer wake-ups that write nothing (an asynchronous commit wakes it " WP_ASYNC_COMMIT_WAKES_WALWRITER ", whatever wal_writer_delay is)");
	wp_ev_str(&r->evidence, "rule", "most commits asynchronous, syncs not led by a durable commit between a quarter of one per cycle (wal_writer_delay + one sync) and two per wal_writer_delay, and those syncs at least 25 % of the time: the delay at which they take 10 %, at least double, at most 200ms (a longer delay widens what a crash loses)");
	wp_ev_str(&r->evidence, "confidence_rule", "async share x min(1, share of time syncing / 0.5) x min(1, seconds / 60), halved when WALWrite lock waits are under 2 % of active time");
}

/*---- tune mode itself ----*/

/*
 * advise_mode
 *		In observe mode, walpilot.mode = 'tune' when the commit-path model
 *		(commit_model.c) predicts a gain of WP_MODEL_WORTH_GAIN or more
 *		from grouping the commits; no row when it predicts less, when the
 *		load is not flush-bound, or when what bounds the load is outside
 *		the model (walpilot.prediction() says which).
 */
static void
advise_mode(List **rows)
{
	WpCommitModel m;
	WpAdviceRow *r;

	if (wp_mode != WP_MODE_OBSERVE || RecoveryInProgress())
		return;
	wp_commit_model(&m);
	if (m.verdict != WP_MODEL_GAIN)
		return;
	r = new_row(rows, "walpilot.mode");
	strlcpy(r->current, "observe", sizeof(r->current));
	strlcpy(r->recommended, "tune", sizeof(r->recommended));
	r->confidence = 0.5 * (double) m.seconds / Max(m.window_seconds, 1);
	wp_commit_model_evidence(&m, &r->evidence);
	wp_ev_str(&r->evidence, "rule", "the model predicts x1.10 or more from grouping the commits into fewer flushes; tune mode's trials then prove or refuse each setting");
	wp_ev_str(&r->evidence, "confidence_rule", "0.5 x flush-bound seconds / seconds of the window (0.5: a prediction; only a trial in tune mode decides)");
}

/*---- the SQL function ----*/

/*
 * drop_old_seconds
 *		Keep only the seconds of the last window_s seconds of wall-clock
 *		time: a worker that stopped (mode off, crash) leaves its last
 *		seconds in the ring, and they are no evidence of the present.
 */
static int
drop_old_seconds(WpSecond *tl, int ntl, int window_s)
{
	TimestampTz since = GetCurrentTimestamp() - (int64) window_s * USECS_PER_SEC;
	int			first = 0;

	while (first < ntl && tl[first].ts < since)
		first++;
	if (first > 0)
		memmove(tl, tl + first, sizeof(WpSecond) * (ntl - first));
	return ntl - first;
}

/*
 * wp_advice_apply_sql
 *		The statement that applies a recommendation, as its row shows it.
 */
char *
wp_advice_apply_sql(const WpAdviceRow *r)
{
	StringInfoData s;
	const char *dot = strchr(r->setting, '.');

	initStringInfo(&s);
	appendStringInfoString(&s, "ALTER SYSTEM SET ");
	if (dot != NULL)
	{
		/* a custom setting: class.name, each part an identifier */
		char	   *class = pnstrdup(r->setting, dot - r->setting);

		appendStringInfo(&s, "%s.%s", quote_identifier(class),
						 quote_identifier(dot + 1));
	}
	else
		appendStringInfoString(&s, quote_identifier(r->setting));
	appendStringInfo(&s, " = %s;", quote_literal_cstr(r->recommended));
	if (r->restart)
		appendStringInfoString(&s, " -- then restart the server");
	else
		appendStringInfoString(&s, " SELECT pg_reload_conf();");
	return s.data;
}

/*
 * wp_advice_rows
 *		Every recommendation the current measurements support, as a List of
 *		palloc'd WpAdviceRow (NIL with walpilot.mode = off: it measures
 *		nothing).  Reads the instruments from shared memory; the
 *		caller forms the SQL rows.
 */
List *
wp_advice_rows(void)
{
	WpCheckpointRecord *ck;
	AdvProbe   *pr;
	WpSecond   *tl;
	int			nck,
				npr,
				ntl;
	List	   *rows = NIL;

	ck = palloc0(sizeof(WpCheckpointRecord) * WP_CKPT_MAX_RECORDS);
	pr = palloc0(sizeof(AdvProbe) * WP_ADVICE_MAX_PROBE);
	tl = palloc(sizeof(WpSecond) * WP_ADVICE_WINDOW_S);
	ntl = wp_timeline_last(WP_ADVICE_WINDOW_S, tl);
	ntl = drop_old_seconds(tl, ntl, WP_ADVICE_WINDOW_S);

	if (wp_mode == WP_MODE_OFF)
		return NIL;
	read_inputs(ck, &nck, pr, &npr);
	advise_max_wal_size(&rows, ck, nck);
	advise_completion_target(&rows, ck, nck);
	advise_checkpoint_timeout(&rows, ck, nck, tl, ntl);
	advise_wal_buffers(&rows, tl, ntl);
	advise_sync_method(&rows, pr, npr);
	advise_commit_delay(&rows, tl, ntl, pr, npr);
	advise_wal_writer(&rows, tl, ntl);
	advise_wal_writer_delay(&rows, tl, ntl);
	advise_mode(&rows);
	return rows;
}
