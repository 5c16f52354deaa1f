/*-------------------------------------------------------------------------
 *
 * advice.h
 *		The recommendations behind walpilot.recommendations and report().
 *
 * Advice reads the instruments, the settings and the pilots; it never
 * changes a setting.  Rows are computed on read; views form the SQL rows.
 *
 * IDENTIFICATION
 *	  src/advice/advice.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_ADVICE_H
#define WALPILOT_ADVICE_H

#include "nodes/pg_list.h"

#include "pilots.h"

/* one recommendation */
typedef struct WpAdviceRow
{
	const char *setting;
	char		current[64];
	char		recommended[64];
	bool		restart;		/* takes a restart, not a reload */
	double		confidence;		/* 0 .. 1 */
	WpEvidence	evidence;
} WpAdviceRow;

extern List *wp_advice_rows(void);
extern char *wp_advice_apply_sql(const WpAdviceRow *r);

#endif							/* WALPILOT_ADVICE_H */
