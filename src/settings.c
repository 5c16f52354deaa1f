/*-------------------------------------------------------------------------
 *
 * settings.c
 *		Applying, recording and reverting the settings walpilot manages.
 *
 * Session knobs (commit_delay, commit_siblings) are never written to a
 * file.  The worker publishes a target in shared memory; every backend
 * applies it itself, at the PRE_COMMIT of its next transaction, with
 * source PGC_S_DYNAMIC_DEFAULT.  That source ranks below everything a DBA
 * can set (postgresql.conf, ALTER SYSTEM, ALTER DATABASE/ROLE, SET), so a
 * pinned value wins and is left alone, RESET returns to walpilot's value
 * when nothing pins it, and SHOW tells the truth in every session.  To put
 * the configured value back, backends apply the server's boot value with
 * the same source: a file value, if any, still outranks it.  Nothing
 * survives a restart, so a restart always starts from the DBA's settings.
 *
 * The target is published with a sequence counter (odd while the worker
 * writes), so a backend reads a consistent pair without any lock; the
 * writers serialise on the walpilot lock.
 *
 * Every change, trial and revert is a row of the decision log, a fixed
 * ring in shared memory under the walpilot lock, and a LOG line.
 *
 * IDENTIFICATION
 *	  src/settings.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"

#include "walpilot.h"

#define WP_DECISIONS			256

typedef struct WpSettingsShared
{
	/* seqlock-published target; writers hold wp_shared->lock */
	pg_atomic_uint32 generation;
	bool		managed;		/* false: put configured values back */
	int32		target[WP_NUM_KNOBS];

	/* configured (DBA) values as the worker sees them; protected by lock */
	int32		configured[WP_NUM_KNOBS];
	bool		configured_pinned[WP_NUM_KNOBS];	/* set in a config file */

	/* decision log ring; protected by lock */
	uint64		decisions_total;
	WpDecision	decisions[WP_DECISIONS];
} WpSettingsShared;

static WpSettingsShared *settings = NULL;

static const char *const knob_names[WP_NUM_KNOBS] = {
	"commit_delay",
	"commit_siblings"
};

/* Backend-local: generation last applied, and whether we set anything. */
static uint32 applied_generation = 0;
static bool applied_managed = false;

Size
wp_settings_shmem_size(void)
{
	return MAXALIGN(sizeof(WpSettingsShared));
}

void
wp_settings_shmem_init(void)
{
	bool		found;
	int			i;

	settings = ShmemInitStruct("walpilot settings", sizeof(WpSettingsShared),
							   &found);
	if (!found)
	{
		memset(settings, 0, sizeof(WpSettingsShared));
		pg_atomic_init_u32(&settings->generation, 2);
		settings->managed = false;
		for (i = 0; i < WP_NUM_KNOBS; i++)
			settings->target[i] = settings->configured[i] =
				wp_settings_boot_value(i);
	}
}

const char *
wp_settings_knob_name(WpKnob knob)
{
	return knob_names[knob];
}

/*
 * find_int_guc
 *		The server's descriptor of an integer GUC, cached per process.
 */
static struct config_int *
find_int_guc(WpKnob knob)
{
	static struct config_int *cache[WP_NUM_KNOBS];
	struct config_generic **vars;
	int			n,
				i;

	if (cache[knob] != NULL)
		return cache[knob];
	vars = wp_guc_variables(&n);
	for (i = 0; i < n; i++)
	{
		if (vars[i]->vartype == PGC_INT &&
			strcmp(vars[i]->name, knob_names[knob]) == 0)
		{
			cache[knob] = (struct config_int *) vars[i];
			break;
		}
	}
	return cache[knob];
}

int
wp_settings_boot_value(WpKnob knob)
{
	struct config_int *c = find_int_guc(knob);

	return c ? c->boot_val : 0;
}

/*
 * wp_settings_source
 *		Where this process's value of a knob comes from.
 */
GucSource
wp_settings_source(WpKnob knob)
{
	struct config_int *c = find_int_guc(knob);

	return c ? c->gen.source : PGC_S_DEFAULT;
}

/*
 * wp_settings_current
 *		This process's value of a knob.
 */
int
wp_settings_current(WpKnob knob)
{
	struct config_int *c = find_int_guc(knob);

	return c ? *c->variable : 0;
}

/*
 * wp_settings_publish
 *		Worker or SQL side: make every backend apply these targets
 *		(managed) or put the configured values back (!managed).
 */
void
wp_settings_publish(bool managed, const int32 *targets)
{
	int			i;

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	pg_atomic_fetch_add_u32(&settings->generation, 1);	/* odd: writing */
	pg_write_barrier();
	settings->managed = managed;
	for (i = 0; i < WP_NUM_KNOBS; i++)
		settings->target[i] = managed ? targets[i] : settings->configured[i];
	pg_write_barrier();
	pg_atomic_fetch_add_u32(&settings->generation, 1);	/* even: stable */
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_settings_target
 *		Read the published state (any process).  Returns false while a
 *		writer is busy; the caller tries again later.
 */
bool
wp_settings_target(bool *managed, int32 *targets, uint32 *generation)
{
	uint32		g1,
				g2;
	int			i;

	g1 = pg_atomic_read_u32(&settings->generation);
	if (g1 & 1)
		return false;
	pg_read_barrier();
	*managed = settings->managed;
	for (i = 0; i < WP_NUM_KNOBS; i++)
		targets[i] = settings->target[i];
	pg_read_barrier();
	g2 = pg_atomic_read_u32(&settings->generation);
	if (g1 != g2)
		return false;
	if (generation)
		*generation = g1;
	return true;
}

/*
 * wp_settings_apply_in_backend
 *		Called at PRE_COMMIT of every transaction: apply a newly published
 *		target with PGC_S_DYNAMIC_DEFAULT.
 *
 * Cheap when nothing changed (one atomic read).  set_config_option with
 * elevel WARNING cannot throw for these integer settings without hooks;
 * a value the DBA pinned outranks ours and is left as it is.
 */
void
wp_settings_apply_in_backend(void)
{
	bool		managed;
	int32		targets[WP_NUM_KNOBS];
	uint32		generation;
	int			i;

	if (pg_atomic_read_u32(&settings->generation) == applied_generation)
		return;
	if (!wp_settings_target(&managed, targets, &generation))
		return;

	/* Nothing to put back in a backend that never applied a target. */
	if (managed || applied_managed)
	{
		for (i = 0; i < WP_NUM_KNOBS; i++)
		{
			char		buf[16];
			int			value = managed ? targets[i] : wp_settings_boot_value(i);

			/*
			 * commit_siblings only acts through commit_delay: a session
			 * that pins its own commit_delay keeps its own siblings too,
			 * or the pilot's gather value (0) would make that session's
			 * delay sleep even for a lone commit.
			 */
			if (managed && i == WP_KNOB_COMMIT_SIBLINGS &&
				wp_settings_source(WP_KNOB_COMMIT_DELAY) > PGC_S_DYNAMIC_DEFAULT)
				value = wp_settings_boot_value(i);

			snprintf(buf, sizeof(buf), "%d", value);
			(void) set_config_option(knob_names[i], buf,
									 PGC_SUSET, PGC_S_DYNAMIC_DEFAULT,
									 GUC_ACTION_SET, true, WARNING, false);
		}
	}
	applied_managed = managed;
	applied_generation = generation;
}

/*
 * wp_settings_note_configured
 *		Worker side, at start and after each reload: remember the DBA's
 *		cluster-wide values (the worker never applies targets to itself,
 *		so its own values are the configured ones).
 */
void
wp_settings_note_configured(void)
{
	int			i;

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	for (i = 0; i < WP_NUM_KNOBS; i++)
	{
		settings->configured[i] = wp_settings_current(i);
		settings->configured_pinned[i] =
			wp_settings_source(i) > PGC_S_DYNAMIC_DEFAULT;
	}
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_settings_configured
 *		The DBA's cluster-wide value of a knob, and whether a config file
 *		sets it (then walpilot leaves it alone).
 */
int
wp_settings_configured(WpKnob knob, bool *pinned)
{
	int			v;

	LWLockAcquire(wp_shared->lock, LW_SHARED);
	v = settings->configured[knob];
	if (pinned)
		*pinned = settings->configured_pinned[knob];
	LWLockRelease(wp_shared->lock);
	return v;
}

/*
 * wp_decision_log
 *		Append a decision (and say it in the server log); returns its id
 *		for wp_decision_set_outcome.  evidence is a JSON object text.
 */
uint64
wp_decision_log(const char *setting, const char *old_value,
				const char *new_value, const char *reason,
				const char *evidence)
{
	WpDecision *d;
	uint64		id;

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	id = settings->decisions_total++;
	d = &settings->decisions[id % WP_DECISIONS];
	memset(d, 0, sizeof(WpDecision));
	d->id = id;
	d->decided_at = GetCurrentTimestamp();
	strlcpy(d->setting, setting, sizeof(d->setting));
	strlcpy(d->old_value, old_value, sizeof(d->old_value));
	strlcpy(d->new_value, new_value, sizeof(d->new_value));
	strlcpy(d->reason, reason, sizeof(d->reason));
	strlcpy(d->evidence, evidence ? evidence : "{}", sizeof(d->evidence));
	LWLockRelease(wp_shared->lock);

	ereport(LOG,
			(errmsg("walpilot decision on %s: \"%s\" -> \"%s\"",
					setting, old_value, new_value),
			 errdetail_internal("%s", reason)));
	return id;
}

/*
 * wp_decision_set_outcome
 *		Record what a decision turned out to do, if it is still in the ring.
 */
void
wp_decision_set_outcome(uint64 id, const char *outcome)
{
	WpDecision *d;

	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	d = &settings->decisions[id % WP_DECISIONS];
	if (d->id == id && id < settings->decisions_total)
		strlcpy(d->outcome, outcome, sizeof(d->outcome));
	LWLockRelease(wp_shared->lock);
}

/*
 * wp_decisions_copy
 *		Copy the decision log, oldest first, into a palloc'd array.
 */
int
wp_decisions_copy(WpDecision **out)
{
	uint64		total,
				first,
				id;
	int			n = 0;
	WpDecision *buf = palloc(sizeof(WpDecision) * WP_DECISIONS);

	LWLockAcquire(wp_shared->lock, LW_SHARED);
	total = settings->decisions_total;
	first = total > WP_DECISIONS ? total - WP_DECISIONS : 0;
	for (id = first; id < total; id++)
		buf[n++] = settings->decisions[id % WP_DECISIONS];
	LWLockRelease(wp_shared->lock);
	*out = buf;
	return n;
}

/*
 * wp_settings_delay_managed
 *		Does walpilot currently publish a commit_delay above 0?  (The
 *		sampler's commit_delay inference: the worker's own commit_delay is
 *		the configured one, not what backends run with.)
 */
bool
wp_settings_delay_managed(void)
{
	bool		managed;
	int32		targets[WP_NUM_KNOBS];

	return wp_settings_target(&managed, targets, NULL) && managed &&
		targets[WP_KNOB_COMMIT_DELAY] > 0;
}
