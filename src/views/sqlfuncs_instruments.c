/*-------------------------------------------------------------------------
 *
 * sqlfuncs_instruments.c
 *		SQL-callable functions behind walpilot.wait_profile,
 *		walpilot.commit_latency, walpilot.timeline,
 *		walpilot.commit_groups and walpilot.commit_phases.
 *
 * Same rules as sqlfuncs.c: copy from shared memory (under the walpilot
 * lock only for multi-word state), release, then form tuples.
 *
 * IDENTIFICATION
 *	  src/views/sqlfuncs_instruments.c
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

PG_FUNCTION_INFO_V1(walpilot_wait_profile_data);
PG_FUNCTION_INFO_V1(walpilot_commit_latency_data);
PG_FUNCTION_INFO_V1(walpilot_timeline_data);
PG_FUNCTION_INFO_V1(walpilot_commit_groups_data);
PG_FUNCTION_INFO_V1(walpilot_commit_phases_data);

#define WP_PROFILE_COLS		6
#define WP_LATENCY_COLS		3
/*
 * 0.1 declared the first 28 timeline columns; 0.2 adds the group reasons
 * and the standby wait share.
 */
#define WP_TIMELINE_COLS_0_1	28
#define WP_TIMELINE_COLS	(WP_TIMELINE_COLS_0_1 + WP_GROUP_NUM_REASONS + 1)
#define WP_GROUPS_COLS		5
#define WP_PHASES_COLS		5

/* qsort: most samples first, then by name for a stable order */
static int
profile_row_cmp(const void *a, const void *b)
{
	const WpProfileRow *x = a;
	const WpProfileRow *y = b;
	int			c;

	if (x->samples != y->samples)
		return (x->samples > y->samples) ? -1 : 1;
	c = strcmp(x->backend_type, y->backend_type);
	if (c != 0)
		return c;
	return (x->wait_event_info < y->wait_event_info) ? -1 :
		(x->wait_event_info > y->wait_event_info) ? 1 : 0;
}

/*
 * walpilot_wait_profile_data
 *		Cumulative samples per (backend type, wait event) since reset.
 *		seconds = samples x the sample interval in force when each was
 *		taken; pct_of_active is the share among samples that are not idle
 *		waits (Activity, Client), NULL for idle rows.
 */
Datum
walpilot_wait_profile_data(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WpProfileRow *rows;
	int			n,
				i;
	uint64		active_total = 0;

	wp_require_shared_state();
	wp_init_materialized_srf(fcinfo);

	n = wp_sampler_profile_snapshot(&rows);
	qsort(rows, n, sizeof(WpProfileRow), profile_row_cmp);
	for (i = 0; i < n; i++)
		if (!wp_wait_event_is_idle(rows[i].wait_event_info))
			active_total += rows[i].samples;

	for (i = 0; i < n; i++)
	{
		Datum		values[WP_PROFILE_COLS];
		bool		nulls[WP_PROFILE_COLS];
		const char *type;
		const char *event;

		memset(nulls, 0, sizeof(nulls));
		wp_wait_event_names(rows[i].wait_event_info, &type, &event);
		values[0] = CStringGetTextDatum(rows[i].backend_type);
		values[1] = CStringGetTextDatum(type);
		values[2] = CStringGetTextDatum(event);
		values[3] = Int64GetDatum((int64) rows[i].samples);
		values[4] = Float8GetDatum((double) rows[i].time_us / 1000000.0);
		if (wp_wait_event_is_idle(rows[i].wait_event_info) || active_total == 0)
			nulls[5] = true;
		else
			values[5] = Float8GetDatum(100.0 * (double) rows[i].samples /
									   (double) active_total);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * walpilot_commit_latency_data
 *		The durable-commit histogram since reset, one row per bucket
 *		(empty buckets included, so the shape never changes).
 */
Datum
walpilot_commit_latency_data(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WpCommitTotals *t;
	int			b;

	wp_require_shared_state();
	wp_init_materialized_srf(fcinfo);

	t = palloc(sizeof(WpCommitTotals));
	wp_commit_totals(t);
	for (b = 0; b < WP_HIST_BUCKETS; b++)
	{
		Datum		values[WP_LATENCY_COLS];
		bool		nulls[WP_LATENCY_COLS];
		int64		upper = wp_hist_upper_us(b);

		memset(nulls, 0, sizeof(nulls));
		values[0] = Int64GetDatum((int64) wp_hist_lower_us(b));
		if (upper < 0)
			nulls[1] = true;
		else
			values[1] = Int64GetDatum(upper);
		values[2] = Int64GetDatum((int64) t->hist[b]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* an average over a second's samples, NULL when it had none */
static void
put_avg(Datum *values, bool *nulls, int col, uint32 sum, int32 samples)
{
	if (samples <= 0)
		nulls[col] = true;
	else
		values[col] = Float8GetDatum((double) sum / (double) samples);
}

/*
 * walpilot_timeline_data
 *		One row per second, oldest first.  The copy takes no lock (the
 *		timeline is a seqlocked ring): the worker and the readers never
 *		wait on each other, even for a full 86,400-second ring.
 */
Datum
walpilot_timeline_data(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WpSecond   *secs;
	int			n,
				i;
	bool		leader_known = wp_commit_leader_known();
	int			ncols;

	wp_require_shared_state();
	wp_init_materialized_srf(fcinfo);
	ncols = rsinfo->setDesc->natts;
	if (ncols != WP_TIMELINE_COLS && ncols != WP_TIMELINE_COLS_0_1)
		elog(ERROR, "walpilot_timeline_data: expected %d columns, got %d",
			 WP_TIMELINE_COLS, ncols);

	secs = palloc(sizeof(WpSecond) * wp_history_size_s);
	n = wp_timeline_last(0, secs);

	for (i = 0; i < n; i++)
	{
		WpSecond   *s = &secs[i];
		Datum		values[WP_TIMELINE_COLS];
		bool		nulls[WP_TIMELINE_COLS];
		int			c = 0;
		int			r;

		memset(nulls, 0, sizeof(nulls));
		values[c++] = TimestampTzGetDatum(s->ts);
		values[c++] = Int32GetDatum(s->samples);
		values[c++] = Int32GetDatum(s->missed_ticks);
		put_avg(values, nulls, c++, s->active_sum, s->samples);
		put_avg(values, nulls, c++, s->cpu_sum, s->samples);
		values[c++] = Int64GetDatum((int64) s->commits);
		values[c++] = Int64GetDatum((int64) s->async_commits);
		if (s->commits == 0)
		{
			nulls[c++] = true;
			nulls[c++] = true;
			nulls[c++] = true;
			nulls[c++] = true;
		}
		else
		{
			values[c++] = Int64GetDatum((int64) s->commit_p50_us);
			values[c++] = Int64GetDatum((int64) s->commit_p95_us);
			values[c++] = Int64GetDatum((int64) s->commit_p99_us);
			values[c++] = Int64GetDatum((int64) s->commit_max_us);
		}
		put_avg(values, nulls, c++, s->wal_write_lock_sum, s->samples);
		put_avg(values, nulls, c++, s->wal_insert_lock_sum, s->samples);
		put_avg(values, nulls, c++, s->wal_sync_sum, s->samples);
		put_avg(values, nulls, c++, s->wal_write_sum, s->samples);
		put_avg(values, nulls, c++, s->commit_delay_sum, s->samples);
		if (leader_known)
			values[c++] = Int64GetDatum((int64) s->commit_flushes);
		else
			nulls[c++] = true;
		if (leader_known && s->commit_flushes > 0)
			values[c++] = Float8GetDatum((double) s->commits /
										 (double) s->commit_flushes);
		else
			nulls[c++] = true;
		values[c++] = Int64GetDatum((int64) s->wal_bytes);
		values[c++] = Int64GetDatum((int64) s->wal_records);
		values[c++] = Int64GetDatum((int64) s->wal_fpi);
		values[c++] = Int64GetDatum((int64) s->wal_buffers_full);
		values[c++] = Int64GetDatum((int64) s->wal_writes);
		values[c++] = Int64GetDatum((int64) s->wal_syncs);
		values[c++] = Int64GetDatum((int64) s->wal_write_time_us);
		values[c++] = Int64GetDatum((int64) s->wal_sync_time_us);
		put_avg(values, nulls, c++, s->checkpointer_busy, s->samples);
		values[c++] = BoolGetDatum(s->checkpoint_started);
		for (r = 0; r < WP_GROUP_NUM_REASONS && c < ncols; r++)
		{
			if (leader_known)
				values[c++] = Int64GetDatum((int64) s->groups[r]);
			else
				nulls[c++] = true;
		}
		if (c < ncols)
		{
			if (s->commit_time_us > 0)
				values[c++] = Float8GetDatum((double) s->standby_wait_us /
											 (double) s->commit_time_us);
			else
				nulls[c++] = true;
		}
		Assert(c == ncols);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * walpilot_commit_groups_data
 *		One row per reason a commit-led flush closed its group, since reset,
 *		then the commits that led no flush: followers (also counted in
 *		their group's row) and asynchronous commits.  Counters are copied
 *		first; rows are formed with no lock held.
 */
Datum
walpilot_commit_groups_data(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WpGroupTotals g;
	WpCommitTotals *t;
	int			r;

	wp_require_shared_state();
	wp_init_materialized_srf(fcinfo);

	wp_commit_groups_totals(&g);
	t = palloc(sizeof(WpCommitTotals));
	wp_commit_totals(t);

	for (r = 0; r < WP_GROUP_NUM_REASONS; r++)
	{
		Datum		values[WP_GROUPS_COLS];
		bool		nulls[WP_GROUPS_COLS];

		memset(nulls, 0, sizeof(nulls));
		values[0] = CStringGetTextDatum(wp_commit_group_reason_name(r));
		values[1] = Int64GetDatum((int64) g.groups[r]);
		values[2] = Int64GetDatum((int64) g.commits[r]);
		if (g.groups[r] > 0)
		{
			values[3] = Float8GetDatum((double) g.commits[r] /
									   (double) g.groups[r]);
			values[4] = Float8GetDatum((double) g.wait_us[r] /
									   (double) g.groups[r]);
		}
		else
		{
			nulls[3] = true;
			nulls[4] = true;
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	/* commits that closed no group: no groups, no size, no wait */
	{
		const char *names[2] = {"follower", "non_durable"};
		uint64		counts[2];
		int			k;

		counts[0] = t->durable > t->led_flush ? t->durable - t->led_flush : 0;
		counts[1] = t->async;
		for (k = 0; k < 2; k++)
		{
			Datum		values[WP_GROUPS_COLS];
			bool		nulls[WP_GROUPS_COLS];

			memset(nulls, 0, sizeof(nulls));
			values[0] = CStringGetTextDatum(names[k]);
			values[1] = Int64GetDatum(0);
			values[2] = Int64GetDatum((int64) counts[k]);
			nulls[3] = true;
			nulls[4] = true;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
								 nulls);
		}
	}
	pfree(t);
	return (Datum) 0;
}

/*
 * walpilot_commit_phases_data
 *		One row per phase of a durable commit (commit_delay, wal_flush,
 *		standby_wait), since reset.  A phase no commit went through has 0
 *		commits and NULL percentiles.  Counters are copied first; rows are
 *		formed with no lock held.
 */
Datum
walpilot_commit_phases_data(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WpPhaseTotals *t;
	int			p;

	wp_require_shared_state();
	wp_init_materialized_srf(fcinfo);

	t = palloc(sizeof(WpPhaseTotals));
	wp_commit_phases_totals(t);
	for (p = 0; p < WP_PHASE_COUNT; p++)
	{
		Datum		values[WP_PHASES_COLS];
		bool		nulls[WP_PHASES_COLS];

		memset(nulls, 0, sizeof(nulls));
		values[0] = CStringGetTextDatum(wp_commit_phase_name(p));
		values[1] = Int64GetDatum((int64) t->commits[p]);
		values[2] = Int64GetDatum((int64) t->sum_us[p]);
		if (t->commits[p] == 0)
		{
			nulls[3] = true;
			nulls[4] = true;
		}
		else
		{
			values[3] = Int64GetDatum((int64)
									  wp_hist_percentile(t->hist[p], t->commits[p], 0.50, 0));
			values[4] = Int64GetDatum((int64)
									  wp_hist_percentile(t->hist[p], t->commits[p], 0.99, 0));
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
