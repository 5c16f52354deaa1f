/*-------------------------------------------------------------------------
 *
 * pilot_commit_delay.c
 *		The commit_delay / commit_siblings pilot: its knob table for the
 *		generic controller (pilot.c).  Its backend side, the group gather,
 *		is gather.c.
 *
 * Engage: the load is flush-bound -- at least WP_ENGAGE_MIN_COMMITS
 * durable commits per second, two or more backends committing (the group
 * size G), and a WAL flush of WP_ENGAGE_MIN_FLUSH_US or more (the storage
 * estimate) -- and a probe of the device confirms a flush of at least
 * WP_CONFIRM_MIN_FLUSH_US.  Commit latency alone is not used: on a
 * saturated CPU it rises while the flush stays fast, and there
 * commit_delay only loses.
 *
 * Candidates, in this order: gather (a cap of half the flush time,
 * siblings 0: the leader sleeps only until the group has arrived), then
 * static delays of 1/4 and 1/8 of the flush time with siblings 1 (what the
 * benchmarks found best; the half-flush rule of thumb is too long).  No
 * value ever exceeds walpilot.commit_delay_max; with 0 the pilot sets no
 * delay at all.  The static delays are skipped while gather is the choice
 * and already takes WP_SATURATED_SHARE of the committers into each flush:
 * a fixed sleep cannot put more into a flush than everyone, so a trial
 * could only cost throughput while it runs.
 *
 * Window: one second (measured, so a late tick does not count extra
 * commits), metric durable commits per second, with the window's commit
 * latency histogram.  A candidate is kept if its commits/s are higher
 * with one-sided 95 % confidence -- or, at unchanged commits/s (an
 * open-loop load), its median latency is lower -- within the p99 bound.
 *
 * IDENTIFICATION
 *	  src/pilot_commit_delay.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/timestamp.h"

#include "pilot.h"

/* GUC variables */
bool		wp_tune_commit_delay = true;
int			wp_commit_delay_max_us = 10000;

#define WP_ENGAGE_MIN_COMMITS	20	/* durable commits per second */
#define WP_ENGAGE_MIN_FLUSH_US	500 /* slower flushes: worth a trial */
#define WP_CONFIRM_MIN_FLUSH_US 400 /* ... if a probe confirms it */
#define WP_GATHER_MIN_CAP_US	50	/* below this a cap is pointless... */
#define WP_GROUP_UPDATE_US		(100 * 1000)

/* gather "saturated": this share of the committers in every flush ... */
#define WP_SATURATED_SHARE		0.90
/* ... over at least this many recent gather windows */
#define WP_SATURATED_WINDOWS	3
#define WP_SATURATED_AGE_US		(30 * USECS_PER_SEC)

/* WpPilotValue layout */
#define V_GATHER	0
#define V_DELAY		1
#define V_SIBLINGS	2

/* the window now open */
static TimestampTz window_start = 0;
static TimestampTz last_group_update = 0;
static double last_p50_us = 0;

/* is gather in force in the window now open (the last value applied)? */
static bool gather_applied = false;

/* the recent windows that ran gather: commits per flush against G */
typedef struct WpGatherWindows
{
	int			n;
	double		durable;
	double		led_flush;
	double		group;			/* sum of G over the windows */
	TimestampTz first;
} WpGatherWindows;

static WpGatherWindows gather_windows;

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
	gather_applied = !configured && v->v[V_GATHER] != 0;
	wp_gather_set_enabled(gather_applied);
	wp_settings_publish(!configured, targets);
	return true;
}

static void
cd_withdraw(void)
{
	int32		targets[WP_NUM_KNOBS] = {0, 0};

	gather_applied = false;
	wp_gather_set_enabled(false);
	wp_settings_publish(false, targets);
}

/*
 * gather_saturated
 *		Does gather, the value in force, already take nearly every
 *		committer into each flush?  From the recent windows that ran it;
 *		false where the server cannot tell which commit led a flush.
 */
static bool
gather_saturated(double *per_flush, double *group)
{
	const WpGatherWindows *g = &gather_windows;
	TimestampTz now = GetCurrentTimestamp();

	*per_flush = *group = 0;
	if (!gather_applied || !wp_commit_leader_known() ||
		g->n < WP_SATURATED_WINDOWS || g->led_flush <= 0 ||
		now - g->first > WP_SATURATED_AGE_US || now < g->first)
		return false;
	*per_flush = g->durable / g->led_flush;
	*group = g->group / g->n;
	return *group >= 2 && *per_flush >= WP_SATURATED_SHARE * *group;
}

/* account a closed window that ran gather; restart the run after others */
static void
note_gather_window(TimestampTz start, const WpCommitSecond *cs, bool ran_gather)
{
	WpGatherWindows *g = &gather_windows;

	if (!ran_gather)
		return;
	if (g->n == 0 || start - g->first > WP_SATURATED_AGE_US || start < g->first)
	{
		memset(g, 0, sizeof(*g));
		g->first = start;
	}
	g->n++;
	g->durable += (double) cs->durable;
	g->led_flush += (double) cs->led_flush;
	g->group += (double) wp_gather_group();
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
 *		Step 0 gather, 1 and 2 static F/4 and F/8 (siblings 1), those two
 *		not while gather is in force and saturated.  Every delay is at most
 *		walpilot.commit_delay_max.
 */
static bool
cd_candidate(int step, const WpPilotLoad *load, WpPilotValue *value,
			 bool *last)
{
	double		f = Max(load->context[0], 100.0);
	int			max = wp_commit_delay_max_us;
	int			d;
	double		per_flush;
	double		group;

	*last = step >= 2;
	if (max <= 0)
		return false;
	if (step == 1 && gather_saturated(&per_flush, &group))
	{
		ereport(LOG,
				(errmsg("walpilot commit_delay pilot skips the static delays: gather is saturated"),
				 errdetail("Gather takes %.1f commits into each flush with %.1f backends committing (the static delays need less than %.0f %%).",
						   per_flush, group, WP_SATURATED_SHARE * 100)));
		*last = true;
		return false;
	}
	switch (step)
	{
		case 0:
			/* the cap bounds a wait whose wake-up was lost */
			d = Min(max, (int) Max(f / 2, (double) WP_GATHER_MIN_CAP_US));
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

static void
cd_engage(const WpPilotWindow *w, WpPilotLoad *load)
{
	double		flush_us = 0;
	char		source[32];
	bool		have = wp_probe_flush_estimate_us(&flush_us, source,
												  sizeof(source));
	uint32		group = wp_gather_group();

	load->active = w->metric >= WP_ENGAGE_MIN_COMMITS;
	load->suits = have && load->active &&
		flush_us >= WP_ENGAGE_MIN_FLUSH_US && group >= 2;
	load->context[0] = flush_us;
	load->context[1] = group;
	if (have)
		snprintf(load->numbers, sizeof(load->numbers),
				 "%.0f commits/s (needs %d), flush %.0f us from %s (needs %d), %u committers (needs 2)",
				 w->metric, WP_ENGAGE_MIN_COMMITS, flush_us, source,
				 WP_ENGAGE_MIN_FLUSH_US, group);
	else
		snprintf(load->numbers, sizeof(load->numbers),
				 "%.0f commits/s (needs %d), no flush estimate yet, %u committers (needs 2)",
				 w->metric, WP_ENGAGE_MIN_COMMITS, group);
	load->nvalues = 4;
	load->names[0] = "commits_per_s";
	load->values[0] = w->metric;
	load->names[1] = "flush_estimate_us";
	load->values[1] = flush_us;
	load->names[2] = "committers";
	load->values[2] = group;
	load->names[3] = "commit_p50_us";
	load->values[3] = w->p50_us;
}

/*
 * cd_confirm
 *		The passive estimate says slow: time the device itself.
 */
static bool
cd_confirm(char *why, size_t len, bool *measured)
{
	double		p50 = 0;

	*measured = wp_probe_confirm_flush_us(&p50);
	if (!*measured)
	{
		strlcpy(why, "the probe measured nothing (fsync off, an error, or a walpilot.probe() running)",
				len);
		return false;
	}
	snprintf(why, len, "probe p50 %.0f us, needs %d", p50,
			 WP_CONFIRM_MIN_FLUSH_US);
	return p50 >= WP_CONFIRM_MIN_FLUSH_US;
}

static void
cd_restart_window(TimestampTz now)
{
	WpCommitSecond *cs = palloc(sizeof(WpCommitSecond));

	/* commit timing's delta reader: walpilot.reset() does not disturb it */
	wp_commit_take(WP_COMMIT_READER_PILOT, cs);
	window_start = now;
	pfree(cs);
}

/*
 * cd_window
 *		A window closes after one second: commits over its measured length.
 */
static bool
cd_window(TimestampTz now, WpPilotWindow *w)
{
	WpCommitSecond *cs;

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
	last_p50_us = w->p50_us;
	note_gather_window(window_start, cs, gather_applied);
	window_start = now;
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

const WpPilotDef wp_pilot_commit_delay = {
	.name = "commit_delay",
	.trial = {
		.pairs = 8,
		.early_pairs = 4,
		.higher_is_better = true,
		.min_gain = 1.02,
		.latency_tiebreak = true,
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
};
