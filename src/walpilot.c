/*-------------------------------------------------------------------------
 *
 * walpilot.c
 *		Module entry point: GUC definitions, hook installation and worker
 *		registration.
 *
 * walpilot works only when loaded through shared_preload_libraries: its
 * shared memory is requested at postmaster start and its worker is a
 * static background worker.  Loaded any other way (for instance by
 * CREATE EXTENSION calling one of its functions), _PG_init returns at once
 * and every SQL function reports that the library is not preloaded, as
 * pg_stat_statements does.
 *
 * IDENTIFICATION
 *	  src/walpilot.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "walpilot.h"

PG_MODULE_MAGIC;

/*---- GUC variables ----*/
int			wp_mode = WP_MODE_OBSERVE;
char	   *wp_database = NULL;
int			wp_sample_interval_ms = 10;
int			wp_history_size_s = 3600;

static const struct config_enum_entry wp_mode_options[] = {
	{"off", WP_MODE_OFF, false},
	{"observe", WP_MODE_OBSERVE, false},
	{"tune", WP_MODE_TUNE, false},
	{NULL, 0, false}
};

/*
 * wp_mode_name
 *		The walpilot.mode spelling of a WpMode value.
 */
const char *
wp_mode_name(int mode)
{
	const struct config_enum_entry *e;

	for (e = wp_mode_options; e->name != NULL; e++)
	{
		if (e->val == mode)
			return e->name;
	}
	return "unknown";
}

/*
 * check_database
 *		walpilot.database must name something that can be a database.
 */
static bool
check_database(char **newval, void **extra, GucSource source)
{
	if (*newval == NULL || (*newval)[0] == '\0')
	{
		GUC_check_errdetail("The database name must not be empty.");
		return false;
	}
	if (strlen(*newval) >= NAMEDATALEN)
	{
		GUC_check_errdetail("The database name must be shorter than %d bytes.",
							NAMEDATALEN);
		return false;
	}
	return true;
}

static void
define_gucs(void)
{
	DefineCustomEnumVariable("walpilot.mode",
							 gettext_noop("What walpilot does: off, observe, or tune."),
							 gettext_noop("off disables its hooks and puts back every setting it changed; "
										  "observe measures and advises; tune may also change settings "
										  "within the configured bounds."),
							 &wp_mode,
							 WP_MODE_OBSERVE,
							 wp_mode_options,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("walpilot.database",
							   gettext_noop("Database the walpilot worker connects to when it needs one."),
							   NULL,
							   &wp_database,
							   "postgres",
							   PGC_POSTMASTER,
							   0,
							   check_database, NULL, NULL);

	DefineCustomIntVariable("walpilot.sample_interval",
							gettext_noop("Time between two wait-event samples of every process."),
							NULL,
							&wp_sample_interval_ms,
							10,
							1, 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("walpilot.history_size",
							gettext_noop("Seconds of per-second history kept in shared memory."),
							NULL,
							&wp_history_size_s,
							3600,
							60, 86400,
							PGC_POSTMASTER,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("walpilot");
}

/*
 * _PG_init
 *		Module load callback.
 */
void
_PG_init(void)
{
	/*
	 * Shared memory and the static worker can only be set up while the
	 * postmaster loads shared_preload_libraries.  Anything else gets a
	 * library whose SQL functions report the missing preload.
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	define_gucs();
	wp_shmem_install_hooks();
	wp_worker_register();
	wp_commit_timing_register();
}
