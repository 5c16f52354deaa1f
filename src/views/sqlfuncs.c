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
 *	  src/views/sqlfuncs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "commands/dbcommands.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc_tables.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "views.h"

PG_FUNCTION_INFO_V1(walpilot_status_data);
PG_FUNCTION_INFO_V1(walpilot_reset);

/*
 * The 0.1 declaration has the first 14 columns; 0.2 adds pilot_reason and
 * the gather wake-up counters.
 */
#define WP_STATUS_COLS_0_1	14
#define WP_STATUS_COLS	17

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
	char		pilot_state[64];
	char		pilot_current[64];
	char		pilot_candidate[64];
	char		pilot_reason[256];
	int			i = 0;

	wp_require_shared_state();

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != WP_STATUS_COLS &&
		tupdesc->natts != WP_STATUS_COLS_0_1)
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
	wp_pilot_describe(pilot_state, pilot_current, pilot_candidate,
					  sizeof(pilot_state));
	values[i++] = CStringGetTextDatum(pilot_state);
	values[i++] = CStringGetTextDatum(pilot_current);
	if (pilot_candidate[0] != '\0')
		values[i++] = CStringGetTextDatum(pilot_candidate);
	else
		nulls[i++] = true;
	wp_pilot_reason(0, pilot_reason, sizeof(pilot_reason));
	if (pilot_reason[0] != '\0')
		values[i++] = CStringGetTextDatum(pilot_reason);
	else
		nulls[i++] = true;
	{
		uint64		sent,
					misdirected;

		wp_gather_wakeup_counts(&sent, &misdirected);
		values[i++] = Int64GetDatum((int64) sent);
		values[i++] = Int64GetDatum((int64) misdirected);
	}
	Assert(i == WP_STATUS_COLS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * reset_all
 *		Clear every cumulative counter and history walpilot keeps.
 *
 * Called by walpilot.reset().  Settings and the decision log are not
 * measurements and are left alone.
 */
static void
reset_all(void)
{
	TimestampTz now = GetCurrentTimestamp();

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	wp_shared->stats_reset_at = now;
	LWLockRelease(wp_shared->lock);

	wp_commit_timing_reset();
	wp_commit_groups_reset();
	wp_commit_phases_reset();
	wp_sampler_reset();
	wp_timeline_reset();
}

/*
 * walpilot_reset
 *		Clear all measurements; returns the reset time.
 */
Datum
walpilot_reset(PG_FUNCTION_ARGS)
{
	wp_require_shared_state();
	reset_all();
	PG_RETURN_TIMESTAMPTZ(GetCurrentTimestamp());
}

PG_FUNCTION_INFO_V1(walpilot_decisions_data);
PG_FUNCTION_INFO_V1(walpilot_settings_data);
PG_FUNCTION_INFO_V1(walpilot_revert);

/*
 * walpilot_decisions_data
 *		Every decision still in the log, oldest first.
 */
Datum
walpilot_decisions_data(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WpDecision *d;
	int			n,
				i;

	wp_require_shared_state();
	wp_init_materialized_srf(fcinfo);
	n = wp_decisions_copy(&d);

	for (i = 0; i < n; i++)
	{
		Datum		values[8];
		bool		nulls[8];

		memset(nulls, 0, sizeof(nulls));
		values[0] = Int64GetDatum((int64) d[i].id);
		values[1] = TimestampTzGetDatum(d[i].decided_at);
		values[2] = CStringGetTextDatum(d[i].setting);
		values[3] = CStringGetTextDatum(d[i].old_value);
		values[4] = CStringGetTextDatum(d[i].new_value);
		values[5] = CStringGetTextDatum(d[i].reason);
		values[6] = DirectFunctionCall1(jsonb_in, CStringGetDatum(d[i].evidence));
		if (d[i].outcome[0] != '\0')
			values[7] = CStringGetTextDatum(d[i].outcome);
		else
			nulls[7] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* one server-level setting's row of walpilot.settings */
static void
put_setting_row(ReturnSetInfo *rsinfo, const WpSettingRow *row)
{
	Datum		values[5];
	bool		nulls[5];

	memset(nulls, 0, sizeof(nulls));
	values[0] = CStringGetTextDatum(row->name);
	values[1] = CStringGetTextDatum(row->configured);
	values[2] = CStringGetTextDatum(row->in_force);
	values[3] = CStringGetTextDatum(row->source);
	values[4] = CStringGetTextDatum(row->by);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * walpilot_settings_data
 *		Who owns each knob walpilot may manage, as seen from this session.
 */
Datum
walpilot_settings_data(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WpSettingRow row;
	int			k;

	wp_require_shared_state();
	wp_init_materialized_srf(fcinfo);

	/* this session as its next commit runs (a reader applies nothing) */
	for (k = 0; k < WP_NUM_KNOBS; k++)
	{
		Datum		values[5];
		bool		nulls[5];
		GucSource	source = wp_settings_source(k);
		int			configured = wp_settings_configured(k, NULL);
		int			effective;
		const char *owner;

		memset(nulls, 0, sizeof(nulls));
		wp_settings_session_view(k, &effective, &owner);

		values[0] = CStringGetTextDatum(wp_settings_knob_name(k));
		values[1] = CStringGetTextDatum(psprintf("%d", configured));
		values[2] = CStringGetTextDatum(psprintf("%d", effective));
		values[3] = CStringGetTextDatum(GucSource_Names[source]);
		values[4] = CStringGetTextDatum(owner);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	if (wp_ckpt_setting_describe(&row))
		put_setting_row(rsinfo, &row);
	if (wp_alter_system_describe(&row))
		put_setting_row(rsinfo, &row);
	return (Datum) 0;
}

/*
 * walpilot_revert
 *		Put back every setting walpilot changed; the pilot waits
 *		walpilot.tune_interval before it tries again.
 */
Datum
walpilot_revert(PG_FUNCTION_ARGS)
{
	char		by[128];
	char	   *user;
	char	   *db;

	wp_require_shared_state();
	user = GetUserNameFromId(GetUserId(), true);
	db = get_database_name(MyDatabaseId);
	snprintf(by, sizeof(by), "walpilot.revert() by %s in database %s",
			 user ? user : "?", db ? db : "?");
	wp_pilot_request_hold_off(by, 0);
	wp_alter_system_request_revert();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(walpilot_pilots_data);

/*
 * walpilot_pilots_data
 *		One row per pilot for walpilot.pilots: copied under the lock
 *		(wp_pilot_rows), the rows formed after it.
 */
Datum
walpilot_pilots_data(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WpPilotRow	rows[WP_PILOT_ROWS_MAX];
	int			n;
	int			i;

	wp_require_shared_state();
	wp_init_materialized_srf(fcinfo);
	n = wp_pilot_rows(rows);

	for (i = 0; i < n; i++)
	{
		const WpModelGrade *g = &rows[i].grade;
		Datum		values[9];
		bool		nulls[9];

		memset(nulls, 0, sizeof(nulls));
		values[0] = CStringGetTextDatum(rows[i].name);
		values[1] = CStringGetTextDatum(rows[i].state);
		values[2] = CStringGetTextDatum(rows[i].current);
		if (rows[i].candidate[0] != '\0')
			values[3] = CStringGetTextDatum(rows[i].candidate);
		else
			nulls[3] = true;
		if (rows[i].reason[0] != '\0')
			values[4] = CStringGetTextDatum(rows[i].reason);
		else
			nulls[4] = true;
		/* the model's grade: NULL for a pilot without one, or no trial yet */
		values[5] = Int32GetDatum(g->trials);
		nulls[5] = !g->has_model;
		values[6] = Float8GetDatum(g->last_predicted);
		values[7] = Float8GetDatum(g->last_measured);
		values[8] = Float8GetDatum(g->trials > 0 ? g->error_sum / g->trials : 0);
		nulls[6] = nulls[7] = nulls[8] = (g->trials == 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
