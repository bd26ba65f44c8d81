/* A thread's CPU-time clock.  The kernel encodes per-thread CPU clocks in
   the clock id itself (posix-cpu-timers): the bitwise complement of the
   tid shifted left by 3, the per-thread flag (4) and the clock type
   CPUCLOCK_SCHED (2).  */
#define _GNU_SOURCE
#include "thread.h"
#include "export.h"
#include <errno.h>
#include <time.h>

#define XP_CPUCLOCK_PERTHREAD 4
#define XP_CPUCLOCK_SCHED 2

int
pthread_getcpuclockid (pthread_t thread, clockid_t *clock)
{
  struct xp_thread *t = (struct xp_thread *) thread;
  int tid = xp_load_relaxed (&t->tid);
  if (xp_thread_exited (t) || tid <= 0)
    return ESRCH;
  *clock = (clockid_t) ((unsigned) ~tid << 3) | XP_CPUCLOCK_PERTHREAD
           | XP_CPUCLOCK_SCHED;
  return 0;
}
XP_EXPORT (pthread_getcpuclockid)
