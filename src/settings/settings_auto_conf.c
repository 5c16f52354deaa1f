/*-------------------------------------------------------------------------
 *
 * settings_auto_conf.c
 *		walpilot's max_wal_size line in postgresql.auto.conf: the file
 *		read, parsed and written as ALTER SYSTEM writes it, under
 *		AutoFileLock, and the record that proves the line walpilot's.
 *
 * When walpilot writes, and whether it may, is settings_alter_system.c's
 * call; this file does the writing and keeps the proof.
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
 *	  src/settings/settings_auto_conf.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/lwlock.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "settings_auto_conf.h"

WpAlterSystemRecord wp_as_rec;

/* open on rec's inode while this worker knows it: its number stays taken */
static int	pin_fd = -1;

/* postgresql.auto.conf.tmp while walpilot writes it, for the error path */
static int	tmp_fd = -1;

/*---- files ----*/

/*
 * the whole file into out, and the stat of the file read when st is not
 * NULL; false (and out empty) when it cannot be read
 */
bool
wp_as_read_whole(const char *path, StringInfo out, bool *absent,
				 struct stat *st)
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
	wp_as_rec.dev = (uint64) st->st_dev;
	wp_as_rec.ino = (uint64) st->st_ino;
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

	if ((uint64) st->st_dev != wp_as_rec.dev ||
		(uint64) st->st_ino != wp_as_rec.ino)
		return false;
	if (pin_fd >= 0 && fstat(pin_fd, &held) == 0)
		return held.st_dev == st->st_dev && held.st_ino == st->st_ino;
	if (stat(WP_AS_PIN, &held) == 0)
		return held.st_dev == st->st_dev && held.st_ino == st->st_ino;
	return false;
}

/* the record, written to a temporary file, fsynced and renamed */
bool
wp_as_record_store(char *why, size_t len)
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
					 wp_as_rec.value, wp_as_rec.floor, wp_as_rec.dev, wp_as_rec.ino,
					 wp_as_rec.bytes.len);
	appendBinaryStringInfo(&s, wp_as_rec.bytes.data, wp_as_rec.bytes.len);

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
void
wp_as_record_forget(void)
{
	bool		gone;

	wp_as_rec.valid = false;
	unpin();
	gone = unlink(WP_AS_RECORD) == 0;
	if (unlink(WP_AS_PIN) == 0)
		gone = true;
	if (gone)
		(void) fsync_fname_ext(WP_AS_DIR, true, false, WARNING);
}

/*
 * wp_as_record_load
 *		The record a previous worker left, if it is this system's and this
 *		timeline's; any other is removed with a LOG line.
 */
void
wp_as_record_load(void)
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

	wp_as_rec.valid = false;
	initStringInfo(&s);
	if (!wp_as_read_whole(WP_AS_RECORD, &s, &absent, NULL) || absent)
	{
		if (!absent)
			wp_as_record_forget();
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
		wp_as_record_forget();
	}
	else if (sysid != GetSystemIdentifier() || tli != current_timeline())
	{
		ereport(LOG,
				(errmsg("walpilot ignores and removes \"%s\": it was written on another server or timeline",
						WP_AS_RECORD),
				 errdetail("It was written on system " UINT64_FORMAT " timeline %u; this is system " UINT64_FORMAT " timeline %u. A max_wal_size line in postgresql.auto.conf is left as the DBA's.",
						   sysid, tli, GetSystemIdentifier(), current_timeline())));
		wp_as_record_forget();
	}
	else
	{
		wp_as_rec.valid = true;
		strlcpy(wp_as_rec.value, value, sizeof(wp_as_rec.value));
		strlcpy(wp_as_rec.floor, floor, sizeof(wp_as_rec.floor));
		wp_as_rec.dev = dev;
		wp_as_rec.ino = ino;
		wp_as_rec.own_write = false;
		resetStringInfo(&wp_as_rec.bytes);
		appendBinaryStringInfo(&wp_as_rec.bytes, s.data + consumed, nbytes);
	}
	pfree(s.data);
}

/* is postgresql.auto.conf the file walpilot wrote, unchanged? */
bool
wp_as_own_file_unchanged(void)
{
	StringInfoData now;
	struct stat st;
	bool		absent;
	bool		same;

	if (!wp_as_rec.valid || !wp_as_rec.own_write)
		return false;
	initStringInfo(&now);
	same = wp_as_read_whole(PG_AUTOCONF_FILENAME, &now, &absent, &st) &&
		!absent &&
		same_inode(&st) && now.len == wp_as_rec.bytes.len &&
		memcmp(now.data, wp_as_rec.bytes.data, now.len) == 0;
	pfree(now.data);
	return same;
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
void
wp_as_value_in(const StringInfoData *bytes, const char *name, char *value,
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
 * wp_as_value_valid
 *		The checks ALTER SYSTEM makes of a value before it writes: a
 *		setting the file may hold, a value the setting accepts, no newline.
 *		Not in the exit path: set_config_option reports by ERROR.
 */
bool
wp_as_value_valid(const char *name, const char *value, char *why, size_t len)
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
 * wp_as_auto_conf_write
 *		What AlterSystemSetConfigFile does once it holds AutoFileLock, which
 *		the caller holds: name's line replaced (value NULL: removed), the
 *		rest of the file as ALTER SYSTEM rewrites it, through
 *		postgresql.auto.conf.tmp, fsynced and renamed into place.  rec then
 *		describes the new file.  false with the reason when the file was
 *		not replaced.
 */
bool
wp_as_auto_conf_write(const char *name, const char *value, char *why,
					  size_t len)
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
	if (!wp_as_read_whole(PG_AUTOCONF_FILENAME, &cur, &absent, NULL))
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

	resetStringInfo(&wp_as_rec.bytes);
	appendBinaryStringInfo(&wp_as_rec.bytes, out.data, out.len);
	wp_as_rec.own_write = true;
	if (stat(PG_AUTOCONF_FILENAME, &st) == 0)
		pin(&st);
	else
	{
		unpin();
		wp_as_rec.dev = wp_as_rec.ino = 0;
	}
	return true;
}

/*
 * wp_as_under_lock
 *		step(arg) while holding AutoFileLock in mode, in a memory context of
 *		its own: the check and the write it makes are one step with respect
 *		to ALTER SYSTEM.  An error (out of memory) releases the lock and is
 *		a false return with its message.
 */
bool
wp_as_under_lock(LWLockMode mode, LockedStep step, void *arg, char *why,
				 size_t len)
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

/*---- is the line walpilot's ----*/

/*
 * wp_as_line_ours_check
 *		Is name's line in postgresql.auto.conf still walpilot's, by the
 *		rules at the top of this file?  When it is not, the record is
 *		forgotten and why says so.  Called under AutoFileLock, through
 *		line_ours (settings_alter_system.c), which keeps the reason.
 */
bool
wp_as_line_ours_check(const char *name, char *why, size_t len)
{
	struct stat st;
	StringInfoData now;
	bool		absent;
	char		value[WP_AS_VALUE_LEN];

	if (!wp_as_rec.valid)
	{
		strlcpy(why, "walpilot has no line in postgresql.auto.conf", len);
		return false;
	}
	initStringInfo(&now);
	if (!wp_as_read_whole(PG_AUTOCONF_FILENAME, &now, &absent, &st) || absent)
	{
		snprintf(why, len, "postgresql.auto.conf is gone or unreadable");
		wp_as_record_forget();
		return false;
	}
	if (now.len == wp_as_rec.bytes.len &&
		memcmp(now.data, wp_as_rec.bytes.data, now.len) == 0)
	{
		if (same_inode(&st))
			return true;
		snprintf(why, len,
				 "postgresql.auto.conf was rewritten unchanged (ALTER SYSTEM set something to the value it had, perhaps %s = '%s'): the line is the DBA's now",
				 name, wp_as_rec.value);
		wp_as_record_forget();
		return false;
	}
	wp_as_value_in(&now, name, value, sizeof(value));
	if (strcmp(value, wp_as_rec.value) != 0)
	{
		if (value[0] == '\0')
			snprintf(why, len, "the DBA removed %s from postgresql.auto.conf",
					 name);
		else
			snprintf(why, len, "the DBA set %s = '%s' by ALTER SYSTEM",
					 name, value);
		wp_as_record_forget();
		return false;
	}
	/* another setting changed: the line is still walpilot's, in this file */
	resetStringInfo(&wp_as_rec.bytes);
	appendBinaryStringInfo(&wp_as_rec.bytes, now.data, now.len);
	wp_as_rec.own_write = false;
	pin(&st);
	if (!wp_as_record_store(why, len))
	{
		wp_as_record_forget();
		return false;
	}
	return true;
}
