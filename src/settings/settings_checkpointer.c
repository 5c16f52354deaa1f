/*-------------------------------------------------------------------------
 *
 * settings_checkpointer.c
 *		checkpoint_flush_after applied in the checkpointer's own memory.
 *
 * Only the checkpointer reads checkpoint_flush_after: BufferSync hands
 * WritebackContextInit a pointer to it when a checkpoint starts writing.
 * The checkpointer logs "checkpoint starting" just before that, and
 * walpilot's emit_log_hook (hub/walpilot.c) runs in the checkpointer for
 * that line; it calls wp_ckpt_setting_at_checkpoint_start(), which applies
 * the target the worker published here, with source PGC_S_DYNAMIC_DEFAULT.
 *
 * So no file is written and nothing is reloaded:
 * - any value of the DBA's (postgresql.conf, ALTER SYSTEM, the command
 *   line) outranks PGC_S_DYNAMIC_DEFAULT: it is a pin, left alone, and the
 *   checkpointer's next reload puts a new one in force over walpilot's;
 * - putting the configured value back is applying the boot value with the
 *   same source;
 * - nothing survives the checkpointer: a crash, a restart, a start without
 *   walpilot or a base backup starts from the DBA's configuration.
 *
 * The cost: it needs "checkpoint starting" in the log (log_checkpoints =
 * on, the default since 15); a value takes effect from the next checkpoint
 * that starts; and SHOW in other sessions shows the configuration, not the
 * checkpointer's value.  So the checkpointer publishes here what was in
 * force at each checkpoint start, and where it came from: walpilot.settings
 * and each walpilot.checkpoints record say what ran.
 *
 * In the hook nothing may throw or allocate: the GUC's descriptor is found
 * once in the postmaster (every child inherits the pointer), the value is
 * formatted on the stack, and set_config_option_ext is only called for a
 * value it accepts, in a context it allows.
 *
 * walpilot's value is applied only while a worker runs and walpilot.mode
 * is not off; otherwise the next checkpoint starts with the configured
 * value.
 *
 * IDENTIFICATION
 *	  src/settings/settings_checkpointer.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid_d.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "settings.h"

#define WP_CKPT_SETTING		"checkpoint_flush_after"
#define WP_NO_TARGET		(-1)	/* the configured value */

typedef struct WpCkptSettingShared
{
	/* the worker's target in kB, or WP_NO_TARGET */
	pg_atomic_uint32 target_kb;

	/* what the checkpointer had in force at its last checkpoint start */
	slock_t		mutex;
	bool		seen;			/* a checkpoint started since the server did */
	int32		in_force_kb;
	bool		by_walpilot;	/* walpilot's target, not the configured value */
	GucSource	source;
	char		sourcefile[MAXPGPATH];
	int			sourceline;
	TimestampTz at;
} WpCkptSettingShared;

static WpCkptSettingShared *cs = NULL;

/* found once in the postmaster; the children inherit the pointer */
static struct config_int *flush_guc = NULL;

Size
wp_ckpt_setting_shmem_size(void)
{
	return MAXALIGN(sizeof(WpCkptSettingShared));
}

void
wp_ckpt_setting_shmem_init(void)
{
	bool		found;

	cs = ShmemInitStruct("walpilot checkpointer setting",
						 sizeof(WpCkptSettingShared), &found);
	if (!found)
	{
		memset(cs, 0, sizeof(WpCkptSettingShared));
		pg_atomic_init_u32(&cs->target_kb, (uint32) WP_NO_TARGET);
		SpinLockInit(&cs->mutex);
	}
}

/*
 * wp_ckpt_setting_find_guc
 *		From _PG_init in the postmaster: the descriptor of
 *		checkpoint_flush_after.  Built-in GUCs never move, and looking one
 *		up may allocate (16+), which the hook must not.
 */
void
wp_ckpt_setting_find_guc(void)
{
	int			n,
				i;
	struct config_generic **vars = wp_guc_variables(&n);

	for (i = 0; i < n; i++)
		if (vars[i]->vartype == PGC_INT &&
			strcmp(vars[i]->name, WP_CKPT_SETTING) == 0)
			flush_guc = wp_guc_int_of(vars[i]);
}

static int
kb_of(int blocks)
{
	return blocks * (BLCKSZ / 1024);
}

/* the value in force when no source of the DBA's sets it */
int
wp_ckpt_setting_boot_kb(void)
{
	return flush_guc ? kb_of(flush_guc->boot_val) :
		kb_of(DEFAULT_CHECKPOINT_FLUSH_AFTER);
}

/*
 * wp_ckpt_setting_at_checkpoint_start
 *		In the checkpointer, from the emit_log_hook at "checkpoint starting"
 *		or "restartpoint starting", before BufferSync reads the value.
 *		Applies the published target unless a source of the DBA's sets the
 *		setting, then publishes what is in force.  Cannot throw, allocates
 *		nothing.
 */
void
wp_ckpt_setting_at_checkpoint_start(void)
{
	int32		target;
	int			want;
	char		value[16];

	if (cs == NULL || flush_guc == NULL || MyBackendType != B_CHECKPOINTER)
		return;

	/* walpilot's value only while a worker runs that can take it back */
	target = (int32) pg_atomic_read_u32(&cs->target_kb);
	if (wp_mode == WP_MODE_OFF || wp_shared == NULL ||
		pg_atomic_read_u32(&wp_shared->worker_pid) == 0)
		target = WP_NO_TARGET;
	if (wp_guc_int_gen(flush_guc)->source <= PGC_S_DYNAMIC_DEFAULT)
	{
		want = target == WP_NO_TARGET ? flush_guc->boot_val :
			target / (BLCKSZ / 1024);
		if (want >= flush_guc->min && want <= flush_guc->max &&
			(*flush_guc->variable != want ||
			 wp_guc_int_gen(flush_guc)->source != PGC_S_DYNAMIC_DEFAULT))
		{
			/* in the setting's unit (blocks): nothing to parse but digits */
			snprintf(value, sizeof(value), "%d", want);
			(void) set_config_option_ext(WP_CKPT_SETTING, value, PGC_SIGHUP,
										 PGC_S_DYNAMIC_DEFAULT,
										 BOOTSTRAP_SUPERUSERID,
										 GUC_ACTION_SET, true, DEBUG1, false);
		}
	}

	SpinLockAcquire(&cs->mutex);
	cs->seen = true;
	cs->in_force_kb = kb_of(*flush_guc->variable);
	cs->source = wp_guc_int_gen(flush_guc)->source;
	cs->by_walpilot = wp_guc_int_gen(flush_guc)->source == PGC_S_DYNAMIC_DEFAULT &&
		target != WP_NO_TARGET;
	if (wp_guc_int_gen(flush_guc)->sourcefile != NULL)
		strlcpy(cs->sourcefile, wp_guc_int_gen(flush_guc)->sourcefile,
				sizeof(cs->sourcefile));
	else
		cs->sourcefile[0] = '\0';
	cs->sourceline = wp_guc_int_gen(flush_guc)->sourceline;
	cs->at = GetCurrentTimestamp();
	SpinLockRelease(&cs->mutex);
}

/*
 * wp_ckpt_setting_publish
 *		Worker: the value the next checkpoint should start with, in kB, or
 *		WP_NO_TARGET for the configured value.
 */
void
wp_ckpt_setting_publish(int kb)
{
	if (cs != NULL)
		pg_atomic_write_u32(&cs->target_kb, (uint32) kb);
}

void
wp_ckpt_setting_publish_configured(void)
{
	wp_ckpt_setting_publish(WP_NO_TARGET);
}

static void
describe_source(GucSource source, const char *file, int line, char *buf,
				size_t len)
{
	if (source == PGC_S_FILE && file != NULL && file[0] != '\0')
		snprintf(buf, len, "%s (%s line %d)", GucSource_Names[source], file,
				 line);
	else
		strlcpy(buf, GucSource_Names[source], len);
}

/*
 * wp_ckpt_setting_walpilot_in_force
 *		Did the checkpointer start its last checkpoint with walpilot's value?
 */
bool
wp_ckpt_setting_walpilot_in_force(void)
{
	bool		ours;

	if (cs == NULL)
		return false;
	SpinLockAcquire(&cs->mutex);
	ours = cs->seen && cs->by_walpilot;
	SpinLockRelease(&cs->mutex);
	return ours;
}

/*
 * wp_ckpt_setting_pinned
 *		Does a source of the DBA's set checkpoint_flush_after?  Judged from
 *		what is in force: this process's own value (the worker's, after its
 *		last reload) and the checkpointer's at its last checkpoint start.
 *		where names the source; value gets the DBA's value in kB.
 */
bool
wp_ckpt_setting_pinned(char *where, size_t len, int *value_kb)
{
	bool		pinned = false;

	if (flush_guc != NULL && wp_guc_int_gen(flush_guc)->source > PGC_S_DYNAMIC_DEFAULT)
	{
		describe_source(wp_guc_int_gen(flush_guc)->source, wp_guc_int_gen(flush_guc)->sourcefile,
						wp_guc_int_gen(flush_guc)->sourceline, where, len);
		if (value_kb)
			*value_kb = kb_of(*flush_guc->variable);
		return true;
	}
	if (cs == NULL)
		return false;
	SpinLockAcquire(&cs->mutex);
	if (cs->seen && cs->source > PGC_S_DYNAMIC_DEFAULT)
	{
		pinned = true;
		describe_source(cs->source, cs->sourcefile, cs->sourceline, where, len);
		if (value_kb)
			*value_kb = cs->in_force_kb;
	}
	SpinLockRelease(&cs->mutex);
	return pinned;
}

/*
 * wp_ckpt_setting_describe
 *		The walpilot.settings row of checkpoint_flush_after, as the
 *		checkpointer has it (SHOW in this session shows the configuration).
 *		false when there is none (no shared state).
 */
bool
wp_ckpt_setting_describe(WpSettingRow *out)
{
	WpCkptSettingShared c;
	char		source[MAXPGPATH + 64];
	int			configured_kb;
	int			in_force_kb;
	const char *by;

	if (cs == NULL)
		return false;
	SpinLockAcquire(&cs->mutex);
	c = *cs;
	SpinLockRelease(&cs->mutex);

	if (c.seen)
	{
		in_force_kb = c.in_force_kb;
		describe_source(c.source, c.sourcefile, c.sourceline, source,
						sizeof(source));
		if (c.by_walpilot)
			strlcat(source, ", set by walpilot in the checkpointer",
					sizeof(source));
	}
	else
	{
		/* no checkpoint started yet: the configuration as this session has it */
		in_force_kb = flush_guc ? kb_of(*flush_guc->variable) :
			checkpoint_flush_after * (BLCKSZ / 1024);
		describe_source(flush_guc ? wp_guc_int_gen(flush_guc)->source : PGC_S_DEFAULT,
						flush_guc ? wp_guc_int_gen(flush_guc)->sourcefile : NULL,
						flush_guc ? wp_guc_int_gen(flush_guc)->sourceline : 0,
						source, sizeof(source));
	}
	if (c.seen && c.by_walpilot)
	{
		configured_kb = wp_ckpt_setting_boot_kb();
		by = "walpilot";
	}
	else if (c.seen ? c.source > PGC_S_DYNAMIC_DEFAULT :
			 (flush_guc && wp_guc_int_gen(flush_guc)->source > PGC_S_DYNAMIC_DEFAULT))
	{
		configured_kb = in_force_kb;
		by = "dba";
	}
	else
	{
		configured_kb = wp_ckpt_setting_boot_kb();
		by = "default";
	}

	strlcpy(out->name, WP_CKPT_SETTING, sizeof(out->name));
	strlcpy(out->configured, wp_format_kb(configured_kb), sizeof(out->configured));
	strlcpy(out->in_force, wp_format_kb(in_force_kb), sizeof(out->in_force));
	strlcpy(out->source, source, sizeof(out->source));
	strlcpy(out->by, by, sizeof(out->by));
	return true;
}

/*
 * wp_format_kb
 *		A memory amount in kB as SHOW prints it: the largest unit that
 *		divides it (palloc'd).
 */
char *
wp_format_kb(int64 kb)
{
	static const char *const units[] = {"kB", "MB", "GB", "TB"};
	int			u = 0;

	if (kb == 0)
		return pstrdup("0");
	while (u < 3 && kb % 1024 == 0)
	{
		kb /= 1024;
		u++;
	}
	return psprintf(INT64_FORMAT "%s", kb, units[u]);
}
