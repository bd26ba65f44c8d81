/* xpthread's environment settings, all read here.  secure_getenv, not
   getenv: a set-user-ID or set-group-ID program linked with -lxpthread
   must not let whoever runs it choose its mode (XPTHREAD_MODE=raw can end
   the process) or its spinning.  Each number is checked and kept within
   its documented range, with a warning that says what was used.  */
#define _GNU_SOURCE
#include "env.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *
xp_env_string (const char *name)
{
  const char *value = secure_getenv (name);
  return value != NULL && *value != '\0' ? value : NULL;
}

long
xp_env_number (const char *name, long fallback, long min, long max)
{
  const char *value = xp_env_string (name);
  if (value == NULL)
    return fallback;
  char *end;
  errno = 0;
  long n = strtol (value, &end, 10);
  if (*end != '\0' || errno != 0)
    {
      xp_warn ("%s=%s is not a whole number; using %ld", name, value,
               fallback);
      return fallback;
    }
  long clamped = n < min ? min : n > max ? max : n;
  if (clamped != n)
    xp_warn ("%s=%s is outside %ld..%ld; using %ld", name, value, min, max,
             clamped);
  return clamped;
}

bool
xp_env_flag (const char *name)
{
  const char *value = xp_env_string (name);
  return value != NULL && strcmp (value, "0") != 0;
}
