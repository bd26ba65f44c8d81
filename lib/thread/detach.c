/* pthread_detach.  Whichever comes second of the thread's exit and the
   detach releases the thread's resources (see the join_state bits in
   thread.h).  glibc detaches the threads it started.  */
#include "export.h"
#include "glibc-threads.h"
#include "thread.h"
#include <errno.h>

int
pthread_detach (pthread_t thread)
{
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return xp_glibc_threads.detach (thread);
  /* Read before the detach: from then on a running hosted thread may free
     its descriptor at any moment.  */
  pthread_t host = t->host;
  const struct xp_thread_kind *kind = t->kind;
  unsigned old = xp_load_acquire (&t->join_state);
  do
    if (old & XP_JOIN_RELEASED)
      return ESRCH;
    else if (old & (XP_JOIN_DETACHED | XP_JOIN_JOINING))
      return EINVAL;
  while (!xp_cas (&t->join_state, &old, old | XP_JOIN_DETACHED));
  return kind->detached (t, host, old);
}
XP_EXPORT (pthread_detach)
