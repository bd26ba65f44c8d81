/* C11 threads: thrd_create and the rest of the thrd_* functions, on
   xpthread's pthread functions.

   A C11 start function returns int where pthread wants void *.  glibc
   passes a marker attribute so that its thread start calls the function
   with the right type; xpthread keeps its thread start free of C11
   knowledge instead, and a trampoline carries the start function and its
   argument to the new thread and widens the result there.  The int
   travels inside the void * sign-extended, as in glibc, so a thread
   joined with pthread_join sees the same pointer value under both
   libraries, and thrd_join narrows it back without loss.  */
#define _GNU_SOURCE
#include "away.h"
#include "c11.h"
#include "export.h"
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

struct c11_start
{
  thrd_start_t func;
  void *arg;
};

static inline void *
int_to_result (int value)
{
  return (void *) (intptr_t) value;
}

static inline int
result_to_int (void *result)
{
  return (int) (intptr_t) result;
}

static void *
c11_trampoline (void *block)
{
  struct c11_start start = *(struct c11_start *) block;
  /* Freed before the user's code runs: thrd_exit and cancellation leave
     through pthread_exit and never come back to this frame.  */
  free (block);
  return int_to_result (start.func (start.arg));
}

int
thrd_create (thrd_t *thr, thrd_start_t func, void *arg)
{
  struct c11_start *block = malloc (sizeof *block);
  if (block == NULL)
    return thrd_nomem;
  block->func = func;
  block->arg = arg;
  int err = pthread_create (thr, NULL, c11_trampoline, block);
  if (err != 0)
    free (block);
  return xp_c11_result (err);
}
XP_EXPORT (thrd_create)

thrd_t
thrd_current (void)
{
  return pthread_self ();
}
XP_EXPORT (thrd_current)

int
thrd_equal (thrd_t lhs, thrd_t rhs)
{
  return lhs == rhs;
}
XP_EXPORT (thrd_equal)

int
thrd_detach (thrd_t thr)
{
  return xp_c11_result (pthread_detach (thr));
}
XP_EXPORT (thrd_detach)

/* glibc writes *res even when the join failed, from an uninitialised
   variable; here a failed join leaves it alone.  */
int
thrd_join (thrd_t thr, int *res)
{
  void *result;
  int err = pthread_join (thr, &result);
  if (err == 0 && res != NULL)
    *res = result_to_int (result);
  return xp_c11_result (err);
}
XP_EXPORT (thrd_join)

/* Through the exported pthread_exit, so that C11 threads end exactly as
   POSIX ones do: cleanup handlers, unwinding, thread-specific data.  */
void
thrd_exit (int res)
{
  pthread_exit (int_to_result (res));
}
XP_EXPORT (thrd_exit)

/* C11 asks for -1 on a signal and another negative value on any other
   failure; -2 is glibc's choice.  Relative to CLOCK_REALTIME, as in glibc
   (a relative sleep does not move with the clock anyway).  The call goes
   through clock_nanosleep's public name, so that thrd_sleep is a
   cancellation point whenever the process's clock_nanosleep is one, as
   glibc's thrd_sleep is.  */
int
thrd_sleep (const struct timespec *duration, struct timespec *remaining)
{
  switch (clock_nanosleep (CLOCK_REALTIME, 0, duration, remaining))
    {
    case 0:
      return 0;
    case EINTR:
      return -1;
    default:
      return -2;
    }
}
XP_EXPORT (thrd_sleep)

/* Marked away, as sched_yield (away.h).  */
void
thrd_yield (void)
{
  xp_yield ();
}
XP_EXPORT (thrd_yield)
