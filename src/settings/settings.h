/*-------------------------------------------------------------------------
 *
 * settings.h
 *		Applying, pinning and exactly reverting the settings walpilot may
 *		manage.
 *
 * The settings apply what a pilot asks and report; they never call a
 * pilot (the pilot asks them, then writes its decision row).  They may read
 * the instruments.
 *
 * IDENTIFICATION
 *	  src/settings/settings.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_SETTINGS_H
#define WALPILOT_SETTINGS_H

#include "instruments.h"

/*---- settings.c ----*/

/* Session knobs walpilot may manage, applied by every backend itself. */
typedef enum WpKnob
{
	WP_KNOB_COMMIT_DELAY,
	WP_KNOB_COMMIT_SIBLINGS,
	WP_NUM_KNOBS
} WpKnob;

extern Size wp_settings_shmem_size(void);
extern void wp_settings_shmem_init(void);
extern const char *wp_settings_knob_name(WpKnob knob);
extern int	wp_settings_boot_value(WpKnob knob);
extern int	wp_settings_current(WpKnob knob);
extern GucSource wp_settings_source(WpKnob knob);
extern WP_VISIBLE void wp_settings_publish(bool managed, const int32 *targets);
extern bool wp_settings_target(bool *managed, int32 *targets,
							   uint32 *generation);
extern bool wp_settings_apply_in_backend(void);
extern bool wp_settings_session_owns_pair(void);
extern void wp_settings_session_view(WpKnob knob, int *effective,
									 const char **owner);
extern const char *wp_settings_pinned_by(void);
extern void wp_settings_extension_dropped(const char *database);
extern WP_VISIBLE bool wp_settings_last_drop(TimestampTz *at,
											 char *database, size_t len);
extern void wp_settings_note_configured(void);
extern bool wp_settings_delay_managed(void);
extern int	wp_settings_configured(WpKnob knob, bool *pinned);

/* A walpilot.settings row of a server-level setting, as text. */
typedef struct WpSettingRow
{
	char		name[32];
	char		configured[64];
	char		in_force[64];
	char		source[MAXPGPATH + 160];
	char		by[16];			/* walpilot, dba or default */
} WpSettingRow;

/*---- settings_checkpointer.c: checkpoint_flush_after in the checkpointer ----*/
extern Size wp_ckpt_setting_shmem_size(void);
extern void wp_ckpt_setting_shmem_init(void);
extern void wp_ckpt_setting_find_guc(void);
extern void wp_ckpt_setting_at_checkpoint_start(void);
extern void wp_ckpt_setting_publish(int kb);
extern void wp_ckpt_setting_publish_configured(void);
extern int	wp_ckpt_setting_boot_kb(void);
extern bool wp_ckpt_setting_pinned(char *where, size_t len, int *value_kb);
extern bool wp_ckpt_setting_walpilot_in_force(void);
extern bool wp_ckpt_setting_describe(WpSettingRow *out);
extern char *wp_format_kb(int64 kb);

/*---- settings_alter_system.c: max_wal_size through ALTER SYSTEM ----*/
/* (the file itself is written by settings_auto_conf.c) */
#define WP_AS_VALUE_LEN		32
#define WP_AS_NOTE_LEN		256
extern Size wp_alter_system_shmem_size(void);
extern void wp_alter_system_shmem_init(void);
extern bool wp_alter_system_worker_start(char *taken_back, size_t len);
extern bool wp_alter_system_take_back(char *taken_back, size_t len,
									  bool loud);
extern bool wp_alter_system_has_line(void);
extern bool wp_alter_system_set(const char *name, const char *value,
								const char *floor, char *why, size_t len);
extern bool wp_alter_system_reset(const char *name, char *why, size_t len);
extern bool wp_alter_system_line_ours(const char *name, char *why, size_t len);
extern bool wp_alter_system_reload_pending(void);
extern void wp_alter_system_note(const char *note);
extern bool wp_alter_system_state(char *value, char *floor, char *note);
extern void wp_alter_system_request_revert(void);
extern uint64 wp_alter_system_revert_generation(void);
extern bool wp_alter_system_describe(WpSettingRow *out);

#endif							/* WALPILOT_SETTINGS_H */
