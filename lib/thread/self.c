/* pthread_self: the calling thread's descriptor, adopting the thread the
   first time one that xpthread did not start asks.  A thread glibc started
   answers glibc's handle, the ID its creator holds (adopt.c).  */
#include "export.h"
#include "thread.h"

pthread_t
pthread_self (void)
{
  struct xp_thread *self = xp_self ();
  if (self->kind->id_is_host)
    return self->host;
  return (pthread_t) self;
}
XP_EXPORT (pthread_self)
