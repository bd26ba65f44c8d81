/* Small entry points that need no state of their own, or almost none.  */
#define _GNU_SOURCE
#include "attr.h"
#include "away.h"
#include "compat.h"
#include "export.h"
#include <errno.h>
#include <pthread.h>

int
pthread_equal (pthread_t a, pthread_t b)
{
  return a == b;
}
XP_EXPORT (pthread_equal)

/* A thread that yields is marked away meanwhile (away.h), so that the
   waiters of the locks it holds stop spinning: hence sched_yield here,
   over glibc's.  */
int
sched_yield (void)
{
  xp_yield ();
  return 0;
}
XP_EXPORT (sched_yield)

/* <pthread.h> turns calls to pthread_yield into calls to sched_yield, so
   only binaries built before that still call it, by its symbol name,
   which the definition needs spelled out.  */
int xp_pthread_yield (void) __asm__ ("pthread_yield");

int
xp_pthread_yield (void)
{
  xp_yield ();
  return 0;
}
XP_EXPORT (pthread_yield)

/* Threads map one to one onto kernel threads, so the level is only a
   hint with nothing to act on; POSIX still wants it stored and returned.  */
static int concurrency;

int
pthread_getconcurrency (void)
{
  return xp_load_relaxed (&concurrency);
}
XP_EXPORT (pthread_getconcurrency)

int
pthread_setconcurrency (int level)
{
  if (level < 0)
    return EINVAL;
  xp_store_relaxed (&concurrency, level);
  return 0;
}
XP_EXPORT (pthread_setconcurrency)

/* LinuxThreads needed this before exec to kill its other threads; exec
   does that by itself for kernel threads of one process.  glibc keeps it
   as a documented no-op for old binaries, and so does xpthread.  */
void
pthread_kill_other_threads_np (void)
{
}
XP_EXPORT (pthread_kill_other_threads_np)

#ifdef XP_VERSIONS_pthread_atfork
/* Only old binaries reach this: programs get pthread_atfork statically
   from glibc's nonshared archive, which passes their DSO handle.  The old
   exported version registered without one, so its handlers stay when the
   registering object is unloaded; the same here.  */
int
pthread_atfork (void (*prepare) (void), void (*parent) (void),
                void (*child) (void))
{
  return xp_glibc_register_atfork (prepare, parent, child, NULL);
}
XP_EXPORT (pthread_atfork)
#endif

/* The smallest stack size that leaves a thread PTHREAD_STACK_MIN of real
   stack, by glibc's formula: a guard page and the static TLS and TCB,
   which are carved from the same block.  */
size_t
__pthread_get_minstack (const pthread_attr_t *attr)
{
  return xp_page_size () + xp_compat_tls_reserve () + PTHREAD_STACK_MIN;
}
XP_EXPORT (__pthread_get_minstack)
