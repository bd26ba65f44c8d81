/* Helpers shared by the synchronisation suites (rwlock, barrier, sem).  */
#ifndef XP_TESTS_SYNC_HELPERS_H
#define XP_TESTS_SYNC_HELPERS_H

#include "common.h"
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline int
current_tid (void)
{
  return (int) syscall (SYS_gettid);
}

/* Wait until thread tid sleeps in the kernel.  Called once the thread
   has said it is about to block on an object and does nothing else that
   sleeps, this means it is blocked on that object; no guess about how
   long that takes.  */
static inline void
wait_until_sleeping (int tid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/task/%d/stat", tid);
  for (;;)
    {
      char buf[512];
      FILE *f = fopen (path, "r");
      ck_assert_msg (f != NULL, "no %s", path);
      size_t n = fread (buf, 1, sizeof buf - 1, f);
      fclose (f);
      buf[n] = '\0';
      char *state = strrchr (buf, ')');
      ck_assert (state != NULL && state[1] == ' ');
      if (state[2] == 'S')
        return;
      usleep (1000);
    }
}

/* clock's time ms milliseconds from now.  */
static inline struct timespec
in_ms (clockid_t clock, long ms)
{
  struct timespec t;
  clock_gettime (clock, &t);
  t.tv_sec += ms / 1000;
  t.tv_nsec += (ms % 1000) * 1000000;
  if (t.tv_nsec >= 1000000000)
    {
      t.tv_sec++;
      t.tv_nsec -= 1000000000;
    }
  return t;
}

#endif
