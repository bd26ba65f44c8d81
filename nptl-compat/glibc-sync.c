/* Process-shared condition variables and the running glibc.
   lib/sync/cond-shared.c runs glibc's algorithm for them (the one of
   glibc 2.25 to 2.37), so that xpthread and glibc processes can share
   one.  Whether the running glibc still uses that algorithm is checked
   here once, by watching glibc's own functions work on scratch objects;
   if it does not, glibc's functions handle process-shared condition
   variables (same layout; they work in xpthread threads, whose TCB
   carries what glibc's code relies on).  */
#define _GNU_SOURCE
#include "compat.h"
#include "cond.h"
#include <errno.h>
#include <string.h>

#define LOOKUP(api, field, name, version) \
  api.field = (__typeof (api.field)) xp_glibc_function (name, version)

const struct xp_glibc_cond_api *
xp_glibc_cond (void)
{
  static struct xp_glibc_cond_api api;
  static int ready;
  if (xp_load_acquire (&ready))
    return &api;
  LOOKUP (api, destroy, "pthread_cond_destroy", "GLIBC_2.3.2");
  LOOKUP (api, signal, "pthread_cond_signal", "GLIBC_2.3.2");
  LOOKUP (api, broadcast, "pthread_cond_broadcast", "GLIBC_2.3.2");
  LOOKUP (api, wait, "pthread_cond_wait", "GLIBC_2.3.2");
  LOOKUP (api, clockwait, "pthread_cond_clockwait", "GLIBC_2.34");
  LOOKUP (api, timedwait, "pthread_cond_timedwait", "GLIBC_2.3.2");
  xp_store_release (&ready, 1);
  return &api;
}

/* The fields of a process-shared condition variable as lib/sync/
   cond-shared.c keeps them.  */
struct cond_image
{
  uint64_t wseq, g1_start;
  unsigned g_refs[2], g_size[2], g1_orig_size, wrefs, g_signals[2];
};

static bool
image_is (pthread_cond_t *cond, const struct cond_image *want)
{
  const struct __pthread_cond_s *c = &cond->__data;
  return c->__wseq.__value64 == want->wseq
         && c->__g1_start.__value64 == want->g1_start
         && memcmp (c->__g_refs, want->g_refs, sizeof want->g_refs) == 0
         && memcmp (c->__g_size, want->g_size, sizeof want->g_size) == 0
         && c->__g1_orig_size == want->g1_orig_size
         && c->__wrefs == want->wrefs
         && memcmp (c->__g_signals, want->g_signals,
                    sizeof want->g_signals) == 0;
}

/* glibc signals a condition variable whose one waiter (position 0, in
   slot 0) is still in G2: the protocol switches groups (G1 now starts at
   0 in slot 0, G2 is slot 1, orig size 1) and leaves one signal (2).  */
static bool
signal_matches (void)
{
  pthread_cond_t cond;
  memset (&cond, 0, sizeof cond);
  cond.__data.__wseq.__value64 = 2;
  cond.__data.__wrefs = 8 | XP_COND_PSHARED;
  xp_glibc_cond ()->signal (&cond);
  static const struct cond_image want = {
    .wseq = 3, .g1_start = 1, .g1_orig_size = 1 << 2,
    .wrefs = 8 | XP_COND_PSHARED, .g_signals = { 2, 0 },
  };
  return image_is (&cond, &want);
}

/* glibc waits with a deadline already past: its waiter takes position 0
   in slot 0, and withdrawing takes it off G2's size (0 - 1).  */
static bool
timeout_matches (void)
{
  pthread_cond_t cond;
  pthread_mutex_t mutex;
  pthread_mutexattr_t mattr;
  pthread_mutexattr_init (&mattr);
  pthread_mutexattr_setpshared (&mattr, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init (&mutex, &mattr);
  memset (&cond, 0, sizeof cond);
  cond.__data.__wrefs = XP_COND_PSHARED;
  struct timespec past = { 0, 0 };
  pthread_mutex_lock (&mutex);
  int err = xp_glibc_cond ()->timedwait (&cond, &mutex, &past);
  int unlocked = pthread_mutex_unlock (&mutex);
  static const struct cond_image want = {
    .wseq = 2, .wrefs = XP_COND_PSHARED, .g_size = { ~0u, 0 },
  };
  return err == ETIMEDOUT && unlocked == 0 && image_is (&cond, &want);
}

/* glibc changed the algorithm of its condition variables (2.41, and
   backported into some stable branches), so the version number does not
   tell; glibc's own functions on scratch objects do.  */
bool
xp_glibc_cond_protocol_known (void)
{
  static int known = -1;
  int k = xp_load_acquire (&known);
  if (k < 0)
    {
      k = signal_matches () && timeout_matches ();
      xp_store_release (&known, k);
    }
  return k;
}
