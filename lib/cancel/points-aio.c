/* aio_suspend as a cancellation point.

   glibc's aio_suspend waits for the requests inside glibc, on a futex it
   registers with them under glibc's own lock, and cleans up after a
   signal (EINTR) itself; its cancellation never acts in xpthread's
   threads.  xpthread cannot wait on glibc's requests in its own code, so
   it runs glibc's function and makes a cancel interrupt the wait: while
   the flag below is set, the cancel signal handler turns a futex wait
   that has not taken effect (not started, or about to be restarted) into
   EINTR, which glibc handles as for any signal: it unregisters the waiter
   and returns -1 with EINTR.  Only then, with glibc's state clean and its
   lock released, does the cancel act.  A call that found a request done
   returns 0 and keeps the cancel pending for the next cancellation
   point; glibc's internal lock waits just retry after EINTR.  A signal
   that lands before glibc reaches its wait interrupts nothing, so
   pthread_cancel signals again while the target is in here.  */
#define _GNU_SOURCE
#include "compat.h"
#include "points.h"
#include <aio.h>

typedef int aio_suspend_fn (const struct aiocb *const[], int,
                            const struct timespec *);

static aio_suspend_fn *
glibc_aio_suspend (void)
{
  static aio_suspend_fn *fn;
  aio_suspend_fn *f = xp_load_acquire (&fn);
  if (f == NULL)
    {
      f = (aio_suspend_fn *) xp_glibc_function ("aio_suspend");
      xp_store_release (&fn, f);
    }
  return f;
}

int
aio_suspend (const struct aiocb *const list[], int n,
             const struct timespec *timeout)
{
  struct xp_thread *self = xp_self ();
  /* Flagged first: a canceller that sees the flag keeps signalling until
     the wait is interrupted; one that came before is seen here.  */
  self->cancel_interrupts_waits = true;
  if (xp_cancel_due (xp_load_acquire (&self->cancel)))
    {
      self->cancel_interrupts_waits = false;
      xp_cancel_act ();
    }
  int r = glibc_aio_suspend () (list, n, timeout);
  self->cancel_interrupts_waits = false;
  if (r != 0 && errno == EINTR)
    xp_testcancel ();
  return r;
}
XP_EXPORT (aio_suspend)

/* The same request blocks where off_t is 64 bits wide, as glibc has it;
   <aio.h> gives the name its own type, so it is no alias.  */
_Static_assert (sizeof (struct aiocb) == sizeof (struct aiocb64),
                "aiocb64 is aiocb");

int
aio_suspend64 (const struct aiocb64 *const list[], int n,
               const struct timespec *timeout)
{
  return aio_suspend ((const struct aiocb *const *) list, n, timeout);
}
XP_EXPORT (aio_suspend64)
