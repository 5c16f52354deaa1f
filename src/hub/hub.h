/*-------------------------------------------------------------------------
 *
 * hub.h
 *		The top: _PG_init and its hooks, the worker's loop and the commit
 *		path.
 *
 * The hub is the only code that knows the event sources (postmaster
 * start, the worker's tick, a backend's commit, a server log line) and
 * hands each down to the layers, in a fixed order.  Nothing calls it.
 *
 * IDENTIFICATION
 *	  src/hub/hub.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_HUB_H
#define WALPILOT_HUB_H

#include "advice.h"

/*---- shmem_hooks.c ----*/
extern void wp_shmem_install_hooks(void);

/*---- commit_path.c: the transaction callback and its observers ----*/
extern void wp_commit_path_register(void);

/*---- drop_watch.c: DROP EXTENSION walpilot, acted on at commit ----*/
extern PGDLLIMPORT bool wp_drop_watch_active;
extern void wp_drop_watch_end(bool committed);
extern void wp_drop_watch_register(void);

/*---- worker.c ----*/
extern void wp_worker_register(void);
extern PGDLLEXPORT void walpilot_worker_main(Datum main_arg);

#endif							/* WALPILOT_HUB_H */
