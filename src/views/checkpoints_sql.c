/*-------------------------------------------------------------------------
 *
 * checkpoints_sql.c
 *		walpilot.checkpoints: the checkpoint records as SQL rows.
 *
 * IDENTIFICATION
 *	  src/views/checkpoints_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "views.h"

PG_FUNCTION_INFO_V1(walpilot_checkpoints_data);

#define WP_CKPT_COLS 13

/*
 * walpilot_checkpoints_data
 *		One row per remembered checkpoint, oldest first, the running one
 *		last with finished_at NULL.  The records are copied first
 *		(wp_checkpoints_copy); rows are formed with no lock held.
 */
Datum
walpilot_checkpoints_data(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WpCheckpointRow *rows;
	int			n;
	int			i;

	wp_require_shared_state();
	InitMaterializedSRF(fcinfo, 0);

	rows = palloc(sizeof(WpCheckpointRow) * WP_CKPT_HISTORY);
	n = wp_checkpoints_copy(rows);
	for (i = 0; i < n; i++)
	{
		WpCheckpointRow *c = &rows[i];
		Datum		values[WP_CKPT_COLS];
		bool		nulls[WP_CKPT_COLS];

		memset(nulls, 0, sizeof(nulls));
		values[0] = TimestampTzGetDatum(c->started_at);
		if (c->finished_at != 0)
			values[1] = TimestampTzGetDatum(c->finished_at);
		else
			nulls[1] = true;
		if (c->reason[0] != '\0')
			values[2] = CStringGetTextDatum(c->reason);
		else
			nulls[2] = true;
		if (c->buffers_written >= 0)
			values[3] = Int64GetDatum(c->buffers_written);
		else
			nulls[3] = true;
		if (c->write_ms >= 0)
			values[4] = Float8GetDatum(c->write_ms);
		else
			nulls[4] = true;
		if (c->sync_ms >= 0)
			values[5] = Float8GetDatum(c->sync_ms);
		else
			nulls[5] = true;
		if (c->wal_bytes >= 0)
			values[6] = Int64GetDatum(c->wal_bytes);
		else
			nulls[6] = true;
		values[7] = Int32GetDatum(c->flush_after_kb);
		if (c->have_commits)
		{
			values[8] = Int64GetDatum((int64) c->commits);
			values[9] = Float8GetDatum(c->commit_p50_us);
			values[10] = Float8GetDatum(c->commit_p99_us);
		}
		else
			nulls[8] = nulls[9] = nulls[10] = true;
		if (c->have_outside)
			values[11] = Float8GetDatum(c->commit_p99_us_outside);
		else
			nulls[11] = true;
		if (c->have_stall)
			values[12] = Int32GetDatum(c->stall_seconds);
		else
			nulls[12] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(rows);
	return (Datum) 0;
}
