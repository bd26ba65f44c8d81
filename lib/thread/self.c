/* pthread_self: the calling thread's descriptor, adopting the thread the
   first time one that xpthread did not start asks.  */
#include "export.h"
#include "thread.h"

pthread_t
pthread_self (void)
{
  return (pthread_t) xp_self ();
}
XP_EXPORT (pthread_self)
