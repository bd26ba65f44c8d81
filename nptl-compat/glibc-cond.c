/* Which glibc release's process-shared condition variable the running
   glibc keeps, found once at run time:

   1. The layout: glibc's own pthread_cond_init of a process-shared,
      CLOCK_MONOTONIC variable over a scratch object writes zeros but for
      one word, __wrefs, which it sets to exactly those two bits.  Where
      that word lies tells the layout (byte 36 up to glibc 2.40, byte 28
      from 2.41, which removed __g_refs).
   2. The protocol: the release range of the table whose layout that is
      is asked whether glibc's own functions behave as its protocol does
      on scratch objects (stable updates changed the algorithm within a
      release number, so the version string does not tell).
   3. Otherwise glibc's own functions handle process-shared condition
      variables; they work in xpthread threads, whose TCB carries what
      glibc's code relies on, but their waits are not xpthread
      cancellation points.  */
#define _GNU_SOURCE
#include "compat.h"
#include "env.h"
#include "fork-locks.h"
#include "cond-grouped.h"
#include "cond-relative.h"
#include "glibc-cond.h"
#include <errno.h>
#include <string.h>

unsigned xp_glibc_cond_flags_offset;
/* glibc's init wrote an image of no known layout.  */
static bool layout_unknown;

#define LOOKUP(fns, field, name, version) \
  fns.field = (__typeof (fns.field)) xp_glibc_function (name, version)

const struct xp_glibc_cond_fns *
xp_glibc_cond_fns (void)
{
  static struct xp_glibc_cond_fns fns;
  static int ready;
  if (xp_load_acquire (&ready))
    return &fns;
  LOOKUP (fns, init, "pthread_cond_init", "GLIBC_2.3.2");
  LOOKUP (fns, destroy, "pthread_cond_destroy", "GLIBC_2.3.2");
  LOOKUP (fns, signal, "pthread_cond_signal", "GLIBC_2.3.2");
  LOOKUP (fns, broadcast, "pthread_cond_broadcast", "GLIBC_2.3.2");
  LOOKUP (fns, wait, "pthread_cond_wait", "GLIBC_2.3.2");
  LOOKUP (fns, clockwait, "pthread_cond_clockwait", "GLIBC_2.34");
  LOOKUP (fns, condattr_init, "pthread_condattr_init", "GLIBC_2.2.5");
  LOOKUP (fns, condattr_setpshared, "pthread_condattr_setpshared",
          "GLIBC_2.2.5");
  LOOKUP (fns, condattr_setclock, "pthread_condattr_setclock", "GLIBC_2.3.3");
  xp_store_release (&ready, 1);
  return &fns;
}

/* ---- glibc's own code ------------------------------------------------- */

static int
glibc_init_attr (pthread_cond_t *cond, bool monotonic)
{
  const struct xp_glibc_cond_fns *glibc = xp_glibc_cond_fns ();
  pthread_condattr_t attr;
  glibc->condattr_init (&attr);
  glibc->condattr_setpshared (&attr, PTHREAD_PROCESS_SHARED);
  if (monotonic)
    glibc->condattr_setclock (&attr, CLOCK_MONOTONIC);
  return glibc->init (cond, &attr);
}

static void
glibc_init (pthread_cond_t *cond, bool monotonic)
{
  glibc_init_attr (cond, monotonic);
}

static int
glibc_destroy (pthread_cond_t *cond)
{
  return xp_glibc_cond_fns ()->destroy (cond);
}

static int
glibc_signal (pthread_cond_t *cond)
{
  return xp_glibc_cond_fns ()->signal (cond);
}

static int
glibc_broadcast (pthread_cond_t *cond)
{
  return xp_glibc_cond_fns ()->broadcast (cond);
}

static int
glibc_wait (pthread_cond_t *cond, pthread_mutex_t *m, clockid_t clock,
            const struct timespec *abstime)
{
  const struct xp_glibc_cond_fns *glibc = xp_glibc_cond_fns ();
  if (abstime == NULL)
    return glibc->wait (cond, m);
  return glibc->clockwait (cond, m, clock, abstime);
}

static const struct xp_shared_cond_ops glibc_ops = {
  .name = "glibc's own code",
  .cancellable = false,
  .init = glibc_init,
  .destroy = glibc_destroy,
  .signal = glibc_signal,
  .broadcast = glibc_broadcast,
  .wait = glibc_wait,
};

/* ---- which protocol glibc runs ------------------------------------------ */

/* The scratch objects are static, for valgrind's sake (flags_word_of_init
   says why), and used under choice_lock.  */
static pthread_cond_t probe_cond;
static pthread_mutex_t probe_mutex;

static bool
signal_turns (const void *before, const void *after)
{
  pthread_cond_t *c = &probe_cond;
  memcpy (c, before, sizeof *c);
  xp_glibc_cond_fns ()->signal (c);
  return memcmp (c, after, sizeof *c) == 0;
}

/* The mutex is xpthread's, process-shared: it keeps glibc's protocol, so
   glibc's wait can unlock and re-lock it.  */
static bool
timeout_turns (const void *before, const void *after)
{
  pthread_cond_t *c = &probe_cond;
  memcpy (c, before, sizeof *c);
  pthread_mutex_t *mutex = &probe_mutex;
  pthread_mutexattr_t mattr;
  pthread_mutexattr_init (&mattr);
  pthread_mutexattr_setpshared (&mattr, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init (mutex, &mattr);
  struct timespec past = { 0, 0 };
  pthread_mutex_lock (mutex);
  int err = xp_glibc_cond_fns ()->clockwait (c, mutex, CLOCK_REALTIME,
                                              &past);
  int unlocked = pthread_mutex_unlock (mutex);
  return err == ETIMEDOUT && unlocked == 0
         && memcmp (c, after, sizeof *c) == 0;
}

bool
xp_glibc_cond_behaves (const struct xp_glibc_cond_probe *p)
{
  return signal_turns (p->before_signal, p->after_signal)
         && timeout_turns (p->before_timeout, p->after_timeout);
}

/* ---- the releases ------------------------------------------------------- */

struct cond_release
{
  const char *releases;
  unsigned flags_offset;        /* where __wrefs lies */
  const struct xp_shared_cond_ops *ops; /* xpthread's code of it */
  bool (*spoken) (void);        /* the running glibc runs ops' protocol */
};

static const struct cond_release releases[] = {
  { "2.25 to 2.40", XP_COND_GROUPED_FLAGS_OFFSET, &xp_cond_grouped_ops,
    xp_cond_grouped_spoken },
  { "2.41 and later", XP_COND_RELATIVE_FLAGS_OFFSET, &xp_cond_relative_ops,
    xp_cond_relative_spoken },
};

/* The word glibc's init sets to the two flags, all else zero; 0 if the
   image is not like that.  The scratch object is static: under valgrind,
   helgrind and DRD note every condition variable glibc initialises, and
   must not meet that address again as a lock of the program's.  */
static unsigned
flags_word_of_init (void)
{
  static pthread_cond_t scratch;
  memset (&scratch, 0xa5, sizeof scratch);
  if (glibc_init_attr (&scratch, true) != 0)
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

/* The release range of the running glibc's layout; NULL if none.  */
static const struct cond_release *
running_release (void)
{
  unsigned off = xp_load_acquire (&xp_glibc_cond_flags_offset);
  for (size_t i = 0; i < sizeof releases / sizeof *releases; i++)
    if (releases[i].flags_offset == off)
      return &releases[i];
  return NULL;
}

/* Idempotent: threads that race here compute the same answer.  Called
   from the constructor, so that no lock or condition variable operation
   of the program's finds it undone.  */
unsigned
xp_glibc_cond_find (void)
{
  unsigned off = flags_word_of_init ();
  if (off == 0)
    {
      /* glibc's init is not what any release did: keep xpthread's own
         mark where glibc 2.25-2.40 kept it; process-shared condition
         variables then work between xpthread processes only.  */
      xp_warn ("glibc's process-shared condition variable is of no known "
               "layout; sharing one with a process without xpthread "
               "will not work");
      off = XP_COND_GROUPED_FLAGS_OFFSET;
      xp_store_relaxed (&layout_unknown, true);
    }
  xp_store_release (&xp_glibc_cond_flags_offset, off);
  return off;
}

/* Which protocol process-shared condition variables follow, decided at
   their first use: the check runs glibc's functions on scratch objects,
   which a program that never shares one need not pay for (nor see under
   valgrind).  */
static const struct xp_shared_cond_ops *
choose_ops (void)
{
  if (xp_load_acquire (&xp_glibc_cond_flags_offset) == 0)
    xp_glibc_cond_find ();
  if (xp_load_relaxed (&layout_unknown))
    return &xp_cond_grouped_ops;
  const struct cond_release *r = running_release ();
  if (r == NULL)
    return &glibc_ops;
  if (r->spoken ())
    return r->ops;
  return &glibc_ops;
}

static XP_FORK_LOCK (shared_cond, choice_lock);

const struct xp_shared_cond_ops *
xp_shared_cond (void)
{
  static const struct xp_shared_cond_ops *ops;
  const struct xp_shared_cond_ops *o = xp_load_acquire (&ops);
  if (xp_likely (o != NULL))
    return o;
  xp_lock (&choice_lock);
  o = ops;
  if (o == NULL)
    {
      o = choose_ops ();
      xp_store_release (&ops, o);
      if (xp_env_flag ("XPTHREAD_SHOW_MODE"))
        xp_warn ("process-shared condition variables: %s", o->name);
    }
  xp_unlock (&choice_lock);
  return o;
}

const char *
xp_glibc_cond_release (void)
{
  if (xp_load_acquire (&xp_glibc_cond_flags_offset) == 0)
    xp_glibc_cond_find ();
  const struct cond_release *r = running_release ();
  return r != NULL && !xp_load_relaxed (&layout_unknown) ? r->releases
                                                          : "unknown";
}
