/* Cancellation points: waiting for child processes.

   Interposed because glibc's own cancellation never acts in xpthread's
   threads (points.h).  As glibc 2.36 does on x86_64, wait, waitpid and
   wait3 are wait4 (any child for wait and wait3, no options for wait, no
   resource usage for wait and waitpid), and waitid passes no resource
   usage.  */
#define _GNU_SOURCE
#include "points.h"
#include <sys/resource.h>
#include <sys/wait.h>

pid_t
wait4 (pid_t pid, int *status, int options, struct rusage *usage)
{
  return (pid_t) XP_CP (SYS_wait4, pid, status, options, usage);
}
XP_EXPORT (wait4)

pid_t
wait3 (int *status, int options, struct rusage *usage)
{
  return (pid_t) XP_CP (SYS_wait4, WAIT_ANY, status, options, usage);
}
XP_EXPORT (wait3)

pid_t
waitpid (pid_t pid, int *status, int options)
{
  return (pid_t) XP_CP (SYS_wait4, pid, status, options, NULL);
}
XP_EXPORT (waitpid)

pid_t
wait (int *status)
{
  return (pid_t) XP_CP (SYS_wait4, WAIT_ANY, status, 0, NULL);
}
XP_EXPORT (wait)

int
waitid (idtype_t idtype, id_t id, siginfo_t *info, int options)
{
  return (int) XP_CP (SYS_waitid, idtype, id, info, options, NULL);
}
XP_EXPORT (waitid)
