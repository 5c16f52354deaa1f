/*-------------------------------------------------------------------------
 *
 * probe_sql.c
 *		walpilot.probe() and walpilot.storage: the storage probe's and the
 *		flush estimate's SQL side.
 *
 * Arguments are checked here; the measuring is the probe's
 * (instruments/probe_io.c; the sleep probe, instruments/probe_sleep.c).
 * Rows are formed from copies, with no lock held.
 *
 * IDENTIFICATION
 *	  src/views/probe_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "views.h"

PG_FUNCTION_INFO_V1(walpilot_probe);

#define WP_PROBE_COLS 8

/*
 * walpilot_probe
 *		walpilot.probe(seconds float8, methods text[]): measure each
 *		requested wal_sync_method at 1 and 2 writes per sync in the real WAL
 *		directory, then the sleep overshoot; return one row per method and
 *		write count and keep the result for walpilot.storage.
 *
 * Superuser-only through the SQL grants.  Takes no lock during I/O.
 */
Datum
walpilot_probe(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	double		seconds = PG_ARGISNULL(0) ? 2.0 : PG_GETARG_FLOAT8(0);
	bool		selected[WP_PROBE_METHODS];
	int			nselected = 0;
	WpProbeRow	rows[WP_PROBE_ROWS];
	int			nrows;
	char		wal_dir[MAXPGPATH];
	int			i;

	wp_require_shared_state();

	if (isnan(seconds) || seconds <= 0 || seconds > 600)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("probe duration must be between 0 and 600 seconds"),
				 errdetail("The requested duration was %g seconds.", seconds)));

	memset(selected, 0, sizeof(selected));
	if (PG_ARGISNULL(1))
	{
		for (i = 0; i < WP_PROBE_METHODS; i++)
			selected[i] = true;
		nselected = WP_PROBE_METHODS;
	}
	else
	{
		ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
		Datum	   *elems;
		bool	   *enulls;
		int			nelems;

		deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT,
						  &elems, &enulls, &nelems);
		for (i = 0; i < nelems; i++)
		{
			char	   *name;
			int			m;

			if (enulls[i])
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("probe method names must not be null")));
			name = TextDatumGetCString(elems[i]);
			m = wp_probe_method_index(name);
			if (m < 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("unrecognized wal_sync_method \"%s\"", name),
						 errhint("Valid methods are fsync, fsync_writethrough, fdatasync, open_sync and open_datasync.")));
			if (!selected[m])
				nselected++;
			selected[m] = true;
		}
		if (nselected == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("no wal_sync_method to probe"),
					 errhint("Pass NULL to probe every method.")));
	}

	nrows = wp_probe_run(seconds, selected, rows, wal_dir);

	/* Form the result rows; no lock is held. */
	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < nrows; i++)
	{
		Datum		values[WP_PROBE_COLS];
		bool		nulls[WP_PROBE_COLS];
		WpProbeRow *r = &rows[i];

		memset(nulls, 0, sizeof(nulls));
		values[0] = CStringGetTextDatum(r->method);
		if (r->writes > 0)
			values[1] = Int32GetDatum(r->writes);
		else
			nulls[1] = true;
		if (r->measured)
		{
			values[2] = Float8GetDatum(r->mean_us);
			values[3] = Float8GetDatum(r->p50_us);
			values[4] = Float8GetDatum(r->p99_us);
			values[5] = Float8GetDatum(r->ops_per_sec);
		}
		else
			nulls[2] = nulls[3] = nulls[4] = nulls[5] = true;
		values[6] = CStringGetTextDatum(wal_dir);
		if (r->note[0] != '\0')
			values[7] = CStringGetTextDatum(r->note);
		else
			nulls[7] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(walpilot_storage_data);

#define WP_STORAGE_COLS 12

static void
put_storage_row(ReturnSetInfo *rsinfo, const char *kind, const char *method,
				int writes, int requested_us, int64 samples,
				bool have_values, double mean, double p50, double p99,
				double ops_per_sec, TimestampTz at, const char *wal_dir,
				const char *note)
{
	Datum		values[WP_STORAGE_COLS];
	bool		nulls[WP_STORAGE_COLS];

	memset(nulls, 0, sizeof(nulls));
	values[0] = CStringGetTextDatum(kind);
	if (method && method[0])
		values[1] = CStringGetTextDatum(method);
	else
		nulls[1] = true;
	if (writes > 0)
		values[2] = Int32GetDatum(writes);
	else
		nulls[2] = true;
	if (requested_us > 0)
		values[3] = Int32GetDatum(requested_us);
	else
		nulls[3] = true;
	if (samples > 0)
		values[4] = Int64GetDatum(samples);
	else
		nulls[4] = true;
	if (have_values)
	{
		values[5] = Float8GetDatum(mean);
		values[6] = Float8GetDatum(p50);
		values[7] = Float8GetDatum(p99);
	}
	else
		nulls[5] = nulls[6] = nulls[7] = true;
	if (have_values && ops_per_sec > 0)
		values[8] = Float8GetDatum(ops_per_sec);
	else
		nulls[8] = true;
	if (at != 0)
		values[9] = TimestampTzGetDatum(at);
	else
		nulls[9] = true;
	if (wal_dir && wal_dir[0])
		values[10] = CStringGetTextDatum(wal_dir);
	else
		nulls[10] = true;
	if (note && note[0])
		values[11] = CStringGetTextDatum(note);
	else
		nulls[11] = true;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * walpilot_storage_data
 *		The rows of walpilot.storage: the flush-latency estimate, the last
 *		probe (and periodic probe) rows, and the sleep overshoot per delay.
 *		Copies the region under the lock, then forms rows.
 */
Datum
walpilot_storage_data(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WpProbeSnapshot *copy;
	WpFlushEstimate est;
	char		wal_dir[MAXPGPATH];
	char		note[WP_PROBE_NOTE_LEN * 2];
	int			i;

	wp_require_shared_state();
	InitMaterializedSRF(fcinfo, 0);

	copy = palloc(sizeof(WpProbeSnapshot));
	wp_probe_snapshot(copy);
	wp_flush_estimate_snapshot(&est);

	if (copy->wal_dir[0] != '\0')
		strlcpy(wal_dir, copy->wal_dir, MAXPGPATH);
	else
		wp_probe_resolve_wal_dir(wal_dir);

	/* the current flush-latency estimate */
	if (est.at != 0)
		put_storage_row(rsinfo, "flush_estimate", est.source, 0, 0,
						(int64) est.flushes, true, est.us, est.us, est.us, 0,
						est.at, wal_dir, est.note);
	else
	{
		snprintf(note, sizeof(note), "%s",
				 !enableFsync ? "fsync is off: WAL is never flushed" :
				 "no estimate yet: no flushes seen and no probe run");
		put_storage_row(rsinfo, "flush_estimate", NULL, 0, 0, 0, false,
						0, 0, 0, 0, 0, wal_dir, note);
	}

	/* the last walpilot.probe() */
	for (i = 0; i < copy->probe_nrows; i++)
	{
		WpProbeRow *r = &copy->probe_rows[i];

		put_storage_row(rsinfo, "probe", r->method, r->writes, 0, r->ops,
						r->measured, r->mean_us, r->p50_us, r->p99_us,
						r->ops_per_sec, copy->probe_at, wal_dir, r->note);
	}

	/* the last periodic probe */
	if (copy->periodic_at != 0)
	{
		WpProbeRow *r = &copy->periodic_row;

		put_storage_row(rsinfo, "periodic_probe", r->method, r->writes, 0,
						r->ops, r->measured, r->mean_us, r->p50_us,
						r->p99_us, r->ops_per_sec, copy->periodic_at, wal_dir,
						r->note);
	}

	/* sleep overshoot */
	if (copy->sleep_at != 0)
	{
		for (i = 0; i < WP_SLEEP_DELAYS; i++)
		{
			WpSleepRow *s = &copy->sleep_rows[i];

			put_storage_row(rsinfo, "sleep", "pg_usleep", 0, s->requested_us,
							s->samples, true, s->mean_over_us, s->p50_over_us,
							s->p99_over_us, 0, copy->sleep_at, NULL,
							"values are the overshoot beyond the requested sleep");
		}
	}
	pfree(copy);
	return (Datum) 0;
}
