/* Scheduling policy and priority of a thread, kept by the kernel (and,
   while it holds priority-protection mutexes, by mutex-pp.c): every call
   asks it about the thread's tid, pinned so that the tid cannot name a
   newer thread.  Validation is the kernel's, so the policies
   it knows (SCHED_BATCH, SCHED_IDLE) pass as they do in glibc.  Threads
   glibc started are glibc's to ask.  */
#define _GNU_SOURCE
#include "sched-util.h"
#include "export.h"
#include "glibc-threads.h"
#include "mutex-pp.h"
#include <errno.h>
#include <sched.h>

int
pthread_setschedparam (pthread_t thread, int policy,
                       const struct sched_param *param)
{
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return xp_glibc_threads.setschedparam (thread, policy, param);
  struct xp_pin pin;
  int tid = xp_thread_pin_sched (t, &pin);
  if (tid < 0)
    return ESRCH;
  /* The kernel's answers for a bad policy or no parameters.  */
  long ret = policy < 0 || xp_unhinted (param) == NULL
             ? -EINVAL
             : xp_pp_set_scheduling (t, tid, policy, param->sched_priority);
  /* Locks stop spinning for realtime threads (spin-policy.c).  */
  if (ret == 0)
    t->realtime = policy == SCHED_FIFO || policy == SCHED_RR;
  xp_thread_unpin (&pin);
  return (int) -ret;
}
XP_EXPORT (pthread_setschedparam)

int
pthread_getschedparam (pthread_t thread, int *policy,
                       struct sched_param *param)
{
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return xp_glibc_threads.getschedparam (thread, policy, param);
  struct xp_pin pin;
  int tid = xp_thread_pin_sched (t, &pin);
  if (tid < 0)
    return ESRCH;
  long current = xp_syscall1 (SYS_sched_getscheduler, tid);
  long ret = current;
  if (current >= 0)
    ret = xp_syscall2 (SYS_sched_getparam, tid, param);
  /* Ceilings of priority-protection mutexes aside, as glibc reports.  */
  if (ret >= 0)
    param->sched_priority
      = xp_pp_reported_priority (t, param->sched_priority);
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
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return xp_glibc_threads.setschedprio (thread, priority);
  struct xp_pin pin;
  int tid = xp_thread_pin_sched (t, &pin);
  if (tid < 0)
    return ESRCH;
  long ret = xp_pp_set_scheduling (t, tid, -1, priority);
  xp_thread_unpin (&pin);
  return (int) -ret;
}
XP_EXPORT (pthread_setschedprio)
