/*-------------------------------------------------------------------------
 *
 * gucs.c
 *		Every walpilot.* setting: its variable, its definition and its
 *		check hook.
 *
 * All of them live here, at the bottom, so that any layer may read a
 * setting without calling the layer that acts on it.
 *
 * IDENTIFICATION
 *	  src/core/gucs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "utils/guc.h"

#include "core.h"

/*---- GUC variables ----*/
int			wp_mode = WP_MODE_OBSERVE;
int			wp_sample_interval_ms = 10;
int			wp_history_size_s = 3600;
int			wp_max_latency_regression_pct = 10;
int			wp_tune_interval_s = 600;
bool		wp_tune_commit_delay = true;
int			wp_commit_delay_max_us = 10000;
bool		wp_tune_checkpoint_flush = true;
int			wp_checkpoint_flush_min_kb = 0;
int			wp_checkpoint_flush_max_kb = 2048;
bool		wp_tune_max_wal_size = false;
int			wp_max_wal_size_max_mb = 16384;
int			wp_probe_interval_s = 0;

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
 * check_probe_interval
 *		walpilot.probe_interval is 0 (off) or at least 10 s: the periodic
 *		probe adds flushes to the WAL device and must stay low-duty.
 *
 * Like every integer check hook it sees the value after the GUC machinery
 * rounded it to whole seconds ('500ms' arrives as 0, '5500ms' as 6), so it
 * cannot tell a rounded value from a typed one; the rounding is documented
 * instead of rejected.
 */
static bool
check_probe_interval(int *newval, void **extra, GucSource source)
{
	if (*newval != 0 && *newval < 10)
	{
		GUC_check_errdetail("The periodic probe interval must be 0 (off) or at least 10 seconds.");
		return false;
	}
	return true;
}

void
wp_define_gucs(void)
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

	DefineCustomBoolVariable("walpilot.tune_commit_delay",
							 gettext_noop("Lets walpilot tune commit_delay and commit_siblings in tune mode."),
							 NULL,
							 &wp_tune_commit_delay,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("walpilot.commit_delay_max",
							gettext_noop("Longest commit_delay walpilot may set."),
							NULL,
							&wp_commit_delay_max_us,
							10000,
							0, 100000,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("walpilot.max_latency_regression",
							gettext_noop("Largest rise of p99 commit latency, in percent, over the configured setting a kept change may cause."),
							NULL,
							&wp_max_latency_regression_pct,
							10,
							0, 1000,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("walpilot.tune_interval",
							gettext_noop("Time after which walpilot re-checks a tuned setting against the configured one."),
							NULL,
							&wp_tune_interval_s,
							600,
							10, 86400,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("walpilot.probe_interval",
							gettext_noop("Seconds between two short probes of the configured wal_sync_method by the worker; 0 turns periodic probing off."),
							gettext_noop("A value in another unit is rounded to whole seconds: '500ms' is 0, off."),
							&wp_probe_interval_s,
							0,
							0, 86400,
							PGC_SIGHUP,
							GUC_UNIT_S,
							check_probe_interval, NULL, NULL);

	DefineCustomBoolVariable("walpilot.tune_checkpoint_flush",
							 gettext_noop("Lets walpilot tune checkpoint_flush_after in tune mode."),
							 NULL,
							 &wp_tune_checkpoint_flush,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("walpilot.checkpoint_flush_after_min",
							gettext_noop("Smallest checkpoint_flush_after walpilot may set."),
							NULL,
							&wp_checkpoint_flush_min_kb,
							0,
							0, 2048,
							PGC_SIGHUP,
							GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("walpilot.checkpoint_flush_after_max",
							gettext_noop("Largest checkpoint_flush_after walpilot may set."),
							NULL,
							&wp_checkpoint_flush_max_kb,
							2048,
							0, 2048,
							PGC_SIGHUP,
							GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("walpilot.tune_max_wal_size",
							 gettext_noop("Lets walpilot set max_wal_size itself in tune mode, through ALTER SYSTEM, as walpilot.recommendations advises."),
							 gettext_noop("Raised when checkpoints are triggered by WAL volume, lowered when the WAL rate falls, never above "
										  "walpilot.max_wal_size_max or half of (pg_wal's free space + the WAL in pg_wal); walpilot.revert() puts it back."),
							 &wp_tune_max_wal_size,
							 false,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("walpilot.max_wal_size_max",
							gettext_noop("Largest max_wal_size walpilot may set."),
							NULL,
							&wp_max_wal_size_max_mb,
							16384,
							2, INT_MAX / 1024,
							PGC_SIGHUP,
							GUC_UNIT_MB,
							NULL, NULL, NULL);
	MarkGUCPrefixReserved("walpilot");
}

