/*-------------------------------------------------------------------------
 *
 * pilot_wal_size.c
 *		max_wal_size set by walpilot itself, as walpilot.recommendations
 *		advises, when the DBA opts in with walpilot.tune_max_wal_size.
 *
 * Checkpoints triggered by WAL volume rather than by checkpoint_timeout
 * write every hot page again each time, with a full-page image for each
 * first change after it.  walpilot.recommendations shows the max_wal_size
 * that would make them timed; with walpilot.tune_max_wal_size (default
 * off, tune mode only) the worker applies that very value itself, and
 * takes it down again when the WAL rate falls.  There is no trial: the
 * raise follows the rule the view uses (advice.c), fed by the same
 * checkpoint records, and what it changes is the distance between
 * checkpoints, not something a few seconds of commits could judge.
 *
 * Every change is bounded, recorded and revertible:
 * - raised only when the rule's evidence holds (at least two checkpoints
 *   of the last hour triggered by WAL volume at the current trigger
 *   distance, no fewer than timed ones);
 * - lowered when the WAL rate of the last 2 x checkpoint_timeout (at least
 *   a minute) needs less than half the value in force: to the size that
 *   rate needs, or back to the DBA's value; a raise after that counts only
 *   checkpoints that started after the lowering;
 * - the total is bounded: never above walpilot.max_wal_size_max, never
 *   above half of (pg_wal's free space + the WAL already in pg_wal); a
 *   value above the bound (the disk filled up) comes down to it;
 * - applied through ALTER SYSTEM and a reload (settings_alter_system.c),
 *   only when the DBA allows ALTER SYSTEM and no configuration file has an
 *   edit not yet loaded; otherwise the pilot holds and says why;
 * - taken back on walpilot.revert(), DROP EXTENSION, mode off,
 *   tune_max_wal_size off, worker exit and worker start;
 * - a decision row with the evidence for each change and each revert;
 * - the value in force before walpilot's (the default, or the DBA's
 *   postgresql.conf) is the floor walpilot raises from and returns to.  A
 *   max_wal_size of the DBA's in postgresql.auto.conf or on the command
 *   line is a pin: walpilot keeps off while it is in force.
 *
 * After walpilot.revert() or DROP EXTENSION the pilot waits
 * walpilot.tune_interval before it raises again.
 *
 * IDENTIFICATION
 *	  src/pilots/pilot_wal_size.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <sys/statvfs.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "postmaster/bgwriter.h"
#include "storage/fd.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "pilots.h"

static const char setting[] = "max_wal_size";

/* the checkpoints the rule reads: the last WP_CKPT_MAX_RECORDS finished */
static WpCheckpointRecord ring[WP_CKPT_MAX_RECORDS];
static int	nring = 0;
static uint64 last_seq = 0;

/* the WAL insert position every WP_WS_SAMPLE_S, for the WAL rate */
#define WP_WS_SAMPLE_S		5
#define WP_WS_SAMPLES		256
typedef struct WalSample
{
	TimestampTz at;
	XLogRecPtr	lsn;
} WalSample;
static WalSample samples[WP_WS_SAMPLES];
static int	nsamples = 0;		/* valid entries, newest at (next - 1) */
static int	next_sample = 0;

static bool started = false;
static bool managing = false;	/* walpilot's line is in force */
static bool take_back_pending = false;	/* a previous worker's line stays */
static TimestampTz next_take_back = 0;
static int64 floor_mb = 0;		/* in force before walpilot's line */
static uint64 seen_revert_generation = 0;
static TimestampTz off_until = 0;

/*
 * Checkpoints that started before this (seconds since the Unix epoch, as
 * the ring's) no longer count for a raise: the WAL rate fell after them
 * and walpilot lowered max_wal_size for it.  They stay in the last hour,
 * and counting them would raise again, within seconds, what the falling
 * rate just lowered, and again after each lowering.
 */
static double evidence_after = 0;
static TimestampTz next_look = 0;
static char last_note[WP_AS_NOTE_LEN] = "";
static bool noted = false;		/* consider() found a reason to hold */

/* the newly finished checkpoints, oldest first */
static void
collect_checkpoints(void)
{
	WpCheckpointSummary c;

	while (wp_checkpoint_next_done(last_seq, &c))
	{
		WpCheckpointRecord *a;

		last_seq = c.seq;
		if (nring == WP_CKPT_MAX_RECORDS)
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
	}
}

static void
sample_wal(TimestampTz now)
{
	if (nsamples > 0)
	{
		const WalSample *last = &samples[(next_sample + WP_WS_SAMPLES - 1) % WP_WS_SAMPLES];

		if (now - last->at < (TimestampTz) WP_WS_SAMPLE_S * USECS_PER_SEC)
			return;
	}
	samples[next_sample].at = now;
	samples[next_sample].lsn = GetXLogInsertRecPtr();
	next_sample = (next_sample + 1) % WP_WS_SAMPLES;
	if (nsamples < WP_WS_SAMPLES)
		nsamples++;
}

/* the rate window: 2 x checkpoint_timeout, at least a minute */
static double
rate_window_s(void)
{
	return Max(60.0, 2.0 * CheckPointTimeout);
}

/*
 * wal_rate
 *		WAL bytes per second over the rate window; false until the samples
 *		cover it.
 */
static bool
wal_rate(TimestampTz now, double *rate)
{
	TimestampTz since = now - (TimestampTz) (rate_window_s() * USECS_PER_SEC);
	const WalSample *newest,
			   *oldest = NULL;
	int			i;

	if (nsamples < 2)
		return false;
	newest = &samples[(next_sample + WP_WS_SAMPLES - 1) % WP_WS_SAMPLES];
	/* the newest sample at or before the window's start */
	for (i = 0; i < nsamples; i++)
	{
		const WalSample *s = &samples[(next_sample + WP_WS_SAMPLES - 1 - i) % WP_WS_SAMPLES];

		if (s->at <= since)
		{
			oldest = s;
			break;
		}
	}
	if (oldest == NULL || newest->at <= oldest->at)
		return false;
	*rate = (double) (newest->lsn - oldest->lsn) /
		((double) (newest->at - oldest->at) / USECS_PER_SEC);
	return true;
}

/* a size as the rule rounds it: a power of two up to 1GB, whole GB above */
static int64
round_size_mb(double mb)
{
	int64		p = 1;

	if (mb > 1024)
		return (int64) ceil(mb / 1024.0) * 1024;
	while ((double) p < mb)
		p <<= 1;
	return p;
}

static void
format_mb(int64 mb, char *buf, size_t len)
{
	if (mb % 1024 == 0)
		snprintf(buf, len, "%lldGB", (long long) (mb / 1024));
	else
		snprintf(buf, len, "%lldMB", (long long) mb);
}

/*
 * note_once
 *		A decision row (and LOG line) for something that stops a change,
 *		once per distinct reason, so a hold does not write a row per tick;
 *		walpilot.settings shows it while it holds.
 */
static void
note_once(const char *reason, const char *evidence)
{
	noted = true;
	if (strcmp(reason, last_note) == 0)
		return;
	strlcpy(last_note, reason, sizeof(last_note));
	wp_alter_system_note(reason);
	ereport(LOG,
			(errmsg("walpilot does not change max_wal_size"),
			 errdetail_internal("%s", reason)));
	(void) wp_decision_log(setting, "-", "-", reason, evidence);
}

static void
clear_note(void)
{
	if (last_note[0] != '\0')
	{
		last_note[0] = '\0';
		wp_alter_system_note("");
	}
}

/* walpilot's line goes; the DBA's value is in force again */
static void
put_back(const char *why)
{
	char		old[32];
	char		err[WP_AS_NOTE_LEN];
	char	   *evidence;

	if (!managing)
		return;
	managing = false;
	strlcpy(old, GetConfigOptionByName(setting, NULL, false), sizeof(old));
	if (!wp_alter_system_reset(setting, err, sizeof(err)))
	{
		ereport(LOG,
				(errmsg("walpilot leaves max_wal_size alone"),
				 errdetail_internal("%s", err)));
		(void) wp_decision_log(setting, old, "-", err, NULL);
		return;
	}
	clear_note();
	ereport(LOG,
			(errmsg("walpilot put max_wal_size back"),
			 errdetail_internal("%s%s%s", why, err[0] ? "; " : "", err)));
	/* the evidence is a JSON object: the note goes in it as a string */
	evidence = NULL;
	if (err[0])
	{
		WpEvidence	e;

		wp_ev_begin(&e);
		wp_ev_str(&e, "note", err);
		evidence = wp_ev_end(&e);
	}
	(void) wp_decision_log(setting, old, "(DBA's)", why, evidence);
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

/* the WAL segments in pg_wal, in MB */
static double
wal_in_pg_wal_mb(void)
{
	DIR		   *dir = AllocateDir(XLOGDIR);
	struct dirent *de;
	int64		n = 0;

	while ((de = ReadDirExtended(dir, XLOGDIR, LOG)) != NULL)
		if (IsXLogFileName(de->d_name))
			n++;
	FreeDir(dir);
	return (double) n * wal_segment_size / (1024.0 * 1024.0);
}

/*
 * pinned
 *		A max_wal_size of the DBA's that walpilot must not override, judged
 *		from this process's value in force: the command line, or a line in
 *		postgresql.auto.conf that is not walpilot's.  postgresql.conf and
 *		its includes are the floor, not a pin.
 */
static bool
pinned(char *why, size_t len)
{
	GucSource	source = PGC_S_DEFAULT;
	const char *file = NULL;
	struct config_generic **vars;
	int			n,
				i;

	vars = wp_guc_variables(&n);
	for (i = 0; i < n; i++)
		if (strcmp(vars[i]->name, setting) == 0)
		{
			source = vars[i]->source;
			file = vars[i]->sourcefile;
			break;
		}
	if (source > PGC_S_FILE)
	{
		snprintf(why, len, "max_wal_size is the DBA's (%s)",
				 GucSource_Names[source]);
		return true;
	}
	if (source == PGC_S_FILE && file != NULL && !managing)
	{
		const char *base = strrchr(file, '/');

		if (strcmp(base ? base + 1 : file, PG_AUTOCONF_FILENAME) == 0)
		{
			snprintf(why, len, "max_wal_size is the DBA's (ALTER SYSTEM, %s)",
					 file);
			return true;
		}
	}
	return false;
}

/* apply value_mb; false (with a held note) when walpilot could not */
static bool
apply(int64 value_mb, const char *reason, const char *evidence)
{
	char		value[32];
	char		old[32];
	char		floor[32];
	char		why[WP_AS_NOTE_LEN];
	char		held[WP_AS_NOTE_LEN];

	format_mb(value_mb, value, sizeof(value));
	format_mb(floor_mb, floor, sizeof(floor));
	strlcpy(old, GetConfigOptionByName(setting, NULL, false), sizeof(old));
	if (!wp_alter_system_set(setting, value, floor, why, sizeof(why)))
	{
		snprintf(held, sizeof(held), "held: %s", why);
		note_once(held, evidence);
		return false;
	}
	managing = true;
	clear_note();
	ereport(LOG,
			(errmsg("walpilot sets max_wal_size from %s to %s", old, value),
			 errdetail_internal("%s", reason)));
	(void) wp_decision_log(setting, old, value, reason, evidence);
	return true;
}

/*
 * consider
 *		Raise by the rule when it says so, lower when the WAL rate fell or
 *		the bound did, within the bounds.
 */
static void
consider(TimestampTz now)
{
	WpCheckpointRecord ck[WP_CKPT_MAX_RECORDS];
	double		since = (double) (now - SetEpochTimestamp()) / USECS_PER_SEC -
		WP_CKPT_WINDOW_S;
	WpWalSizeAnalysis a;
	WpEvidence	e;
	int			n = 0,
				i;
	int64		cur_mb = max_wal_size_mb,
				cap_mb;
	double		free_mb = free_wal_space_mb();
	double		used_mb = wal_in_pg_wal_mb();
	double		rate;
	bool		have_rate = wal_rate(now, &rate);
	const char *bound;
	char		why[WP_AS_NOTE_LEN];
	char		reason[WP_AS_NOTE_LEN];
	char	   *evidence;

	/* the last change is not in force here yet: nothing is judged now */
	if (wp_alter_system_reload_pending())
	{
		noted = true;
		return;
	}
	if (!managing)
		floor_mb = cur_mb;

	if (free_mb < 0)
	{
		note_once("held: pg_wal's free space cannot be read", NULL);
		return;
	}
	cap_mb = (int64) ((free_mb + used_mb) / 2);
	bound = "half of (pg_wal's free space + the WAL in pg_wal)";
	if (cap_mb > wp_max_wal_size_max_mb)
	{
		cap_mb = wp_max_wal_size_max_mb;
		bound = "walpilot.max_wal_size_max";
	}

	wp_ev_begin(&e);
	wp_ev_num(&e, "max_wal_size_mb", cur_mb);
	wp_ev_num(&e, "floor_mb", floor_mb);
	wp_ev_num(&e, "bound_mb", cap_mb);
	wp_ev_str(&e, "bounded_by", bound);
	wp_ev_num(&e, "pg_wal_free_mb", free_mb);
	wp_ev_num(&e, "pg_wal_used_mb", used_mb);
	wp_ev_num(&e, "max_wal_size_max_mb", wp_max_wal_size_max_mb);
	wp_ev_num(&e, "rate_window_s", rate_window_s());
	wp_ev_num(&e, "wal_bytes_per_s", have_rate ? rate : NAN);

	/* lower: above the bound, or more than twice what the WAL rate needs */
	if (managing)
	{
		double		needed_mb = have_rate ?
			rate * CheckPointTimeout * (1.0 + CheckPointCompletionTarget) *
			1.1 / (1024.0 * 1024.0) : 0;
		int64		to_mb = -1;

		if (cur_mb > cap_mb)
		{
			to_mb = cap_mb;
			snprintf(reason, sizeof(reason), "above the bound (%s, %lldMB)",
					 bound, (long long) cap_mb);
		}
		else if (have_rate && needed_mb * 2 < cur_mb)
		{
			to_mb = Min(round_size_mb(needed_mb), cap_mb);
			snprintf(reason, sizeof(reason),
					 "the WAL rate fell: %.0f kB/s over the last %.0f s needs about %.0fMB",
					 rate / 1024.0, rate_window_s(), needed_mb);
			evidence_after = (double) (now - SetEpochTimestamp()) / USECS_PER_SEC;
		}
		if (to_mb >= 0)
		{
			wp_ev_num(&e, "needed_mb", needed_mb);
			evidence = wp_ev_end(&e);
			if (to_mb <= floor_mb)
				put_back(reason);
			else if (to_mb < cur_mb)
				(void) apply(to_mb, reason, evidence);
			return;
		}
	}

	/*
	 * raise: the rule of walpilot.recommendations, on the checkpoints of the
	 * last hour that started after the last lowering for the WAL rate
	 */
	for (i = 0; i < nring; i++)
		if (ring[i].started > since && ring[i].started > evidence_after)
			ck[n++] = ring[i];
	if (!wp_ckpt_max_wal_size(ck, n, &a))
		return;
	wp_ckpt_max_wal_size_evidence(&a, &e);
	wp_ev_num(&e, "recommended_mb", a.recommended_mb);
	wp_ev_num(&e, "confidence", a.confidence);
	evidence = wp_ev_end(&e);
	if (Min(a.recommended_mb, cap_mb) <= cur_mb)
	{
		snprintf(reason, sizeof(reason),
				 "not raised: the recommended %lldMB is above the bound (%s, %lldMB)",
				 (long long) a.recommended_mb, bound, (long long) cap_mb);
		note_once(reason, evidence);
		return;
	}
	if (pinned(why, sizeof(why)))
	{
		snprintf(reason, sizeof(reason), "hands off: %s", why);
		note_once(reason, evidence);
		return;
	}
	snprintf(reason, sizeof(reason),
			 "%d checkpoints by WAL volume, %d timed in the last hour: "
			 "checkpoints become timed at about %lldMB%s%s",
			 a.wal_checkpoints, a.timed_checkpoints,
			 (long long) a.recommended_mb,
			 a.recommended_mb > cap_mb ? "; bounded by " : "",
			 a.recommended_mb > cap_mb ? bound : "");
	(void) apply(Min(a.recommended_mb, cap_mb), reason, evidence);
}

/*
 * wp_wal_size_pilot_worker_start
 *		A max_wal_size line a previous worker left goes (the settings take
 *		it back if it is provably walpilot's); the decision log says so.
 */
void
wp_wal_size_pilot_worker_start(void)
{
	char		value[WP_AS_VALUE_LEN];

	if (wp_alter_system_worker_start(value, sizeof(value)))
		(void) wp_decision_log(setting, value, "(DBA's)",
							   "walpilot worker start: a previous worker's value goes",
							   NULL);
	else
		take_back_pending = wp_alter_system_has_line();
}

/*
 * retry_take_back
 *		A previous worker's line the start could not take back (a full disk,
 *		a file in the way) goes as soon as it can: nothing walpilot chose
 *		outlives the worker that chose it.
 */
static void
retry_take_back(TimestampTz now)
{
	char		value[WP_AS_VALUE_LEN];

	if (managing || !wp_alter_system_has_line())
	{
		/* this worker's own line now, or gone */
		take_back_pending = false;
		return;
	}
	if (now < next_take_back)
		return;
	next_take_back = now + (TimestampTz) WP_WS_SAMPLE_S * USECS_PER_SEC;
	if (wp_alter_system_take_back(value, sizeof(value), false))
	{
		take_back_pending = false;
		(void) wp_decision_log(setting, value, "(DBA's)",
							   "walpilot worker start: a previous worker's value goes",
							   NULL);
	}
}

/*
 * wp_wal_size_pilot_tick
 *		Worker tick (primary only): follow revert requests and the owner of
 *		the setting, and consider a change every few seconds.
 */
void
wp_wal_size_pilot_tick(TimestampTz now)
{
	uint64		gen = wp_alter_system_revert_generation();
	bool		tuning = wp_mode == WP_MODE_TUNE && wp_tune_max_wal_size;
	char		why[WP_AS_NOTE_LEN];

	if (!started)
	{
		started = true;
		seen_revert_generation = gen;
	}
	collect_checkpoints();
	sample_wal(now);
	if (take_back_pending)
	{
		/* no line of this worker's before the previous one is gone */
		retry_take_back(now);
		if (take_back_pending)
			return;
	}

	if (gen != seen_revert_generation)
	{
		seen_revert_generation = gen;
		put_back("walpilot.revert() or DROP EXTENSION");
		off_until = now + (TimestampTz) wp_tune_interval_s * USECS_PER_SEC;
	}
	if (!tuning)
	{
		put_back(wp_mode != WP_MODE_TUNE ?
				 "walpilot.mode is not 'tune'" :
				 "walpilot.tune_max_wal_size turned off");
		clear_note();
		return;
	}
	if (managing && !wp_alter_system_line_ours(setting, why, sizeof(why)))
	{
		/* the DBA took it (the line is theirs now, or gone) */
		managing = false;
		ereport(LOG,
				(errmsg("walpilot no longer manages max_wal_size"),
				 errdetail_internal("%s", why)));
		(void) wp_decision_log(setting, "-", "-", why, NULL);
	}
	if (now < off_until || now < next_look)
		return;
	next_look = now + (TimestampTz) WP_WS_SAMPLE_S * USECS_PER_SEC;
	noted = false;
	consider(now);
	/* a hold whose cause is gone is no longer shown (a new one is a new row) */
	if (!noted)
		clear_note();
}

/*
 * wp_wal_size_pilot_stop
 *		Worker exit: walpilot's line goes now.
 */
void
wp_wal_size_pilot_stop(const char *why)
{
	put_back(why);
}
