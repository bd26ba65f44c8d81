/* A thread's CPU-time clock.  The kernel encodes per-thread CPU clocks in
   the clock id itself (posix-cpu-timers): the bitwise complement of the
   tid shifted left by 3, the per-thread flag (4) and the clock type
   CPUCLOCK_SCHED (2).  glibc answers for the threads it started.  */
#define _GNU_SOURCE
#include "sched-util.h"
#include "export.h"
#include "glibc-threads.h"
#include <errno.h>
#include <time.h>

#define XP_CPUCLOCK_PERTHREAD 4
#define XP_CPUCLOCK_SCHED 2

int
pthread_getcpuclockid (pthread_t thread, clockid_t *clock)
{
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return xp_glibc_threads.getcpuclockid (thread, clock);
  struct xp_pin pin;
  int tid = xp_thread_pin (t, &pin);
  if (tid == 0)
    return ESRCH;
  xp_thread_unpin (&pin);
  *clock = (clockid_t) ((unsigned) ~tid << 3) | XP_CPUCLOCK_PERTHREAD
           | XP_CPUCLOCK_SCHED;
  return 0;
}
XP_EXPORT (pthread_getcpuclockid)
