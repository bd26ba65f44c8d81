/* xpthread's environment settings (env.c).  */
#ifndef XP_INTERNAL_ENV_H
#define XP_INTERNAL_ENV_H

#include "common.h"

/* The value of NAME, or NULL when unset, empty, or the program runs with
   privileges it did not have (set-user-ID, set-group-ID, capabilities). */
const char *xp_env_string (const char *name) XP_HIDDEN;

/* NAME as a whole number in [min, max], FALLBACK when unset.  A value
   that is no number is warned about and gives FALLBACK; one out of range
   is warned about and clamped to it.  */
long xp_env_number (const char *name, long fallback, long min, long max)
  XP_HIDDEN;

/* NAME set to anything but "0".  */
bool xp_env_flag (const char *name) XP_HIDDEN;

#endif
