/*-------------------------------------------------------------------------
 *
 * commit_model.h
 *		A model of the commit path: what grouping the commits into fewer
 *		flushes would give this load, from what the instruments measured.
 *
 * IDENTIFICATION
 *	  src/pilots/commit_model.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_COMMIT_MODEL_H
#define WALPILOT_COMMIT_MODEL_H

#include "evidence.h"

/* seconds of the timeline the model reads */
#define WP_MODEL_WINDOW_S		60
/* fewest flush-bound seconds a prediction rests on */
#define WP_MODEL_MIN_SECONDS	5
/* a predicted gain from this ratio on is worth tune mode */
#define WP_MODEL_WORTH_GAIN		1.10

typedef enum WpModelVerdict
{
	WP_MODEL_NO_EVIDENCE,		/* not flush-bound, or too few seconds */
	WP_MODEL_OUT_OF_SCOPE,		/* flush-bound, but what it leaves out rules */
	WP_MODEL_NOTHING_TO_WIN,	/* predicted gain under WP_MODEL_WORTH_GAIN */
	WP_MODEL_GAIN				/* predicted gain WP_MODEL_WORTH_GAIN or more */
} WpModelVerdict;

typedef struct WpCommitModel
{
	WpModelVerdict verdict;
	char		why[256];		/* the verdict in words */

	/* inputs: the flush-bound seconds of the window */
	int			seconds;		/* flush-bound seconds used */
	int			window_seconds; /* seconds with samples in the window */
	double		commits_per_s;	/* C */
	double		flush_us;		/* F */
	char		flush_source[32];
	double		committers;		/* G */
	double		commit_mean_us; /* insert to flush return, mean */
	double		commit_p99_us;	/* median of the seconds' p99 */
	double		commits_per_flush;
	double		outside_us;		/* T = G / C - commit_mean_us */
	double		cpu_share;		/* of the committers' active samples */
	double		wal_wait_share;
	double		other_wait_share;	/* neither CPU nor a WAL wait */
	double		standby_share;	/* of the commit time */

	double		outside_cv;		/* the gaps' coefficient of variation */
	bool		outside_measured;	/* ... measured (else 1, exponential) */

	/* prediction, with every commit of a group in one flush */
	double		gather_cap_us;	/* the longest the gather waits */
	bool		capped;			/* the cap, not the last arrival, closes
								 * the group */
	double		arrival_spread_us;	/* the group's wait for its last one */
	double		predicted_commits_per_s;
	double		predicted_gain; /* over commits_per_s */
	double		predicted_p99_us;
	double		flush_cycle_limit;	/* G / F: every committer in every flush */
} WpCommitModel;

extern int	wp_gather_cap_us(double flush_us);
extern void wp_commit_model(WpCommitModel *m);
extern const char *wp_commit_model_verdict_name(WpModelVerdict v);
extern void wp_commit_model_evidence(const WpCommitModel *m, WpEvidence *e);

#endif							/* WALPILOT_COMMIT_MODEL_H */
