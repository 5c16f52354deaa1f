/*-------------------------------------------------------------------------
 *
 * evidence.c
 *		Evidence objects built by the server's jsonb code (evidence.h).
 *
 * Numbers are rounded to three decimals: they are measurements (us, per
 * second, shares), and more digits would only be noise in a row a DBA
 * reads.  Everything is palloc'd in the caller's memory context.
 *
 * IDENTIFICATION
 *	  src/core/evidence.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"

#include "evidence.h"

void
wp_ev_begin(WpEvidence *e)
{
	wp_jsonb_build_init(&e->state);
	(void) wp_jsonb_push(&e->state, WJB_BEGIN_OBJECT, NULL);
}

/*
 * a string as a key or a value, copied: the jsonb build keeps the pointer
 * until the object is finished, and callers pass their stack buffers
 */
static void
push_string(WpEvidence *e, JsonbIteratorToken token, const char *s)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = pstrdup(s);
	v.val.string.len = strlen(s);
	(void) wp_jsonb_push(&e->state, token, &v);
}

/* a number, or null when it is not finite (nothing measured) */
void
wp_ev_num(WpEvidence *e, const char *key, double x)
{
	JsonbValue	v;

	push_string(e, WJB_KEY, key);
	if (isfinite(x))
	{
		v.type = jbvNumeric;
		v.val.numeric = DatumGetNumeric(DirectFunctionCall1(float8_numeric,
															Float8GetDatum(rint(x * 1000.0) / 1000.0)));
	}
	else
		v.type = jbvNull;
	(void) wp_jsonb_push(&e->state, WJB_VALUE, &v);
}

void
wp_ev_str(WpEvidence *e, const char *key, const char *s)
{
	push_string(e, WJB_KEY, key);
	push_string(e, WJB_VALUE, s);
}

void
wp_ev_bool(WpEvidence *e, const char *key, bool b)
{
	JsonbValue	v;

	push_string(e, WJB_KEY, key);
	v.type = jbvBool;
	v.val.boolean = b;
	(void) wp_jsonb_push(&e->state, WJB_VALUE, &v);
}

/* the finished object as a jsonb value (for a SQL column) */
Jsonb *
wp_ev_end_jsonb(WpEvidence *e)
{
	JsonbValue *res = wp_jsonb_push(&e->state, WJB_END_OBJECT, NULL);

	return JsonbValueToJsonb(res);
}

/* the finished object as text (for a decision row) */
char *
wp_ev_end(WpEvidence *e)
{
	Jsonb	   *j = wp_ev_end_jsonb(e);

	return JsonbToCString(NULL, &j->root, VARSIZE(j));
}
