/*-------------------------------------------------------------------------
 *
 * worker.c
 *		The walpilot background worker: its registration and main loop.
 *
 * The worker wakes every walpilot.sample_interval, hands the tick to the
 * instruments and controllers, and sleeps on its latch.  It is the only
 * file that knows about latches and signals.  The worker attaches to no
 * database: everything it reads (PGPROCs, cumulative statistics, the
 * control file) is cluster-wide.
 *
 * The worker starts as soon as the server is consistent, so it also runs
 * on a hot standby, where DBAs watch WAL receive, replay and the
 * walreceiver's IO:WALSync.  There it observes only: the instruments run,
 * the pilot does not (no trials, no setting published to backends); the
 * tick hands the instruments what they may not ask a higher layer: is the
 * server a standby, does walpilot publish a commit_delay, does a trial
 * run.
 * After a promotion the pilot starts with the next tick.
 *
 * The cadence is kept on the monotonic clock (instr_time): a step of the
 * wall clock, back by an hour say, must neither stop the ticks until the
 * clock catches up nor look like thousands of missed ticks.  The ticks
 * themselves still get the wall-clock time, for the timeline's seconds.
 *
 * SIGTERM (server shutdown or pg_terminate_backend) ends the loop; the
 * worker then exits with status 1 so that an administrator's terminate is
 * followed by a restart after bgw_restart_time, as for any error exit.
 * During a server shutdown the postmaster restarts nothing, so this is
 * harmless there.
 *
 * IDENTIFICATION
 *	  src/hub/worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "hub.h"

/* Seconds the postmaster waits before restarting a worker that failed. */
#define WP_WORKER_RESTART_S		5

static MemoryContext tick_context = NULL;

/* Whether the last tick found the server in recovery (worker only). */
static bool on_standby = false;

/*
 * wp_worker_register
 *		Register the static worker; called from _PG_init.
 */
void
wp_worker_register(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = WP_WORKER_RESTART_S;
	strlcpy(worker.bgw_library_name, "walpilot", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "walpilot_worker_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, WP_WORKER_TYPE, BGW_MAXLEN);
	strlcpy(worker.bgw_type, WP_WORKER_TYPE, BGW_MAXLEN);
	worker.bgw_main_arg = (Datum) 0;
	worker.bgw_notify_pid = 0;

	RegisterBackgroundWorker(&worker);
}

/*
 * worker_detach
 *		before_shmem_exit callback: tell readers no worker runs any more.
 *
 * It runs before ProcKill releases this process's LWLocks: after an ERROR
 * (a FATAL exit in a background worker) the worker may still hold one, for
 * instance ControlFileLock or walpilot's own lock, and taking that lock
 * again here would wait forever -- and with it every reader.  A worker
 * never holds a lock across the tick, so releasing them all is safe.
 *
 * Nothing here may fail: during proc_exit an ERROR is promoted to FATAL,
 * which no PG_TRY catches and which re-enters proc_exit past this
 * callback.  So first what cannot fail -- no worker (the checkpointer then
 * starts its next checkpoint with the configured checkpoint_flush_after),
 * the pilots' values withdrawn in shared memory -- and no file work at all:
 * the max_wal_size line goes in the main loop's shutdown path, and after
 * any other exit (an error, the postmaster's death) the next worker takes
 * it back at its start.
 */
static void
worker_detach(int code, Datum arg)
{
	LWLockReleaseAll();
	pg_atomic_write_u32(&wp_shared->worker_pid, 0);
	wp_ckpt_setting_publish_configured();
	wp_pilot_stop("walpilot worker exiting");
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	wp_shared->worker_started_at = 0;
	LWLockRelease(wp_shared->lock);
}

/*
 * worker_shutdown
 *		SIGTERM: walpilot's max_wal_size line goes before the worker exits,
 *		here, where an error can still be caught (see worker_detach).  A
 *		failure is a WARNING; the next worker takes the line back.
 */
static void
worker_shutdown(void)
{
	MemoryContext oldcxt = CurrentMemoryContext;

	PG_TRY();
	{
		wp_wal_size_pilot_stop("walpilot worker exiting");
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		LWLockReleaseAll();
		ereport(WARNING,
				(errmsg("walpilot could not take its max_wal_size back as the worker exited: %s",
						edata->message),
				 errdetail("The next walpilot worker takes it back when it starts.")));
		FreeErrorData(edata);
	}
	PG_END_TRY();
}

/*
 * publish_settings
 *		Make the settings this worker now runs with visible in shared memory.
 */
static void
publish_settings(void)
{
	pg_atomic_write_u32(&wp_shared->worker_mode, (uint32) wp_mode);
	pg_atomic_write_u32(&wp_shared->worker_sample_interval_ms,
						(uint32) wp_sample_interval_ms);
}

/*
 * server_is_standby
 *		Whether the server is a standby (in recovery): the worker then
 *		observes only.  Usable in any process.
 */
static bool
server_is_standby(void)
{
	return RecoveryInProgress();
}

/*
 * note_recovery_state
 *		Log when the worker starts observing on a standby and when a
 *		promotion lets the pilot run.
 */
static void
note_recovery_state(bool standby, bool first)
{
	if (standby)
	{
		pgstat_report_activity(STATE_RUNNING,
							   "walpilot worker (standby: observe only)");
		ereport(LOG,
				(errmsg("walpilot worker observes only: the server is a standby"),
				 errdetail("No trials run and no setting is changed until the server is promoted.")));
	}
	else
	{
		pgstat_report_activity(STATE_RUNNING, "walpilot worker");
		if (!first)
			ereport(LOG,
					(errmsg("walpilot worker: the server was promoted"),
					 errdetail("The pilot runs from now on, as walpilot.mode says.")));
	}
}

/*
 * worker_tick
 *		One pass of work: every instrument gets the tick, and so do the
 *		pilots, told whether the server is a standby (there they only say
 *		so); the max_wal_size pilot runs only outside recovery.
 */
static void
worker_tick(TimestampTz now)
{
	bool		standby = server_is_standby();

	if (standby != on_standby)
	{
		on_standby = standby;
		note_recovery_state(standby, false);
	}
	pg_atomic_fetch_add_u64(&wp_shared->ticks, 1);
	wp_sampler_tick(now, standby, wp_settings_delay_managed());
	wp_checkpoints_worker_tick(now);
	wp_flush_estimate_tick(now);
	wp_probe_worker_tick(now, wp_pilot_trial_running());
	wp_pilot_tick(now, standby);
	if (!standby)
		wp_wal_size_pilot_tick(now);
}

/* The monotonic clock, in microseconds. */
static int64
monotonic_us(void)
{
	instr_time	t;

	INSTR_TIME_SET_CURRENT(t);
	return (int64) INSTR_TIME_GET_MICROSEC(t);
}

/*
 * walpilot_worker_main
 *		Entry point of the walpilot worker.
 */
void
walpilot_worker_main(Datum main_arg)
{
	int64		next_tick;		/* monotonic us */

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	/* No database: PGPROCs, statistics and the control file are shared. */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	if (wp_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("walpilot shared memory is not initialized")));

	tick_context = AllocSetContextCreate(TopMemoryContext,
										 "walpilot worker tick",
										 ALLOCSET_DEFAULT_SIZES);

	before_shmem_exit(worker_detach, (Datum) 0);
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	wp_shared->worker_started_at = GetCurrentTimestamp();
	wp_shared->worker_starts++;
	LWLockRelease(wp_shared->lock);
	pg_atomic_write_u32(&wp_shared->worker_pid, (uint32) MyProcPid);
	publish_settings();
	wp_ckpt_setting_publish_configured();
	wp_wal_size_pilot_worker_start();
	wp_pilot_worker_start();
	wp_probe_worker_start();

	ereport(LOG,
			(errmsg("walpilot worker started"),
			 errdetail("Mode is \"%s\", sample interval is %d ms.",
					   wp_mode_name(wp_mode), wp_sample_interval_ms)));
	on_standby = server_is_standby();
	note_recovery_state(on_standby, true);

	next_tick = monotonic_us();
	while (!ShutdownRequestPending)
	{
		int64		mono;
		long		sleep_ms;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			publish_settings();
			wp_settings_note_configured();
		}

		mono = monotonic_us();
		if (mono >= next_tick)
		{
			MemoryContext old = MemoryContextSwitchTo(tick_context);

			worker_tick(GetCurrentTimestamp());
			MemoryContextSwitchTo(old);
			MemoryContextReset(tick_context);

			/* Keep the cadence; after a long stall, restart it from now. */
			next_tick += (int64) wp_sample_interval_ms * 1000;
			if (next_tick <= mono)
				next_tick = mono + (int64) wp_sample_interval_ms * 1000;
		}

		sleep_ms = (long) ((next_tick - monotonic_us() + 999) / 1000);
		if (sleep_ms > 0)
		{
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 sleep_ms,
							 WP_WAIT_EVENT_MAIN);
			ResetLatch(MyLatch);
		}
	}

	ereport(LOG,
			(errmsg("walpilot worker shutting down")));
	worker_shutdown();

	/* Status 1: a terminated worker is restarted like a failed one. */
	proc_exit(1);
}
