/* glibc's registry of fork handlers, behind its own pthread_atfork: its
   fork runs them in the order POSIX asks, and forgets those of an object
   that dlclose unloads.  lib/ adds its handlers here.  */
#include "compat.h"

extern int __register_atfork (void (*prepare) (void), void (*parent) (void),
                              void (*child) (void), void *dso_handle);

int
xp_glibc_register_atfork (void (*prepare) (void), void (*parent) (void),
                          void (*child) (void), void *dso_handle)
{
  return __register_atfork (prepare, parent, child, dso_handle);
}
