/*-------------------------------------------------------------------------
 *
 * settings_alter_system.c
 *		max_wal_size in postgresql.auto.conf, as ALTER SYSTEM writes it, for
 *		the DBA who opts in (walpilot.tune_max_wal_size).
 *
 * max_wal_size is read by every process that writes WAL, so it cannot be
 * applied in one process's memory as checkpoint_flush_after is.  With the
 * DBA's opt-in the worker changes its one line of postgresql.auto.conf and
 * then asks for a reload -- but only when no configuration file was changed
 * after the last reload, so a reload never puts a DBA's unfinished edit in
 * force.  Otherwise it holds and says why.
 *
 * What is written, and how walpilot knows the line is still its own, is
 * settings_auto_conf.c: it writes postgresql.auto.conf as ALTER SYSTEM
 * does, holding AutoFileLock while it checks and writes, and keeps the
 * record and the inode that prove the line walpilot's.  This file decides
 * when: whether walpilot may write at all, whether a configuration file
 * has an edit the next reload would put in force, the set and reset the
 * max_wal_size pilot asks for, taking a previous worker's line back, and
 * what walpilot.settings shows.
 *
 * Nothing here throws in the worker: a failure is a false return with the
 * reason.  None of it runs in the worker's exit callback (worker.c).
 *
 * IDENTIFICATION
 *	  src/settings/settings_alter_system.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "funcapi.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "settings_auto_conf.h"

/* published for SQL; protected by wp_shared->lock */
typedef struct WpAlterSystemShared
{
	pg_atomic_uint64 revert_generation; /* walpilot.revert(), DROP EXTENSION */
	bool		applied;		/* walpilot's line is in force */
	bool		removal_unloaded;	/* its line is gone, not yet reloaded */
	char		value[WP_AS_VALUE_LEN];
	char		floor[WP_AS_VALUE_LEN]; /* in force before walpilot's */
	char		note[WP_AS_NOTE_LEN];	/* why walpilot holds off */
} WpAlterSystemShared;

static WpAlterSystemShared *as = NULL;

/* why walpilot last found its line no longer its own, until reported */
static char lost_why[WP_AS_NOTE_LEN] = "";

Size
wp_alter_system_shmem_size(void)
{
	return MAXALIGN(sizeof(WpAlterSystemShared));
}

void
wp_alter_system_shmem_init(void)
{
	bool		found;

	as = ShmemInitStruct("walpilot alter system", sizeof(WpAlterSystemShared),
						 &found);
	if (!found)
	{
		memset(as, 0, sizeof(WpAlterSystemShared));
		pg_atomic_init_u64(&as->revert_generation, 0);
	}
}

/*---- what SQL sees ----*/

static void
publish(bool applied, const char *value, const char *floor)
{
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	as->applied = applied;
	strlcpy(as->value, value ? value : "", sizeof(as->value));
	strlcpy(as->floor, floor ? floor : "", sizeof(as->floor));
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_alter_system_note
 *		Worker: why walpilot does not change max_wal_size now ("" for
 *		nothing), for walpilot.settings.
 */
void
wp_alter_system_note(const char *note)
{
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	strlcpy(as->note, note, sizeof(as->note));
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_alter_system_state
 *		Any process: whether walpilot's max_wal_size is in force, its value,
 *		the value in force before it (the floor) and the hold-off note.
 */
bool
wp_alter_system_state(char *value, char *floor, char *note)
{
	bool		applied;

	if (as == NULL)
		return false;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	applied = as->applied;
	if (value)
		strlcpy(value, as->value, WP_AS_VALUE_LEN);
	if (floor)
		strlcpy(floor, as->floor, WP_AS_VALUE_LEN);
	if (note)
		strlcpy(note, as->note, WP_AS_NOTE_LEN);
	LWLockRelease(wp_shared->lock);
	return applied;
}

void
wp_alter_system_request_revert(void)
{
	if (as != NULL)
		pg_atomic_fetch_add_u64(&as->revert_generation, 1);
}

uint64
wp_alter_system_revert_generation(void)
{
	return as ? pg_atomic_read_u64(&as->revert_generation) : 0;
}

/*---- may walpilot write, may it reload ----*/

/*
 * wp_alter_system_writable
 *		Whether ALTER SYSTEM may be used here: allowed (17+), and
 *		postgresql.auto.conf not made read-only, which is how configuration
 *		managers forbid it.
 */
static bool
wp_alter_system_writable(char *why, size_t len)
{
	if (!wp_alter_system_allowed())
	{
		strlcpy(why, "allow_alter_system = off: walpilot does not use ALTER SYSTEM",
				len);
		return false;
	}
	if (access(PG_AUTOCONF_FILENAME, F_OK) == 0 &&
		access(PG_AUTOCONF_FILENAME, W_OK) != 0)
	{
		strlcpy(why, "postgresql.auto.conf is read-only: walpilot does not use ALTER SYSTEM",
				len);
		return false;
	}
	return true;
}

/*
 * a configuration file's name for a message: relative to the data
 * directory when it is in it (a decision row's reason is short)
 */
static const char *
conf_file_name(const char *path)
{
	size_t		n = DataDir ? strlen(DataDir) : 0;

	if (n > 0 && strncmp(path, DataDir, n) == 0 && path[n] == '/')
		return path + n + 1;
	return path;
}

/*
 * Is path newer than the last reload this process saw?  own: the file
 * walpilot last wrote, unchanged since (its own write is no edit of the
 * DBA's).
 */
static bool
newer_than_reload(const char *path, bool own)
{
	struct stat st;
	TimestampTz t;

	if (path == NULL || stat(path, &st) != 0)
		return false;
	if (own && (uint64) st.st_dev == wp_as_rec.dev &&
		(uint64) st.st_ino == wp_as_rec.ino)
		return false;
	t = time_t_to_timestamptz(st.st_mtim.tv_sec) +
		st.st_mtim.tv_nsec / 1000;
	return t > PgReloadTime;
}


/*
 * wp_alter_system_unloaded_edit
 *		Whether a configuration file changed after the last reload:
 *		postgresql.conf, pg_hba.conf, pg_ident.conf, postgresql.auto.conf
 *		and every file a setting in force came from (the includes).  A
 *		reload now would put that edit in force, which is the DBA's call.
 *		Called under AutoFileLock.
 */
static bool
wp_alter_system_unloaded_edit(char *which, size_t len)
{
	const char *fixed[4];
	struct config_generic **vars;
	bool		own = wp_as_own_file_unchanged();
	int			n,
				i;

	fixed[0] = ConfigFileName;
	fixed[1] = HbaFileName;
	fixed[2] = IdentFileName;
	fixed[3] = PG_AUTOCONF_FILENAME;
	for (i = 0; i < lengthof(fixed); i++)
		if (newer_than_reload(fixed[i], own))
		{
			strlcpy(which, conf_file_name(fixed[i]), len);
			return true;
		}
	vars = wp_guc_variables(&n);
	for (i = 0; i < n; i++)
		if (vars[i]->sourcefile != NULL &&
			newer_than_reload(vars[i]->sourcefile, own))
		{
			strlcpy(which, conf_file_name(vars[i]->sourcefile), len);
			return true;
		}
	return false;
}

/*
 * A change walpilot made is in force in this process once it has reloaded
 * after the change: until then its value of the setting is the old one.
 */
static bool reload_waiting = false;
static TimestampTz reload_waiting_since;

static void
wait_for_reload(void)
{
	reload_waiting = true;
	reload_waiting_since = PgReloadTime;
}

/*
 * wp_alter_system_reload_pending
 *		Worker: has it not yet reloaded since walpilot's last change (or
 *		since a removal whose reload waits for the DBA's)?
 */
bool
wp_alter_system_reload_pending(void)
{
	if (reload_waiting && PgReloadTime == reload_waiting_since)
		return true;
	if (reload_waiting && as->removal_unloaded)
	{
		LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
		as->removal_unloaded = false;
		LWLockRelease(wp_shared->lock);
	}
	reload_waiting = false;
	return false;
}

/* the reload pg_reload_conf() asks for */
static void
request_reload(void)
{
	wait_for_reload();
	if (kill(PostmasterPid, SIGHUP) != 0)
		ereport(WARNING,
				(errmsg("walpilot could not signal the postmaster to reload: %m")));
}

/*---- is the line walpilot's; set; reset ----*/

/*
 * line_ours
 *		Is the line still walpilot's?  Called under AutoFileLock.  When it
 *		is no longer, the reason is kept for wp_alter_system_line_ours: the
 *		pilot hears it even when a write found it first.
 */
static bool
line_ours(const char *name, char *why, size_t len)
{
	bool		had = wp_as_rec.valid;

	if (wp_as_line_ours_check(name, why, len))
		return true;
	if (had && !wp_as_rec.valid)
		strlcpy(lost_why, why, sizeof(lost_why));
	return false;
}

typedef struct LineArgs
{
	const char *name;
	const char *value;			/* set: the value; reset: NULL */
	const char *floor;
	bool		wrote;			/* postgresql.auto.conf was replaced */
	bool		unloaded;		/* reset: an edit not yet loaded */
	char		which[MAXPGPATH];
} LineArgs;

static bool
line_ours_step(void *arg, char *why, size_t len)
{
	return line_ours(((LineArgs *) arg)->name, why, len);
}

/*
 * wp_alter_system_line_ours
 *		Is the max_wal_size line in postgresql.auto.conf walpilot's, as
 *		walpilot wrote it?  false with the reason when it is not (or no
 *		longer) walpilot's, and then walpilot forgets it and walpilot.settings
 *		no longer shows a value of walpilot's in force.
 */
bool
wp_alter_system_line_ours(const char *name, char *why, size_t len)
{
	LineArgs	a = {0};

	a.name = name;
	if (wp_as_rec.valid &&
		wp_as_under_lock(LW_SHARED, line_ours_step, &a, why, len))
		return true;
	if (!wp_as_rec.valid)
		strlcpy(why, lost_why[0] ? lost_why :
				"walpilot has no line in postgresql.auto.conf", len);
	lost_why[0] = '\0';
	publish(false, NULL, NULL);
	return false;
}

static bool
set_step(void *arg, char *why, size_t len)
{
	LineArgs   *a = (LineArgs *) arg;
	char		why2[WP_AS_NOTE_LEN];

	if (!wp_alter_system_writable(why, len))
		return false;
	if (wp_as_rec.valid)
	{
		if (!line_ours(a->name, why, len))
			return false;
	}
	else
	{
		StringInfoData now;
		bool		absent;
		char		value[WP_AS_VALUE_LEN] = "";

		initStringInfo(&now);
		if (wp_as_read_whole(PG_AUTOCONF_FILENAME, &now, &absent, NULL) && !absent)
			wp_as_value_in(&now, a->name, value, sizeof(value));
		if (value[0] != '\0')
		{
			snprintf(why, len, "postgresql.auto.conf has a %s line walpilot did not write",
					 a->name);
			return false;
		}
	}
	if (wp_alter_system_unloaded_edit(a->which, sizeof(a->which)))
	{
		snprintf(why, len,
				 "%s changed after the last reload: walpilot does not reload the DBA's unfinished edit",
				 a->which);
		return false;
	}
	if (!wp_as_auto_conf_write(a->name, a->value, why, len))
		return false;
	a->wrote = true;
	lost_why[0] = '\0';
	if (!wp_as_rec.valid)
		strlcpy(wp_as_rec.floor, a->floor, sizeof(wp_as_rec.floor));
	strlcpy(wp_as_rec.value, a->value, sizeof(wp_as_rec.value));
	wp_as_rec.valid = true;
	if (!wp_as_record_store(why, len))
	{
		/* the line is written; without a record it must go again */
		(void) wp_as_auto_conf_write(a->name, NULL, why2, sizeof(why2));
		wp_as_record_forget();
		return false;
	}
	return true;
}

/*
 * wp_alter_system_set
 *		Worker: max_wal_size = value in postgresql.auto.conf and a reload,
 *		when the DBA allows ALTER SYSTEM, the line is walpilot's (or there
 *		is none) and no configuration file has an unloaded edit -- all
 *		decided and written under AutoFileLock.  floor is the value in force
 *		before walpilot's first line.  false with the reason when nothing
 *		was written.
 */
bool
wp_alter_system_set(const char *name, const char *value, const char *floor,
					char *why, size_t len)
{
	LineArgs	a = {0};
	bool		ok;

	if (!wp_as_value_valid(name, value, why, len))
		return false;
	a.name = name;
	a.value = value;
	a.floor = floor;
	ok = wp_as_under_lock(LW_EXCLUSIVE, set_step, &a, why, len);
	if (a.wrote)
		request_reload();
	if (!ok)
	{
		if (!wp_as_rec.valid)
			publish(false, NULL, NULL);
		return false;
	}
	publish(true, value, wp_as_rec.floor);
	return true;
}

static bool
reset_step(void *arg, char *why, size_t len)
{
	LineArgs   *a = (LineArgs *) arg;

	if (!line_ours(a->name, why, len))
		return false;
	/* before the write, which makes postgresql.auto.conf newer itself */
	a->unloaded = wp_alter_system_unloaded_edit(a->which, sizeof(a->which));
	if (!wp_alter_system_writable(why, len) ||
		!wp_as_auto_conf_write(a->name, NULL, why, len))
		return false;
	a->wrote = true;
	wp_as_record_forget();
	return true;
}

/*
 * wp_alter_system_reset
 *		Worker: walpilot's line goes when it is still walpilot's, decided
 *		and written under AutoFileLock; the reload waits while a
 *		configuration file has an unloaded edit (the DBA's next reload then
 *		puts the floor back).  false with the reason when the line was not
 *		walpilot's or could not be removed.
 */
bool
wp_alter_system_reset(const char *name, char *why, size_t len)
{
	LineArgs	a = {0};

	a.name = name;
	if (!wp_as_rec.valid)
	{
		strlcpy(why, "walpilot has no line in postgresql.auto.conf", len);
		publish(false, NULL, NULL);
		return false;
	}
	if (!wp_as_under_lock(LW_EXCLUSIVE, reset_step, &a, why, len))
	{
		if (!wp_as_rec.valid)
			publish(false, NULL, NULL);
		return false;
	}
	publish(false, NULL, NULL);
	if (a.unloaded)
	{
		snprintf(why, len,
				 "removed from postgresql.auto.conf; in force at the DBA's next reload (%s has an edit not yet loaded)",
				 a.which);
		wait_for_reload();
		LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
		as->removal_unloaded = true;
		LWLockRelease(wp_shared->lock);
		return true;
	}
	request_reload();
	why[0] = '\0';
	return true;
}

/*
 * wp_alter_system_worker_start
 *		A line a previous worker left (it crashed, or the postmaster was
 *		killed) goes, if it is provably walpilot's: each worker starts from
 *		the DBA's configuration.  True when it took one back: its value is
 *		in taken_back, for the pilot's decision row.  When it could not (a
 *		full disk, say), wp_alter_system_take_back tries again.
 */
bool
wp_alter_system_worker_start(char *taken_back, size_t len)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	initStringInfo(&wp_as_rec.bytes);
	MemoryContextSwitchTo(old);
	publish(false, NULL, NULL);
	wp_as_record_load();
	return wp_alter_system_take_back(taken_back, len, true);
}

/*
 * wp_alter_system_take_back
 *		The take-back of a previous worker's line, as at the worker's start.
 *		A failure is logged only when loud, so that retries do not repeat
 *		it; wp_alter_system_has_line says whether one is still to do.
 */
bool
wp_alter_system_take_back(char *taken_back, size_t len, bool loud)
{
	char		why[256];

	taken_back[0] = '\0';
	if (!wp_as_rec.valid)
		return false;
	if (wp_alter_system_reset("max_wal_size", why, sizeof(why)))
	{
		ereport(LOG,
				(errmsg("walpilot took back the max_wal_size = '%s' a previous worker had set",
						wp_as_rec.value),
				 why[0] ? errdetail_internal("%s", why) : 0));
		strlcpy(taken_back, wp_as_rec.value, len);
		return true;
	}
	if (loud)
		ereport(LOG,
				(errmsg("walpilot leaves max_wal_size in postgresql.auto.conf alone"),
				 errdetail_internal("%s", why)));
	return false;
}

/*
 * wp_alter_system_has_line
 *		walpilot has a line in postgresql.auto.conf (its record says so).
 */
bool
wp_alter_system_has_line(void)
{
	return wp_as_rec.valid;
}

/*
 * wp_alter_system_describe
 *		The walpilot.settings row of max_wal_size, while walpilot
 *		may set it (walpilot.tune_max_wal_size) or its value is in force.
 *		The value in force is this session's: after a reload every process
 *		agrees.
 */
bool
wp_alter_system_describe(WpSettingRow *out)
{
	char		value[WP_AS_VALUE_LEN];
	char		floor[WP_AS_VALUE_LEN];
	char		note[WP_AS_NOTE_LEN];
	bool		applied = wp_alter_system_state(value, floor, note);
	bool		removal_unloaded;
	struct config_generic **vars;
	const char *by;
	bool		dba = false;
	char		source[MAXPGPATH + 64];
	char	   *in_force;
	int			n,
				i;

	if (!applied && !wp_tune_max_wal_size)
		return false;
	LWLockAcquire(wp_shared->lock, LW_SHARED);
	removal_unloaded = as->removal_unloaded;
	LWLockRelease(wp_shared->lock);
	strlcpy(source, "default", sizeof(source));
	vars = wp_guc_variables(&n);
	for (i = 0; i < n; i++)
		if (strcmp(vars[i]->name, "max_wal_size") == 0)
		{
			const char *f = vars[i]->sourcefile;
			const char *base = f ? strrchr(f, '/') : NULL;

			/* the command line, or a line of the DBA's in postgresql.auto.conf */
			dba = vars[i]->source > PGC_S_FILE ||
				(!applied && vars[i]->source == PGC_S_FILE && f != NULL &&
				 strcmp(base ? base + 1 : f, PG_AUTOCONF_FILENAME) == 0);
			if (vars[i]->source == PGC_S_FILE && vars[i]->sourcefile)
				snprintf(source, sizeof(source), "%s (%s line %d)",
						 GucSource_Names[vars[i]->source],
						 vars[i]->sourcefile, vars[i]->sourceline);
			else
				strlcpy(source, GucSource_Names[vars[i]->source],
						sizeof(source));
			break;
		}
	in_force = GetConfigOptionByName("max_wal_size", NULL, false);
	if (applied)
	{
		by = "walpilot";
		strlcat(source, ", set by walpilot (ALTER SYSTEM)", sizeof(source));
	}
	else if (removal_unloaded)
	{
		by = "default";
		strlcat(source, "; walpilot's line is removed, the DBA's value is in force at the next reload",
				sizeof(source));
	}
	else if (dba || strncmp(note, "hands off", 9) == 0)
		by = "dba";
	else
		by = "default";
	if (note[0] != '\0')
	{
		strlcat(source, "; ", sizeof(source));
		strlcat(source, note, sizeof(source));
	}

	strlcpy(out->name, "max_wal_size", sizeof(out->name));
	strlcpy(out->configured, applied && floor[0] ? floor : in_force,
			sizeof(out->configured));
	strlcpy(out->in_force, in_force, sizeof(out->in_force));
	strlcpy(out->source, source, sizeof(out->source));
	strlcpy(out->by, by, sizeof(out->by));
	return true;
}
