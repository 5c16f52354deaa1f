/*-------------------------------------------------------------------------
 *
 * checkpoint_analysis.c
 *		What the recent checkpoints say about max_wal_size.
 *
 * walpilot.recommendations (advice) and the max_wal_size pilot read the
 * same kind of checkpoint records and call the one rule below, so it lives
 * with the instruments both may call: what the view recommends is exactly
 * what the pilot would do.
 *
 * IDENTIFICATION
 *	  src/instruments/checkpoint_analysis.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xlog.h"
#include "postmaster/bgwriter.h"
#include "utils/guc.h"

#include "instruments.h"

/* the largest max_wal_size the rule recommends */
#define WP_CKPT_MAX_WAL_MB		(64 * 1024)

/*
 * A checkpoint triggered by WAL volume starts when the WAL since the last
 * redo pointer reaches max_wal_size / (1 + checkpoint_completion_target)
 * (the server's CheckPointSegments).  Evidence: WAL-triggered checkpoints
 * that started at about the current trigger distance (so the current
 * setting triggered them; after a raise the old ones stop counting), and
 * how they compare with timed ones.  Recommended: the size at which the
 * measured WAL rate reaches the trigger only after checkpoint_timeout.
 * ck[] is in start order.  walpilot.recommendations and the
 * max_wal_size pilot both call this: what the view recommends is exactly
 * what the pilot would do.
 */
bool
wp_ckpt_max_wal_size(const WpCheckpointRecord *ck, int nck,
					   WpWalSizeAnalysis *out)
{
	double		trigger = (double) max_wal_size_mb * 1024 * 1024 /
		(1.0 + CheckPointCompletionTarget);
	int			n_wal = 0,
				n_timed = 0,
				n_pairs = 0;
	double		wal_sum = 0,
				secs_sum = 0,
				dist_sum = 0;
	double		rate,
				needed_mb;
	int64		rec_mb;
	int			i;

	for (i = 0; i < nck; i++)
	{
		const WpCheckpointRecord *c = &ck[i];
		bool		by_wal;

		by_wal = strcmp(c->reason, "wal") == 0 ||
			(strcmp(c->reason, "requested") == 0 && !log_checkpoints &&
			 c->wal_bytes >= 0.9 * trigger);
		if (strcmp(c->reason, "time") == 0)
			n_timed++;
		if (!by_wal || c->wal_bytes < 0.75 * trigger)
			continue;
		n_wal++;
		dist_sum += c->wal_bytes;
		/* the rate: WAL since the previous checkpoint over its interval */
		if (i > 0 && c->started > ck[i - 1].started)
		{
			wal_sum += c->wal_bytes;
			secs_sum += c->started - ck[i - 1].started;
			n_pairs++;
		}
	}
	if (n_wal < 2 || n_wal < n_timed || secs_sum <= 0)
		return false;

	rate = wal_sum / secs_sum;
	needed_mb = rate * CheckPointTimeout * (1.0 + CheckPointCompletionTarget) *
		1.1 / (1024.0 * 1024.0);
	/* at least double: each step must move the trigger well away */
	needed_mb = Max(needed_mb, 2.0 * max_wal_size_mb);
	if (needed_mb <= 1024)
		rec_mb = wp_pow2_at_least(needed_mb);
	else
		rec_mb = (int64) ceil(needed_mb / 1024.0) * 1024;
	rec_mb = Min(rec_mb, (int64) WP_CKPT_MAX_WAL_MB);
	if (rec_mb <= max_wal_size_mb)
		return false;

	out->recommended_mb = rec_mb;
	out->wal_checkpoints = n_wal;
	out->timed_checkpoints = n_timed;
	out->trigger_bytes = trigger;
	out->mean_distance_bytes = dist_sum / n_wal;
	out->wal_bytes_per_s = rate;
	out->seconds_between = secs_sum / Max(1, n_pairs);
	out->confidence = ((double) n_wal / (n_wal + n_timed)) *
		wp_clamp01(n_wal / 4.0);
	return true;
}

/* the measured numbers of the rule (the row adds how they are used) */
void
wp_ckpt_max_wal_size_evidence(const WpWalSizeAnalysis *a, WpEvidence *e)
{
	wp_ev_num(e, "wal_checkpoints", a->wal_checkpoints);
	wp_ev_num(e, "timed_checkpoints", a->timed_checkpoints);
	wp_ev_num(e, "window_s", WP_CKPT_WINDOW_S);
	wp_ev_num(e, "trigger_distance_bytes", a->trigger_bytes);
	wp_ev_num(e, "mean_distance_bytes", a->mean_distance_bytes);
	wp_ev_num(e, "wal_bytes_per_s", a->wal_bytes_per_s);
	wp_ev_num(e, "checkpoint_timeout_s", CheckPointTimeout);
	wp_ev_num(e, "seconds_between_checkpoints", a->seconds_between);
}
