/*-------------------------------------------------------------------------
 *
 * pilot_flush.c
 *		The checkpoint_flush_after pilot: its knob table for the generic
 *		controller (pilot.c).  Each checkpoint is a trial window.
 *
 * checkpoint_flush_after decides how often the checkpointer asks the
 * kernel to start writing back what it wrote (sync_file_range).  Too
 * little and the kernel's dirty data piles up until the checkpoint's
 * fsyncs flood the disk and commits stall; too much and writes are forced
 * out that the page cache would have absorbed.  Which wins depends on the
 * storage and on how hot the data is, so the pilot measures it: the
 * controller runs trials of a candidate against the current value, one
 * checkpoint per window in ABBA order, and keeps a candidate only when it
 * is clearly better.
 *
 * Window: a finished checkpoint.  Its metric is the foreground impact,
 * lower better: stall seconds (seconds with under a tenth of the usual
 * commits) plus log2 of the ratio of the commit p99 during the checkpoint
 * to the p99 of the minute before it, so one stalled second weighs as much
 * as a doubled p99 (wp_trial_impact).  A checkpoint teaches nothing
 * (unusable) unless it was a spread one (time or wal) and saw
 * WP_FLUSH_MIN_COMMITS commits; a trial also skips one that did not run
 * with the value its arm meant (the checkpoint record carries the value in
 * force when it started).
 *
 * Guard: a candidate window whose timed checkpoint did not finish within
 * its checkpoint_completion_target share of the interval, or that stalls
 * WP_FLUSH_STORM_S seconds more than twice the current value's last
 * window, ends the trial at once and marks the value lost.
 *
 * A trial lasts four checkpoints: it gives way to the commit_delay
 * pilot (long_trials), whose searches take about a minute -- a candidate
 * trial ends at its next checkpoint when that pilot waits to start a
 * search, and is tried again after it.
 *
 * Candidates: the ladder 0, 64kB ... 2MB within
 * walpilot.checkpoint_flush_after_min/max, neighbours of the current value
 * first (the controller's ladder search).  A lost value is tried again
 * only when the commit rate or the buffers written per checkpoint moved by
 * more than 2x; the same figures, moved 2x for two checkpoints, start a
 * new search.
 *
 * Values reach the checkpointer through settings_checkpointer.c: the
 * worker publishes the value, and the checkpointer applies it at its next
 * "checkpoint starting" line, in its own memory, below every source of the
 * DBA's.  No file is written and nothing is reloaded; without
 * log_checkpoints that line is not logged, so the pilot does not tune.
 * With fsync = off the server skips the writeback requests this setting
 * makes, so there is nothing to tune.
 *
 * IDENTIFICATION
 *	  src/pilots/pilot_flush.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "postmaster/bgwriter.h"
#include "storage/bufmgr.h"

#include "pilot.h"

#define WP_FLUSH_SETTING		"checkpoint_flush_after"
#define WP_FLUSH_MIN_COMMITS	50	/* commits in a window to count it */
#define WP_FLUSH_LADDER_LEN		7
#define WP_FLUSH_GUARD_SLACK_S	5.0
#define WP_FLUSH_STORM_S		3	/* stalled seconds that end a trial early */

static const int flush_ladder_kb[WP_FLUSH_LADDER_LEN] = {
	0, 64, 128, 256, 512, 1024, 2048
};

/* WpPilotWindow.detail of a checkpoint window */
#define D_STALL		0
#define D_DURATION	1
#define D_BUDGET	2
#define D_LATE		3
#define D_COMMITS	4
#define D_P99_RATIO 5

static uint64 last_seq = 0;
static bool seq_ready = false;
static bool platform_said = false;
static char last_checkpoint[32] = "";

static void
fl_value(WpPilotValue *v, int kb)
{
	memset(v, 0, sizeof(WpPilotValue));
	v->v[0] = kb;
}

/*
 * fl_configured
 *		The DBA's value: the default while no source of theirs sets it;
 *		otherwise it is theirs (pinned) for as long as it is in force.
 */
static bool
fl_configured(WpPilotValue *value, char *why, size_t len)
{
	char		where[MAXPGPATH + 64];
	int			kb;

	if (wp_ckpt_setting_pinned(where, sizeof(where), &kb))
	{
		fl_value(value, kb);
		snprintf(why, len, "checkpoint_flush_after is the DBA's (%s)", where);
		wp_ckpt_setting_publish_configured();
		return false;
	}
	fl_value(value, wp_ckpt_setting_boot_kb());
	return true;
}

static bool
fl_enabled(char *why, size_t len)
{
	if (!wp_tune_checkpoint_flush)
	{
		strlcpy(why, "walpilot.tune_checkpoint_flush = off", len);
		return false;
	}
#ifndef HAVE_SYNC_FILE_RANGE
	strlcpy(why, "this platform has no sync_file_range: checkpoint_flush_after "
			"has little or no effect here", len);
	if (!platform_said)
	{
		platform_said = true;
		(void) wp_decision_log(WP_FLUSH_SETTING, "-", "-", why, NULL);
	}
	return false;
#else
	(void) platform_said;
#endif
	if (!log_checkpoints || wp_log_min_messages_of(B_CHECKPOINTER) >= FATAL)
	{
		snprintf(why, len, "%s: walpilot applies checkpoint_flush_after when the checkpointer logs \"checkpoint starting\"%s",
				 !log_checkpoints ? "log_checkpoints = off" :
				 "log_min_messages hides LOG lines",
				 wp_ckpt_setting_walpilot_in_force() ?
				 "; walpilot's value stays in the checkpointer until that line is logged again or the server restarts" : "");
		return false;
	}
	if (wp_checkpoint_flush_min_kb > wp_checkpoint_flush_max_kb)
	{
		strlcpy(why, "walpilot.checkpoint_flush_after_min is above walpilot.checkpoint_flush_after_max",
				len);
		return false;
	}
	return true;
}

/*
 * fl_apply
 *		Publish the value for the checkpointer's next checkpoint start: the
 *		configured value, or walpilot's.  Cannot fail.
 */
static bool
fl_apply(const WpPilotValue *v, bool configured)
{
	if (configured)
		wp_ckpt_setting_publish_configured();
	else
		wp_ckpt_setting_publish(v->v[0]);
	return true;
}

/*
 * fl_withdraw
 *		The configured value from the next checkpoint on.  Any process may
 *		call it: publishing is one atomic store, so walpilot.revert() and
 *		DROP EXTENSION (in a backend) put the configured value back at once,
 *		not at the worker's next tick -- a CHECKPOINT right after them runs
 *		with the configured value, also while the worker is busy or stuck.
 */
static void
fl_withdraw(void)
{
	wp_ckpt_setting_publish_configured();
}

static void
fl_describe(const WpPilotValue *v, char *buf, size_t len)
{
	snprintf(buf, len, "%dkB", v->v[0]);
}

static bool
fl_candidate(int step, const WpPilotLoad *load, WpPilotValue *value,
			 bool *last)
{
	int			kb;

	*last = step >= WP_FLUSH_LADDER_LEN - 1;
	if (step < 0 || step >= WP_FLUSH_LADDER_LEN)
		return false;
	kb = flush_ladder_kb[step];
	if (kb < wp_checkpoint_flush_min_kb || kb > wp_checkpoint_flush_max_kb)
		return false;
	fl_value(value, kb);
	return true;
}

static int
fl_rung(const WpPilotValue *v)
{
	int			i,
				best = 0;

	for (i = 0; i < WP_FLUSH_LADDER_LEN; i++)
		if (abs(flush_ladder_kb[i] - v->v[0]) <
			abs(flush_ladder_kb[best] - v->v[0]))
			best = i;
	return best;
}

static void
fl_engage(const WpPilotWindow *w, WpPilotLoad *load)
{
	load->active = w->detail[D_COMMITS] > 0;
	load->suits = !w->unusable;
	load->context[0] = w->level[0];
	load->context[1] = w->level[1];
	if (w->unusable)
		snprintf(load->numbers, sizeof(load->numbers),
				 "last checkpoint (%s) not usable: %.0f commits (needs %d), a spread (time or wal) checkpoint with its commit figures",
				 last_checkpoint, w->detail[D_COMMITS], WP_FLUSH_MIN_COMMITS);
	else
		snprintf(load->numbers, sizeof(load->numbers),
				 "last checkpoint (%s): %.0f commits, %.0f stalled s, p99 x%.2f of the minute before, %.0f buffers",
				 last_checkpoint, w->detail[D_COMMITS], w->detail[D_STALL],
				 w->detail[D_P99_RATIO], w->level[1]);
	load->nvalues = 5;
	load->names[0] = "checkpoint_commits";
	load->values[0] = w->detail[D_COMMITS];
	load->names[1] = "stall_s";
	load->values[1] = w->detail[D_STALL];
	load->names[2] = "p99_ratio";
	load->values[2] = w->detail[D_P99_RATIO];
	load->names[3] = "buffers_written";
	load->values[3] = w->level[1];
	load->names[4] = "impact";
	load->values[4] = w->metric;
}

/* a checkpoint that finished late or stormed ends the trial at once */
static bool
fl_guard(const WpPilotWindow *w, const WpPilotWindow *cur, char *why,
		 size_t len)
{
	if (w->detail[D_LATE] > 0)
	{
		snprintf(why, len, "the checkpoint finished late (%.1f s, budget %.1f s)",
				 w->detail[D_DURATION], w->detail[D_BUDGET]);
		return false;
	}
	if (cur && w->detail[D_STALL] >= 2 * cur->detail[D_STALL] + WP_FLUSH_STORM_S)
	{
		snprintf(why, len, "clearly worse: %.0f stalled s against %.0f in the current value's window",
				 w->detail[D_STALL], cur->detail[D_STALL]);
		return false;
	}
	return true;
}

static void
fl_restart_window(TimestampTz now)
{
	WpCheckpointSummary c;

	/* checkpoints before now belong to no window */
	while (wp_checkpoint_next_done(last_seq, &c))
		last_seq = c.seq;
	seq_ready = true;
}

/*
 * fl_window
 *		A window closes with each finished checkpoint whose commit columns
 *		are filled in.
 */
static bool
fl_window(TimestampTz now, WpPilotWindow *w)
{
	WpCheckpointSummary c;
	double		duration_s,
				budget_s;
	double		p99_ratio = 1.0;

	if (!seq_ready)
	{
		fl_restart_window(now);
		return false;
	}
	if (!wp_checkpoint_next_done(last_seq, &c))
		return false;
	last_seq = c.seq;
	strlcpy(last_checkpoint, c.reason, sizeof(last_checkpoint));

	w->unusable = (strcmp(c.reason, "time") != 0 && strcmp(c.reason, "wal") != 0) ||
		!c.have_window || !c.have_stall || c.commits < WP_FLUSH_MIN_COMMITS;
	if (c.commit_p99_us_outside > 0 && c.commit_p99_us > 0)
		p99_ratio = c.commit_p99_us / c.commit_p99_us_outside;
	w->metric = w->count = wp_trial_impact((double) c.stall_seconds, p99_ratio);
	w->length = 1.0;			/* one event */
	w->has_ran_with = true;
	fl_value(&w->ran_with, c.flush_after_kb);

	duration_s = (double) (c.finished_at - c.started_at) / USECS_PER_SEC;
	budget_s = CheckPointTimeout * CheckPointCompletionTarget;
	w->has_levels = true;
	w->level[0] = duration_s > 0 ? c.commits / duration_s : 0;
	w->level[1] = c.buffers_written >= 0 ? (double) c.buffers_written : 0;
	w->detail[D_STALL] = c.stall_seconds;
	w->detail[D_DURATION] = duration_s;
	w->detail[D_BUDGET] = budget_s;
	w->detail[D_LATE] = (strcmp(c.reason, "time") == 0 &&
						 duration_s > budget_s * 1.2 + WP_FLUSH_GUARD_SLACK_S) ? 1 : 0;
	w->detail[D_COMMITS] = c.commits;
	w->detail[D_P99_RATIO] = p99_ratio;
	return true;
}

/*
 * fl_window_ended
 *		The checkpoint of the open window has ended; its commit columns
 *		come WP_CKPT_COMMIT_DELAY_MS later, and the next checkpoint starts
 *		(1 - checkpoint_completion_target) x checkpoint_timeout after the
 *		end -- 3 s with a 30 s timeout -- so the next trial value must not
 *		wait for them.  Only spread checkpoints: others are skipped anyway.
 */
static bool
fl_window_ended(WpPilotValue *ran_with)
{
	char		reason[20];
	int32		kb;

	if (!seq_ready ||
		!wp_checkpoint_next_ended(last_seq, reason, sizeof(reason), &kb) ||
		(strcmp(reason, "time") != 0 && strcmp(reason, "wal") != 0))
		return false;
	fl_value(ran_with, kb);
	return true;
}

const WpPilotDef wp_pilot_checkpoint_flush = {
	.name = WP_FLUSH_SETTING,
	.trial = {
		.pairs = 2,				/* A B B A: two checkpoints per arm */
		.early_pairs = 0,
		.higher_is_better = false,
		.min_gain = 1.05,
		.log_offset = 1.0,
	},
	.configured = fl_configured,
	.enabled = fl_enabled,
	.apply = fl_apply,
	.withdraw = fl_withdraw,
	.describe = fl_describe,
	.candidate = fl_candidate,
	.engage = fl_engage,
	.confirm = NULL,
	.window = fl_window,
	.restart_window = fl_restart_window,
	.tick = NULL,
	.rung = fl_rung,
	.guard = fl_guard,
	.engage_windows = 1,
	.shift_windows = 2,
	.shift_ratio = 2.0,
	.context_move = 1.0,
	.lost_until_moved = true,
	.max_skipped = 8,
	.long_trials = true,
	.window_desc = "one checkpoint per window (ABBA)",
	.unsuited = "no usable checkpoint",
	.fsync_off = "fsync = off: the server skips the writeback requests checkpoint_flush_after makes",
	.window_ended = fl_window_ended,
};
