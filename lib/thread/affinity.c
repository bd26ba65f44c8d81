/* CPU affinity of a thread, asked of the kernel on its pinned tid; of a
   thread glibc started, asked of glibc.  */
#define _GNU_SOURCE
#include "sched-util.h"
#include "export.h"
#include "glibc-threads.h"
#include <errno.h>
#include <sched.h>
#include <string.h>

int
pthread_setaffinity_np (pthread_t thread, size_t size,
                        const cpu_set_t *cpuset)
{
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return xp_glibc_threads.setaffinity (thread, size, cpuset);
  struct xp_pin pin;
  int tid = xp_thread_pin_sched (t, &pin);
  if (tid < 0)
    return ESRCH;
  long ret = xp_syscall3 (SYS_sched_setaffinity, tid, size, (long) cpuset);
  xp_thread_unpin (&pin);
  return (int) -ret;
}
XP_EXPORT (pthread_setaffinity_np)

/* The kernel writes only as many bytes as its own mask has; the rest of
   the caller's set is cleared, CPUs the kernel does not have being in no
   thread's affinity.  */
int
pthread_getaffinity_np (pthread_t thread, size_t size, cpu_set_t *cpuset)
{
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return xp_glibc_threads.getaffinity (thread, size, cpuset);
  struct xp_pin pin;
  int tid = xp_thread_pin_sched (t, &pin);
  if (tid < 0)
    return ESRCH;
  long written = xp_syscall3 (SYS_sched_getaffinity, tid, size,
                              (long) cpuset);
  xp_thread_unpin (&pin);
  if (written < 0)
    return (int) -written;
  memset ((char *) cpuset + written, 0, size - written);
  return 0;
}
XP_EXPORT (pthread_getaffinity_np)

#ifdef XP_OLD_VERSION_xp_getaffinity_old
/* The GLIBC_2.3.3 interface had no size: a cpu_set_t was the whole set.  */
int
xp_setaffinity_old (pthread_t thread, const cpu_set_t *cpuset)
{
  return pthread_setaffinity_np (thread, sizeof *cpuset, cpuset);
}
XP_EXPORT_OLD (xp_setaffinity_old)

int
xp_getaffinity_old (pthread_t thread, cpu_set_t *cpuset)
{
  return pthread_getaffinity_np (thread, sizeof *cpuset, cpuset);
}
XP_EXPORT_OLD (xp_getaffinity_old)
#endif
