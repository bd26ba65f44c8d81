/* Process-shared condition variables as the running glibc keeps them.

   The inside of pthread_cond_t is glibc's and has changed between
   releases: glibc 2.41 (and some stable updates of older branches) removed
   __g_refs, which moved __wrefs from byte 36 to byte 28, and changed the
   algorithm.  A process-shared condition variable must be kept the way
   the glibc of the other processes keeps it, so the layout and protocol
   are found at run time from the running glibc (glibc-cond.c), never from
   the headers xpthread was built against.  lib/sync asks only this.  */
#ifndef XP_NPTL_COMPAT_GLIBC_COND_H
#define XP_NPTL_COMPAT_GLIBC_COND_H

#include "common.h"
#include <pthread.h>
#include <time.h>

/* Bits of glibc's __wrefs word that every release since 2.25 keeps: the
   variable is process-shared; its clock is CLOCK_MONOTONIC.  xpthread's
   process-private condition variables keep the same two bits in the same
   word, so that either kind is told apart whoever initialised it.  */
#define XP_GLIBC_COND_PSHARED 1u
#define XP_GLIBC_COND_MONOTONIC 2u

/* Byte offset of __wrefs in the running glibc; 0 until found.  */
extern unsigned xp_glibc_cond_flags_offset XP_HIDDEN;
unsigned xp_glibc_cond_find (void) XP_HIDDEN;

static inline unsigned *
xp_glibc_cond_flags (pthread_cond_t *cond)
{
  unsigned off = xp_load_acquire (&xp_glibc_cond_flags_offset);
  if (xp_unlikely (off == 0))
    off = xp_glibc_cond_find ();
  return (unsigned *) ((char *) cond + off);
}

/* The release range whose layout the running glibc keeps, for the mode
   report ("unknown" where none matched).  */
const char *xp_glibc_cond_release (void) XP_HIDDEN;

/* A process-shared condition variable's operations, in the running
   glibc's protocol: xpthread's implementation of it where there is one
   (its waits are then cancellation points), glibc's own functions
   otherwise.  The first call chooses.  wait: abstime NULL waits for
   ever.  */
void xp_shared_cond_init (pthread_cond_t *, bool monotonic) XP_HIDDEN;
int xp_shared_cond_destroy (pthread_cond_t *) XP_HIDDEN;
int xp_shared_cond_signal (pthread_cond_t *) XP_HIDDEN;
int xp_shared_cond_broadcast (pthread_cond_t *) XP_HIDDEN;
int xp_shared_cond_wait (pthread_cond_t *, pthread_mutex_t *, clockid_t,
                         const struct timespec *) XP_HIDDEN;

/* Within the glibc layer: images of a process-shared condition variable
   in one protocol, before and after glibc's signal, and before and after
   a glibc wait whose deadline has passed.  */
struct xp_glibc_cond_probe
{
  const void *before_signal, *after_signal;
  const void *before_timeout, *after_timeout;
};

#endif
