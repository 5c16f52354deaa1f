/*-------------------------------------------------------------------------
 *
 * settings_auto_conf.h
 *		What settings_auto_conf.c offers settings_alter_system.c: walpilot's
 *		line in postgresql.auto.conf, written as ALTER SYSTEM writes it,
 *		and the record that proves it walpilot's.  Only those two files
 *		include it.
 *
 * IDENTIFICATION
 *	  src/settings/settings_auto_conf.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_SETTINGS_AUTO_CONF_H
#define WALPILOT_SETTINGS_AUTO_CONF_H

#include <sys/stat.h>

#include "lib/stringinfo.h"
#include "storage/lwlock.h"

#include "settings.h"

#define WP_AS_DIR			"pg_walpilot"
#define WP_AS_RECORD		WP_AS_DIR "/" PG_TEMP_FILE_PREFIX ".max_wal_size"
#define WP_AS_RECORD_TMP	WP_AS_RECORD ".tmp"
#define WP_AS_PIN			WP_AS_DIR "/" PG_TEMP_FILE_PREFIX ".max_wal_size.conf"
#define WP_AS_PIN_TMP		WP_AS_PIN ".tmp"
#define WP_AS_AUTOCONF_TMP	PG_AUTOCONF_FILENAME ".tmp"
#define WP_AS_MAX_FILE		(64 * 1024)
#define WP_AS_VERSION		2

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

extern WpAlterSystemRecord wp_as_rec;

/* the files */
extern bool wp_as_read_whole(const char *path, StringInfo out, bool *absent,
							 struct stat *st);
extern bool wp_as_record_store(char *why, size_t len);
extern void wp_as_record_forget(void);
extern void wp_as_record_load(void);
extern bool wp_as_own_file_unchanged(void);

/* postgresql.auto.conf, as ALTER SYSTEM writes it */
extern void wp_as_value_in(const StringInfoData *bytes, const char *name,
						   char *value, size_t len);
extern bool wp_as_value_valid(const char *name, const char *value, char *why,
							  size_t len);
extern bool wp_as_auto_conf_write(const char *name, const char *value,
								  char *why, size_t len);
typedef bool (*LockedStep) (void *arg, char *why, size_t len);
extern bool wp_as_under_lock(LWLockMode mode, LockedStep step, void *arg,
							 char *why, size_t len);

/* is the line walpilot's */
extern bool wp_as_line_ours_check(const char *name, char *why, size_t len);

#endif							/* WALPILOT_SETTINGS_AUTO_CONF_H */
