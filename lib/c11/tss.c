/* C11 thread-specific storage on xpthread's pthread keys.  A tss_t is a
   pthread key, so tss destructors run when and as often as key
   destructors do (when a thread ends, not at process exit; up to
   TSS_DTOR_ITERATIONS rounds, while values are left), as in glibc, and
   C11 and POSIX code can share a key.  */
#define _GNU_SOURCE
#include "c11.h"
#include "export.h"

int
tss_create (tss_t *tss_id, tss_dtor_t destructor)
{
  return xp_c11_result (pthread_key_create (tss_id, destructor));
}
XP_EXPORT (tss_create)

/* Like pthread_key_delete, no destructor runs: C11 leaves the values to
   the program.  */
void
tss_delete (tss_t tss_id)
{
  pthread_key_delete (tss_id);
}
XP_EXPORT (tss_delete)

void *
tss_get (tss_t tss_id)
{
  return pthread_getspecific (tss_id);
}
XP_EXPORT (tss_get)

int
tss_set (tss_t tss_id, void *val)
{
  return xp_c11_result (pthread_setspecific (tss_id, val));
}
XP_EXPORT (tss_set)
