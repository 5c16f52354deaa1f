/*-------------------------------------------------------------------------
 *
 * sqlfuncs.c
 *		SQL-callable functions behind walpilot's views and actions.
 *
 * Readers copy what they need from shared memory (under the walpilot lock
 * only for multi-word state), release it, and only then form tuples.
 * Every function first checks that the library was preloaded.
 *
 * IDENTIFICATION
 *	  src/sqlfuncs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "walpilot.h"

PG_FUNCTION_INFO_V1(walpilot_status_data);
PG_FUNCTION_INFO_V1(walpilot_reset);

#define WP_STATUS_COLS	11

/*
 * walpilot_status_data
 *		One row describing the worker and the instruments.
 */
Datum
walpilot_status_data(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[WP_STATUS_COLS];
	bool		nulls[WP_STATUS_COLS];
	uint32		worker_pid;
	TimestampTz started_at;
	TimestampTz reset_at;
	uint64		worker_starts;
	int			i = 0;

	wp_require_shared_state();

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != WP_STATUS_COLS)
		elog(ERROR, "walpilot_status_data: expected %d columns, got %d",
			 WP_STATUS_COLS, tupdesc->natts);

	LWLockAcquire(wp_shared->lock, LW_SHARED);
	started_at = wp_shared->worker_started_at;
	reset_at = wp_shared->stats_reset_at;
	worker_starts = wp_shared->worker_starts;
	LWLockRelease(wp_shared->lock);
	worker_pid = pg_atomic_read_u32(&wp_shared->worker_pid);

	memset(nulls, 0, sizeof(nulls));

	values[i++] = CStringGetTextDatum(
		wp_mode_name((int) pg_atomic_read_u32(&wp_shared->worker_mode)));
	if (worker_pid != 0)
		values[i++] = Int32GetDatum((int32) worker_pid);
	else
		nulls[i++] = true;
	if (worker_pid != 0 && started_at != 0)
		values[i++] = TimestampTzGetDatum(started_at);
	else
		nulls[i++] = true;
	values[i++] = Int64GetDatum((int64) worker_starts);
	values[i++] = Int32GetDatum((int32)
		pg_atomic_read_u32(&wp_shared->worker_sample_interval_ms));
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&wp_shared->ticks));
	values[i++] = TimestampTzGetDatum(reset_at);
	values[i++] = CStringGetTextDatum(WALPILOT_VERSION);
	/* instruments (sampler.c, commit_timing.c) */
	values[i++] = Int64GetDatum((int64) wp_sampler_samples_taken());
	values[i++] = Int64GetDatum((int64) wp_sampler_missed_ticks());
	{
		WpCommitTotals *t = palloc(sizeof(WpCommitTotals));

		wp_commit_totals(t);
		values[i++] = Int64GetDatum((int64) t->durable);
		pfree(t);
	}
	Assert(i == WP_STATUS_COLS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * walpilot_reset
 *		Clear all measurements; returns the reset time.
 */
Datum
walpilot_reset(PG_FUNCTION_ARGS)
{
	wp_require_shared_state();
	wp_reset_all();
	PG_RETURN_TIMESTAMPTZ(GetCurrentTimestamp());
}
