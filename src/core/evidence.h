/*-------------------------------------------------------------------------
 *
 * evidence.h
 *		Evidence objects: the JSON behind decision rows and recommendations.
 *
 * Every number walpilot acts or advises on is shown with its name in a
 * JSON object (walpilot.decisions.evidence, walpilot.recommendations.
 * evidence).  Both are built here, with the server's own jsonb code, so
 * keys are escaped and numbers are valid JSON (NaN and infinities become
 * null) without any text formatting of ours.
 *
 * IDENTIFICATION
 *	  src/core/evidence.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_EVIDENCE_H
#define WALPILOT_EVIDENCE_H

#include "compat.h"

typedef struct WpEvidence
{
	WpJsonbBuild state;
} WpEvidence;

extern void wp_ev_begin(WpEvidence *e);
extern void wp_ev_num(WpEvidence *e, const char *key, double x);
extern void wp_ev_str(WpEvidence *e, const char *key, const char *s);
extern void wp_ev_bool(WpEvidence *e, const char *key, bool b);
extern Jsonb *wp_ev_end_jsonb(WpEvidence *e);
extern char *wp_ev_end(WpEvidence *e);

#endif							/* WALPILOT_EVIDENCE_H */
