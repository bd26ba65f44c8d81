/* Scheduling policy and priority of a thread, kept by the kernel only:
   every call asks it about the thread's tid, pinned so that the tid
   cannot name a newer thread.  Validation is the kernel's, so the policies
   it knows (SCHED_BATCH, SCHED_IDLE) pass as they do in glibc.  */
#define _GNU_SOURCE
#include "sched-util.h"
#include "compat.h"
#include "export.h"
#include <errno.h>
#include <sched.h>

int
pthread_setschedparam (pthread_t thread, int policy,
                       const struct sched_param *param)
{
  struct xp_pin pin;
  int tid = xp_thread_pin ((struct xp_thread *) thread, &pin);
  if (tid == 0)
    return ESRCH;
  long ret = xp_syscall3 (SYS_sched_setscheduler, tid, policy, (long) param);
  if (ret == 0)
    {
      /* Locks stop spinning for realtime threads (spin-policy.c).  */
      ((struct xp_thread *) thread)->realtime
        = policy == SCHED_FIFO || policy == SCHED_RR;
      xp_compat_note_scheduling ((struct xp_thread *) thread, policy,
                                 param->sched_priority);
    }
  xp_thread_unpin (&pin);
  return (int) -ret;
}
XP_EXPORT (pthread_setschedparam)

int
pthread_getschedparam (pthread_t thread, int *policy,
                       struct sched_param *param)
{
  struct xp_pin pin;
  int tid = xp_thread_pin ((struct xp_thread *) thread, &pin);
  if (tid == 0)
    return ESRCH;
  long current = xp_syscall1 (SYS_sched_getscheduler, tid);
  long ret = current;
  if (current >= 0)
    ret = xp_syscall2 (SYS_sched_getparam, tid, param);
  xp_thread_unpin (&pin);
  if (ret < 0)
    return (int) -ret;
  *policy = (int) current;
  return 0;
}
XP_EXPORT (pthread_getschedparam)

int
pthread_setschedprio (pthread_t thread, int priority)
{
  struct xp_pin pin;
  int tid = xp_thread_pin ((struct xp_thread *) thread, &pin);
  if (tid == 0)
    return ESRCH;
  struct sched_param param = { .sched_priority = priority };
  long ret = xp_syscall2 (SYS_sched_setparam, tid, &param);
  if (ret == 0)
    xp_compat_note_scheduling ((struct xp_thread *) thread, -1, priority);
  xp_thread_unpin (&pin);
  return (int) -ret;
}
XP_EXPORT (pthread_setschedprio)
