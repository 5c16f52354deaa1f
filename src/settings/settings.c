/*-------------------------------------------------------------------------
 *
 * settings.c
 *		Applying, pinning and reverting the session settings walpilot
 *		manages.
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
 * The settings only apply and report: the pilot that asks for a change
 * writes its decision row (pilots/decision_log.c).
 *
 * IDENTIFICATION
 *	  src/settings/settings.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"

#include "settings.h"


typedef struct WpSettingsShared
{
	/* seqlock-published target; writers hold wp_shared->lock */
	pg_atomic_uint32 generation;
	bool		managed;		/* false: put configured values back */
	int32		target[WP_NUM_KNOBS];

	/* configured (DBA) values as the worker sees them; protected by lock */
	int32		configured[WP_NUM_KNOBS];
	bool		configured_pinned[WP_NUM_KNOBS];	/* set in a config file */

	/* the last committed DROP EXTENSION walpilot; protected by lock */
	TimestampTz drop_at;		/* 0: none since the server started */
	char		drop_database[NAMEDATALEN];
} WpSettingsShared;

static WpSettingsShared *settings = NULL;

static const char *const knob_names[WP_NUM_KNOBS] = {
	"commit_delay",
	"commit_siblings"
};

/* Backend-local: generation last applied, and whether we set anything. */
static uint32 applied_generation = 0;
static bool applied_managed = false;
static bool applied_owned = false;	/* the session owned the pair then */

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

/* The server's descriptors of the knobs, found once per process. */
static struct config_int *knob_guc[WP_NUM_KNOBS];

/*
 * find_int_guc_slow
 *		Look a knob's descriptor up in the GUC table (first use only: the
 *		descriptors of built-in settings never move).
 */
static struct config_int *
find_int_guc_slow(WpKnob knob)
{
	struct config_generic **vars;
	int			n,
				i;

	vars = wp_guc_variables(&n);
	for (i = 0; i < n; i++)
	{
		if (vars[i]->vartype == PGC_INT &&
			strcmp(vars[i]->name, knob_names[knob]) == 0)
		{
			knob_guc[knob] = wp_guc_int_of(vars[i]);
			break;
		}
	}
	return knob_guc[knob];
}

/* inline: the commit path asks for the knobs' sources at every commit */
static inline struct config_int *
find_int_guc(WpKnob knob)
{
	struct config_int *c = knob_guc[knob];

	return likely(c != NULL) ? c : find_int_guc_slow(knob);
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

	return c ? wp_guc_int_gen(c)->source : PGC_S_DEFAULT;
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
 * Ownership of the knob pair.
 *
 * commit_delay and commit_siblings act together (siblings only gates the
 * delay), so they have one owner: whoever sets either of them owns both.
 * In a session where either knob has a source above PGC_S_DYNAMIC_DEFAULT
 * (a config file or ALTER SYSTEM, the command line, ALTER DATABASE/ROLE,
 * PGOPTIONS, SET), walpilot writes neither: the set one stays as the DBA
 * put it, and the other is put back to its configured value (walpilot's
 * own earlier value of it must not be left half a pair: with the pilot's
 * siblings 0 a session's own commit_delay would sleep even for a lone
 * commit; with the DBA's siblings 5 the pilot's gather delay would be
 * skipped).  Cluster-wide, a config-file value of either knob makes the
 * pair the DBA's for every session (wp_settings_configured reports it
 * pinned), so the pilot does not tune at all.
 */
static inline bool
knob_set_by_dba(WpKnob knob)
{
	struct config_int *c = find_int_guc(knob);

	return c != NULL && wp_guc_int_gen(c)->source > PGC_S_DYNAMIC_DEFAULT;
}

static inline bool
pair_owned_by_session(void)
{
	return knob_set_by_dba(WP_KNOB_COMMIT_DELAY) ||
		knob_set_by_dba(WP_KNOB_COMMIT_SIBLINGS);
}

/*
 * wanted_value
 *		The value the applier gives a knob in this session under a target
 *		(managed) or for a put-back (!managed); false when the session's
 *		own value stays.
 */
static bool
wanted_value(WpKnob knob, bool managed, const int32 *targets, int *value)
{
	if (knob_set_by_dba(knob))
		return false;
	if (managed && !pair_owned_by_session())
		*value = targets[knob];
	else
		*value = wp_settings_boot_value(knob);
	return true;
}

/*
 * wp_settings_session_owns_pair
 *		Does this session set commit_delay or commit_siblings itself?
 *		(Then it does not take part in the gather either.)
 */
bool
wp_settings_session_owns_pair(void)
{
	return settings != NULL && pair_owned_by_session();
}

/*
 * wp_settings_apply_in_backend
 *		Commit path, at PRE_COMMIT: apply a newly published target, or a
 *		change of who owns the pair in this session, with source
 *		PGC_S_DYNAMIC_DEFAULT.  Returns false when it could not (a writer
 *		is busy, parallel mode, a refused value): the generation is then
 *		not marked applied, and the next commit tries again.
 *
 * Cheap when nothing changed: one atomic read and two loads of the
 * knobs' sources.  set_config_option with elevel WARNING cannot throw for
 * these integer settings without hooks; it returns 0 when it refuses
 * (in parallel mode it would also warn, so that is checked first), -1
 * when a higher-priority source keeps the value (that is the DBA's, and
 * fine).  Never called by readers: a SQL function may run in parallel
 * mode or in a parallel worker, where nothing can be applied.  Not in
 * walpilot's worker either, whose values are the configured ones.
 */
static pg_noinline bool apply_in_backend_slow(void);

bool
wp_settings_apply_in_backend(void)
{
	if (settings == NULL)
		return false;
	/* every transaction: kept free of the slow path's frame and locals */
	if (likely(pg_atomic_read_u32(&settings->generation) == applied_generation &&
			   pair_owned_by_session() == applied_owned))
		return true;
	return apply_in_backend_slow();
}

/*
 * apply_in_backend_slow
 *		wp_settings_apply_in_backend when a target or the pair's owner
 *		changed since this backend last applied.
 */
static pg_noinline bool
apply_in_backend_slow(void)
{
	bool		owned = pair_owned_by_session();
	bool		managed;
	int32		targets[WP_NUM_KNOBS];
	uint32		generation;
	bool		ok = true;
	int			i;

	if (IsInParallelMode() || IsParallelWorker() ||
		pg_atomic_read_u32(&wp_shared->worker_pid) == (uint32) MyProcPid)
		return false;
	if (!wp_settings_target(&managed, targets, &generation))
		return false;

	/* Nothing to put back in a backend that never applied a target. */
	if (managed || applied_managed)
	{
		for (i = 0; i < WP_NUM_KNOBS; i++)
		{
			char		buf[16];
			int			value;

			if (!wanted_value(i, managed, targets, &value) ||
				value == wp_settings_current(i))
				continue;
			snprintf(buf, sizeof(buf), "%d", value);
			if (set_config_option(knob_names[i], buf,
								  PGC_SUSET, PGC_S_DYNAMIC_DEFAULT,
								  GUC_ACTION_SET, true, WARNING,
								  false) == 0)
				ok = false;
		}
	}
	if (!ok)
		return false;
	applied_managed = managed;
	applied_generation = generation;
	applied_owned = owned;
	return true;
}

/*
 * wp_settings_session_view
 *		For walpilot.settings: the value this session's next commit runs
 *		with (what the applier will have made it by then), and who owns
 *		the knob there: "dba" (the session, its role or database, or the
 *		configuration set this knob or its pair partner), "walpilot" (a
 *		published target is in force), or "default".  Applies nothing.
 */
void
wp_settings_session_view(WpKnob knob, int *effective, const char **owner)
{
	bool		managed = false;
	int32		targets[WP_NUM_KNOBS];
	int			value;

	if (settings == NULL || !wp_settings_target(&managed, targets, NULL))
		managed = false;
	if (!managed && !applied_managed)
		*effective = wp_settings_current(knob);
	else if (wanted_value(knob, managed, targets, &value))
		*effective = value;
	else
		*effective = wp_settings_current(knob);

	if (pair_owned_by_session())
		*owner = "dba";
	else if (managed)
		*owner = "walpilot";
	else
		*owner = "default";
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
		*pinned = settings->configured_pinned[WP_KNOB_COMMIT_DELAY] ||
			settings->configured_pinned[WP_KNOB_COMMIT_SIBLINGS];
	LWLockRelease(wp_shared->lock);
	return v;
}

/*
 * wp_settings_pinned_by
 *		Which knob of the pair the configuration sets ("commit_delay",
 *		"commit_siblings", both named when both are), or NULL when neither:
 *		for the controller's hold-off reason.  Returns a constant string.
 */
const char *
wp_settings_pinned_by(void)
{
	bool		d,
				s;

	LWLockAcquire(wp_shared->lock, LW_SHARED);
	d = settings->configured_pinned[WP_KNOB_COMMIT_DELAY];
	s = settings->configured_pinned[WP_KNOB_COMMIT_SIBLINGS];
	LWLockRelease(wp_shared->lock);
	if (d && s)
		return "commit_delay and commit_siblings";
	if (d)
		return "commit_delay";
	if (s)
		return "commit_siblings";
	return NULL;
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

/*
 * wp_settings_extension_dropped
 *		A DROP EXTENSION walpilot committed in "database" (commit path, at
 *		XACT_EVENT_COMMIT: no catalog access, no error).
 *
 * What a DROP means while walpilot stays preloaded: the DBA took walpilot
 * out of one database, so it stops changing settings for a while -- as
 * walpilot.revert() does, cluster-wide, because commit_delay is one
 * setting for the whole cluster whatever database a session is in.  The
 * configured values go back at once, the pilot holds off for
 * walpilot.tune_interval, and the drop (database, time) stays on record
 * for the status.  To stop tuning for good, set walpilot.mode.
 */
void
wp_settings_extension_dropped(const char *database)
{
	if (settings == NULL)
		return;
	LWLockAcquire(wp_shared->lock, LW_EXCLUSIVE);
	settings->drop_at = GetCurrentTimestamp();
	strlcpy(settings->drop_database, database,
			sizeof(settings->drop_database));
	LWLockRelease(wp_shared->lock);
	wp_alter_system_request_revert();
}

/*
 * wp_settings_last_drop
 *		The last committed DROP EXTENSION walpilot since the server started:
 *		when and in which database.  False when there was none.
 */
bool
wp_settings_last_drop(TimestampTz *at, char *database, size_t len)
{
	bool		found;

	LWLockAcquire(wp_shared->lock, LW_SHARED);
	found = settings->drop_at != 0;
	if (at)
		*at = settings->drop_at;
	if (database && len > 0)
		strlcpy(database, found ? settings->drop_database : "", len);
	LWLockRelease(wp_shared->lock);
	return found;
}
