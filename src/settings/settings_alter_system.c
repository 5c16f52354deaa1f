/*-------------------------------------------------------------------------
 *
 * settings_alter_system.c
 *		max_wal_size through PostgreSQL's own ALTER SYSTEM, for the DBA who
 *		opts in (walpilot.tune_max_wal_size).
 *
 * max_wal_size is read by every process that writes WAL, so it cannot be
 * applied in one process's memory as checkpoint_flush_after is.  With the
 * DBA's opt-in the worker runs ALTER SYSTEM itself (AlterSystemSetConfigFile:
 * the server's file lock, its privilege checks, allow_alter_system on 17 and
 * later) and then asks for a reload -- but only when no configuration file
 * was changed after the last reload, so a reload never puts a DBA's
 * unfinished edit in force.  Otherwise it holds and says why.
 *
 * walpilot must know whether the max_wal_size line in postgresql.auto.conf
 * is still its own, without ever taking a DBA's line for its own.  After
 * each write it keeps the file's modification time and bytes:
 * - the file is unchanged since: the line is walpilot's;
 * - the file was rewritten with the same bytes: an ALTER SYSTEM set
 *   something to the value it had -- possibly max_wal_size to walpilot's
 *   value; walpilot cannot tell, so the line is the DBA's now;
 * - the file changed, and its max_wal_size line is walpilot's value: the
 *   DBA changed another setting; the line is still walpilot's;
 * - the line is gone or has another value: the DBA's doing.
 *
 * The record of what walpilot wrote is pg_walpilot/pgsql_tmp.max_wal_size,
 * with the system identifier and timeline it was written on.  Its name
 * starts with pgsql_tmp, which pg_basebackup and pg_rewind skip (the only
 * exclusion PostgreSQL offers an extension); a record of another system or
 * of an earlier timeline (a promotion this worker did not see, a rewind) is
 * ignored and removed, and the line it describes, if any, is left as the
 * DBA's.  At worker start a line that is provably walpilot's is taken back,
 * so each worker starts from the DBA's configuration.  A postmaster killed
 * outright and started without walpilot keeps the line, as any ALTER
 * SYSTEM value; docs/operations.md says so.
 *
 * Nothing here throws in the worker: ALTER SYSTEM runs in a transaction of
 * its own under PG_TRY, and a failure is a false return with the reason.
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

#include "access/xact.h"
#include "funcapi.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/fd.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "settings.h"

#define WP_AS_DIR			"pg_walpilot"
#define WP_AS_RECORD		WP_AS_DIR "/" PG_TEMP_FILE_PREFIX ".max_wal_size"
#define WP_AS_RECORD_TMP	WP_AS_RECORD ".tmp"
#define WP_AS_MAX_FILE		(64 * 1024)
#define WP_AS_VERSION		1

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

/* the worker's record of its line */
typedef struct WpAlterSystemRecord
{
	bool		valid;
	char		value[WP_AS_VALUE_LEN];
	char		floor[WP_AS_VALUE_LEN];
	int64		mtime_ns;
	StringInfoData bytes;		/* postgresql.auto.conf after the write */
} WpAlterSystemRecord;

static WpAlterSystemRecord rec;

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

/*---- files ----*/

static int64
mtime_ns(const struct stat *st)
{
	return (int64) st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* the whole file into out; false (and out empty) when it cannot be read */
static bool
read_whole(const char *path, StringInfo out, bool *absent)
{
	FILE	   *f;
	char		buf[4096];
	size_t		n;

	resetStringInfo(out);
	*absent = false;
	if ((f = AllocateFile(path, PG_BINARY_R)) == NULL)
	{
		*absent = errno == ENOENT;
		return *absent;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
	{
		if (out->len + n > WP_AS_MAX_FILE)
		{
			FreeFile(f);
			resetStringInfo(out);
			return false;
		}
		appendBinaryStringInfo(out, buf, n);
	}
	if (ferror(f))
	{
		FreeFile(f);
		resetStringInfo(out);
		return false;
	}
	FreeFile(f);
	return true;
}

static TimeLineID
current_timeline(void)
{
	TimeLineID	tli = 0;

	if (RecoveryInProgress())
		(void) GetXLogReplayRecPtr(&tli);
	else
		tli = GetWALInsertionTimeLine();
	return tli;
}

/* the record, written to a temporary file, fsynced and renamed */
static bool
record_store(char *why, size_t len)
{
	StringInfoData s;
	FILE	   *f;
	bool		ok;

	if (MakePGDirectory(WP_AS_DIR) != 0 && errno != EEXIST)
	{
		snprintf(why, len, "could not create directory \"%s\": %m", WP_AS_DIR);
		return false;
	}
	initStringInfo(&s);
	appendStringInfo(&s, "walpilot %d\nsystem " UINT64_FORMAT "\ntimeline %u\n"
					 "value %s\nfloor %s\nmtime " INT64_FORMAT "\nbytes %d\n",
					 WP_AS_VERSION, GetSystemIdentifier(), current_timeline(),
					 rec.value, rec.floor, rec.mtime_ns, rec.bytes.len);
	appendBinaryStringInfo(&s, rec.bytes.data, rec.bytes.len);

	if ((f = AllocateFile(WP_AS_RECORD_TMP, PG_BINARY_W)) == NULL)
	{
		snprintf(why, len, "could not write \"%s\": %m", WP_AS_RECORD_TMP);
		pfree(s.data);
		return false;
	}
	ok = fwrite(s.data, 1, s.len, f) == (size_t) s.len && fflush(f) == 0 &&
		pg_fsync(fileno(f)) == 0;
	if (FreeFile(f) != 0)
		ok = false;
	pfree(s.data);
	if (!ok || durable_rename(WP_AS_RECORD_TMP, WP_AS_RECORD, LOG) != 0)
	{
		snprintf(why, len, "could not write \"%s\"", WP_AS_RECORD);
		return false;
	}
	return true;
}

static void
record_forget(void)
{
	rec.valid = false;
	if (unlink(WP_AS_RECORD) == 0)
		fsync_fname(WP_AS_DIR, true);
}

/*
 * record_load
 *		The record a previous worker left, if it is this system's and this
 *		timeline's; any other is removed with a LOG line.
 */
static void
record_load(void)
{
	StringInfoData s;
	bool		absent;
	unsigned int version,
				tli;
	uint64		sysid;
	int			nbytes,
				consumed,
				nl,
				i;
	char		value[WP_AS_VALUE_LEN],
				floor[WP_AS_VALUE_LEN];
	long long	mtime;

	rec.valid = false;
	initStringInfo(&s);
	if (!read_whole(WP_AS_RECORD, &s, &absent) || absent)
	{
		if (!absent)
			record_forget();
		pfree(s.data);
		return;
	}
	/* seven header lines, then the bytes (which may start with blanks) */
	for (i = 0, nl = 0; i < s.len && nl < 7; i++)
		if (s.data[i] == '\n')
			nl++;
	consumed = nl == 7 ? i : 0;
	if (consumed == 0 ||
		sscanf(s.data, "walpilot %u\nsystem " UINT64_FORMAT "\ntimeline %u\n"
			   "value %31s\nfloor %31s\nmtime %lld\nbytes %d",
			   &version, &sysid, &tli, value, floor, &mtime, &nbytes) != 7 ||
		version != WP_AS_VERSION || nbytes < 0 || consumed + nbytes != s.len)
	{
		ereport(LOG,
				(errmsg("walpilot ignores and removes \"%s\": it cannot be read",
						WP_AS_RECORD)));
		record_forget();
	}
	else if (sysid != GetSystemIdentifier() || tli != current_timeline())
	{
		ereport(LOG,
				(errmsg("walpilot ignores and removes \"%s\": it was written on another server or timeline",
						WP_AS_RECORD),
				 errdetail("It was written on system " UINT64_FORMAT " timeline %u; this is system " UINT64_FORMAT " timeline %u. A max_wal_size line in postgresql.auto.conf is left as the DBA's.",
						   sysid, tli, GetSystemIdentifier(), current_timeline())));
		record_forget();
	}
	else
	{
		rec.valid = true;
		strlcpy(rec.value, value, sizeof(rec.value));
		strlcpy(rec.floor, floor, sizeof(rec.floor));
		rec.mtime_ns = mtime;
		resetStringInfo(&rec.bytes);
		appendBinaryStringInfo(&rec.bytes, s.data + consumed, nbytes);
	}
	pfree(s.data);
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
 * Is path newer than the last reload this process saw?  walpilot's own
 * last write of postgresql.auto.conf is no edit of the DBA's.
 */
static bool
newer_than_reload(const char *path)
{
	struct stat st;
	TimestampTz t;

	if (path == NULL || stat(path, &st) != 0)
		return false;
	if (rec.valid && mtime_ns(&st) == rec.mtime_ns)
	{
		struct stat own;

		if (stat(PG_AUTOCONF_FILENAME, &own) == 0 &&
			own.st_dev == st.st_dev && own.st_ino == st.st_ino)
			return false;
	}
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
 */
static bool
wp_alter_system_unloaded_edit(char *which, size_t len)
{
	const char *fixed[4];
	struct config_generic **vars;
	int			n,
				i;

	fixed[0] = ConfigFileName;
	fixed[1] = HbaFileName;
	fixed[2] = IdentFileName;
	fixed[3] = PG_AUTOCONF_FILENAME;
	for (i = 0; i < lengthof(fixed); i++)
		if (newer_than_reload(fixed[i]))
		{
			strlcpy(which, conf_file_name(fixed[i]), len);
			return true;
		}
	vars = wp_guc_variables(&n);
	for (i = 0; i < n; i++)
		if (vars[i]->sourcefile != NULL && newer_than_reload(vars[i]->sourcefile))
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

/*---- ALTER SYSTEM ----*/

/*
 * alter_system
 *		ALTER SYSTEM SET name = value (value NULL: RESET), in a transaction
 *		of its own; false with the error's message on failure.
 */
static bool
alter_system(const char *name, const char *value, char *why, size_t len)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	volatile bool ok = true;

	PG_TRY();
	{
		VariableSetStmt *set;
		AlterSystemStmt *stmt;

		StartTransactionCommand();
		set = makeNode(VariableSetStmt);
		stmt = makeNode(AlterSystemStmt);

		set->name = pstrdup(name);
		if (value != NULL)
		{
			A_Const    *c = makeNode(A_Const);

			c->val.sval.type = T_String;
			c->val.sval.sval = pstrdup(value);
			c->location = -1;
			set->kind = VAR_SET_VALUE;
			set->args = list_make1(c);
		}
		else
			set->kind = VAR_RESET;
		stmt->setstmt = set;
		AlterSystemSetConfigFile(stmt);
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		strlcpy(why, edata->message, len);
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcxt);
	CurrentResourceOwner = oldowner;
	return ok;
}

/* keep the file's time and bytes as walpilot left it */
static bool
remember_file(char *why, size_t len)
{
	struct stat st;
	bool		absent;

	if (stat(PG_AUTOCONF_FILENAME, &st) != 0 ||
		!read_whole(PG_AUTOCONF_FILENAME, &rec.bytes, &absent) || absent)
	{
		snprintf(why, len, "could not read back \"%s\"", PG_AUTOCONF_FILENAME);
		return false;
	}
	rec.mtime_ns = mtime_ns(&st);
	return true;
}

/* the value of name's last line in postgresql.auto.conf, or "" */
static void
file_value(const char *name, char *value, size_t len)
{
	ConfigVariable *head = NULL,
			   *tail = NULL,
			   *item;

	value[0] = '\0';
	if (!ParseConfigFile(PG_AUTOCONF_FILENAME, false, NULL, 0, 0, LOG,
						 &head, &tail))
	{
		FreeConfigVariables(head);
		strlcpy(value, "?", len);
		return;
	}
	for (item = head; item != NULL; item = item->next)
		if (item->name != NULL && pg_strcasecmp(item->name, name) == 0)
			strlcpy(value, item->value ? item->value : "", len);
	FreeConfigVariables(head);
}

static bool line_ours(const char *name, char *why, size_t len);

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
	if (line_ours(name, why, len))
		return true;
	publish(false, NULL, NULL);
	return false;
}

static bool
line_ours(const char *name, char *why, size_t len)
{
	struct stat st;
	StringInfoData now;
	bool		absent;
	char		value[WP_AS_VALUE_LEN];

	if (!rec.valid)
	{
		strlcpy(why, "walpilot has no line in postgresql.auto.conf", len);
		return false;
	}
	if (stat(PG_AUTOCONF_FILENAME, &st) == 0 && mtime_ns(&st) == rec.mtime_ns)
		return true;

	initStringInfo(&now);
	if (!read_whole(PG_AUTOCONF_FILENAME, &now, &absent) || absent)
	{
		snprintf(why, len, "postgresql.auto.conf is gone or unreadable");
		pfree(now.data);
		record_forget();
		return false;
	}
	if (now.len == rec.bytes.len &&
		memcmp(now.data, rec.bytes.data, now.len) == 0)
	{
		snprintf(why, len,
				 "postgresql.auto.conf was rewritten unchanged (ALTER SYSTEM set something to the value it had, perhaps %s = '%s'): the line is the DBA's now",
				 name, rec.value);
		pfree(now.data);
		record_forget();
		return false;
	}
	pfree(now.data);
	file_value(name, value, sizeof(value));
	if (strcmp(value, rec.value) != 0)
	{
		if (value[0] == '\0')
			snprintf(why, len, "the DBA removed %s from postgresql.auto.conf",
					 name);
		else
			snprintf(why, len, "the DBA set %s = '%s' by ALTER SYSTEM",
					 name, value);
		record_forget();
		return false;
	}
	/* another setting changed: the line is still walpilot's */
	if (!remember_file(why, len) || !record_store(why, len))
	{
		record_forget();
		return false;
	}
	return true;
}

/*
 * wp_alter_system_set
 *		Worker: ALTER SYSTEM SET name = value and a reload, when the DBA
 *		allows ALTER SYSTEM and no configuration file has an unloaded edit.
 *		floor is the value in force before walpilot's first line.  false
 *		with the reason when nothing was written.
 */
bool
wp_alter_system_set(const char *name, const char *value, const char *floor,
					char *why, size_t len)
{
	char		which[MAXPGPATH];

	if (!wp_alter_system_writable(why, len))
		return false;
	if (wp_alter_system_unloaded_edit(which, sizeof(which)))
	{
		snprintf(why, len,
				 "%s changed after the last reload: walpilot does not reload the DBA's unfinished edit",
				 which);
		return false;
	}
	if (!alter_system(name, value, why, len))
		return false;
	if (!rec.valid)
		strlcpy(rec.floor, floor, sizeof(rec.floor));
	strlcpy(rec.value, value, sizeof(rec.value));
	rec.valid = true;
	if (!remember_file(why, len) || !record_store(why, len))
	{
		/* the line is written; without a record it must go again */
		char		why2[160];

		(void) alter_system(name, NULL, why2, sizeof(why2));
		record_forget();
		request_reload();
		return false;
	}
	request_reload();
	publish(true, value, rec.floor);
	return true;
}

/*
 * wp_alter_system_reset
 *		Worker: walpilot's line goes (ALTER SYSTEM RESET) when it is still
 *		walpilot's; the reload waits while a configuration file has an
 *		unloaded edit (the DBA's next reload then puts the floor back).
 *		false with the reason when the line was not walpilot's or could not
 *		be removed.
 */
bool
wp_alter_system_reset(const char *name, char *why, size_t len)
{
	char		which[MAXPGPATH];
	bool		unloaded;

	if (!wp_alter_system_line_ours(name, why, len))
		return false;
	/* before the write, which makes postgresql.auto.conf newer itself */
	unloaded = wp_alter_system_unloaded_edit(which, sizeof(which));
	if (!wp_alter_system_writable(why, len) ||
		!alter_system(name, NULL, why, len))
		return false;
	record_forget();
	publish(false, NULL, NULL);
	if (unloaded)
	{
		snprintf(why, len,
				 "removed from postgresql.auto.conf; in force at the DBA's next reload (%s has an edit not yet loaded)",
				 which);
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
 *		in taken_back, for the pilot's decision row.
 */
bool
wp_alter_system_worker_start(char *taken_back, size_t len)
{
	char		why[256];
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	initStringInfo(&rec.bytes);
	MemoryContextSwitchTo(old);
	publish(false, NULL, NULL);
	record_load();
	taken_back[0] = '\0';
	if (!rec.valid)
		return false;
	if (wp_alter_system_reset("max_wal_size", why, sizeof(why)))
	{
		ereport(LOG,
				(errmsg("walpilot took back the max_wal_size = '%s' a previous worker had set",
						rec.value),
				 why[0] ? errdetail_internal("%s", why) : 0));
		strlcpy(taken_back, rec.value, len);
		return true;
	}
	ereport(LOG,
			(errmsg("walpilot leaves max_wal_size in postgresql.auto.conf alone"),
			 errdetail_internal("%s", why)));
	return false;
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
