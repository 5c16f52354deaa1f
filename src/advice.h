/*-------------------------------------------------------------------------
 *
 * advice.h
 *		The rules behind walpilot.recommendations that a pilot also acts on.
 *
 * walpilot.recommendations computes every rule on read (advice.c).  The
 * max_wal_size rule is also what the worker applies itself when
 * walpilot.tune_max_wal_size is on (pilot_wal_size.c), so both call the
 * one function below on the same kind of checkpoint records: what the
 * view recommends is exactly what the pilot would do.
 *
 * IDENTIFICATION
 *	  src/advice.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_ADVICE_H
#define WALPILOT_ADVICE_H

#include "evidence.h"

/* checkpoint-based rules look at checkpoints started this recently */
#define WP_ADVICE_CKPT_WINDOW_S 3600
#define WP_ADVICE_MAX_CKPTS		64

/* a checkpoint record as the rules read it */
typedef struct WpAdviceCheckpoint
{
	double		started;		/* epoch seconds */
	double		finished;		/* 0 while running */
	char		reason[24];
	double		wal_bytes;		/* < 0: unknown */
	double		write_ms;
	double		sync_ms;
	int			stall_seconds;	/* < 0: unknown */
} WpAdviceCheckpoint;

/* what the max_wal_size rule found */
typedef struct WpWalSizeAdvice
{
	int64		recommended_mb;
	int			wal_checkpoints;
	int			timed_checkpoints;
	double		trigger_bytes;
	double		mean_distance_bytes;
	double		wal_bytes_per_s;
	double		seconds_between;
	double		confidence;
} WpWalSizeAdvice;

extern bool wp_advice_max_wal_size(const WpAdviceCheckpoint *ck, int nck,
								   WpWalSizeAdvice *out);
extern void wp_advice_max_wal_size_evidence(const WpWalSizeAdvice *a,
											WpEvidence *e);

#endif							/* WALPILOT_ADVICE_H */
