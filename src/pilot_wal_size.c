/*-------------------------------------------------------------------------
 *
 * pilot_wal_size.c
 *		max_wal_size raised by walpilot itself, as walpilot.recommendations
 *		advises, when walpilot.tune_max_wal_size is on.
 *
 * Checkpoints triggered by WAL volume rather than by checkpoint_timeout
 * write every hot page again each time, with a full-page image for each
 * first change after it.  walpilot.recommendations shows the max_wal_size
 * that would make them timed; with walpilot.tune_max_wal_size (default
 * off, tune mode only) the worker applies that very value itself.  There
 * is no trial: the rule is the one the view uses (advice.c), fed by the
 * same checkpoint records, and what it changes is the distance between
 * checkpoints, not something a few seconds of commits could judge.
 *
 * Every change is bounded, recorded and revertible:
 * - it happens only when the rule's evidence holds (at least two
 *   checkpoints of the last hour triggered by WAL volume at the current
 *   trigger distance, no fewer than timed ones), and only upwards;
 * - never above walpilot.max_wal_size_max, and never by more than half the
 *   free space of pg_wal's file system (pg_wal may grow by the raise);
 * - through settings_server.c: walpilot's line in postgresql.auto.conf
 *   under AutoFileLock, the DBA's file saved byte for byte first, reverted
 *   on walpilot.revert(), DROP EXTENSION, mode off, tune_max_wal_size off,
 *   worker exit and start, postmaster exit;
 * - a decision row with the evidence for each change and each revert;
 * - the DBA's own max_wal_size in postgresql.conf (or the default) is the
 *   floor walpilot raises from, and in force again when walpilot's line
 *   goes.  A DBA who sets it after walpilot did (ALTER SYSTEM, a changed
 *   postgresql.conf line, the command line) takes it back: walpilot does
 *   not touch it again, across restarts too (settings_server.c records
 *   the release; walpilot.settings shows managed_by = 'dba').
 *
 * After walpilot.revert() or DROP EXTENSION the pilot waits
 * walpilot.tune_interval before it raises again.
 *
 * IDENTIFICATION
 *	  src/pilot_wal_size.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <sys/statvfs.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "advice.h"
#include "evidence.h"
#include "walpilot.h"

/* GUCs */
bool		wp_tune_max_wal_size = false;
int			wp_max_wal_size_max_mb = 16384;

static const char setting[] = "max_wal_size";

/* the checkpoints the rule reads: the last WP_ADVICE_MAX_CKPTS finished */
static WpAdviceCheckpoint ring[WP_ADVICE_MAX_CKPTS];
static int	nring = 0;
static uint64 last_seq = 0;

static bool started = false;
static bool managing = false;	/* walpilot's line is in force */
static bool hands_off = false;	/* the DBA took it back, or a write failed */
static bool pending = true;		/* evidence to (re)consider */
static uint64 seen_revert_generation = 0;
static TimestampTz off_until = 0;
static char last_note[160] = "";	/* the last "not raised" row's reason */
static int	seen_max_wal_size_mb = 0;	/* a reload changed it: look again */

/* the newly finished checkpoints, oldest first */
static void
collect_checkpoints(void)
{
	WpCheckpointSummary c;

	while (wp_checkpoint_next_done(last_seq, &c))
	{
		WpAdviceCheckpoint *a;

		last_seq = c.seq;
		if (nring == WP_ADVICE_MAX_CKPTS)
		{
			memmove(ring, ring + 1, sizeof(ring[0]) * (nring - 1));
			nring--;
		}
		a = &ring[nring++];
		memset(a, 0, sizeof(*a));
		a->started = (double) (c.started_at - SetEpochTimestamp()) / USECS_PER_SEC;
		a->finished = (double) (c.finished_at - SetEpochTimestamp()) / USECS_PER_SEC;
		strlcpy(a->reason, c.reason, sizeof(a->reason));
		a->wal_bytes = (double) c.wal_bytes;
		a->stall_seconds = c.have_stall ? c.stall_seconds : -1;
		pending = true;
	}
}

/*
 * note_once
 *		A decision row (and LOG line) for something that stops a raise,
 *		once per distinct reason, so a hold does not write a row per
 *		checkpoint.
 */
static void
note_once(const char *reason, const char *evidence)
{
	if (strcmp(reason, last_note) == 0)
		return;
	strlcpy(last_note, reason, sizeof(last_note));
	ereport(LOG,
			(errmsg("walpilot does not raise max_wal_size"),
			 errdetail_internal("%s", reason)));
	(void) wp_decision_log(setting, "-", "-", reason, evidence);
}

/* walpilot's line goes; the DBA's value is in force again */
static void
put_back(const char *why)
{
	char		old[32];

	if (!managing)
		return;
	strlcpy(old, GetConfigOptionByName(setting, NULL, false), sizeof(old));
	(void) wp_server_setting_revert(setting, why);
	managing = false;
	last_note[0] = '\0';
	ereport(LOG,
			(errmsg("walpilot put max_wal_size back"),
			 errdetail_internal("%s", why)));
	(void) wp_decision_log(setting, old, "(DBA's)", why, NULL);
}

/*
 * free_wal_space_mb
 *		Free space of pg_wal's file system for unprivileged writers, in MB
 *		(-1 when it cannot be read).
 */
static double
free_wal_space_mb(void)
{
	struct statvfs st;

	if (statvfs(XLOGDIR, &st) != 0)
		return -1;
	return (double) st.f_bavail * (double) st.f_frsize / (1024.0 * 1024.0);
}

/*
 * consider
 *		Apply the rule to the checkpoints of the last hour; raise when it
 *		says so and the bounds allow.
 */
static void
consider(TimestampTz now)
{
	WpAdviceCheckpoint ck[WP_ADVICE_MAX_CKPTS];
	double		since = (double) (now - SetEpochTimestamp()) / USECS_PER_SEC -
		WP_ADVICE_CKPT_WINDOW_S;
	WpWalSizeAdvice a;
	WpEvidence	e;
	int			n = 0,
				i;
	int64		cur_mb = max_wal_size_mb,
				new_mb;
	double		free_mb = free_wal_space_mb();
	const char *bound = NULL;
	char		why[MAXPGPATH + 64];
	char		value[32];
	char		old[32];
	char		reason[160];
	char		err[128];
	char	   *evidence;

	for (i = 0; i < nring; i++)
		if (ring[i].started > since)
			ck[n++] = ring[i];
	if (!wp_advice_max_wal_size(ck, n, &a))
		return;

	new_mb = a.recommended_mb;
	if (new_mb > wp_max_wal_size_max_mb)
	{
		new_mb = wp_max_wal_size_max_mb;
		bound = "walpilot.max_wal_size_max";
	}
	if (free_mb < 0)
	{
		new_mb = cur_mb;
		bound = "pg_wal's free space cannot be read";
	}
	else if ((double) (new_mb - cur_mb) > free_mb / 2)
	{
		new_mb = cur_mb + (int64) (free_mb / 2);
		bound = "half the free space of pg_wal's file system";
	}

	wp_ev_begin(&e);
	wp_advice_max_wal_size_evidence(&a, &e);
	wp_ev_num(&e, "recommended_mb", a.recommended_mb);
	wp_ev_num(&e, "max_wal_size_max_mb", wp_max_wal_size_max_mb);
	wp_ev_num(&e, "pg_wal_free_mb", free_mb >= 0 ? free_mb : NAN);
	wp_ev_str(&e, "bounded_by", bound ? bound : "");
	wp_ev_num(&e, "confidence", a.confidence);
	evidence = wp_ev_end(&e);

	if (new_mb <= cur_mb)
	{
		snprintf(reason, sizeof(reason),
				 "not raised: the recommended %lldMB is above the bound (%s)",
				 (long long) a.recommended_mb, bound ? bound : "?");
		note_once(reason, evidence);
		return;
	}
	if (!wp_server_setting_available(setting, why, sizeof(why)))
	{
		snprintf(reason, sizeof(reason), "hands off: %s", why);
		note_once(reason, evidence);
		return;
	}

	strlcpy(old, GetConfigOptionByName(setting, NULL, false), sizeof(old));
	/* as SHOW prints it */
	if (new_mb % 1024 == 0)
		snprintf(value, sizeof(value), "%lldGB", (long long) (new_mb / 1024));
	else
		snprintf(value, sizeof(value), "%lldMB", (long long) new_mb);
	if (!wp_server_setting_apply(setting, value, err, sizeof(err)))
	{
		/* settings_server.c wrote the WARNING and the row: stop here */
		hands_off = true;
		return;
	}
	managing = true;
	last_note[0] = '\0';
	snprintf(reason, sizeof(reason),
			 "%d checkpoints by WAL volume, %d timed in the last hour: "
			 "checkpoints become timed at about %lldMB%s%s",
			 a.wal_checkpoints, a.timed_checkpoints,
			 (long long) a.recommended_mb,
			 bound ? "; bounded by " : "", bound ? bound : "");
	ereport(LOG,
			(errmsg("walpilot raises max_wal_size from %s to %s", old, value),
			 errdetail_internal("%s", reason)));
	(void) wp_decision_log(setting, old, value, reason, evidence);
}

/*
 * wp_wal_size_pilot_tick
 *		Worker tick (primary only): follow revert requests and the owner of
 *		the setting, and consider a raise when a checkpoint finished.
 */
void
wp_wal_size_pilot_tick(TimestampTz now)
{
	uint64		gen = wp_server_settings_revert_generation();
	bool		tuning = wp_mode == WP_MODE_TUNE && wp_tune_max_wal_size;

	if (!started)
	{
		started = true;
		seen_revert_generation = gen;
	}
	collect_checkpoints();
	if (max_wal_size_mb != seen_max_wal_size_mb)
	{
		seen_max_wal_size_mb = max_wal_size_mb;
		pending = true;
	}

	if (gen != seen_revert_generation)
	{
		seen_revert_generation = gen;
		put_back("walpilot.revert() or DROP EXTENSION");
		off_until = now + (TimestampTz) wp_tune_interval_s * USECS_PER_SEC;
		pending = true;
	}
	if (!tuning)
	{
		put_back(wp_mode != WP_MODE_TUNE ?
				 "walpilot.mode is not 'tune'" :
				 "walpilot.tune_max_wal_size turned off");
		pending = true;
		return;
	}
	if (managing &&
		wp_server_setting_owner(WP_SS_MAX_WAL_SIZE, NULL, 0, NULL, 0) !=
		WP_SS_OWNER_WALPILOT)
	{
		/*
		 * walpilot's line is gone without this pilot: the DBA took the
		 * setting back (settings_server.c wrote that row), or another
		 * pilot put all of walpilot's lines back.
		 */
		managing = false;
		if (wp_server_setting_owner(WP_SS_MAX_WAL_SIZE, NULL, 0, NULL, 0) ==
			WP_SS_OWNER_DBA)
			hands_off = true;
		pending = true;
	}
	if (hands_off || !pending || now < off_until)
		return;
	pending = false;
	consider(now);
}

/*
 * wp_wal_size_pilot_stop
 *		Worker exit: walpilot's line goes now (the flush pilot's stop then
 *		puts back the DBA's exact file).
 */
void
wp_wal_size_pilot_stop(const char *why)
{
	put_back(why);
}
