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
 * Check and write are one step with respect to ALTER SYSTEM: the worker
 * holds AutoFileLock, the lock ALTER SYSTEM takes, while it decides whether
 * the line is still its own and whether a configuration file has an
 * unloaded edit, and while it writes.  AlterSystemSetConfigFile takes that
 * lock itself (and LWLocks do not nest), so the worker writes the file the
 * way it does: read and parse the file, replace or remove the one line,
 * write postgresql.auto.conf.tmp in ALTER SYSTEM's format, fsync, rename
 * into place.  The value is validated first, as ALTER SYSTEM validates it;
 * allow_alter_system = off (17 and later) and a read-only
 * postgresql.auto.conf, how configuration managers forbid ALTER SYSTEM,
 * keep walpilot from writing.  A DBA's ALTER SYSTEM waits for the worker's
 * step and lands after it.  Not covered: a hand edit of postgresql.conf or
 * postgresql.auto.conf takes no lock, and a DBA's ALTER SYSTEM that lands
 * after walpilot's write but before every process has reloaded is read by
 * that reload, as with any pg_reload_conf().
 *
 * walpilot must know whether the max_wal_size line in postgresql.auto.conf
 * is still its own, without ever taking a DBA's line for its own.  File
 * times cannot tell: they come from a coarse clock (whole seconds on some
 * file systems), so an ALTER SYSTEM in the same tick as walpilot's write
 * leaves the same time.  ALTER SYSTEM replaces the file by a new inode, so
 * walpilot keeps the inode it wrote alive -- an open fd, and a hard link
 * pg_walpilot/pgsql_tmp.max_wal_size.conf for the next worker -- so that
 * its number cannot be reused, and keeps the file's bytes:
 * - the same inode with the same bytes: the line is walpilot's;
 * - a new inode with the same bytes: an ALTER SYSTEM set something to the
 *   value it had -- possibly max_wal_size to walpilot's value; walpilot
 *   cannot tell, so the line is the DBA's now;
 * - other bytes whose max_wal_size line is walpilot's value: the DBA
 *   changed another setting; the line is still walpilot's;
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
 * Nothing here throws in the worker: a failure is a false return with the
 * reason, an error (out of memory) is caught and releases the lock, and
 * walpilot's own files' flushes report at WARNING, never PANIC.  None of it
 * runs in the worker's exit callback (worker.c).
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

#include "settings.h"

#define WP_AS_DIR			"pg_walpilot"
#define WP_AS_RECORD		WP_AS_DIR "/" PG_TEMP_FILE_PREFIX ".max_wal_size"
#define WP_AS_RECORD_TMP	WP_AS_RECORD ".tmp"
#define WP_AS_PIN			WP_AS_DIR "/" PG_TEMP_FILE_PREFIX ".max_wal_size.conf"
#define WP_AS_PIN_TMP		WP_AS_PIN ".tmp"
#define WP_AS_AUTOCONF_TMP	PG_AUTOCONF_FILENAME ".tmp"
#define WP_AS_MAX_FILE		(64 * 1024)
#define WP_AS_VERSION		2

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
	uint64		dev;			/* postgresql.auto.conf's inode, as walpilot */
	uint64		ino;			/* wrote or adopted it */
	bool		own_write;		/* walpilot wrote that file (not adopted) */
	StringInfoData bytes;		/* and its bytes */
} WpAlterSystemRecord;

static WpAlterSystemRecord rec;

/* open on rec's inode while this worker knows it: its number stays taken */
static int	pin_fd = -1;

/* postgresql.auto.conf.tmp while walpilot writes it, for the error path */
static int	tmp_fd = -1;

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

/*---- files ----*/

/*
 * the whole file into out, and the stat of the file read when st is not
 * NULL; false (and out empty) when it cannot be read
 */
static bool
read_whole(const char *path, StringInfo out, bool *absent, struct stat *st)
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
	if (st != NULL && fstat(fileno(f), st) != 0)
	{
		FreeFile(f);
		return false;
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

static void
unpin(void)
{
	if (pin_fd >= 0)
		close(pin_fd);
	pin_fd = -1;
}

/*
 * pin
 *		postgresql.auto.conf (st: its stat) is now rec's inode: keep it
 *		alive, so that no later file gets its number -- an fd for this
 *		worker, and a hard link in pg_walpilot/ for the next one (named
 *		pgsql_tmp.*, which base backups and pg_rewind skip).  Without the
 *		link a later worker cannot prove the line walpilot's and leaves it.
 *		Called under AutoFileLock.
 */
static void
pin(const struct stat *st)
{
	struct stat own;

	unpin();
	rec.dev = (uint64) st->st_dev;
	rec.ino = (uint64) st->st_ino;
	pin_fd = BasicOpenFile(PG_AUTOCONF_FILENAME, O_RDONLY | PG_BINARY);
	if (pin_fd >= 0 &&
		(fstat(pin_fd, &own) != 0 || own.st_dev != st->st_dev ||
		 own.st_ino != st->st_ino))
		unpin();
	(void) unlink(WP_AS_PIN_TMP);
	if ((MakePGDirectory(WP_AS_DIR) != 0 && errno != EEXIST) ||
		link(PG_AUTOCONF_FILENAME, WP_AS_PIN_TMP) != 0 ||
		rename(WP_AS_PIN_TMP, WP_AS_PIN) != 0)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("walpilot could not link \"%s\" to \"%s\": %m",
						PG_AUTOCONF_FILENAME, WP_AS_PIN),
				 errdetail("A worker started later cannot prove the max_wal_size line walpilot's and leaves it.")));
		(void) unlink(WP_AS_PIN_TMP);
		(void) unlink(WP_AS_PIN);
	}
}

/*
 * same_inode
 *		Is st (postgresql.auto.conf) the inode walpilot wrote or adopted?
 *		Its number alone could be a new file's: only while walpilot holds
 *		the inode (its fd, or its link) is the number proof.
 */
static bool
same_inode(const struct stat *st)
{
	struct stat held;

	if ((uint64) st->st_dev != rec.dev || (uint64) st->st_ino != rec.ino)
		return false;
	if (pin_fd >= 0 && fstat(pin_fd, &held) == 0)
		return held.st_dev == st->st_dev && held.st_ino == st->st_ino;
	if (stat(WP_AS_PIN, &held) == 0)
		return held.st_dev == st->st_dev && held.st_ino == st->st_ino;
	return false;
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
					 "value %s\nfloor %s\ninode " UINT64_FORMAT " " UINT64_FORMAT
					 "\nbytes %d\n",
					 WP_AS_VERSION, GetSystemIdentifier(), current_timeline(),
					 rec.value, rec.floor, rec.dev, rec.ino, rec.bytes.len);
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

/*
 * The record and the link go.  The directory's flush reports at WARNING:
 * fsync_fname's data_sync_elevel would PANIC the server (data_sync_retry =
 * off) for walpilot's own bookkeeping.
 */
static void
record_forget(void)
{
	bool		gone;

	rec.valid = false;
	unpin();
	gone = unlink(WP_AS_RECORD) == 0;
	if (unlink(WP_AS_PIN) == 0)
		gone = true;
	if (gone)
		(void) fsync_fname_ext(WP_AS_DIR, true, false, WARNING);
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
	uint64		sysid,
				dev,
				ino;
	int			nbytes,
				consumed,
				nl,
				i;
	char		value[WP_AS_VALUE_LEN],
				floor[WP_AS_VALUE_LEN];

	rec.valid = false;
	initStringInfo(&s);
	if (!read_whole(WP_AS_RECORD, &s, &absent, NULL) || absent)
	{
		if (!absent)
			record_forget();
		else
			(void) unlink(WP_AS_PIN);
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
			   "value %31s\nfloor %31s\ninode " UINT64_FORMAT " " UINT64_FORMAT
			   "\nbytes %d",
			   &version, &sysid, &tli, value, floor, &dev, &ino, &nbytes) != 8 ||
		version != WP_AS_VERSION || nbytes < 0 || consumed + nbytes != s.len)
	{
		ereport(LOG,
				(errmsg("walpilot ignores and removes \"%s\": it cannot be read",
						WP_AS_RECORD),
				 errdetail("A max_wal_size line in postgresql.auto.conf is left as the DBA's.")));
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
		rec.dev = dev;
		rec.ino = ino;
		rec.own_write = false;
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
	if (own && (uint64) st.st_dev == rec.dev && (uint64) st.st_ino == rec.ino)
		return false;
	t = time_t_to_timestamptz(st.st_mtim.tv_sec) +
		st.st_mtim.tv_nsec / 1000;
	return t > PgReloadTime;
}

/* is postgresql.auto.conf the file walpilot wrote, unchanged? */
static bool
own_file_unchanged(void)
{
	StringInfoData now;
	struct stat st;
	bool		absent;
	bool		same;

	if (!rec.valid || !rec.own_write)
		return false;
	initStringInfo(&now);
	same = read_whole(PG_AUTOCONF_FILENAME, &now, &absent, &st) && !absent &&
		same_inode(&st) && now.len == rec.bytes.len &&
		memcmp(now.data, rec.bytes.data, now.len) == 0;
	pfree(now.data);
	return same;
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
	bool		own = own_file_unchanged();
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

/*---- postgresql.auto.conf, as ALTER SYSTEM writes it ----*/

/* bytes of postgresql.auto.conf parsed, as ParseConfigFp parses the file */
static bool
parse_bytes(const StringInfoData *bytes, ConfigVariable **head,
			ConfigVariable **tail)
{
	FILE	   *f;
	volatile bool ok = false;

	*head = *tail = NULL;
	if (bytes->len == 0)
		return true;
	if ((f = fmemopen(bytes->data, bytes->len, "r")) == NULL)
		return false;
	PG_TRY();
	{
		ok = ParseConfigFp(f, PG_AUTOCONF_FILENAME, 0, LOG, head, tail);
	}
	PG_FINALLY();
	{
		fclose(f);
	}
	PG_END_TRY();
	return ok;
}

/* the value of name's last line in bytes, "" for none, "?" unparsable */
static void
value_in(const StringInfoData *bytes, const char *name, char *value,
		 size_t len)
{
	ConfigVariable *head,
			   *tail,
			   *item;

	value[0] = '\0';
	if (!parse_bytes(bytes, &head, &tail))
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

/*
 * replace_value
 *		guc.c's replace_auto_config_value: every line of name goes, and
 *		with a value one is appended.
 */
static void
replace_value(ConfigVariable **head, ConfigVariable **tail, const char *name,
			  const char *value)
{
	ConfigVariable *item,
			   *next,
			   *prev = NULL;

	for (item = *head; item != NULL; item = next)
	{
		next = item->next;
		if (pg_strcasecmp(item->name, name) == 0)
		{
			if (prev)
				prev->next = next;
			else
				*head = next;
			if (next == NULL)
				*tail = prev;
		}
		else
			prev = item;
	}
	if (value == NULL)
		return;
	item = palloc0(sizeof(ConfigVariable));
	item->name = pstrdup(name);
	item->value = pstrdup(value);
	item->filename = pstrdup("");
	if (*head == NULL)
		*head = item;
	else
		(*tail)->next = item;
	*tail = item;
}

/*
 * value_valid
 *		The checks ALTER SYSTEM makes of a value before it writes: a
 *		setting the file may hold, a value the setting accepts, no newline.
 *		Not in the exit path: set_config_option reports by ERROR.
 */
static bool
value_valid(const char *name, const char *value, char *why, size_t len)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile bool ok = true;

	if (strchr(value, '\n') != NULL)
	{
		strlcpy(why, "parameter value for ALTER SYSTEM must not contain a newline",
				len);
		return false;
	}
	PG_TRY();
	{
		if (GetConfigOptionFlags(name, false) &
			(GUC_DISALLOW_IN_FILE | GUC_DISALLOW_IN_AUTO_FILE))
			ereport(ERROR,
					(errcode(ERRCODE_CANT_CHANGE_RUNTIME_PARAM),
					 errmsg("parameter \"%s\" cannot be changed", name)));
		(void) set_config_option(name, value, PGC_SIGHUP, PGC_S_FILE,
								 GUC_ACTION_SET, false, ERROR, false);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		strlcpy(why, edata->message, len);
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

/*
 * auto_conf_write
 *		What AlterSystemSetConfigFile does once it holds AutoFileLock, which
 *		the caller holds: name's line replaced (value NULL: removed), the
 *		rest of the file as ALTER SYSTEM rewrites it, through
 *		postgresql.auto.conf.tmp, fsynced and renamed into place.  rec then
 *		describes the new file.  false with the reason when the file was
 *		not replaced.
 */
static bool
auto_conf_write(const char *name, const char *value, char *why, size_t len)
{
	StringInfoData cur,
				out;
	ConfigVariable *head,
			   *tail,
			   *item;
	struct stat st;
	bool		absent;
	int			save_errno;

	initStringInfo(&cur);
	if (!read_whole(PG_AUTOCONF_FILENAME, &cur, &absent, NULL))
	{
		snprintf(why, len, "could not read file \"%s\"", PG_AUTOCONF_FILENAME);
		return false;
	}
	if (!parse_bytes(&cur, &head, &tail))
	{
		snprintf(why, len, "could not parse contents of file \"%s\"",
				 PG_AUTOCONF_FILENAME);
		return false;
	}
	replace_value(&head, &tail, name, value);

	initStringInfo(&out);
	appendStringInfoString(&out, "# Do not edit this file manually!\n");
	appendStringInfoString(&out, "# It will be overwritten by the ALTER SYSTEM command.\n");
	for (item = head; item != NULL; item = item->next)
	{
		char	   *escaped = escape_single_quotes_ascii(item->value);

		if (escaped == NULL)
		{
			strlcpy(why, "out of memory", len);
			return false;
		}
		appendStringInfo(&out, "%s = '%s'\n", item->name, escaped);
		free(escaped);
	}
	FreeConfigVariables(head);

	tmp_fd = BasicOpenFile(WP_AS_AUTOCONF_TMP, O_CREAT | O_RDWR | O_TRUNC | PG_BINARY);
	if (tmp_fd < 0)
	{
		snprintf(why, len, "could not open file \"%s\": %m", WP_AS_AUTOCONF_TMP);
		return false;
	}
	errno = 0;
	if (write(tmp_fd, out.data, out.len) != out.len || pg_fsync(tmp_fd) != 0)
	{
		/* a short write without errno: no disk space, as guc.c assumes */
		save_errno = errno ? errno : ENOSPC;
		close(tmp_fd);
		tmp_fd = -1;
		(void) unlink(WP_AS_AUTOCONF_TMP);
		errno = save_errno;
		snprintf(why, len, "could not write to file \"%s\": %m", WP_AS_AUTOCONF_TMP);
		return false;
	}
	if (close(tmp_fd) != 0 || rename(WP_AS_AUTOCONF_TMP, PG_AUTOCONF_FILENAME) != 0)
	{
		save_errno = errno;
		tmp_fd = -1;
		(void) unlink(WP_AS_AUTOCONF_TMP);
		errno = save_errno;
		snprintf(why, len, "could not rename file \"%s\" to \"%s\": %m",
				 WP_AS_AUTOCONF_TMP, PG_AUTOCONF_FILENAME);
		return false;
	}
	tmp_fd = -1;
	/* in place; a failed flush now is reported, never a PANIC */
	(void) fsync_fname_ext(PG_AUTOCONF_FILENAME, false, false, WARNING);
	(void) fsync_fname_ext(".", true, false, WARNING);

	resetStringInfo(&rec.bytes);
	appendBinaryStringInfo(&rec.bytes, out.data, out.len);
	rec.own_write = true;
	if (stat(PG_AUTOCONF_FILENAME, &st) == 0)
		pin(&st);
	else
	{
		unpin();
		rec.dev = rec.ino = 0;
	}
	return true;
}

/*
 * under_lock
 *		step(arg) while holding AutoFileLock in mode, in a memory context of
 *		its own: the check and the write it makes are one step with respect
 *		to ALTER SYSTEM.  An error (out of memory) releases the lock and is
 *		a false return with its message.
 */
typedef bool (*LockedStep) (void *arg, char *why, size_t len);

static bool
under_lock(LWLockMode mode, LockedStep step, void *arg, char *why, size_t len)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "walpilot postgresql.auto.conf",
											  ALLOCSET_DEFAULT_SIZES);
	volatile bool ok = false;

	PG_TRY();
	{
		MemoryContextSwitchTo(cxt);
		LWLockAcquire(AutoFileLock, mode);
		ok = step(arg, why, len);
		LWLockRelease(AutoFileLock);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		/* the ERROR reset LWLockAcquire's interrupt holdoff: take it again */
		if (LWLockHeldByMe(AutoFileLock))
		{
			HOLD_INTERRUPTS();
			LWLockRelease(AutoFileLock);
		}
		if (tmp_fd >= 0)
		{
			close(tmp_fd);
			tmp_fd = -1;
			(void) unlink(WP_AS_AUTOCONF_TMP);
		}
		edata = CopyErrorData();
		FlushErrorState();
		strlcpy(why, edata->message, len);
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(cxt);
	return ok;
}

/*---- is the line walpilot's; set; reset ----*/

static bool line_ours_check(const char *name, char *why, size_t len);

/*
 * line_ours
 *		Is the line still walpilot's?  Called under AutoFileLock.  When it
 *		is no longer, the reason is kept for wp_alter_system_line_ours: the
 *		pilot hears it even when a write found it first.
 */
static bool
line_ours(const char *name, char *why, size_t len)
{
	bool		had = rec.valid;

	if (line_ours_check(name, why, len))
		return true;
	if (had && !rec.valid)
		strlcpy(lost_why, why, sizeof(lost_why));
	return false;
}

static bool
line_ours_check(const char *name, char *why, size_t len)
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
	initStringInfo(&now);
	if (!read_whole(PG_AUTOCONF_FILENAME, &now, &absent, &st) || absent)
	{
		snprintf(why, len, "postgresql.auto.conf is gone or unreadable");
		record_forget();
		return false;
	}
	if (now.len == rec.bytes.len &&
		memcmp(now.data, rec.bytes.data, now.len) == 0)
	{
		if (same_inode(&st))
			return true;
		snprintf(why, len,
				 "postgresql.auto.conf was rewritten unchanged (ALTER SYSTEM set something to the value it had, perhaps %s = '%s'): the line is the DBA's now",
				 name, rec.value);
		record_forget();
		return false;
	}
	value_in(&now, name, value, sizeof(value));
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
	/* another setting changed: the line is still walpilot's, in this file */
	resetStringInfo(&rec.bytes);
	appendBinaryStringInfo(&rec.bytes, now.data, now.len);
	rec.own_write = false;
	pin(&st);
	if (!record_store(why, len))
	{
		record_forget();
		return false;
	}
	return true;
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
	if (rec.valid && under_lock(LW_SHARED, line_ours_step, &a, why, len))
		return true;
	if (!rec.valid)
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
	if (rec.valid)
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
		if (read_whole(PG_AUTOCONF_FILENAME, &now, &absent, NULL) && !absent)
			value_in(&now, a->name, value, sizeof(value));
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
	if (!auto_conf_write(a->name, a->value, why, len))
		return false;
	a->wrote = true;
	lost_why[0] = '\0';
	if (!rec.valid)
		strlcpy(rec.floor, a->floor, sizeof(rec.floor));
	strlcpy(rec.value, a->value, sizeof(rec.value));
	rec.valid = true;
	if (!record_store(why, len))
	{
		/* the line is written; without a record it must go again */
		(void) auto_conf_write(a->name, NULL, why2, sizeof(why2));
		record_forget();
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

	if (!value_valid(name, value, why, len))
		return false;
	a.name = name;
	a.value = value;
	a.floor = floor;
	ok = under_lock(LW_EXCLUSIVE, set_step, &a, why, len);
	if (a.wrote)
		request_reload();
	if (!ok)
	{
		if (!rec.valid)
			publish(false, NULL, NULL);
		return false;
	}
	publish(true, value, rec.floor);
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
		!auto_conf_write(a->name, NULL, why, len))
		return false;
	a->wrote = true;
	record_forget();
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
	if (!rec.valid)
	{
		strlcpy(why, "walpilot has no line in postgresql.auto.conf", len);
		publish(false, NULL, NULL);
		return false;
	}
	if (!under_lock(LW_EXCLUSIVE, reset_step, &a, why, len))
	{
		if (!rec.valid)
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
