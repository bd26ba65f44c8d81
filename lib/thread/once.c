/* pthread_once.

   The once word (PTHREAD_ONCE_INIT is 0) is a private futex:

     ONCE_INIT            0  nobody has run the routine
     ONCE_RUNNING         1  one thread is running it, nobody sleeps
     ONCE_RUNNING_WAITERS 2  one thread is running it, others may sleep
     ONCE_DONE            3  it has returned

   Transitions:
     INIT -> RUNNING          CAS by the thread that will run the routine
     RUNNING -> WAITERS       CAS by a thread about to sleep
     RUNNING|WAITERS -> DONE  exchange (release) by the runner; if the old
                              value was WAITERS, wake all sleepers
   A sleeper waits only while the word is WAITERS; FUTEX_WAIT checks that
   atomically with going to sleep, and the runner's exchange observes any
   WAITERS stored before it, so no wake-up is lost.

   The runner cannot leave RUNNING|WAITERS except by exchange, and INIT is
   never re-entered from DONE, so a runner that is cancelled in the routine
   can hand the work on by exchanging INIT in instead of DONE and waking
   all: the woken threads find INIT and race to run the routine again.

   The fast path is one acquire load of DONE, which pairs with the
   runner's release exchange and so makes the routine's effects visible.  */
#define _GNU_SOURCE
#include "common.h"
#include "export.h"
#include "futex.h"
#include <pthread.h>

enum
{
  ONCE_INIT = 0,
  ONCE_RUNNING = 1,
  ONCE_RUNNING_WAITERS = 2,
  ONCE_DONE = 3
};

static void
finish (int *word, int final_state)
{
  if (xp_exchange_release (word, final_state) == ONCE_RUNNING_WAITERS)
    xp_futex_wake (word, INT32_MAX, true);
}

static void
hand_on_after_cancel (void *word)
{
  finish (word, ONCE_INIT);
}

static void
run_once_routine (int *word, void (*routine) (void))
{
  pthread_cleanup_push (hand_on_after_cancel, word);
  routine ();
  pthread_cleanup_pop (0);
  finish (word, ONCE_DONE);
}

static void __attribute__ ((noinline))
once_slow (int *word, void (*routine) (void))
{
  for (;;)
    {
      int state = xp_load_acquire (word);
      if (state == ONCE_DONE)
        return;
      if (state == ONCE_INIT)
        {
          if (xp_cas (word, &state, ONCE_RUNNING))
            {
              run_once_routine (word, routine);
              return;
            }
          continue;
        }
      if (state == ONCE_RUNNING
          && !xp_cas (word, &state, ONCE_RUNNING_WAITERS))
        continue;
      xp_futex_wait (word, ONCE_RUNNING_WAITERS, true);
    }
}

int
pthread_once (pthread_once_t *control, void (*routine) (void))
{
  if (xp_likely (xp_load_acquire (control) == ONCE_DONE))
    return 0;
  once_slow (control, routine);
  return 0;
}
XP_EXPORT (pthread_once)

extern __typeof (pthread_once) __pthread_once
  XP_ALIAS_OF (pthread_once);
XP_EXPORT (__pthread_once)
