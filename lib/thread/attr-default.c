/* The process-wide default attributes: what pthread_create uses for a
   NULL attr and for a stack size left at 0, changed with
   pthread_setattr_default_np.

   The default stack size follows RLIMIT_STACK as glibc's does, read at
   start-up (xp_default_attr_init, from the library's constructor) as
   glibc reads it in its early initialisation: a program that changes the
   limit later keeps the default it started with (one that lifts it
   would otherwise get 2 MiB stacks where glibc gives 8).  A default
   needed before the constructor ran, by another library's constructor,
   reads it then.  The default's extension (cpu set, signal mask) is
   immutable once published and never freed: xp_default_attr_get hands
   it to thread creation without a copy, and a creation may still be
   reading it when another thread installs a new default.  Replaced
   extensions stay on a list so they remain reachable; programs set the
   default a handful of times at most.  */
#define _GNU_SOURCE
#include "attr.h"
#include "export.h"
#include "fork-locks.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>

/* glibc's ARCH_STACK_DEFAULT_SIZE: the size used when RLIMIT_STACK is
   unlimited.  */
#define XP_UNLIMITED_STACK_DEFAULT (2 * 1024 * 1024)

struct retired_ext
{
  struct xp_attr_ext ext;      /* first: the published pointer */
  struct retired_ext *next;
};

static XP_FORK_LOCK (default_attr, default_lock);
/* stack_size is 0 until the defaults are first needed.  */
static struct xp_attr default_attr;
static struct retired_ext *retired;

size_t
xp_page_size (void)
{
  static size_t page_size;
  size_t size = xp_load_relaxed (&page_size);
  if (xp_unlikely (size == 0))
    {
      size = getauxval (AT_PAGESZ);
      xp_store_relaxed (&page_size, size);
    }
  return size;
}

static size_t
round_up (size_t n, size_t unit)
{
  return (n + unit - 1) & ~(unit - 1);
}

static size_t
stack_size_from_rlimit (void)
{
  struct rlimit limit;
  size_t size;
  if (getrlimit (RLIMIT_STACK, &limit) != 0
      || limit.rlim_cur == RLIM_INFINITY)
    size = XP_UNLIMITED_STACK_DEFAULT;
  else if (limit.rlim_cur < (rlim_t) PTHREAD_STACK_MIN)
    size = PTHREAD_STACK_MIN;
  else
    size = limit.rlim_cur;
  return round_up (size, xp_page_size ());
}

static void
ensure_defaults_locked (void)
{
  if (default_attr.stack_size != 0)
    return;
  default_attr.stack_size = stack_size_from_rlimit ();
  default_attr.guard_size = xp_page_size ();
  default_attr.policy = SCHED_OTHER;
}

void
xp_default_attr_init (void)
{
  xp_lock (&default_lock);
  ensure_defaults_locked ();
  xp_unlock (&default_lock);
}

size_t
xp_default_stack_size (void)
{
  xp_lock (&default_lock);
  ensure_defaults_locked ();
  size_t size = default_attr.stack_size;
  xp_unlock (&default_lock);
  return size;
}

/* out->ext, when not NULL, is the shared published extension: read it,
   never free it.  */
void
xp_default_attr_get (struct xp_attr *out)
{
  xp_lock (&default_lock);
  ensure_defaults_locked ();
  *out = default_attr;
  xp_unlock (&default_lock);
}

static struct retired_ext *
copy_ext (const struct xp_attr_ext *from)
{
  struct retired_ext *copy = calloc (1, sizeof *copy);
  if (copy == NULL)
    return NULL;
  copy->ext.sigmask = from->sigmask;
  if (from->cpuset != NULL)
    {
      copy->ext.cpuset = malloc (from->cpuset_size);
      if (copy->ext.cpuset == NULL)
        {
          free (copy);
          return NULL;
        }
      memcpy (copy->ext.cpuset, from->cpuset, from->cpuset_size);
      copy->ext.cpuset_size = from->cpuset_size;
    }
  return copy;
}

/* The copy belongs to the caller, who frees it with pthread_attr_destroy;
   the retired_ext wrapper costs it one unused pointer.  */
int
pthread_getattr_default_np (pthread_attr_t *attr)
{
  struct xp_attr *out = xp_attr (attr);
  int err = 0;
  xp_lock (&default_lock);
  ensure_defaults_locked ();
  *out = default_attr;
  if (default_attr.ext != NULL)
    {
      struct retired_ext *copy = copy_ext (default_attr.ext);
      out->ext = copy != NULL ? &copy->ext : NULL;
      if (copy == NULL)
        err = ENOMEM;
    }
  xp_unlock (&default_lock);
  return err;
}
XP_EXPORT (pthread_getattr_default_np)

/* glibc's checks: a policy pthread_attr_setschedpolicy would take, a
   priority that policy allows, no stack address (one stack cannot serve
   every thread), and a stack size of 0 (keep the current one) or at least
   PTHREAD_STACK_MIN.  */
static int
check_default (const struct xp_attr *in)
{
  if (in->policy != SCHED_OTHER && in->policy != SCHED_FIFO
      && in->policy != SCHED_RR)
    return EINVAL;
  if (in->priority > 0
      && (in->priority < sched_get_priority_min (in->policy)
          || in->priority > sched_get_priority_max (in->policy)))
    return EINVAL;
  if (in->flags & XP_ATTR_STACK_SET)
    return EINVAL;
  if (in->stack_size != 0 && in->stack_size < (size_t) PTHREAD_STACK_MIN)
    return EINVAL;
  return 0;
}

int
pthread_setattr_default_np (const pthread_attr_t *attr)
{
  const struct xp_attr *in = xp_attr (attr);
  int err = check_default (in);
  if (err != 0)
    return err;
  struct retired_ext *ext = NULL;
  if (in->ext != NULL)
    {
      ext = copy_ext (in->ext);
      if (ext == NULL)
        return ENOMEM;
    }

  xp_lock (&default_lock);
  ensure_defaults_locked ();
  struct xp_attr next = *in;
  if (next.stack_size == 0)
    next.stack_size = default_attr.stack_size;
  next.ext = ext != NULL ? &ext->ext : NULL;
  if (default_attr.ext != NULL)
    {
      struct retired_ext *old = (struct retired_ext *) default_attr.ext;
      old->next = retired;
      retired = old;
    }
  default_attr = next;
  xp_unlock (&default_lock);
  return 0;
}
XP_EXPORT (pthread_setattr_default_np)
