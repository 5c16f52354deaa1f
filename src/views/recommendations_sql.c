/*-------------------------------------------------------------------------
 *
 * recommendations_sql.c
 *		walpilot.recommendations: advice's rows as SQL rows.
 *
 * IDENTIFICATION
 *	  src/views/recommendations_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/tuplestore.h"

#include "commit_model.h"
#include "views.h"

PG_FUNCTION_INFO_V1(walpilot_recommendations_data);

#define WP_ADVICE_COLS			7

/*
 * walpilot_recommendations_data
 *		The rows of walpilot.recommendations.
 */
Datum
walpilot_recommendations_data(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *rows;
	ListCell   *lc;

	wp_require_shared_state();
	rows = wp_advice_rows();

	wp_init_materialized_srf(fcinfo);
	foreach(lc, rows)
	{
		WpAdviceRow *r = lfirst(lc);
		Datum		values[WP_ADVICE_COLS];
		bool		nulls[WP_ADVICE_COLS];

		memset(nulls, 0, sizeof(nulls));
		values[0] = CStringGetTextDatum(r->setting);
		values[1] = CStringGetTextDatum(r->current);
		values[2] = CStringGetTextDatum(r->recommended);
		values[3] = BoolGetDatum(r->restart);
		values[4] = Float8GetDatum(round(r->confidence * 100.0) / 100.0);
		values[5] = JsonbPGetDatum(wp_ev_end_jsonb(&r->evidence));
		values[6] = CStringGetTextDatum(wp_advice_apply_sql(r));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(walpilot_prediction);

/*
 * walpilot_prediction
 *		The commit-path model's verdict, prediction and inputs as one JSON
 *		object (commit_model.c): what grouping the commits would give the
 *		load of the last minute.
 */
Datum
walpilot_prediction(PG_FUNCTION_ARGS)
{
	WpCommitModel m;
	WpEvidence	e;

	wp_require_shared_state();
	wp_commit_model(&m);
	wp_ev_begin(&e);
	wp_commit_model_evidence(&m, &e);
	PG_RETURN_JSONB_P(wp_ev_end_jsonb(&e));
}
