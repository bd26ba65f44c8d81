/* Cancellation points: sleeping.

   Interposed because glibc's own cancellation never acts in xpthread's
   threads, and glibc's sleep and usleep call its internal nanosleep, so
   each must be replaced, not only nanosleep (points.h).  As glibc 2.36
   does on x86_64, everything is clock_nanosleep:
   - clock_nanosleep returns an error number instead of setting errno,
     refuses CLOCK_THREAD_CPUTIME_ID with EINVAL, and gives the kernel
     CLOCK_PROCESS_CPUTIME_ID as the calling process's CPU clock id;
   - nanosleep is clock_nanosleep on CLOCK_REALTIME with errno;
   - sleep returns the whole seconds not slept when a signal handler
     interrupted it, else 0 with errno as it was; every unsigned count of
     seconds fits the 64-bit time_t;
   - usleep takes any unsigned count of microseconds.  */
#define _GNU_SOURCE
#include "points.h"
#include <time.h>
#include <unistd.h>

_Static_assert (sizeof (time_t) > sizeof (unsigned int),
                "sleep's seconds fit in one request");

/* The kernel's id for the CPU clock of the calling process: pid 0 and
   the scheduler clock (2) in the kernel's encoding, ~pid << 3 | clock.  */
#define PROCESS_CPU_CLOCK ((clockid_t) ((~0u << 3) | 2))

static int
sleep_error (clockid_t clock, int flags, const struct timespec *request,
             struct timespec *remaining)
{
  if (clock == CLOCK_THREAD_CPUTIME_ID)
    return EINVAL;
  if (clock == CLOCK_PROCESS_CPUTIME_ID)
    clock = PROCESS_CPU_CLOCK;
  return (int) -XP_CP_RAW (SYS_clock_nanosleep, clock, flags, request,
                           remaining);
}

int
clock_nanosleep (clockid_t clock, int flags, const struct timespec *request,
                 struct timespec *remaining)
{
  return sleep_error (clock, flags, request, remaining);
}
XP_EXPORT (clock_nanosleep)

static int
sleep_errno (const struct timespec *request, struct timespec *remaining)
{
  int err = sleep_error (CLOCK_REALTIME, 0, request, remaining);
  if (err == 0)
    return 0;
  errno = err;
  return -1;
}

int
nanosleep (const struct timespec *request, struct timespec *remaining)
{
  return sleep_errno (request, remaining);
}
XP_EXPORT (nanosleep)

unsigned int
sleep (unsigned int seconds)
{
  int saved = errno;
  struct timespec ts = { .tv_sec = seconds, .tv_nsec = 0 };
  if (sleep_errno (&ts, &ts) < 0)
    return (unsigned int) ts.tv_sec;
  errno = saved;
  return 0;
}
XP_EXPORT (sleep)

int
usleep (useconds_t useconds)
{
  struct timespec ts = {
    .tv_sec = useconds / 1000000,
    .tv_nsec = (long) (useconds % 1000000) * 1000
  };
  return sleep_errno (&ts, NULL);
}
XP_EXPORT (usleep)
