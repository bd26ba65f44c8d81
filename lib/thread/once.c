/* pthread_once.

   The once word (PTHREAD_ONCE_INIT is 0) is a private futex.  Its low two
   bits are the state; while the routine runs, the bits above hold the
   fork generation of the process the runner belongs to:

     ONCE_INIT            0         nobody has run the routine
     ONCE_RUNNING         (g<<2)|1  a thread of generation g is running it,
                                    nobody sleeps
     ONCE_RUNNING_WAITERS (g<<2)|2  likewise, others may sleep
     ONCE_DONE            3         it has returned

   Transitions:
     INIT -> RUNNING          CAS by the thread that will run the routine
     RUNNING -> WAITERS       CAS by a thread about to sleep (same g)
     RUNNING|WAITERS -> DONE  exchange (release) by the runner; if the old
                              state was WAITERS, wake all sleepers
   A sleeper waits only while the word is WAITERS; FUTEX_WAIT checks that
   atomically with going to sleep, and the runner's exchange observes any
   WAITERS stored before it, so no wake-up is lost.

   The runner cannot leave RUNNING|WAITERS except by exchange, and INIT is
   never re-entered from DONE, so a runner that is cancelled in the routine
   can hand the work on by exchanging INIT in instead of DONE and waking
   all: the woken threads find INIT and race to run the routine again.

   A process forked while another thread ran the routine inherits RUNNING
   with a runner that does not exist in it.  Every fork child counts one
   generation more (xp_fork_generation), so it sees a runner of another
   generation, treats the word as INIT and runs the routine itself, as
   glibc does.

   The fast path is one acquire load of DONE, which pairs with the
   runner's release exchange and so makes the routine's effects visible.  */
#define _GNU_SOURCE
#include "common.h"
#include "export.h"
#include "futex.h"
#include "lock-hooks.h"
#include "thread.h"
#include <pthread.h>

enum
{
  ONCE_INIT = 0,
  ONCE_RUNNING = 1,
  ONCE_RUNNING_WAITERS = 2,
  ONCE_DONE = 3,
  ONCE_STATE_MASK = 3,
  ONCE_GENERATION_SHIFT = 2
};

static int
running_state (void)
{
  unsigned generation = xp_load_relaxed (&xp_fork_generation);
  return (int) ((generation << ONCE_GENERATION_SHIFT) | ONCE_RUNNING);
}

/* A runner of another generation ran in a parent process before a fork:
   nobody in this process will finish its work.  */
static bool
runner_is_gone (int word_value)
{
  unsigned generation = (unsigned) word_value >> ONCE_GENERATION_SHIFT;
  unsigned mine = xp_load_relaxed (&xp_fork_generation);
  return generation != (mine & (UINT32_MAX >> ONCE_GENERATION_SHIFT));
}

static void
finish (int *word, int final_state)
{
  xp_hook_send (word);
  int old = xp_exchange_release (word, final_state);
  if ((old & ONCE_STATE_MASK) == ONCE_RUNNING_WAITERS)
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
  xp_hook_sync_words (word, sizeof *word);
  for (;;)
    {
      int value = xp_load_acquire (word);
      int state = value & ONCE_STATE_MASK;
      if (state == ONCE_DONE)
        {
          xp_hook_receive (word);
          return;
        }
      if (state == ONCE_INIT || runner_is_gone (value))
        {
          if (xp_cas (word, &value, running_state ()))
            {
              run_once_routine (word, routine);
              return;
            }
          continue;
        }
      int waiters = (value & ~ONCE_STATE_MASK) | ONCE_RUNNING_WAITERS;
      if (state == ONCE_RUNNING && !xp_cas (word, &value, waiters))
        continue;
      xp_futex_wait (word, waiters, true);
    }
}

int
pthread_once (pthread_once_t *control, void (*routine) (void))
{
  /* Under the lock hooks every call takes the slow path, where the
     routine's end is received.  */
  if (xp_likely (xp_load_acquire (control) == ONCE_DONE) && !xp_hooks_on ())
    return 0;
  once_slow (control, routine);
  return 0;
}
XP_EXPORT (pthread_once)

extern __typeof (pthread_once) __pthread_once
  XP_ALIAS_OF (pthread_once);
XP_EXPORT (__pthread_once)
