/* Which glibc release's process-shared condition variable the running
   glibc keeps, found at run time:

   1. The layout, at start-up: glibc's own pthread_cond_init of a
      process-shared, CLOCK_MONOTONIC variable over a scratch object writes
      zeros but for one word, __wrefs, which it sets to exactly those two
      bits.  Where that word lies tells the layout (byte 36 up to glibc
      2.40, byte 28 from 2.41, which removed __g_refs).
   2. The protocol, at the first use of a process-shared condition
      variable: the release range of the table whose layout that is must
      see glibc's own signal and timed-out wait turn its probe's images
      into the next ones (stable updates changed the algorithm within a
      release number, so the version string does not tell).
   3. Otherwise glibc's own functions handle process-shared condition
      variables; they work in xpthread threads, whose TCB carries what
      glibc's code relies on, but their waits are not xpthread
      cancellation points.  */
#define _GNU_SOURCE
#include "compat.h"
#include "cond-common.h"
#include "env.h"
#include "fork-locks.h"
#include "glibc-cond.h"
#include <errno.h>
#include <string.h>

unsigned xp_glibc_cond_flags_offset;

/* ---- glibc's own functions ---------------------------------------------- */

struct glibc_fns
{
  int (*init) (pthread_cond_t *, const pthread_condattr_t *);
  int (*destroy) (pthread_cond_t *);
  int (*signal) (pthread_cond_t *);
  int (*broadcast) (pthread_cond_t *);
  int (*wait) (pthread_cond_t *, pthread_mutex_t *);
  int (*clockwait) (pthread_cond_t *, pthread_mutex_t *, clockid_t,
                    const struct timespec *);
  int (*condattr_init) (pthread_condattr_t *);
  int (*condattr_setpshared) (pthread_condattr_t *, int);
  int (*condattr_setclock) (pthread_condattr_t *, clockid_t);
};

#define LOOKUP(fns, field, name) \
  fns.field = (__typeof (fns.field)) xp_glibc_function (name)

static const struct glibc_fns *
glibc (void)
{
  static struct glibc_fns fns;
  static int ready;
  if (xp_load_acquire (&ready))
    return &fns;
  LOOKUP (fns, init, "pthread_cond_init");
  LOOKUP (fns, destroy, "pthread_cond_destroy");
  LOOKUP (fns, signal, "pthread_cond_signal");
  LOOKUP (fns, broadcast, "pthread_cond_broadcast");
  LOOKUP (fns, wait, "pthread_cond_wait");
  LOOKUP (fns, clockwait, "pthread_cond_clockwait");
  LOOKUP (fns, condattr_init, "pthread_condattr_init");
  LOOKUP (fns, condattr_setpshared, "pthread_condattr_setpshared");
  LOOKUP (fns, condattr_setclock, "pthread_condattr_setclock");
  xp_store_release (&ready, 1);
  return &fns;
}

static int
glibc_init (pthread_cond_t *cond, bool monotonic)
{
  pthread_condattr_t attr;
  glibc ()->condattr_init (&attr);
  glibc ()->condattr_setpshared (&attr, PTHREAD_PROCESS_SHARED);
  if (monotonic)
    glibc ()->condattr_setclock (&attr, CLOCK_MONOTONIC);
  return glibc ()->init (cond, &attr);
}

/* ---- the layout ----------------------------------------------------------- */

/* glibc's init wrote an image of no known layout.  */
static bool layout_unknown;

/* The word glibc's init sets to the two flags, all else zero; 0 if the
   image is not like that.  The scratch object is static: under valgrind,
   helgrind and DRD note every condition variable glibc initialises, and
   must not meet that address again as a lock of the program's.  */
static unsigned
flags_word_of_init (void)
{
  static pthread_cond_t scratch;
  memset (&scratch, 0xa5, sizeof scratch);
  if (glibc_init (&scratch, true) != 0)
    return 0;
  const unsigned *word = (const unsigned *) &scratch;
  unsigned found = 0;
  for (unsigned i = 0; i < sizeof scratch / sizeof *word; i++)
    if (word[i] == (XP_GLIBC_COND_PSHARED | XP_GLIBC_COND_MONOTONIC)
        && found == 0)
      found = i * sizeof *word;
    else if (word[i] != 0)
      return 0;
  return found;
}

/* Idempotent: threads that race here compute the same answer.  Called
   from the constructor, so that no condition variable operation of the
   program's finds it undone.  */
unsigned
xp_glibc_cond_find (void)
{
  unsigned off = flags_word_of_init ();
  if (off == 0)
    {
      /* No release wrote this: keep xpthread's own mark where glibc
         2.25-2.40 kept it; process-shared condition variables then work
         between xpthread processes only.  */
      xp_warn ("glibc's process-shared condition variable is of no known "
               "layout; sharing one with a process without xpthread "
               "will not work");
      off = xp_cond_grouped.off_wrefs;
      xp_store_relaxed (&layout_unknown, true);
    }
  xp_store_release (&xp_glibc_cond_flags_offset, off);
  return off;
}

/* ---- the releases ------------------------------------------------------- */

struct cond_release
{
  const char *releases;
  const struct xp_cond_protocol *protocol;
};

static const struct cond_release releases[] = {
  { "2.25 to 2.40", &xp_cond_grouped },
  { "2.41 and later", &xp_cond_relative },
};

/* The release range of the running glibc's layout; NULL if none.  */
static const struct cond_release *
running_release (void)
{
  unsigned off = xp_load_acquire (&xp_glibc_cond_flags_offset);
  if (off == 0)
    off = xp_glibc_cond_find ();
  if (xp_load_relaxed (&layout_unknown))
    return NULL;
  for (size_t i = 0; i < sizeof releases / sizeof *releases; i++)
    if (releases[i].protocol->off_wrefs == off)
      return &releases[i];
  return NULL;
}

const char *
xp_glibc_cond_release (void)
{
  const struct cond_release *r = running_release ();
  return r != NULL ? r->releases : "unknown";
}

/* ---- which protocol glibc runs ------------------------------------------ */

/* The scratch objects are static, for valgrind's sake (flags_word_of_init
   says why), and used under choice_lock.  */
static pthread_cond_t probe_cond;
static pthread_mutex_t probe_mutex;

static bool
signal_turns (const void *before, const void *after)
{
  memcpy (&probe_cond, before, sizeof probe_cond);
  glibc ()->signal (&probe_cond);
  return memcmp (&probe_cond, after, sizeof probe_cond) == 0;
}

/* The mutex is xpthread's, process-shared: it keeps glibc's protocol, so
   glibc's wait can unlock and re-lock it.  */
static bool
timeout_turns (const void *before, const void *after)
{
  memcpy (&probe_cond, before, sizeof probe_cond);
  pthread_mutexattr_t mattr;
  pthread_mutexattr_init (&mattr);
  pthread_mutexattr_setpshared (&mattr, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init (&probe_mutex, &mattr);
  struct timespec past = { 0, 0 };
  pthread_mutex_lock (&probe_mutex);
  int err = glibc ()->clockwait (&probe_cond, &probe_mutex, CLOCK_REALTIME,
                                 &past);
  int unlocked = pthread_mutex_unlock (&probe_mutex);
  return err == ETIMEDOUT && unlocked == 0
         && memcmp (&probe_cond, after, sizeof probe_cond) == 0;
}

static bool
glibc_runs (const struct xp_cond_protocol *p)
{
  return signal_turns (p->probe.before_signal, p->probe.after_signal)
         && timeout_turns (p->probe.before_timeout, p->probe.after_timeout);
}

/* NULL: glibc's own functions.  */
static const struct xp_cond_protocol *
choose_protocol (void)
{
  if (xp_load_relaxed (&layout_unknown))
    return &xp_cond_grouped;
  const struct cond_release *r = running_release ();
  if (r != NULL && glibc_runs (r->protocol))
    return r->protocol;
  return NULL;
}

static XP_FORK_LOCK (shared_cond, choice_lock);

static const struct xp_cond_protocol *
protocol (void)
{
  /* GLIBC_OWN: chosen, and it is glibc's own code.  */
  static const struct xp_cond_protocol glibc_own;
  static const struct xp_cond_protocol *chosen;
  const struct xp_cond_protocol *p = xp_load_acquire (&chosen);
  if (xp_unlikely (p == NULL))
    {
      xp_lock (&choice_lock);
      p = chosen;
      if (p == NULL)
        {
          p = choose_protocol ();
          if (xp_env_flag ("XPTHREAD_SHOW_MODE"))
            xp_warn ("process-shared condition variables: %s",
                     p != NULL ? p->name : "glibc's own code");
          if (p == NULL)
            p = &glibc_own;
          xp_store_release (&chosen, p);
        }
      xp_unlock (&choice_lock);
    }
  return p == &glibc_own ? NULL : p;
}

/* ---- the operations ----------------------------------------------------- */

void
xp_shared_cond_init (pthread_cond_t *cond, bool monotonic)
{
  const struct xp_cond_protocol *p = protocol ();
  if (p != NULL)
    xp_cond_protocol_init (p, cond, monotonic);
  else
    glibc_init (cond, monotonic);
}

int
xp_shared_cond_destroy (pthread_cond_t *cond)
{
  const struct xp_cond_protocol *p = protocol ();
  return p != NULL ? xp_cond_protocol_destroy (p, cond)
                   : glibc ()->destroy (cond);
}

int
xp_shared_cond_signal (pthread_cond_t *cond)
{
  const struct xp_cond_protocol *p = protocol ();
  return p != NULL ? xp_cond_protocol_signal (p, cond)
                   : glibc ()->signal (cond);
}

int
xp_shared_cond_broadcast (pthread_cond_t *cond)
{
  const struct xp_cond_protocol *p = protocol ();
  return p != NULL ? xp_cond_protocol_broadcast (p, cond)
                   : glibc ()->broadcast (cond);
}

int
xp_shared_cond_wait (pthread_cond_t *cond, pthread_mutex_t *m,
                     clockid_t clock, const struct timespec *abstime)
{
  const struct xp_cond_protocol *p = protocol ();
  if (p != NULL)
    return xp_cond_protocol_wait (p, cond, m, clock, abstime);
  if (abstime == NULL)
    return glibc ()->wait (cond, m);
  return glibc ()->clockwait (cond, m, clock, abstime);
}
