/*-------------------------------------------------------------------------
 *
 * pilot_commit_delay.c
 *		The commit_delay / commit_siblings pilot: its knob table for the
 *		generic controller (pilot.c).  Its backend side, the group gather,
 *		is gather.c.
 *
 * Engage: the load is flush-bound -- at least WP_ENGAGE_MIN_COMMITS
 * durable commits per second, two or more backends committing (the group
 * size G), a WAL flush of WP_ENGAGE_MIN_FLUSH_US or more (the storage
 * estimate: what the commits' own flushes took, from pg_stat_wal or the
 * IO:WALSync samples), and the commit-led flushes busy for
 * WP_ENGAGE_MIN_FLUSH_BUSY of the second or more (flushes led x the flush
 * time) -- and a second look confirms it.  The busy share keeps the pilot
 * off a light load that arrives at its own pace (two clients at 50
 * commits/s on a 3 ms disk: the flushes busy a quarter of the second):
 * no delay can raise its commits/s, and every trial's delay is latency
 * added to each commit of it.  The confirmation: a probe of the
 * device measures a flush of at least WP_CONFIRM_MIN_FLUSH_US, or, when
 * the probe finds the device fast, the committers themselves spend
 * WP_CONFIRM_WAL_WAIT_SHARE of their active samples waiting on the WAL
 * flush (LWLock:WALWrite, IO:WALSync, IO:WALWrite, the commit delay).  The
 * probe alone misjudged a token-bucket volume: its few flushes found
 * tokens while the commits queued behind the cap, and the pilot held off
 * for walpilot.tune_interval at 0.78 x the defaults.  The wait share is
 * the test that a saturated CPU does not pass: there the committers are
 * on CPU, not in WAL waits, and commit_delay only loses.
 *
 * On a primary with a synchronous standby the windows' commits and
 * latencies are end to end (commit timing stops after the standby's
 * acknowledgement), so a trial weighs the standby's wait too.  When that
 * wait (the sampled IPC:SyncRep time) is WP_STANDBY_DOMINATES_SHARE or
 * more of the commit time over the last WP_CONFIRM_SECONDS, the load
 * engages even with a fast local flush and the confirmation holds the
 * pilot off with "the synchronous standby dominates": the standby's WAL
 * receiver already writes everything that arrived during its last flush
 * and flushes it at once, so a delay on the primary cannot group the
 * standby's flushes any further; it only adds to the local part.
 *
 * Candidates, in this order: gather (a cap of half the flush time,
 * wp_gather_cap_us, siblings 0: the leader sleeps only until the group has
 * arrived), then static delays of 1/4 and 1/8 of the flush time with
 * siblings 1 (what the benchmarks found best; the half-flush rule of
 * thumb is too long).  No value ever exceeds walpilot.commit_delay_max;
 * with 0 the pilot sets no delay at all.  The static delays are tried
 * also when gather already takes every committer into each flush: on a
 * 3 ms disk with 16 clients gather was "saturated" and yet a static delay
 * ran 14 % faster (gather's wake-ups cost the cycle more than a fixed
 * sleep does).
 *
 * Window: one second (measured, so a late tick does not count extra
 * commits), metric durable commits per second, with the window's commit
 * latency histogram.  The knob never leaves the server slower than its
 * configured setting (trial.c, never_below_configured): a candidate is
 * kept only if its commits/s are higher with one-sided 99 % confidence and
 * by WP_MIN_GAIN or more -- or, at unchanged commits/s (an open-loop load),
 * its windows' median latency is lower with the same confidence -- within
 * the p99 bound; a held choice whose mean falls below the configured
 * setting in a re-check is dropped.
 *
 * IDENTIFICATION
 *	  src/pilots/pilot_commit_delay.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/timestamp.h"

#include "commit_model.h"
#include "pilot.h"

#define WP_ENGAGE_MIN_COMMITS	20	/* durable commits per second */
#define WP_ENGAGE_MIN_FLUSH_US	500 /* slower flushes: worth a trial */
#define WP_ENGAGE_MIN_FLUSH_BUSY 0.5	/* of the second, commit-led flushes */
#define WP_CONFIRM_MIN_FLUSH_US 400 /* ... if a probe confirms it */
#define WP_CONFIRM_WAL_WAIT_SHARE 0.5	/* ... or the committers' waits do */
#define WP_CONFIRM_SECONDS		5	/* timeline seconds the waits come from */
#define WP_STANDBY_DOMINATES_SHARE 0.5	/* of the commit time, standby wait */
#define WP_GROUP_UPDATE_US		(100 * 1000)

/*
 * The minimum effect a candidate must show: 3 %.  The pairs' log ratios
 * spread by 0.02-0.08 in the benchmark's trials on the emulated 1-12 ms
 * disks (from their t and pair counts), so eight ABBA pairs of 1 s windows
 * measure a gain to about +-2-6 %: a smaller gain is one that the next
 * re-check could as well find reversed, and a kept choice pays its
 * re-checks' windows on the configured setting, which a 1-2 % gain does
 * not earn back.
 */
#define WP_MIN_GAIN				1.03

/* WpPilotValue layout */
#define V_GATHER	0
#define V_DELAY		1
#define V_SIBLINGS	2

/* the window now open, and the sampler's totals at its start */
static TimestampTz window_start = 0;
static WpSamplerTotals window_totals;
static TimestampTz last_group_update = 0;
static double last_p50_us = 0;

static void
cd_value(WpPilotValue *v, bool gather, int delay_us, int siblings)
{
	memset(v, 0, sizeof(WpPilotValue));
	v->v[V_GATHER] = gather ? 1 : 0;
	v->v[V_DELAY] = delay_us;
	v->v[V_SIBLINGS] = siblings;
}

static bool
cd_configured(WpPilotValue *value, char *why, size_t len)
{
	bool		pinned;
	int			delay;
	int			siblings;
	const char *by;

	wp_settings_note_configured();
	delay = wp_settings_configured(WP_KNOB_COMMIT_DELAY, &pinned);
	siblings = wp_settings_configured(WP_KNOB_COMMIT_SIBLINGS, NULL);
	cd_value(value, false, delay, siblings);
	if (!pinned)
		return true;
	by = wp_settings_pinned_by();
	snprintf(why, len,
			 "%s is set in the configuration (commit_delay = %d, commit_siblings = %d, from %s)",
			 by ? by : "commit_delay", delay, siblings,
			 GucSource_Names[wp_settings_source(by && strcmp(by, "commit_siblings") == 0 ?
												WP_KNOB_COMMIT_SIBLINGS :
												WP_KNOB_COMMIT_DELAY)]);
	return false;
}

static bool
cd_enabled(char *why, size_t len)
{
	if (!wp_tune_commit_delay)
	{
		strlcpy(why, "walpilot.tune_commit_delay = off", len);
		return false;
	}
	if (wp_commit_delay_max_us <= 0)
	{
		strlcpy(why, "walpilot.commit_delay_max = 0: no delay may be set", len);
		return false;
	}
	return true;
}

static bool
cd_apply(const WpPilotValue *v, bool configured)
{
	int32		targets[WP_NUM_KNOBS];

	targets[WP_KNOB_COMMIT_DELAY] = v->v[V_DELAY];
	targets[WP_KNOB_COMMIT_SIBLINGS] = v->v[V_SIBLINGS];
	wp_gather_set_enabled(!configured && v->v[V_GATHER] != 0);
	wp_settings_publish(!configured, targets);
	return true;
}

static void
cd_withdraw(void)
{
	int32		targets[WP_NUM_KNOBS] = {0, 0};

	wp_gather_set_enabled(false);
	wp_settings_publish(false, targets);
}

static void
cd_describe(const WpPilotValue *v, char *buf, size_t len)
{
	if (v->v[V_GATHER])
		snprintf(buf, len, "gather(cap %d us, siblings %d)", v->v[V_DELAY],
				 v->v[V_SIBLINGS]);
	else
		snprintf(buf, len, "delay %d us, siblings %d", v->v[V_DELAY],
				 v->v[V_SIBLINGS]);
}

/*
 * cd_candidate
 *		Step 0 gather, 1 and 2 static F/4 and F/8 (siblings 1).  Every delay
 *		is at most walpilot.commit_delay_max.
 */
static bool
cd_candidate(int step, const WpPilotLoad *load, WpPilotValue *value,
			 bool *last)
{
	double		f = Max(load->context[0], 100.0);
	int			max = wp_commit_delay_max_us;
	int			d;

	*last = step >= 2;
	if (max <= 0)
		return false;
	switch (step)
	{
		case 0:
			/* the cap bounds a wait whose wake-up was lost */
			d = wp_gather_cap_us(f);
			cd_value(value, true, d, 0);
			return true;
		case 1:
			d = Min(max, (int) (f / 4));
			cd_value(value, false, d, 1);
			return d > 0;
		case 2:
			d = Min(max, (int) (f / 8));
			cd_value(value, false, d, 1);
			/* a max below F/4 makes step 2 step 1 again */
			return d > 0 && d < Min(max, (int) (f / 4));
		default:
			return false;
	}
}

/*
 * recent_commit_waits
 *		Over the last WP_CONFIRM_SECONDS of the timeline: the share of the
 *		client backends' active samples spent waiting on the WAL flush
 *		(false when there is no active sample), and the share of the
 *		durable commits' time spent waiting for a synchronous standby (0
 *		without one).  The standby's time is the sampled IPC:SyncRep
 *		time, not the commit phases' sum, whose standby lags can fall
 *		short in the seconds after a start (commit_phases.c): the pilot
 *		must not take those for a fast standby.
 */
static bool
recent_commit_waits(double *wal_wait_share, double *standby_share)
{
	WpSecond	sec[WP_CONFIRM_SECONDS];
	int			n = wp_timeline_last(WP_CONFIRM_SECONDS, sec);
	double		active = 0;
	double		wal = 0;
	double		commit_us = 0;
	double		standby_us = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		active += sec[i].active_sum;
		wal += (double) sec[i].wal_write_lock_sum + sec[i].wal_sync_sum +
			sec[i].wal_write_sum + sec[i].commit_delay_sum;
		commit_us += (double) sec[i].commit_time_us;
		standby_us += (double) sec[i].sync_rep_wait_us;
	}
	*standby_share = commit_us > 0 ? Min(standby_us / commit_us, 1.0) : 0;
	*wal_wait_share = active > 0 ? Min(wal / active, 1.0) : 0;
	return active > 0;
}

static void
cd_engage(const WpPilotWindow *w, WpPilotLoad *load)
{
	double		flush_us = 0;
	char		source[32];
	bool		have = wp_flush_estimate_us(&flush_us, source,
												  sizeof(source));
	uint32		group = wp_gather_group();
	double		wal_wait;
	double		standby;
	bool		standby_slow;
	double		busy = -1;

	(void) recent_commit_waits(&wal_wait, &standby);
	standby_slow = standby >= WP_STANDBY_DOMINATES_SHARE &&
		w->p50_us >= WP_ENGAGE_MIN_FLUSH_US;

	/* unknown (< 0) where no commit knows it led its flush */
	if (have && w->detail[0] > 0 && w->length > 0)
		busy = Min(w->detail[0] * flush_us / (w->length * 1e6), 1.0);

	load->active = w->metric >= WP_ENGAGE_MIN_COMMITS;
	/* a slow standby engages too: the confirmation then says it dominates */
	load->suits = load->active && group >= 2 &&
		((have && flush_us >= WP_ENGAGE_MIN_FLUSH_US &&
		  (busy < 0 || busy >= WP_ENGAGE_MIN_FLUSH_BUSY)) || standby_slow);
	load->context[0] = flush_us;
	load->context[1] = group;
	/* commits per flush: 0 (not used) where no commit knows it led one */
	load->context[2] = w->detail[0] > 0 ? w->count / w->detail[0] : 0;
	if (have)
		snprintf(load->numbers, sizeof(load->numbers),
				 "%.0f commits/s (needs %d), flush %.0f us from %s (needs %d), %u committers (needs 2)",
				 w->metric, WP_ENGAGE_MIN_COMMITS, flush_us, source,
				 WP_ENGAGE_MIN_FLUSH_US, group);
	else
		snprintf(load->numbers, sizeof(load->numbers),
				 "%.0f commits/s (needs %d), no flush estimate yet, %u committers (needs 2)",
				 w->metric, WP_ENGAGE_MIN_COMMITS, group);
	if (busy >= 0)
	{
		size_t		used = strlen(load->numbers);

		snprintf(load->numbers + used, sizeof(load->numbers) - used,
				 ", flushes busy %.0f %% of the second (needs %.0f)",
				 busy * 100, WP_ENGAGE_MIN_FLUSH_BUSY * 100);
	}
	if (standby > 0)
	{
		size_t		used = strlen(load->numbers);

		snprintf(load->numbers + used, sizeof(load->numbers) - used,
				 ", standby wait %.0f %% of commit time", standby * 100);
	}
	load->nvalues = 6;
	load->names[0] = "commits_per_s";
	load->values[0] = w->metric;
	load->names[1] = "flush_estimate_us";
	load->values[1] = flush_us;
	load->names[2] = "committers";
	load->values[2] = group;
	load->names[3] = "commit_p50_us";
	load->values[3] = w->p50_us;
	load->names[4] = "standby_wait_share";
	load->values[4] = standby;
	load->names[5] = "outside_us";
	load->values[5] = w->detail[1];
}

/*
 * cd_confirm
 *		The passive estimate says slow: time the device itself, and if it
 *		looks fast, ask what the committers wait for.
 */
static bool
cd_confirm(char *why, size_t len, bool *measured, const char **verdict)
{
	double		p50 = 0;
	double		share;
	double		standby;
	bool		have_share;

	(void) recent_commit_waits(&share, &standby);
	if (standby >= WP_STANDBY_DOMINATES_SHARE)
	{
		/* no probe: the local device is not what the commits wait for */
		*verdict = "the synchronous standby dominates";
		*measured = true;
		snprintf(why, len,
				 "standby wait %.0f %% of commit time over %d s, needs under %.0f %% to tune: the standby already groups its flushes",
				 standby * 100, WP_CONFIRM_SECONDS,
				 WP_STANDBY_DOMINATES_SHARE * 100);
		return false;
	}
	*measured = wp_probe_confirm_flush_us(&p50);
	if (*measured && p50 >= WP_CONFIRM_MIN_FLUSH_US)
	{
		snprintf(why, len, "probe p50 %.0f us, needs %d", p50,
				 WP_CONFIRM_MIN_FLUSH_US);
		return true;
	}
	/* the waits up to now, the probe's seconds included */
	have_share = recent_commit_waits(&share, &standby);
	if (have_share && share >= WP_CONFIRM_WAL_WAIT_SHARE)
	{
		snprintf(why, len,
				 "probe p50 %.0f us, but the committers wait on the WAL flush: %.0f %% of their active samples over %d s (needs %.0f %%)",
				 p50, share * 100, WP_CONFIRM_SECONDS,
				 WP_CONFIRM_WAL_WAIT_SHARE * 100);
		if (!*measured)
			snprintf(why, len,
					 "no probe result, but the committers wait on the WAL flush: %.0f %% of their active samples over %d s (needs %.0f %%)",
					 share * 100, WP_CONFIRM_SECONDS,
					 WP_CONFIRM_WAL_WAIT_SHARE * 100);
		*measured = true;
		return true;
	}
	if (!*measured)
	{
		strlcpy(why, "the probe measured nothing (fsync off, an error, or a walpilot.probe() running)",
				len);
		return false;
	}
	snprintf(why, len, "probe p50 %.0f us, needs %d; committers' WAL wait share %.0f %%, needs %.0f %%",
			 p50, WP_CONFIRM_MIN_FLUSH_US, share * 100,
			 WP_CONFIRM_WAL_WAIT_SHARE * 100);
	return false;
}

static void
cd_restart_window(TimestampTz now)
{
	WpCommitSecond *cs = palloc(sizeof(WpCommitSecond));

	/* commit timing's delta reader: walpilot.reset() does not disturb it */
	wp_commit_take(WP_COMMIT_READER_PILOT, cs);
	window_start = now;
	wp_sampler_totals(&window_totals);
	pfree(cs);
}

/*
 * cd_window
 *		A window closes after one second: commits over its measured length.
 *		A second in which the checkpointer synced data files is unusable:
 *		the WAL flush waits behind those syncs whatever the arm (a bulk
 *		load's checkpoints stalled the commits for 1-3 s each, and trials
 *		measured x0.26 and x3.22 on such windows), so a trial runs that arm
 *		again in the next window.
 */
static bool
cd_window(TimestampTz now, WpPilotWindow *w)
{
	WpCommitSecond *cs;
	WpSamplerTotals totals;

	if (window_start == 0 || now < window_start)
	{
		cd_restart_window(now);
		return false;
	}
	if (now - window_start < USECS_PER_SEC)
		return false;

	cs = palloc(sizeof(WpCommitSecond));
	wp_commit_take(WP_COMMIT_READER_PILOT, cs);
	w->count = (double) cs->durable;
	w->length = (double) (now - window_start) / USECS_PER_SEC;
	w->metric = w->count / w->length;
	w->has_hist = true;
	memcpy(w->hist, cs->hist, sizeof(w->hist));
	w->p50_us = wp_hist_quantile(w->hist, 0.5);
	w->detail[0] = wp_commit_leader_known() ? (double) cs->led_flush : 0;
	/* the committers' mean time between their durable commits (0: none) */
	w->detail[1] = cs->outside_n > 0 ?
		(double) cs->outside_sum_us / cs->outside_n : 0;
	wp_sampler_totals(&totals);
	if (totals.checkpoint_sync_samples != window_totals.checkpoint_sync_samples)
	{
		w->unusable = true;
		w->unusable_why = "the checkpointer synced data files in it";
	}
	last_p50_us = w->p50_us;
	window_start = now;
	window_totals = totals;
	pfree(cs);
	return true;
}

static void
cd_tick(TimestampTz now)
{
	if (now - last_group_update >= WP_GROUP_UPDATE_US || now < last_group_update)
	{
		wp_gather_update_group(last_p50_us);
		last_group_update = now;
	}
}

/*
 * cd_predict
 *		The commit-path model's prediction for the first trial of a search
 *		(its candidate, gather, against the configured setting).
 */
static double
cd_predict(WpEvidence *e)
{
	WpCommitModel m;

	wp_commit_model(&m);
	wp_ev_str(e, "predicted", wp_commit_model_verdict_name(m.verdict));
	if (m.verdict != WP_MODEL_GAIN && m.verdict != WP_MODEL_NOTHING_TO_WIN)
		return 0;
	wp_ev_num(e, "predicted_gain", round(m.predicted_gain * 1000) / 1000);
	wp_ev_num(e, "model_outside_cv", round(m.outside_cv * 100) / 100);
	wp_ev_str(e, "model_group_closed_by", m.capped ? "the cap" : "its last arrival");
	return round(m.predicted_gain * 1000) / 1000;
}

const WpPilotDef wp_pilot_commit_delay = {
	.name = "commit_delay",
	.trial = {
		.pairs = 8,
		.early_pairs = 4,
		.higher_is_better = true,
		.min_gain = WP_MIN_GAIN,
		.latency_tiebreak = true,
		.never_below_configured = true,
	},
	.configured = cd_configured,
	.enabled = cd_enabled,
	.apply = cd_apply,
	.withdraw = cd_withdraw,
	.describe = cd_describe,
	.candidate = cd_candidate,
	.engage = cd_engage,
	.confirm = cd_confirm,
	.window = cd_window,
	.restart_window = cd_restart_window,
	.tick = cd_tick,
	.predict = cd_predict,
	.shift_by_context = true,
	.context_names = {"flush time (us)", "committers", "commits per flush"},
	/* a delay changes the flush time and the commits per flush, not who commits */
	.search_contexts = 1 << 1,
	/* seconds of checkpoint syncs skipped in one trial before it ends */
	.max_skipped = 30,
	.first_recheck_s = 120,
};
