/*-------------------------------------------------------------------------
 *
 * checkpoints.c
 *		Checkpoint detection and the ring of the last checkpoint records.
 *
 * Two detectors feed one ring of WP_CKPT_HISTORY records:
 *
 * - The hub's emit_log_hook (hub/walpilot.c, installed by _PG_init in the
 *   postmaster, inherited by the checkpointer) hands every log line here,
 *   which recognises the checkpointer's own lines by their untranslated
 *   format string (ErrorData.message_id).  At "checkpoint starting" the
 *   hook first has settings_checkpointer.c apply walpilot's
 *   checkpoint_flush_after (before BufferSync reads it), then this opens a
 *   record with the start time, the reason (from the flag words), the new
 *   redo pointer and the checkpoint_flush_after in force; at "checkpoint
 *   complete" it runs in the
 *   checkpointer where CheckpointStats is final and copies buffers written
 *   and the write and sync phase times.  This needs log_checkpoints = on
 *   (the default in 15).  A standby's restartpoints ("restartpoint
 *   starting", "restartpoint complete") are recorded the same way.
 *
 *   The flag words (" immediate", " wal", ...) are untranslated string
 *   arguments of a translated format.  The hook looks the format up in the
 *   message's own catalog (dgettext with the message's domain and
 *   lc_messages, exactly what errmsg did), skips the translated text
 *   before its first %s and reads the flags from the rest.  A translation
 *   that does not start with text followed by the %s run gives no reason
 *   (NULL) rather than a guess.
 * - The worker polls GetRedoRecPtr() every tick.  A redo pointer that moved
 *   without a record from the hook (log_checkpoints off) opens a record of
 *   its own; its end is the control file's redo catching up, and its
 *   numbers are pg_stat_bgwriter deltas.  Such a record cannot tell WAL
 *   checkpoints from other requested ones: its reason is "time" or
 *   "requested".  The end is seen in pg_control, read every
 *   WP_CKPT_CONTROL_POLL_MS while such a record is open; a failure to read
 *   it is logged and retried later, never raised (an ERROR in the worker
 *   would restart it in a loop).
 *
 * With walpilot.mode = off neither detector records anything.
 *
 * Commit columns (commits, commit latency during and outside the
 * checkpoint, stall seconds) come from the per-second commit data behind
 * instruments.h's wp_commit_window()/wp_commit_seconds_between(); the worker
 * fills them in a couple of seconds after the checkpoint ended.
 *
 * Shared state: the region "walpilot checkpoints", protected by its own
 * spinlock, because the hook runs in the checkpointer in the middle of
 * CreateCheckPoint, where nothing may fail: under the spinlock only plain
 * copies of one record happen (readers copy the ring record by record), so
 * the checkpointer never spins behind a reader's whole-ring copy.
 *
 * IDENTIFICATION
 *	  src/instruments/checkpoints.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/elog.h"
#include "utils/timestamp.h"

#include "instruments.h"

#define WP_CKPT_MAX_SECONDS		3600
#define WP_CKPT_BASELINE_S		60
#define WP_CKPT_COMMIT_DELAY_MS	2000
#define WP_CKPT_POLL_GRACE_MS	500
#define WP_CKPT_CONTROL_POLL_MS	2000
#define WP_CKPT_CONTROL_RETRY_S	10

/* Where a record came from. */
#define WP_CKPT_SRC_LOG			1
#define WP_CKPT_SRC_POLL		2

/* State of the commit columns. */
#define WP_CKPT_COMMITS_PENDING	0
#define WP_CKPT_COMMITS_DONE	1

/*
 * The exact format strings of xlog.c:LogCheckpointStart/End, for
 * checkpoints and for a standby's restartpoints (compat.h: per version).
 */
static const char *const ckpt_start_fmt = WP_CKPT_START_FMT("checkpoint");
static const char *const ckpt_end_fmt = WP_CKPT_END_FMT("checkpoint");
static const char *const restart_start_fmt = WP_CKPT_START_FMT("restartpoint");
static const char *const restart_end_fmt = WP_CKPT_END_FMT("restartpoint");

typedef struct WpCheckpoint
{
	uint64		seq;			/* 1-based number of the record */
	int			source;			/* WP_CKPT_SRC_* */
	TimestampTz started_at;
	TimestampTz finished_at;	/* 0 while running */
	char		reason[20];
	bool		reason_final;	/* poll records: reason settled */
	XLogRecPtr	redo;
	XLogRecPtr	prev_redo;		/* InvalidXLogRecPtr when unknown */
	int64		buffers_written;	/* -1 unknown */
	double		write_ms;		/* < 0 unknown */
	double		sync_ms;
	int32		flush_after_kb;
	/* poll-detected records: pg_stat_bgwriter at the start */
	int64		start_timed;
	int64		start_requested;
	int64		start_buffers;
	int64		start_write_ms;
	int64		start_sync_ms;
	/* commit columns */
	int			commit_state;
	bool		have_window;
	bool		have_outside;
	bool		have_stall;
	uint64		commits;
	double		commit_p50_us;
	double		commit_p99_us;
	double		commit_p99_us_outside;
	int32		stall_seconds;
} WpCheckpoint;

typedef struct WpCheckpointsShared
{
	slock_t		mutex;			/* protects everything below */
	uint64		nrecords;		/* records ever opened */
	XLogRecPtr	last_redo;		/* redo pointer of the newest checkpoint */
	WpCheckpoint ring[WP_CKPT_HISTORY];
} WpCheckpointsShared;

static WpCheckpointsShared *wp_ckpt = NULL;


/*---- worker-local state ----*/
static XLogRecPtr worker_seen_redo = InvalidXLogRecPtr;
static TimestampTz redo_moved_at = 0;
static TimestampTz next_slow_poll = 0;
static TimestampTz next_control_read = 0;

/*
 * wp_checkpoints_shmem_size / wp_checkpoints_shmem_init
 *		Size and create the "walpilot checkpoints" region (startup hook,
 *		under AddinShmemInitLock).
 */
Size
wp_checkpoints_shmem_size(void)
{
	return MAXALIGN(sizeof(WpCheckpointsShared));
}

void
wp_checkpoints_shmem_init(void)
{
	bool		found;

	wp_ckpt = ShmemInitStruct("walpilot checkpoints",
							  sizeof(WpCheckpointsShared), &found);
	if (!found)
	{
		memset(wp_ckpt, 0, sizeof(WpCheckpointsShared));
		SpinLockInit(&wp_ckpt->mutex);
	}
}

/*
 * flag_words
 *		The part of a formatted "checkpoint starting:" line that holds the
 *		flag words, whatever the language: the message minus the text its
 *		translated format has before the first %s.  NULL when the message
 *		does not start with that text.
 */
static const char *
flag_words(const ErrorData *edata)
{
	const char *fmt = edata->message_id;
	const char *arg;
	size_t		prefix;

	if (edata->domain != NULL)
		fmt = dgettext(edata->domain, edata->message_id);
	arg = strstr(fmt, "%s");
	if (arg == NULL)
		return NULL;
	prefix = arg - fmt;
	if (strncmp(edata->message, fmt, prefix) != 0)
		return NULL;
	return edata->message + prefix;
}

/*
 * has_flag
 *		Whether the flag part of a "checkpoint starting:" line carries the
 *		flag word (each flag is printed as " word").
 */
static bool
has_flag(const char *msg, const char *word)
{
	size_t		len = strlen(word);
	const char *p = msg;

	while ((p = strstr(p, word)) != NULL)
	{
		if (p > msg && p[-1] == ' ' && (p[len] == ' ' || p[len] == '\0'))
			return true;
		p += len;
	}
	return false;
}

/*
 * reason_from_flags
 *		One of time, wal, requested, shutdown, end-of-recovery.  An
 *		immediate request outranks the cause flags it was merged with.
 */
static const char *
reason_from_flags(const char *msg)
{
	if (msg == NULL)
		return "";
	if (has_flag(msg, "shutdown"))
		return "shutdown";
	if (has_flag(msg, "end-of-recovery"))
		return "end-of-recovery";
	if (has_flag(msg, WP_CKPT_FLAG_FAST))
		return "requested";
	if (has_flag(msg, "wal"))
		return "wal";
	if (has_flag(msg, "time"))
		return "time";
	return "requested";
}

/*
 * newest_record
 *		The newest record, or NULL.  Caller holds the spinlock.
 */
static WpCheckpoint *
newest_record(void)
{
	if (wp_ckpt->nrecords == 0)
		return NULL;
	return &wp_ckpt->ring[(wp_ckpt->nrecords - 1) % WP_CKPT_HISTORY];
}

/*
 * open_record
 *		Start a new record in the ring.  Caller holds the spinlock.
 */
static WpCheckpoint *
open_record(int source, TimestampTz started_at, XLogRecPtr redo)
{
	WpCheckpoint *prev = newest_record();
	WpCheckpoint *c = &wp_ckpt->ring[wp_ckpt->nrecords % WP_CKPT_HISTORY];

	/*
	 * Checkpoints run one at a time: a new one means the previous one
	 * ended, at the latest when this one started.  Without this a record
	 * whose end was not seen yet (pg_control is read every few seconds)
	 * would stay open for ever once a newer one became the newest.
	 */
	if (prev != NULL && prev->finished_at == 0)
		prev->finished_at = Max(started_at, prev->started_at);

	memset(c, 0, sizeof(WpCheckpoint));
	c->seq = ++wp_ckpt->nrecords;
	c->source = source;
	c->started_at = started_at;
	c->redo = redo;
	c->prev_redo = wp_ckpt->last_redo;
	c->buffers_written = -1;
	c->write_ms = -1;
	c->sync_ms = -1;
	c->flush_after_kb = checkpoint_flush_after * (BLCKSZ / 1024);
	c->commit_state = WP_CKPT_COMMITS_PENDING;
	if (redo > wp_ckpt->last_redo)
		wp_ckpt->last_redo = redo;
	return c;
}


/*
 * wp_checkpoints_is_start_line
 *		Is this server log message the checkpointer's "checkpoint starting"
 *		or "restartpoint starting" line?  Any process, two comparisons in
 *		the common case.
 */
bool
wp_checkpoints_is_start_line(const ErrorData *edata)
{
	return edata->elevel == LOG && edata->message_id != NULL &&
		(edata->message_id[0] == 'c' || edata->message_id[0] == 'r') &&
		(strcmp(edata->message_id, ckpt_start_fmt) == 0 ||
		 strcmp(edata->message_id, restart_start_fmt) == 0);
}

/*
 * wp_checkpoints_note_log
 *		The hub's emit_log_hook hands every server log message here: catch
 *		the checkpointer's start and end lines.  Runs in every process for
 *		every message that reaches the server log, so the common path is two
 *		comparisons; in the checkpointer it runs inside CreateCheckPoint and
 *		therefore only copies values under a spinlock.
 */
void
wp_checkpoints_note_log(ErrorData *edata)
{
	if (wp_ckpt != NULL && wp_mode != WP_MODE_OFF && edata->elevel == LOG &&
		edata->message_id != NULL &&
		(edata->message_id[0] == 'c' || edata->message_id[0] == 'r') &&
		edata->message != NULL)
	{
		if (strcmp(edata->message_id, ckpt_start_fmt) == 0 ||
			strcmp(edata->message_id, restart_start_fmt) == 0)
		{
			XLogRecPtr	redo = GetRedoRecPtr();
			const char *reason = reason_from_flags(flag_words(edata));
			TimestampTz start = CheckpointStats.ckpt_start_t;
			WpCheckpoint *c;

			SpinLockAcquire(&wp_ckpt->mutex);
			c = open_record(WP_CKPT_SRC_LOG, start, redo);
			strlcpy(c->reason, reason, sizeof(c->reason));
			SpinLockRelease(&wp_ckpt->mutex);
		}
		else if (strcmp(edata->message_id, ckpt_end_fmt) == 0 ||
				 strcmp(edata->message_id, restart_end_fmt) == 0)
		{
			CheckpointStatsData st = CheckpointStats;
			XLogRecPtr	redo = GetRedoRecPtr();
			WpCheckpoint *c;

			SpinLockAcquire(&wp_ckpt->mutex);
			c = newest_record();
			if (c == NULL || c->finished_at != 0 || c->redo != redo)
			{
				c = open_record(WP_CKPT_SRC_LOG, st.ckpt_start_t, redo);
				strlcpy(c->reason, "requested", sizeof(c->reason));
			}
			c->source = WP_CKPT_SRC_LOG;
			c->finished_at = st.ckpt_end_t;
			c->buffers_written = st.ckpt_bufs_written;
			c->write_ms = (st.ckpt_sync_t - st.ckpt_write_t) / 1000.0;
			c->sync_ms = (st.ckpt_sync_end_t - st.ckpt_sync_t) / 1000.0;
			SpinLockRelease(&wp_ckpt->mutex);
		}
	}
}

/*
 * read_checkpointer_stats
 *		pg_stat_bgwriter's checkpoint counters, fresh.
 */
static void
read_checkpointer_stats(int64 *timed, int64 *requested, int64 *buffers,
						int64 *write_ms, int64 *sync_ms)
{
	PgStat_CheckpointerStats *cs = pgstat_fetch_stat_checkpointer();

	*timed = cs->WP_CKPTSTAT_TIMED;
	*requested = cs->WP_CKPTSTAT_REQUESTED;
	*buffers = cs->WP_CKPTSTAT_BUFFERS;
	*write_ms = cs->WP_CKPTSTAT_WRITE_MS;
	*sync_ms = cs->WP_CKPTSTAT_SYNC_MS;
	pgstat_clear_snapshot();
}

/*
 * control_file_redo
 *		The redo pointer of the last completed checkpoint, from pg_control,
 *		read under ControlFileLock as pg_control_checkpoint() does.
 *		InvalidXLogRecPtr when it cannot be read: the error is logged and
 *		the next read waits WP_CKPT_CONTROL_RETRY_S.
 */
static XLogRecPtr
control_file_redo(TimestampTz now)
{
	MemoryContext ctx = CurrentMemoryContext;
	XLogRecPtr	redo = InvalidXLogRecPtr;

	if (now < next_control_read)
		return InvalidXLogRecPtr;
	next_control_read = now + WP_CKPT_CONTROL_POLL_MS * (TimestampTz) 1000;

	PG_TRY();
	{
		ControlFileData *cf;
		bool		crc_ok;

		LWLockAcquire(ControlFileLock, LW_SHARED);
		cf = get_controlfile(DataDir, &crc_ok);
		LWLockRelease(ControlFileLock);
		if (crc_ok)
			redo = cf->checkPointCopy.redo;
		pfree(cf);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(ctx);

		/*
		 * The ERROR reset the interrupt holdoff that LWLockAcquire took;
		 * take it again for LWLockRelease to resume, as LWLockReleaseAll
		 * does.
		 */
		if (LWLockHeldByMe(ControlFileLock))
		{
			HOLD_INTERRUPTS();
			LWLockRelease(ControlFileLock);
		}
		edata = CopyErrorData();
		FlushErrorState();
		ereport(LOG,
				(errmsg("walpilot could not read the control file: %s",
						edata->message),
				 errdetail("The end of the running checkpoint is looked for again in %d s.",
						   WP_CKPT_CONTROL_RETRY_S)));
		FreeErrorData(edata);
		next_control_read = now + WP_CKPT_CONTROL_RETRY_S * USECS_PER_SEC;
	}
	PG_END_TRY();
	return redo;
}

/*
 * poll_redo
 *		Every tick: a redo pointer that moved means a checkpoint started.
 *		If the hook has not recorded it within a grace period
 *		(log_checkpoints off), open a poll-detected record.
 */
static void
poll_redo(TimestampTz now)
{
	XLogRecPtr	redo = GetRedoRecPtr();
	bool		recorded;
	int64		timed,
				requested,
				buffers,
				write_ms,
				sync_ms;
	WpCheckpoint *c;

	if (worker_seen_redo == InvalidXLogRecPtr)
	{
		/* first tick: the current redo is the baseline, not a start */
		worker_seen_redo = redo;
		SpinLockAcquire(&wp_ckpt->mutex);
		if (wp_ckpt->last_redo == InvalidXLogRecPtr)
			wp_ckpt->last_redo = redo;
		SpinLockRelease(&wp_ckpt->mutex);
		return;
	}
	if (redo <= worker_seen_redo)
		return;

	SpinLockAcquire(&wp_ckpt->mutex);
	c = newest_record();
	recorded = (c != NULL && c->redo >= redo);
	SpinLockRelease(&wp_ckpt->mutex);
	if (recorded)
	{
		worker_seen_redo = redo;
		redo_moved_at = 0;
		return;
	}
	if (redo_moved_at == 0)
	{
		redo_moved_at = now;
		return;
	}
	if (!TimestampDifferenceExceeds(redo_moved_at, now, WP_CKPT_POLL_GRACE_MS))
		return;

	read_checkpointer_stats(&timed, &requested, &buffers, &write_ms, &sync_ms);
	SpinLockAcquire(&wp_ckpt->mutex);
	c = newest_record();
	if (c == NULL || c->redo < redo)
	{
		c = open_record(WP_CKPT_SRC_POLL, redo_moved_at, redo);
		strlcpy(c->reason, "requested", sizeof(c->reason));
		c->start_timed = timed;
		c->start_requested = requested;
		c->start_buffers = buffers;
		c->start_write_ms = write_ms;
		c->start_sync_ms = sync_ms;
	}
	SpinLockRelease(&wp_ckpt->mutex);
	worker_seen_redo = redo;
	redo_moved_at = 0;
}

/*
 * poll_end
 *		Once a second: finish a poll-detected record when pg_control shows
 *		its redo, and keep its numbers (pg_stat_bgwriter deltas, which lag
 *		by up to a second or so) current until the next checkpoint starts.
 */
static void
poll_end(TimestampTz now)
{
	WpCheckpoint *c;
	uint64		seq;
	bool		finished;
	int64		timed,
				requested,
				buffers,
				write_ms,
				sync_ms;
	XLogRecPtr	done_redo = InvalidXLogRecPtr;

	/* only the newest record's identity and state: the rest is re-read */
	SpinLockAcquire(&wp_ckpt->mutex);
	c = newest_record();
	if (c == NULL || c->source != WP_CKPT_SRC_POLL)
	{
		SpinLockRelease(&wp_ckpt->mutex);
		return;
	}
	seq = c->seq;
	finished = (c->finished_at != 0);
	SpinLockRelease(&wp_ckpt->mutex);

	if (!finished)
		done_redo = control_file_redo(now);
	read_checkpointer_stats(&timed, &requested, &buffers, &write_ms, &sync_ms);

	SpinLockAcquire(&wp_ckpt->mutex);
	c = newest_record();
	if (c != NULL && c->seq == seq && c->source == WP_CKPT_SRC_POLL)
	{
		if (c->finished_at == 0 && done_redo != InvalidXLogRecPtr &&
			done_redo >= c->redo)
			c->finished_at = now;
		if (c->finished_at != 0)
		{
			c->buffers_written = buffers - c->start_buffers;
			c->write_ms = (double) (write_ms - c->start_write_ms);
			c->sync_ms = (double) (sync_ms - c->start_sync_ms);

			/*
			 * The counters grow when the checkpointer decides to checkpoint
			 * (also for timed checkpoints it then skips as idle) and reach
			 * the shared stats a little after the end: settle the reason at
			 * the first visible change and keep it.
			 */
			if (!c->reason_final)
			{
				if (requested > c->start_requested)
					c->reason_final = true;
				else if (timed > c->start_timed)
				{
					strlcpy(c->reason, "time", sizeof(c->reason));
					c->reason_final = true;
				}
			}
		}
	}
	SpinLockRelease(&wp_ckpt->mutex);
}

/*
 * median_u64
 *		Median of n counts (sorts them in place).
 */
static int
cmp_u64(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return (x > y) - (x < y);
}

/*
 * fill_commit_columns
 *		Once a second: for finished records whose commit columns are pending
 *		and whose end is WP_CKPT_COMMIT_DELAY_MS old (so the per-second
 *		timeline holds the whole checkpoint), ask the commit data.  Unknown
 *		data leaves the columns NULL.
 */
static void
fill_commit_columns(TimestampTz now)
{
	int			i;

	for (i = 0; i < WP_CKPT_HISTORY; i++)
	{
		WpCheckpoint snap;
		WpCommitWindow during,
					outside;
		bool		have_during,
					have_outside,
					have_stall = false;
		int32		stall = 0;
		TimestampTz base_from;
		WpCheckpoint *c;

		SpinLockAcquire(&wp_ckpt->mutex);
		snap = wp_ckpt->ring[i];
		SpinLockRelease(&wp_ckpt->mutex);

		if (snap.seq == 0 || snap.finished_at == 0 ||
			snap.commit_state != WP_CKPT_COMMITS_PENDING ||
			!TimestampDifferenceExceeds(snap.finished_at, now,
										WP_CKPT_COMMIT_DELAY_MS))
			continue;

		memset(&during, 0, sizeof(during));
		memset(&outside, 0, sizeof(outside));
		base_from = snap.started_at - WP_CKPT_BASELINE_S * USECS_PER_SEC;
		have_during = wp_commit_window(snap.started_at, snap.finished_at,
									   &during);
		have_outside = wp_commit_window(base_from, snap.started_at, &outside);

		/* stall seconds (as in the "checkpointer continuous flushing"
		 * thread, 2015) against the preceding minute */
		{
			uint64		base[WP_CKPT_BASELINE_S];
			int			nbase = wp_commit_seconds_between(base_from,
														  snap.started_at,
														  base,
														  WP_CKPT_BASELINE_S);

			if (nbase > 0)
			{
				uint64	   *cnt = palloc(sizeof(uint64) * WP_CKPT_MAX_SECONDS);
				int			n = wp_commit_seconds_between(snap.started_at,
														  snap.finished_at,
														  cnt,
														  WP_CKPT_MAX_SECONDS);
				uint64		median;
				int			k;

				qsort(base, nbase, sizeof(uint64), cmp_u64);
				median = base[nbase / 2];
				if (n >= 0 && median > 0)
				{
					have_stall = true;
					for (k = 0; k < n; k++)
						if ((double) cnt[k] < 0.1 * (double) median)
							stall++;
				}
				pfree(cnt);
			}
		}

		SpinLockAcquire(&wp_ckpt->mutex);
		c = &wp_ckpt->ring[i];
		if (c->seq == snap.seq)
		{
			c->commit_state = WP_CKPT_COMMITS_DONE;
			c->have_window = have_during;
			c->commits = during.commits;
			c->commit_p50_us = during.p50_us;
			c->commit_p99_us = during.p99_us;
			c->have_outside = have_outside;
			c->commit_p99_us_outside = outside.p99_us;
			c->have_stall = have_stall;
			c->stall_seconds = stall;
		}
		SpinLockRelease(&wp_ckpt->mutex);
	}
}

/*
 * wp_checkpoints_worker_tick
 *		Called by the worker every tick.
 */
void
wp_checkpoints_worker_tick(TimestampTz now)
{
	if (wp_ckpt == NULL)
		return;
	if (wp_mode == WP_MODE_OFF)
	{
		/* record nothing, but do not mistake later for a new start */
		if (worker_seen_redo != InvalidXLogRecPtr)
			worker_seen_redo = GetRedoRecPtr();
		redo_moved_at = 0;
		return;
	}
	poll_redo(now);
	if (now < next_slow_poll)
		return;
	next_slow_poll = now + USECS_PER_SEC;
	poll_end(now);
	fill_commit_columns(now);
}

/*
 * wp_checkpoint_next_ended
 *		Has the checkpoint after after_seq finished (its commit columns may
 *		still be pending)?  Its reason and the checkpoint_flush_after it
 *		ran with: the flush pilot puts its next trial value in force at
 *		once, before the next checkpoint starts.
 */
bool
wp_checkpoint_next_ended(uint64 after_seq, char *reason, size_t len,
						 int32 *flush_after_kb)
{
	bool		found = false;
	WpCheckpoint *c;

	if (wp_ckpt == NULL)
		return false;
	SpinLockAcquire(&wp_ckpt->mutex);
	c = &wp_ckpt->ring[after_seq % WP_CKPT_HISTORY];
	if (after_seq < wp_ckpt->nrecords && c->seq == after_seq + 1 &&
		c->finished_at != 0)
	{
		strlcpy(reason, c->reason, len);
		*flush_after_kb = c->flush_after_kb;
		found = true;
	}
	SpinLockRelease(&wp_ckpt->mutex);
	return found;
}

/*
 * wp_checkpoint_next_done
 *		The oldest finished checkpoint after after_seq whose commit columns
 *		are filled in (the flush pilot's event windows).  A record still
 *		waiting for its commit columns stops the scan, so records come in
 *		order.
 */
bool
wp_checkpoint_next_done(uint64 after_seq, WpCheckpointSummary *out)
{
	bool		found = false;
	uint64		seq;

	if (wp_ckpt == NULL)
		return false;
	SpinLockAcquire(&wp_ckpt->mutex);
	seq = Max(after_seq + 1, wp_ckpt->nrecords > WP_CKPT_HISTORY ?
			  wp_ckpt->nrecords - WP_CKPT_HISTORY + 1 : 1);
	if (seq <= wp_ckpt->nrecords)
	{
		WpCheckpoint *c = &wp_ckpt->ring[(seq - 1) % WP_CKPT_HISTORY];

		if (c->seq == seq && c->finished_at != 0 &&
			c->commit_state == WP_CKPT_COMMITS_DONE)
		{
			out->seq = c->seq;
			out->started_at = c->started_at;
			out->finished_at = c->finished_at;
			strlcpy(out->reason, c->reason, sizeof(out->reason));
			out->flush_after_kb = c->flush_after_kb;
			out->wal_bytes = c->prev_redo != InvalidXLogRecPtr &&
				c->redo >= c->prev_redo ? (int64) (c->redo - c->prev_redo) : -1;
			out->buffers_written = c->buffers_written;
			out->write_ms = c->write_ms;
			out->have_window = c->have_window;
			out->have_stall = c->have_stall;
			out->commits = c->commits;
			out->commit_p99_us = c->commit_p99_us;
			out->commit_p99_us_outside = c->have_outside ?
				c->commit_p99_us_outside : -1;
			out->stall_seconds = c->stall_seconds;
			found = true;
		}
	}
	SpinLockRelease(&wp_ckpt->mutex);
	return found;
}

/*---- readers: walpilot.checkpoints and advice ----*/

/*
 * wp_checkpoints_copy
 *		The remembered checkpoints, oldest first, the running one last, as
 *		readers show them: out[] must hold WP_CKPT_HISTORY rows; returns how
 *		many it filled.  One record per spinlock hold (the checkpointer's
 *		hook takes it too); a record overwritten by a newer one while this
 *		copies is left out, it is shown next time.
 */
int
wp_checkpoints_copy(WpCheckpointRow *out)
{
	WpCheckpoint *ring;
	uint64		n;
	uint64		first;
	uint64		s;
	int			nrows = 0;

	if (wp_ckpt == NULL)
		return 0;
	ring = palloc(sizeof(WpCheckpoint) * WP_CKPT_HISTORY);
	SpinLockAcquire(&wp_ckpt->mutex);
	n = wp_ckpt->nrecords;
	SpinLockRelease(&wp_ckpt->mutex);
	first = n > WP_CKPT_HISTORY ? n - WP_CKPT_HISTORY : 0;
	for (s = first; s < n; s++)
	{
		WpCheckpoint *c = &ring[s % WP_CKPT_HISTORY];

		SpinLockAcquire(&wp_ckpt->mutex);
		*c = wp_ckpt->ring[s % WP_CKPT_HISTORY];
		SpinLockRelease(&wp_ckpt->mutex);
	}

	for (s = first; s < n; s++)
	{
		WpCheckpoint *c = &ring[s % WP_CKPT_HISTORY];
		WpCheckpointRow *r = &out[nrows];
		bool		done = c->finished_at != 0;
		bool		commits_done = c->commit_state == WP_CKPT_COMMITS_DONE;

		if (c->seq != s + 1)
			continue;
		memset(r, 0, sizeof(WpCheckpointRow));
		r->started_at = c->started_at;
		r->finished_at = c->finished_at;
		strlcpy(r->reason, c->reason, sizeof(r->reason));
		r->buffers_written = done && c->buffers_written >= 0 ?
			c->buffers_written : -1;
		r->write_ms = done && c->write_ms >= 0 ? c->write_ms : -1;
		r->sync_ms = done && c->sync_ms >= 0 ? c->sync_ms : -1;
		r->wal_bytes = c->prev_redo != InvalidXLogRecPtr &&
			c->redo >= c->prev_redo ? (int64) (c->redo - c->prev_redo) : -1;
		r->flush_after_kb = c->flush_after_kb;
		r->have_commits = commits_done && c->have_window;
		r->commits = c->commits;
		r->commit_p50_us = c->commit_p50_us;
		r->commit_p99_us = c->commit_p99_us;
		r->have_outside = commits_done && c->have_outside;
		r->commit_p99_us_outside = c->commit_p99_us_outside;
		r->have_stall = commits_done && c->have_stall;
		r->stall_seconds = c->stall_seconds;
		nrows++;
	}
	pfree(ring);
	return nrows;
}
