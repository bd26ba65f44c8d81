/* C11 call_once on xpthread's pthread_once.  glibc's once_flag is a
   struct around one int whose ONCE_FLAG_INIT is 0, the same word and
   value as PTHREAD_ONCE_INIT, so a flag is a pthread_once_t and shares
   its protocol (lib/thread/once.c), including handing the work on when
   the running thread is cancelled.  */
#define _GNU_SOURCE
#include "c11.h"
#include "export.h"

void
call_once (once_flag *flag, void (*func) (void))
{
  pthread_once ((pthread_once_t *) flag, func);
}
XP_EXPORT (call_once)
