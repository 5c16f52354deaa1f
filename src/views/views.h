/*-------------------------------------------------------------------------
 *
 * views.h
 *		The C functions behind walpilot's SQL views and functions.
 *
 * Views may read every layer below (copy under the lock, release it, form
 * rows after); they are called only by the SQL layer.  Nothing includes
 * this header but the views themselves.
 *
 * IDENTIFICATION
 *	  src/views/views.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALPILOT_VIEWS_H
#define WALPILOT_VIEWS_H

#include "advice.h"

#endif							/* WALPILOT_VIEWS_H */
