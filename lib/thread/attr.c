/* Thread creation attributes (pthread_attr_*).  The layout is ours (see
   attr.h); the values accepted and the errors returned are glibc's.

   A stack set with pthread_attr_setstack is kept as its lowest address.
   The older pthread_attr_setstackaddr names the other end (where a stack
   growing down starts), so the top stays fixed when the size changes
   later, as in glibc: setstacksize on an attr holding a user stack moves
   the lowest address with it.  */
#define _GNU_SOURCE
#include "attr.h"
#include "export.h"
#include "sched-util.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int
pthread_attr_init (pthread_attr_t *attr)
{
  memset (attr, 0, sizeof *attr);
  struct xp_attr *a = xp_attr (attr);
  a->guard_size = xp_page_size ();
  a->policy = SCHED_OTHER;
  return 0;
}
XP_EXPORT (pthread_attr_init)

int
pthread_attr_destroy (pthread_attr_t *attr)
{
  struct xp_attr *a = xp_attr (attr);
  if (a->ext != NULL)
    {
      free (a->ext->cpuset);
      free (a->ext);
      a->ext = NULL;
    }
  return 0;
}
XP_EXPORT (pthread_attr_destroy)

/* The extension, allocated the first time an attribute needs it.  */
static struct xp_attr_ext *
attr_ext (struct xp_attr *a)
{
  if (a->ext == NULL)
    a->ext = calloc (1, sizeof *a->ext);
  return a->ext;
}

int
pthread_attr_setdetachstate (pthread_attr_t *attr, int state)
{
  struct xp_attr *a = xp_attr (attr);
  if (state == PTHREAD_CREATE_DETACHED)
    a->flags |= XP_ATTR_DETACHED;
  else if (state == PTHREAD_CREATE_JOINABLE)
    a->flags &= ~XP_ATTR_DETACHED;
  else
    return EINVAL;
  return 0;
}
XP_EXPORT (pthread_attr_setdetachstate)

int
pthread_attr_getdetachstate (const pthread_attr_t *attr, int *state)
{
  *state = (xp_attr (attr)->flags & XP_ATTR_DETACHED
            ? PTHREAD_CREATE_DETACHED : PTHREAD_CREATE_JOINABLE);
  return 0;
}
XP_EXPORT (pthread_attr_getdetachstate)

/* Any size is accepted; thread creation rounds it up to pages.  */
int
pthread_attr_setguardsize (pthread_attr_t *attr, size_t size)
{
  xp_attr (attr)->guard_size = size;
  return 0;
}
XP_EXPORT (pthread_attr_setguardsize)

int
pthread_attr_getguardsize (const pthread_attr_t *attr, size_t *size)
{
  *size = xp_attr (attr)->guard_size;
  return 0;
}
XP_EXPORT (pthread_attr_getguardsize)

int
pthread_attr_setinheritsched (pthread_attr_t *attr, int inherit)
{
  struct xp_attr *a = xp_attr (attr);
  if (inherit == PTHREAD_EXPLICIT_SCHED)
    a->flags |= XP_ATTR_EXPLICIT_SCHED;
  else if (inherit == PTHREAD_INHERIT_SCHED)
    a->flags &= ~XP_ATTR_EXPLICIT_SCHED;
  else
    return EINVAL;
  return 0;
}
XP_EXPORT (pthread_attr_setinheritsched)

int
pthread_attr_getinheritsched (const pthread_attr_t *attr, int *inherit)
{
  *inherit = (xp_attr (attr)->flags & XP_ATTR_EXPLICIT_SCHED
              ? PTHREAD_EXPLICIT_SCHED : PTHREAD_INHERIT_SCHED);
  return 0;
}
XP_EXPORT (pthread_attr_getinheritsched)

/* glibc refuses the policies it cannot describe with a sched_param alone
   (SCHED_BATCH, SCHED_IDLE, SCHED_DEADLINE) at this level.  */
static bool
policy_is_valid (int policy)
{
  return policy == SCHED_OTHER || policy == SCHED_FIFO || policy == SCHED_RR;
}

int
pthread_attr_setschedpolicy (pthread_attr_t *attr, int policy)
{
  if (!policy_is_valid (policy))
    return EINVAL;
  xp_attr (attr)->policy = policy;
  return 0;
}
XP_EXPORT (pthread_attr_setschedpolicy)

int
pthread_attr_getschedpolicy (const pthread_attr_t *attr, int *policy)
{
  *policy = xp_attr (attr)->policy;
  return 0;
}
XP_EXPORT (pthread_attr_getschedpolicy)

int
pthread_attr_setschedparam (pthread_attr_t *attr,
                            const struct sched_param *param)
{
  struct xp_attr *a = xp_attr (attr);
  /* A policy the kernel does not know has no valid priority (glibc).  */
  int min = sched_get_priority_min (a->policy);
  int max = sched_get_priority_max (a->policy);
  if (min < 0 || max < 0
      || param->sched_priority < min || param->sched_priority > max)
    return EINVAL;
  a->priority = param->sched_priority;
  return 0;
}
XP_EXPORT (pthread_attr_setschedparam)

int
pthread_attr_getschedparam (const pthread_attr_t *attr,
                            struct sched_param *param)
{
  memset (param, 0, sizeof *param);
  param->sched_priority = xp_attr (attr)->priority;
  return 0;
}
XP_EXPORT (pthread_attr_getschedparam)

/* Linux schedules every thread against every other thread of the system;
   process scope does not exist there.  */
int
pthread_attr_setscope (pthread_attr_t *attr, int scope)
{
  if (scope == PTHREAD_SCOPE_SYSTEM)
    return 0;
  return scope == PTHREAD_SCOPE_PROCESS ? ENOTSUP : EINVAL;
}
XP_EXPORT (pthread_attr_setscope)

int
pthread_attr_getscope (const pthread_attr_t *attr, int *scope)
{
  *scope = PTHREAD_SCOPE_SYSTEM;
  return 0;
}
XP_EXPORT (pthread_attr_getscope)

static size_t
effective_stack_size (const struct xp_attr *a)
{
  return a->stack_size != 0 ? a->stack_size : xp_default_stack_size ();
}

int
pthread_attr_setstacksize (pthread_attr_t *attr, size_t size)
{
  struct xp_attr *a = xp_attr (attr);
  if (size < (size_t) PTHREAD_STACK_MIN)
    return EINVAL;
  if (a->flags & XP_ATTR_STACK_SET)
    {
      char *top = (char *) a->stack_addr + effective_stack_size (a);
      a->stack_addr = top - size;
    }
  a->stack_size = size;
  a->flags |= XP_ATTR_STACKSIZE_SET;
  return 0;
}
XP_EXPORT (pthread_attr_setstacksize)

int
pthread_attr_getstacksize (const pthread_attr_t *attr, size_t *size)
{
  *size = effective_stack_size (xp_attr (attr));
  return 0;
}
XP_EXPORT (pthread_attr_getstacksize)

int
pthread_attr_setstack (pthread_attr_t *attr, void *addr, size_t size)
{
  struct xp_attr *a = xp_attr (attr);
  if (size < (size_t) PTHREAD_STACK_MIN)
    return EINVAL;
  a->stack_addr = addr;
  a->stack_size = size;
  a->flags |= XP_ATTR_STACK_SET | XP_ATTR_STACKSIZE_SET;
  return 0;
}
XP_EXPORT (pthread_attr_setstack)

int
pthread_attr_getstack (const pthread_attr_t *attr, void **addr, size_t *size)
{
  const struct xp_attr *a = xp_attr (attr);
  *addr = a->flags & XP_ATTR_STACK_SET ? a->stack_addr : NULL;
  *size = effective_stack_size (a);
  return 0;
}
XP_EXPORT (pthread_attr_getstack)

/* addr is where the stack starts, its highest address.  The size is fixed
   now, default included, so that a later change of the process default
   cannot move a stack the caller placed.  */
int
pthread_attr_setstackaddr (pthread_attr_t *attr, void *addr)
{
  struct xp_attr *a = xp_attr (attr);
  a->stack_size = effective_stack_size (a);
  a->stack_addr = (char *) addr - a->stack_size;
  a->flags |= XP_ATTR_STACK_SET;
  return 0;
}
XP_EXPORT (pthread_attr_setstackaddr)

int
pthread_attr_getstackaddr (const pthread_attr_t *attr, void **addr)
{
  const struct xp_attr *a = xp_attr (attr);
  *addr = (a->flags & XP_ATTR_STACK_SET
           ? (char *) a->stack_addr + effective_stack_size (a) : NULL);
  return 0;
}
XP_EXPORT (pthread_attr_getstackaddr)

/* Only copied here, as in glibc: a set naming CPUs the kernel does not
   have is refused by pthread_create, which is when the kernel sees it.
   A zero size or no set removes the affinity, as in glibc.  */
int
pthread_attr_setaffinity_np (pthread_attr_t *attr, size_t size,
                             const cpu_set_t *cpuset)
{
  struct xp_attr *a = xp_attr (attr);
  if (size == 0 || xp_unhinted (cpuset) == NULL)
    {
      if (a->ext != NULL)
        {
          free (a->ext->cpuset);
          a->ext->cpuset = NULL;
          a->ext->cpuset_size = 0;
        }
      return 0;
    }
  struct xp_attr_ext *ext = attr_ext (a);
  if (ext == NULL)
    return ENOMEM;
  if (ext->cpuset_size != size)
    {
      cpu_set_t *copy = realloc (ext->cpuset, size);
      if (copy == NULL)
        return ENOMEM;
      ext->cpuset = copy;
      ext->cpuset_size = size;
    }
  memcpy (ext->cpuset, cpuset, size);
  return 0;
}
XP_EXPORT (pthread_attr_setaffinity_np)

static bool
all_zero (const char *bytes, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (bytes[i] != 0)
      return false;
  return true;
}

/* Without a stored set every CPU is allowed.  A buffer smaller than the
   stored set is enough as long as the CPUs it cannot hold are not in it.  */
int
pthread_attr_getaffinity_np (const pthread_attr_t *attr, size_t size,
                             cpu_set_t *cpuset)
{
  const struct xp_attr *a = xp_attr (attr);
  if (a->ext == NULL || a->ext->cpuset == NULL)
    {
      memset (cpuset, 0xff, size);
      return 0;
    }
  const char *stored = (const char *) a->ext->cpuset;
  size_t stored_size = a->ext->cpuset_size;
  if (stored_size > size && !all_zero (stored + size, stored_size - size))
    return EINVAL;
  size_t copied = stored_size < size ? stored_size : size;
  memcpy (cpuset, stored, copied);
  memset ((char *) cpuset + copied, 0, size - copied);
  return 0;
}
XP_EXPORT (pthread_attr_getaffinity_np)

#ifdef XP_OLD_VERSION_xp_attr_setaffinity_old
/* The GLIBC_2.3.3 interface had no size: a cpu_set_t was the whole set.  */
int
xp_attr_getaffinity_old (const pthread_attr_t *attr, cpu_set_t *cpuset)
{
  return pthread_attr_getaffinity_np (attr, sizeof *cpuset, cpuset);
}
XP_EXPORT_OLD (xp_attr_getaffinity_old)

int
xp_attr_setaffinity_old (pthread_attr_t *attr, const cpu_set_t *cpuset)
{
  return pthread_attr_setaffinity_np (attr, sizeof *cpuset, cpuset);
}
XP_EXPORT_OLD (xp_attr_setaffinity_old)
#endif

/* A new thread must be able to receive the reserved signals, so they are
   dropped from the mask here, as pthread_sigmask would drop them.  */
int
pthread_attr_setsigmask_np (pthread_attr_t *attr, const sigset_t *mask)
{
  struct xp_attr *a = xp_attr (attr);
  if (mask == NULL)
    {
      a->flags &= ~XP_ATTR_SIGMASK_SET;
      return 0;
    }
  struct xp_attr_ext *ext = attr_ext (a);
  if (ext == NULL)
    return ENOMEM;
  ext->sigmask = *mask;
  xp_sigset_drop_reserved (&ext->sigmask);
  a->flags |= XP_ATTR_SIGMASK_SET;
  return 0;
}
XP_EXPORT (pthread_attr_setsigmask_np)

int
pthread_attr_getsigmask_np (const pthread_attr_t *attr, sigset_t *mask)
{
  const struct xp_attr *a = xp_attr (attr);
  if (!(a->flags & XP_ATTR_SIGMASK_SET))
    {
      sigemptyset (mask);
      return PTHREAD_ATTR_NO_SIGMASK_NP;
    }
  *mask = a->ext->sigmask;
  return 0;
}
XP_EXPORT (pthread_attr_getsigmask_np)
