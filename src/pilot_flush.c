/*-------------------------------------------------------------------------
 *
 * pilot_flush.c
 *		The checkpoint_flush_after controller: each checkpoint is a trial
 *		window.
 *
 * checkpoint_flush_after decides how often the checkpointer asks the
 * kernel to start writing back what it wrote (sync_file_range).  Too
 * little and the kernel's dirty data piles up until the checkpoint's
 * fsyncs flood the disk and commits stall; too much and writes are forced
 * out that the page cache would have absorbed.  Which wins depends on the
 * storage and on how hot the data is, so the controller measures it: in
 * walpilot.mode = tune it runs on-line trials of a candidate value against
 * the current one, one checkpoint per window in ABBA order (the trial
 * engine, src/trial.c, event windows), and keeps a candidate only when it
 * is clearly better.
 *
 * A window's metric is the checkpoint's foreground impact, lower better:
 * stall seconds (seconds with under a tenth of the usual commits) plus the
 * ratio of the commit p99 during the checkpoint to the p99 of the minute
 * before it, so one stalled second weighs as much as a doubled p99.  A
 * candidate window whose checkpoint did not finish within its
 * checkpoint_completion_target share of the checkpoint interval fails the
 * guard: the candidate is rejected at once, as is one whose single window
 * stalls at least 3 s more than twice the current setting's last window
 * (learning must not cause storms; the p99 ratio alone is too noisy for a
 * one-window verdict).  A window counts only if the checkpointer ran it with the value
 * intended (checkpoint records carry the value in force at the start),
 * was a spread checkpoint (time or wal) and saw commits.
 *
 * The search walks a ladder of values (0, 64kB ... 2MB, within
 * walpilot.checkpoint_flush_after_min/max), neighbours of the current
 * value first, on in the direction that paid; a rejected value is not
 * tried again until the workload or storage changes.  The choice is held,
 * re-checked against the configured setting every walpilot.tune_interval,
 * and the search starts over when the commit rate or the buffers written
 * per checkpoint change by more than half.
 *
 * The knob is described by a table (WpFlushKnob) so the same controller
 * can drive bgwriter_flush_after later; values reach the checkpointer
 * through settings_server.c (postgresql.auto.conf and a reload).
 *
 * IDENTIFICATION
 *	  src/pilot_flush.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "postmaster/bgwriter.h"
#include "storage/bufmgr.h"
#include "storage/shmem.h"

#include "trial.h"
#include "walpilot.h"

/* GUCs */
bool		wp_tune_checkpoint_flush = true;
int			wp_checkpoint_flush_min_kb = 0;
int			wp_checkpoint_flush_max_kb = 2048;

#define WP_FLUSH_MIN_COMMITS	50	/* commits in a window to count it */
#define WP_FLUSH_LADDER_LEN		7
#define WP_FLUSH_MAX_SKIPS		8	/* unusable windows before giving up */
#define WP_FLUSH_SHIFT_RATIO	2.0
#define WP_FLUSH_SHIFT_WINDOWS	2
#define WP_FLUSH_GUARD_SLACK_S	5.0
#define WP_FLUSH_STORM_S		3	/* stalled seconds that end a trial early */

static const int flush_ladder_kb[WP_FLUSH_LADDER_LEN] = {
	0, 64, 128, 256, 512, 1024, 2048
};

/*
 * A knob of this controller: how to read the configured value, apply one
 * and describe it.  Values are indexes into the ladder.
 */
typedef struct WpFlushKnob
{
	const char *setting;
	WpServerSetting server_setting;
	int			(*configured_kb) (void);
	bool		(*platform_ok) (char *why, size_t len);
} WpFlushKnob;

static int
configured_checkpoint_flush_kb(void)
{
	/* the DBA sets nothing walpilot manages: the configured value is the default */
	return DEFAULT_CHECKPOINT_FLUSH_AFTER * (BLCKSZ / 1024);
}

static bool
checkpoint_flush_platform_ok(char *why, size_t len)
{
#ifdef HAVE_SYNC_FILE_RANGE
	return true;
#else
	strlcpy(why, "this platform has no sync_file_range: checkpoint_flush_after "
			"has little or no effect here", len);
	return false;
#endif
}

static const WpFlushKnob flush_knob = {
	"checkpoint_flush_after",
	WP_SS_CHECKPOINT_FLUSH_AFTER,
	configured_checkpoint_flush_kb,
	checkpoint_flush_platform_ok
};

typedef enum WpFlushState
{
	WP_FS_OFF,					/* not tuning (mode, GUC, platform) */
	WP_FS_IDLE,					/* tuning on, waiting for a loaded checkpoint */
	WP_FS_TRIAL,
	WP_FS_HOLD,
	WP_FS_STOPPED				/* a setting could not be written */
} WpFlushState;

static const char *const state_names[] = {
	"off", "idle", "trial", "hold", "stopped"
};

typedef struct WpFlushShared
{
	char		state[16];
	char		setting[32];
	char		reason[160];
} WpFlushShared;

static WpFlushShared *fshared = NULL;

/*---- worker-local state ----*/
static WpFlushState state = WP_FS_OFF;
static bool started = false;
static uint64 last_seq = 0;
static int	current_ix = -1;		/* ladder index in force (choice) */
static int	candidate_ix = -1;
static int	configured_ix = -1;
static bool managing = false;	/* walpilot's value is in auto.conf */
static int	applied_kb = -1;		/* value walpilot last put in force */
static uint32 bad_mask = 0;		/* rejected ladder values */
static uint32 tried_mask = 0;	/* tried in this search, no gain */
static int	direction = 0;		/* +1 up, -1 down: the step that paid */
static bool direction_paid = false;
static WpTrial trial;
static bool trial_is_recheck = false;
static double last_current_metric = -1;
static int	last_current_stall = -1;
static int	skips = 0;
static TimestampTz hold_since = 0;
static TimestampTz off_until = 0;
static double level_rate = 0;	/* commits/s during checkpoints at the choice */
static double level_buffers = 0;
static int	shift_streak = 0;
static uint64 trial_decision = 0;
static bool platform_said = false;

Size
wp_flush_pilot_shmem_size(void)
{
	return MAXALIGN(sizeof(WpFlushShared));
}

void
wp_flush_pilot_shmem_init(void)
{
	bool		found;

	fshared = ShmemInitStruct("walpilot flush pilot", sizeof(WpFlushShared),
							  &found);
	if (!found)
	{
		memset(fshared, 0, sizeof(WpFlushShared));
		strlcpy(fshared->state, "off", sizeof(fshared->state));
	}
}

static void
publish_state(const char *reason)
{
	char		setting[32];

	snprintf(setting, sizeof(setting), "%dkB",
			 applied_kb >= 0 ? applied_kb : configured_checkpoint_flush_kb());
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	strlcpy(fshared->state, state_names[state], sizeof(fshared->state));
	strlcpy(fshared->setting, setting, sizeof(fshared->setting));
	if (reason)
		strlcpy(fshared->reason, reason, sizeof(fshared->reason));
	LWLockRelease(wp_shared->lock);
}

void
wp_flush_pilot_describe(char *st, char *cur, char *reason, size_t len)
{
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	strlcpy(st, fshared->state, len);
	strlcpy(cur, fshared->setting, len);
	strlcpy(reason, fshared->reason, len);
	LWLockRelease(wp_shared->lock);
}

static int
ladder_index(int kb)
{
	int			i,
				best = 0;

	for (i = 0; i < WP_FLUSH_LADDER_LEN; i++)
		if (abs(flush_ladder_kb[i] - kb) < abs(flush_ladder_kb[best] - kb))
			best = i;
	return best;
}

static bool
in_bounds(int ix)
{
	return ix >= 0 && ix < WP_FLUSH_LADDER_LEN &&
		flush_ladder_kb[ix] >= wp_checkpoint_flush_min_kb &&
		flush_ladder_kb[ix] <= wp_checkpoint_flush_max_kb;
}

/*
 * put_in_force
 *		Make kb the value of the next checkpoint: the configured value
 *		means walpilot's line goes; anything else is written.
 */
static bool
put_in_force(int kb)
{
	char		value[32];
	char		err[128];

	if (kb == applied_kb)
		return true;
	if (kb == flush_ladder_kb[configured_ix])
	{
		if (managing && !wp_server_setting_revert(flush_knob.setting))
			return false;
		managing = false;
		applied_kb = kb;
		return true;
	}
	snprintf(value, sizeof(value), "%dkB", kb);
	if (!wp_server_setting_apply(flush_knob.setting, value, err, sizeof(err)))
		return false;
	managing = true;
	applied_kb = kb;
	return true;
}

/*
 * stop_pilot
 *		A setting could not be written: put the configuration back as far
 *		as possible and stop until the next worker start.
 */
static void
stop_pilot(const char *why)
{
	char		reason[160];

	wp_server_settings_revert_all(why);
	managing = false;
	applied_kb = -1;
	state = WP_FS_STOPPED;
	snprintf(reason, sizeof(reason), "stopped: %s", why);
	ereport(WARNING,
			(errmsg("walpilot stops tuning checkpoint_flush_after"),
			 errdetail_internal("%s", why)));
	(void) wp_decision_log(flush_knob.setting, "-", "-", reason, NULL);
	publish_state(reason);
}

/*
 * fall_back
 *		Back to the configured value, idle.
 */
static void
fall_back(const char *why, WpFlushState next)
{
	char		old[32];

	snprintf(old, sizeof(old), "%dkB", applied_kb >= 0 ? applied_kb :
			 configured_checkpoint_flush_kb());
	if (managing)
	{
		wp_server_settings_revert_all(why);
		(void) wp_decision_log(flush_knob.setting, old, "(configured)",
							   why, NULL);
	}
	managing = false;
	applied_kb = -1;
	current_ix = configured_ix;
	candidate_ix = -1;
	state = next;
	publish_state(why);
}

/*
 * next_candidate
 *		Neighbours of the current value first (the next value up, then
 *		down); once a step paid, only on in that direction.  Never a
 *		rejected or already tried value.
 */
static int
next_candidate(void)
{
	static const int dirs[2] = {+1, -1};
	int			i;

	for (i = 0; i < 2; i++)
	{
		int			d = direction_paid ? direction : dirs[i];
		int			ix = current_ix + d;

		if (in_bounds(ix) && !(bad_mask & (1u << ix)) &&
			!(tried_mask & (1u << ix)))
			return ix;
		if (direction_paid)
			break;
	}
	return -1;
}

static void start_trial(int cand, bool recheck);
static void hold_choice(const char *why);

/*
 * continue_search
 *		After a verdict: the next neighbour, or hold what is in force.
 */
static void
continue_search(void)
{
	int			cand = next_candidate();

	if (cand >= 0)
		start_trial(cand, false);
	else
		hold_choice(current_ix == configured_ix ?
					"no neighbour beats the configured value" :
					"best value found");
}

static void
start_trial(int cand, bool recheck)
{
	WpTrialConfig cfg;
	char		reason[160];
	char		old[32],
				new[32];

	memset(&cfg, 0, sizeof(cfg));
	cfg.pairs = 2;				/* A B B A: two windows per arm */
	cfg.early_pairs = 0;
	cfg.higher_is_better = false;
	cfg.min_gain = 1.05;
	cfg.max_p99_regression = wp_max_latency_regression_pct / 100.0;
	cfg.log_offset = 1.0;
	cfg.incumbent = recheck;
	wp_trial_begin(&trial, &cfg);
	candidate_ix = cand;
	trial_is_recheck = recheck;
	last_current_metric = -1;
	last_current_stall = -1;
	skips = 0;
	state = WP_FS_TRIAL;
	snprintf(old, sizeof(old), "%dkB", flush_ladder_kb[current_ix]);
	snprintf(new, sizeof(new), "%dkB", flush_ladder_kb[cand]);
	snprintf(reason, sizeof(reason), "%s: %s against %s, one checkpoint per window (ABBA)",
			 recheck ? "re-check" : "trial", new, old);
	trial_decision = wp_decision_log(flush_knob.setting, old, new, reason,
									 NULL);
	publish_state(reason);
	/* the first window runs the current value */
	if (!put_in_force(flush_ladder_kb[wp_trial_window_is_candidate(&trial) ?
									  cand : current_ix]))
		stop_pilot("the setting could not be written");
}

/*
 * window_metric
 *		Foreground impact of one checkpoint, lower better; false when the
 *		checkpoint cannot be a window.
 */
static bool
window_metric(const WpCheckpointSummary *c, double *metric, bool *late)
{
	double		duration_s,
				budget_s;
	double		p99_ratio = 1.0;

	if (strcmp(c->reason, "time") != 0 && strcmp(c->reason, "wal") != 0)
		return false;
	if (!c->have_window || !c->have_stall || c->commits < WP_FLUSH_MIN_COMMITS)
		return false;
	if (c->commit_p99_us_outside > 0 && c->commit_p99_us > 0)
		p99_ratio = c->commit_p99_us / c->commit_p99_us_outside;
	*metric = (double) c->stall_seconds + p99_ratio;

	/* the guard: finished within its completion-target share */
	duration_s = (double) (c->finished_at - c->started_at) / USECS_PER_SEC;
	budget_s = CheckPointTimeout * CheckPointCompletionTarget;
	*late = duration_s > budget_s * 1.2 + WP_FLUSH_GUARD_SLACK_S &&
		strcmp(c->reason, "time") == 0;
	return true;
}

static void
evidence_json(const WpTrialVerdict *v, char *buf, size_t len)
{
	snprintf(buf, len,
			 "{\"windows\": %d, \"ratio\": %.3f, \"t\": %.2f, \"t_crit\": %.2f, "
			 "\"impact_current\": %.2f, \"impact_candidate\": %.2f}",
			 v->pairs * 2, v->ratio, v->t, v->t_crit,
			 v->metric_mean[0], v->metric_mean[1]);
}

/*
 * reject
 *		The candidate lost (or failed the guard): back to the current value.
 */
static void
reject(const char *why, bool bad, const char *evidence)
{
	char		outcome[160];

	if (bad)
		bad_mask |= 1u << candidate_ix;
	else
		tried_mask |= 1u << candidate_ix;
	snprintf(outcome, sizeof(outcome), "rejected: %s", why);
	wp_decision_set_outcome(trial_decision, outcome);
	if (evidence)
		(void) wp_decision_log(flush_knob.setting,
							   psprintf("%dkB", flush_ladder_kb[candidate_ix]),
							   psprintf("%dkB", flush_ladder_kb[current_ix]),
							   outcome, evidence);
	if (trial_is_recheck)
	{
		/* the held choice lost to the configured setting: start over */
		bad_mask = tried_mask = 0;
		direction_paid = false;
		fall_back("re-check: the held value is worse than the configured one",
				  WP_FS_IDLE);
		return;
	}
	candidate_ix = -1;
	if (!put_in_force(flush_ladder_kb[current_ix]))
	{
		stop_pilot("the setting could not be written");
		return;
	}
	continue_search();
}

static void
hold_choice(const char *why)
{
	char		reason[160];

	state = WP_FS_HOLD;
	hold_since = GetCurrentTimestamp();
	snprintf(reason, sizeof(reason), "hold %dkB: %s",
			 flush_ladder_kb[current_ix], why);
	publish_state(reason);
	(void) wp_decision_log(flush_knob.setting, "-",
						   psprintf("%dkB", flush_ladder_kb[current_ix]),
						   reason, NULL);
}

static void
trial_window(const WpCheckpointSummary *c)
{
	bool		cand_arm = wp_trial_window_is_candidate(&trial);
	int			intended = flush_ladder_kb[cand_arm ? candidate_ix : current_ix];
	double		metric;
	bool		late;
	bool		over;
	WpTrialVerdict v;
	char		evidence[400];

	if (c->flush_after_kb != intended || !window_metric(c, &metric, &late))
	{
		/* not run with the intended value, or nothing to learn from it */
		if (++skips > WP_FLUSH_MAX_SKIPS)
			fall_back("no usable checkpoints: the trial ends", WP_FS_IDLE);
		return;
	}
	if (cand_arm && late)
	{
		snprintf(evidence, sizeof(evidence),
				 "{\"seconds\": %.1f, \"budget_s\": %.1f}",
				 (double) (c->finished_at - c->started_at) / USECS_PER_SEC,
				 CheckPointTimeout * CheckPointCompletionTarget);
		reject("the checkpoint finished late", true, evidence);
		return;
	}
	/* a storm the current value did not have: stop at once */
	if (cand_arm && last_current_stall >= 0 &&
		c->stall_seconds >= 2 * last_current_stall + WP_FLUSH_STORM_S)
	{
		snprintf(evidence, sizeof(evidence),
				 "{\"stall_s_current\": %d, \"stall_s_candidate\": %d, "
				 "\"impact_current\": %.2f, \"impact_candidate\": %.2f}",
				 last_current_stall, c->stall_seconds, last_current_metric,
				 metric);
		reject("clearly worse: stalls in its first window", true, evidence);
		return;
	}
	if (!cand_arm)
	{
		last_current_metric = metric;
		last_current_stall = c->stall_seconds;
	}
	over = wp_trial_add_window(&trial, metric, 1.0, NULL);
	if (!over)
	{
		cand_arm = wp_trial_window_is_candidate(&trial);
		if (!put_in_force(flush_ladder_kb[cand_arm ? candidate_ix : current_ix]))
			stop_pilot("the setting could not be written");
		return;
	}

	wp_trial_verdict(&trial, 0, &v);
	evidence_json(&v, evidence, sizeof(evidence));
	if (!v.keep)
	{
		reject(v.worse ? "worse" : "no clear gain", v.worse, evidence);
		return;
	}
	wp_decision_set_outcome(trial_decision, trial_is_recheck ?
							"kept: still as good" : "kept: better");
	(void) wp_decision_log(flush_knob.setting,
						   psprintf("%dkB", flush_ladder_kb[current_ix]),
						   psprintf("%dkB", flush_ladder_kb[candidate_ix]),
						   trial_is_recheck ? "re-check passed" : "candidate kept",
						   evidence);
	if (!trial_is_recheck)
	{
		direction = candidate_ix > current_ix ? +1 : -1;
		direction_paid = true;
		tried_mask = 0;
	}
	current_ix = candidate_ix;
	candidate_ix = -1;
	if (!put_in_force(flush_ladder_kb[current_ix]))
	{
		stop_pilot("the setting could not be written");
		return;
	}
	level_rate = 0;
	if (trial_is_recheck)
		hold_choice("re-check passed");
	else
		continue_search();
}

/*
 * hold_window
 *		A checkpoint while a choice is held: continue the search, watch for
 *		a changed workload or storage, re-check when due.
 */
static void
hold_window(const WpCheckpointSummary *c)
{
	double		metric;
	bool		late;
	double		dur = (double) (c->finished_at - c->started_at) / USECS_PER_SEC;
	double		rate = dur > 0 ? c->commits / dur : 0;

	if (!window_metric(c, &metric, &late))
		return;
	if (level_rate <= 0)
	{
		level_rate = rate;
		level_buffers = (double) c->buffers_written;
	}
	if (rate > level_rate * WP_FLUSH_SHIFT_RATIO ||
		rate < level_rate / WP_FLUSH_SHIFT_RATIO ||
		(level_buffers > 0 && c->buffers_written >= 0 &&
		 ((double) c->buffers_written > level_buffers * WP_FLUSH_SHIFT_RATIO ||
		  (double) c->buffers_written < level_buffers / WP_FLUSH_SHIFT_RATIO)))
		shift_streak++;
	else
		shift_streak = 0;
	if (shift_streak >= WP_FLUSH_SHIFT_WINDOWS)
	{
		/* new workload or storage: what was bad may be good now */
		bad_mask = tried_mask = 0;
		direction_paid = false;
		shift_streak = 0;
		level_rate = 0;
		(void) wp_decision_log(flush_knob.setting, "-", "-",
							   "workload or storage changed: searching again",
							   NULL);
		continue_search();
		return;
	}
	if (TimestampDifferenceExceeds(hold_since, GetCurrentTimestamp(),
								   wp_tune_interval_s * 1000))
	{
		hold_since = GetCurrentTimestamp();
		if (current_ix != configured_ix)
		{
			/* the held value against the configured one, kept unless worse */
			int			held = current_ix;

			current_ix = configured_ix;
			start_trial(held, true);
		}
		else
		{
			/* holding the configured value: search again from it */
			bad_mask = tried_mask = 0;
			direction_paid = false;
			continue_search();
		}
	}
}

/*
 * wp_flush_pilot_tick
 *		Worker tick; the work happens once per finished checkpoint.
 */
void
wp_flush_pilot_tick(TimestampTz now)
{
	WpCheckpointSummary c;
	char		why[MAXPGPATH + 64];
	bool		tuning = wp_mode == WP_MODE_TUNE && wp_tune_checkpoint_flush;

	if (!started)
	{
		started = true;
		configured_ix = current_ix = ladder_index(configured_checkpoint_flush_kb());
		while (wp_checkpoint_next_done(last_seq, &c))
			last_seq = c.seq;
	}
	if (wp_server_settings_revert_pending())
	{
		wp_server_settings_revert_all("walpilot.revert() or DROP EXTENSION");
		if (managing)
			(void) wp_decision_log(flush_knob.setting, "-", "(configured)",
								   "walpilot.revert() or DROP EXTENSION", NULL);
		managing = false;
		applied_kb = -1;
		current_ix = configured_ix;
		state = tuning ? WP_FS_IDLE : WP_FS_OFF;
		off_until = now + (TimestampTz) wp_tune_interval_s * USECS_PER_SEC;
		publish_state("reverted by walpilot.revert() or DROP EXTENSION");
	}
	if (state == WP_FS_STOPPED)
		return;
	if (!tuning)
	{
		if (state != WP_FS_OFF)
			fall_back("walpilot.mode or walpilot.tune_checkpoint_flush turned tuning off",
					  WP_FS_OFF);
		return;
	}
	if (!flush_knob.platform_ok(why, sizeof(why)))
	{
		if (!platform_said)
		{
			platform_said = true;
			(void) wp_decision_log(flush_knob.setting, "-", "-", why, NULL);
			publish_state(why);
		}
		return;
	}
	if (state == WP_FS_OFF)
	{
		state = WP_FS_IDLE;
		publish_state("waiting for a checkpoint under load");
	}

	if (!wp_checkpoint_next_done(last_seq, &c))
		return;
	last_seq = c.seq;

	/* the DBA may have taken the setting back, or set it all along */
	if (!wp_server_setting_available(flush_knob.setting, why, sizeof(why)))
	{
		if (state != WP_FS_IDLE || managing)
		{
			if (state == WP_FS_TRIAL)
				(void) wp_decision_log(flush_knob.setting, "-", "-",
									   psprintf("the DBA took the setting back (%s); "
												"walpilot no longer manages it", why),
									   NULL);
			managing = false;	/* settings_server.c took walpilot's line out */
			applied_kb = -1;
			current_ix = configured_ix;
			state = WP_FS_IDLE;
		}
		publish_state(psprintf("hands off: %s", why));
		return;
	}

	switch (state)
	{
		case WP_FS_IDLE:
			{
				double		metric;
				bool		late;

				if (now < off_until || !window_metric(&c, &metric, &late))
					break;
				current_ix = configured_ix;
				direction_paid = false;
				tried_mask = 0;
				continue_search();
				break;
			}
		case WP_FS_TRIAL:
			trial_window(&c);
			break;
		case WP_FS_HOLD:
			hold_window(&c);
			break;
		default:
			break;
	}
}

/*
 * wp_flush_pilot_stop
 *		Worker exit: the DBA's file goes back now.
 */
void
wp_flush_pilot_stop(const char *why)
{
	if (LWLockHeldByMe(AutoFileLock))
		LWLockRelease(AutoFileLock);
	wp_server_settings_revert_all(why);
	managing = false;
	applied_kb = -1;
}
