/* pthread_gettid_np (glibc 2.42): a thread's kernel thread ID, -1 once
   the thread has exited, as glibc answers.  */
#define _GNU_SOURCE
#include "sched-util.h"
#include "export.h"
#include "glibc-threads.h"
#include <sys/types.h>

pid_t pthread_gettid_np (pthread_t thread);

/* A thread glibc started: glibc's answer where it has the function, else
   the tid glibc keeps, which the kernel clears when the thread is gone.  */
static pid_t
foreign_tid (pthread_t thread)
{
  xp_glibc_gettid_function glibc_gettid = xp_glibc_thread_gettid ();
  if (glibc_gettid != NULL)
    return glibc_gettid (thread);
  int *word = xp_glibc_thread_tid_word (thread);
  int tid = word != NULL ? xp_load_acquire (word) : 0;
  return tid > 0 ? tid : -1;
}

pid_t
pthread_gettid_np (pthread_t thread)
{
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return foreign_tid (thread);
  struct xp_pin pin;
  int tid = xp_thread_pin (t, &pin);
  if (tid == 0)
    return -1;
  xp_thread_unpin (&pin);
  return tid;
}
XP_EXPORT (pthread_gettid_np)
