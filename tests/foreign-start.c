/* Starts threads the way jemalloc starts its background thread: with the
   pthread_create that comes after this library in the lookup order, found
   with dlsym (RTLD_NEXT).  The test links this library after libxpthread
   (or preloads libxpthread), so that is glibc's: xpthread never hears of
   the creation.  */
#define _GNU_SOURCE
#include "foreign-start.h"
#include <dlfcn.h>
#include <string.h>

static void *
next_function (const char *name)
{
  return dlsym (RTLD_NEXT, name);
}

const char *
xp_foreign_library (void)
{
  Dl_info info;
  void *create = next_function ("pthread_create");
  if (create == NULL || dladdr (create, &info) == 0)
    return NULL;
  return info.dli_fname;
}

int
xp_foreign_start (pthread_t *thread, void *(*start) (void *), void *arg)
{
  int (*create) (pthread_t *, const pthread_attr_t *, void *(*) (void *),
                 void *) = next_function ("pthread_create");
  return create (thread, NULL, start, arg);
}

int
xp_foreign_join (pthread_t thread, void **result)
{
  int (*join) (pthread_t, void **) = next_function ("pthread_join");
  return join (thread, result);
}
