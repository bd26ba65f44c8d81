/* pthread_gettid_np (glibc 2.42): a thread's kernel thread ID, -1 once
   the thread has exited, as glibc answers.  */
#define _GNU_SOURCE
#include "sched-util.h"
#include "export.h"
#include <sys/types.h>

pid_t pthread_gettid_np (pthread_t thread);

pid_t
pthread_gettid_np (pthread_t thread)
{
  struct xp_pin pin;
  int tid = xp_thread_pin ((struct xp_thread *) thread, &pin);
  if (tid == 0)
    return -1;
  xp_thread_unpin (&pin);
  return tid;
}
XP_EXPORT (pthread_gettid_np)
