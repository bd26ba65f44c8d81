/* The thread API around the lifecycle: attributes and their defaults,
   pthread_getattr_np, thread-specific data, pthread_once, names,
   scheduling, affinity, signals, CPU clocks and the small compatibility
   entry points, with every error glibc documents for them.  */
#define _GNU_SOURCE
#include "common.h"
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT 60

/* The stackaddr pair is obsolete but still part of the ABI under test.  */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* --- helpers ------------------------------------------------------------ */

static size_t
page_size (void)
{
  return (size_t) sysconf (_SC_PAGESIZE);
}

/* NAME in the older ABI that has code of its own, libxpthread's; NULL
   where this architecture never had that ABI (glibc's aarch64 and riscv64
   ports begin after it).  */
static void *
old_abi_symbol (const char *name)
{
  const char *version = xp_test_abi_old_impl (name);
  return version != NULL ? xp_test_symbol (name, version) : NULL;
}

static void
sleep_ms (long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
  nanosleep (&ts, NULL);
}

/* A thread that has returned but is not joined: pthread_sigqueue turns
   to ESRCH once it is past its exit (pthread_kill answers 0, as glibc's
   does since 2.34).  */
static void
wait_until_exited (pthread_t t)
{
  union sigval none = { .sival_int = 0 };
  for (int i = 0; i < 5000; i++)
    {
      if (pthread_sigqueue (t, 0, none) == ESRCH)
        return;
      sleep_ms (1);
    }
  ck_abort_msg ("thread did not exit");
}

/* A thread parked until released, for acting on a live other thread.  */
struct parked
{
  pthread_t thread;
  int release;
};

static void *
park (void *arg)
{
  struct parked *p = arg;
  while (!__atomic_load_n (&p->release, __ATOMIC_ACQUIRE))
    sleep_ms (1);
  return NULL;
}

static void
park_start (struct parked *p)
{
  p->release = 0;
  ck_assert_int_eq (pthread_create (&p->thread, NULL, park, p), 0);
}

static void
park_finish (struct parked *p)
{
  __atomic_store_n (&p->release, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq (pthread_join (p->thread, NULL), 0);
}

static bool
sigset_has (const sigset_t *set, int sig)
{
  const unsigned bits = 8 * sizeof set->__val[0];
  return (set->__val[(sig - 1) / bits] >> ((sig - 1) % bits)) & 1;
}

static size_t
rlimit_default_stack (void)
{
  struct rlimit limit;
  ck_assert_int_eq (getrlimit (RLIMIT_STACK, &limit), 0);
  size_t size = limit.rlim_cur == RLIM_INFINITY ? 2 * 1024 * 1024
                : limit.rlim_cur;
  if (size < (size_t) PTHREAD_STACK_MIN)
    size = PTHREAD_STACK_MIN;
  return (size + page_size () - 1) & ~(page_size () - 1);
}

/* --- attributes --------------------------------------------------------- */

START_TEST (attr_defaults)
{
  pthread_attr_t attr;
  ck_assert_int_eq (pthread_attr_init (&attr), 0);
  int value;
  size_t size;
  void *addr;
  struct sched_param param = { .sched_priority = -1 };
  ck_assert_int_eq (pthread_attr_getdetachstate (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_CREATE_JOINABLE);
  ck_assert_int_eq (pthread_attr_getinheritsched (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_INHERIT_SCHED);
  ck_assert_int_eq (pthread_attr_getschedpolicy (&attr, &value), 0);
  ck_assert_int_eq (value, SCHED_OTHER);
  ck_assert_int_eq (pthread_attr_getschedparam (&attr, &param), 0);
  ck_assert_int_eq (param.sched_priority, 0);
  ck_assert_int_eq (pthread_attr_getscope (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_SCOPE_SYSTEM);
  ck_assert_int_eq (pthread_attr_getguardsize (&attr, &size), 0);
  ck_assert_uint_eq (size, page_size ());
  ck_assert_int_eq (pthread_attr_getstacksize (&attr, &size), 0);
  ck_assert_uint_eq (size, rlimit_default_stack ());
  ck_assert_int_eq (pthread_attr_getstack (&attr, &addr, &size), 0);
  ck_assert_ptr_null (addr);
  ck_assert_uint_eq (size, rlimit_default_stack ());
  ck_assert_int_eq (pthread_attr_getstackaddr (&attr, &addr), 0);
  ck_assert_ptr_null (addr);

  cpu_set_t cpus;
  ck_assert_int_eq (pthread_attr_getaffinity_np (&attr, sizeof cpus, &cpus),
                    0);
  ck_assert_int_eq (CPU_COUNT (&cpus), CPU_SETSIZE);
  sigset_t mask;
  ck_assert_int_eq (pthread_attr_getsigmask_np (&attr, &mask),
                    PTHREAD_ATTR_NO_SIGMASK_NP);
  ck_assert_int_eq (pthread_attr_destroy (&attr), 0);
}
END_TEST

START_TEST (attr_flags_round_trip)
{
  pthread_attr_t attr;
  int value;
  pthread_attr_init (&attr);
  ck_assert_int_eq (pthread_attr_setdetachstate (&attr,
                                                 PTHREAD_CREATE_DETACHED), 0);
  ck_assert_int_eq (pthread_attr_getdetachstate (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_CREATE_DETACHED);
  ck_assert_int_eq (pthread_attr_setdetachstate (&attr, 99), EINVAL);
  ck_assert_int_eq (pthread_attr_getdetachstate (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_CREATE_DETACHED);
  ck_assert_int_eq (pthread_attr_setdetachstate (&attr,
                                                 PTHREAD_CREATE_JOINABLE), 0);
  ck_assert_int_eq (pthread_attr_getdetachstate (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_CREATE_JOINABLE);

  ck_assert_int_eq (pthread_attr_setinheritsched (&attr,
                                                  PTHREAD_EXPLICIT_SCHED), 0);
  ck_assert_int_eq (pthread_attr_getinheritsched (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_EXPLICIT_SCHED);
  ck_assert_int_eq (pthread_attr_setinheritsched (&attr, 99), EINVAL);
  ck_assert_int_eq (pthread_attr_setinheritsched (&attr,
                                                  PTHREAD_INHERIT_SCHED), 0);
  ck_assert_int_eq (pthread_attr_getinheritsched (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_INHERIT_SCHED);

  ck_assert_int_eq (pthread_attr_setscope (&attr, PTHREAD_SCOPE_SYSTEM), 0);
  ck_assert_int_eq (pthread_attr_setscope (&attr, PTHREAD_SCOPE_PROCESS),
                    ENOTSUP);
  ck_assert_int_eq (pthread_attr_setscope (&attr, 99), EINVAL);
  ck_assert_int_eq (pthread_attr_getscope (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_SCOPE_SYSTEM);

  size_t size;
  ck_assert_int_eq (pthread_attr_setguardsize (&attr, 12345), 0);
  ck_assert_int_eq (pthread_attr_getguardsize (&attr, &size), 0);
  ck_assert_uint_eq (size, 12345);
  ck_assert_int_eq (pthread_attr_setguardsize (&attr, 0), 0);
  ck_assert_int_eq (pthread_attr_getguardsize (&attr, &size), 0);
  ck_assert_uint_eq (size, 0);
  pthread_attr_destroy (&attr);
}
END_TEST

START_TEST (attr_scheduling)
{
  pthread_attr_t attr;
  int policy;
  struct sched_param param;
  pthread_attr_init (&attr);
  const int policies[] = { SCHED_FIFO, SCHED_RR, SCHED_OTHER };
  for (unsigned i = 0; i < sizeof policies / sizeof policies[0]; i++)
    {
      ck_assert_int_eq (pthread_attr_setschedpolicy (&attr, policies[i]), 0);
      ck_assert_int_eq (pthread_attr_getschedpolicy (&attr, &policy), 0);
      ck_assert_int_eq (policy, policies[i]);
    }
  ck_assert_int_eq (pthread_attr_setschedpolicy (&attr, SCHED_BATCH), EINVAL);
  ck_assert_int_eq (pthread_attr_setschedpolicy (&attr, 99), EINVAL);
  ck_assert_int_eq (pthread_attr_getschedpolicy (&attr, &policy), 0);
  ck_assert_int_eq (policy, SCHED_OTHER);

  /* The priority is checked against the attr's current policy.  */
  param.sched_priority = 1;
  ck_assert_int_eq (pthread_attr_setschedparam (&attr, &param), EINVAL);
  param.sched_priority = 0;
  ck_assert_int_eq (pthread_attr_setschedparam (&attr, &param), 0);
  pthread_attr_setschedpolicy (&attr, SCHED_FIFO);
  int min = sched_get_priority_min (SCHED_FIFO);
  int max = sched_get_priority_max (SCHED_FIFO);
  param.sched_priority = min - 1;
  ck_assert_int_eq (pthread_attr_setschedparam (&attr, &param), EINVAL);
  param.sched_priority = max + 1;
  ck_assert_int_eq (pthread_attr_setschedparam (&attr, &param), EINVAL);
  param.sched_priority = max;
  ck_assert_int_eq (pthread_attr_setschedparam (&attr, &param), 0);
  param.sched_priority = -5;
  ck_assert_int_eq (pthread_attr_getschedparam (&attr, &param), 0);
  ck_assert_int_eq (param.sched_priority, max);
  pthread_attr_destroy (&attr);
}
END_TEST

START_TEST (attr_stack_size)
{
  pthread_attr_t attr;
  size_t size;
  pthread_attr_init (&attr);
  ck_assert_int_eq (pthread_attr_setstacksize (&attr, PTHREAD_STACK_MIN - 1),
                    EINVAL);
  ck_assert_int_eq (pthread_attr_getstacksize (&attr, &size), 0);
  ck_assert_uint_eq (size, rlimit_default_stack ());
  ck_assert_int_eq (pthread_attr_setstacksize (&attr, PTHREAD_STACK_MIN), 0);
  ck_assert_int_eq (pthread_attr_getstacksize (&attr, &size), 0);
  ck_assert_uint_eq (size, PTHREAD_STACK_MIN);
  ck_assert_int_eq (pthread_attr_setstacksize (&attr, 1 << 20), 0);
  ck_assert_int_eq (pthread_attr_getstacksize (&attr, &size), 0);
  ck_assert_uint_eq (size, 1 << 20);
  pthread_attr_destroy (&attr);
}
END_TEST

/* setstack names the lowest address, setstackaddr the highest; a size
   set later keeps the highest where it was, as in glibc.  */
START_TEST (attr_user_stack)
{
  static char area[512 * 1024];
  pthread_attr_t attr;
  void *addr;
  size_t size;
  pthread_attr_init (&attr);
  ck_assert_int_eq (pthread_attr_setstack (&attr, area,
                                           PTHREAD_STACK_MIN - 1), EINVAL);
  ck_assert_int_eq (pthread_attr_setstack (&attr, area, sizeof area), 0);
  ck_assert_int_eq (pthread_attr_getstack (&attr, &addr, &size), 0);
  ck_assert_ptr_eq (addr, area);
  ck_assert_uint_eq (size, sizeof area);
  ck_assert_int_eq (pthread_attr_getstackaddr (&attr, &addr), 0);
  ck_assert_ptr_eq (addr, area + sizeof area);

  /* PTHREAD_STACK_MIN is 128 KiB on aarch64.  */
  ck_assert_int_eq (pthread_attr_setstacksize (&attr, 256 * 1024), 0);
  ck_assert_int_eq (pthread_attr_getstack (&attr, &addr, &size), 0);
  ck_assert_ptr_eq (addr, area + sizeof area - 256 * 1024);
  ck_assert_uint_eq (size, 256 * 1024);
  pthread_attr_destroy (&attr);

  pthread_attr_init (&attr);
  pthread_attr_setstacksize (&attr, 128 * 1024);
  ck_assert_int_eq (pthread_attr_setstackaddr (&attr, area + sizeof area), 0);
  ck_assert_int_eq (pthread_attr_getstack (&attr, &addr, &size), 0);
  ck_assert_ptr_eq (addr, area + sizeof area - 128 * 1024);
  ck_assert_uint_eq (size, 128 * 1024);
  ck_assert_int_eq (pthread_attr_getstackaddr (&attr, &addr), 0);
  ck_assert_ptr_eq (addr, area + sizeof area);
  pthread_attr_destroy (&attr);
}
END_TEST

START_TEST (attr_affinity)
{
  pthread_attr_t attr;
  cpu_set_t set, got;
  pthread_attr_init (&attr);
  CPU_ZERO (&set);
  CPU_SET (0, &set);
  CPU_SET (3, &set);
  ck_assert_int_eq (pthread_attr_setaffinity_np (&attr, sizeof set, &set), 0);
  memset (&got, 0xff, sizeof got);
  ck_assert_int_eq (pthread_attr_getaffinity_np (&attr, sizeof got, &got), 0);
  ck_assert (CPU_EQUAL (&set, &got));

  /* A smaller buffer will do while the CPUs it cannot hold are unset.  */
  unsigned long word = ~0UL;
  ck_assert_int_eq (pthread_attr_getaffinity_np (&attr, sizeof word,
                                                 (cpu_set_t *) &word), 0);
  ck_assert_uint_eq (word, 0x9);
  CPU_SET (100, &set);
  ck_assert_int_eq (pthread_attr_setaffinity_np (&attr, sizeof set, &set), 0);
  ck_assert_int_eq (pthread_attr_getaffinity_np (&attr, sizeof word,
                                                 (cpu_set_t *) &word),
                    EINVAL);

  /* A larger buffer is zero-filled past the stored set.  */
  size_t big_size = CPU_ALLOC_SIZE (4096);
  cpu_set_t *big = CPU_ALLOC (4096);
  memset (big, 0xff, big_size);
  ck_assert_int_eq (pthread_attr_getaffinity_np (&attr, big_size, big), 0);
  ck_assert_int_eq (CPU_COUNT_S (big_size, big), 3);
  ck_assert (CPU_ISSET_S (100, big_size, big));
  ck_assert (!CPU_ISSET_S (2000, big_size, big));

  /* Size 0 removes the set: every CPU again.  */
  ck_assert_int_eq (pthread_attr_setaffinity_np (&attr, 0, &set), 0);
  ck_assert_int_eq (pthread_attr_getaffinity_np (&attr, big_size, big), 0);
  ck_assert_int_eq (CPU_COUNT_S (big_size, big), 4096);
  CPU_FREE (big);
  pthread_attr_destroy (&attr);
}
END_TEST

START_TEST (attr_affinity_old_abi)
{
  int (*set_old) (pthread_attr_t *, const cpu_set_t *)
    = old_abi_symbol ("pthread_attr_setaffinity_np");
  int (*get_old) (const pthread_attr_t *, cpu_set_t *)
    = old_abi_symbol ("pthread_attr_getaffinity_np");
  if (set_old == NULL || get_old == NULL)
    return;
  pthread_attr_t attr;
  cpu_set_t set, got;
  pthread_attr_init (&attr);
  CPU_ZERO (&set);
  CPU_SET (1, &set);
  CPU_SET (1000, &set);
  ck_assert_int_eq (set_old (&attr, &set), 0);
  ck_assert_int_eq (get_old (&attr, &got), 0);
  ck_assert (CPU_EQUAL (&set, &got));
  memset (&got, 0, sizeof got);
  ck_assert_int_eq (pthread_attr_getaffinity_np (&attr, sizeof got, &got), 0);
  ck_assert (CPU_EQUAL (&set, &got));
  pthread_attr_destroy (&attr);
}
END_TEST

START_TEST (attr_sigmask)
{
  pthread_attr_t attr;
  sigset_t mask, got;
  pthread_attr_init (&attr);
  sigemptyset (&mask);
  sigaddset (&mask, SIGUSR1);
  ck_assert_int_eq (pthread_attr_setsigmask_np (&attr, &mask), 0);
  ck_assert_int_eq (pthread_attr_getsigmask_np (&attr, &got), 0);
  ck_assert (sigismember (&got, SIGUSR1));
  ck_assert (!sigismember (&got, SIGUSR2));

  /* The reserved signals cannot be blocked in a new thread either.  */
  memset (&mask, 0xff, sizeof mask);
  ck_assert_int_eq (pthread_attr_setsigmask_np (&attr, &mask), 0);
  ck_assert_int_eq (pthread_attr_getsigmask_np (&attr, &got), 0);
  ck_assert (!sigset_has (&got, 32));
  ck_assert (!sigset_has (&got, 33));
  ck_assert (sigset_has (&got, SIGUSR2));

  ck_assert_int_eq (pthread_attr_setsigmask_np (&attr, NULL), 0);
  ck_assert_int_eq (pthread_attr_getsigmask_np (&attr, &got),
                    PTHREAD_ATTR_NO_SIGMASK_NP);
  pthread_attr_destroy (&attr);
}
END_TEST

static void *
report_mask (void *arg)
{
  sigset_t *mask = arg;
  pthread_sigmask (SIG_SETMASK, NULL, mask);
  return NULL;
}

START_TEST (attr_sigmask_applies)
{
  pthread_attr_t attr;
  sigset_t mask, seen;
  pthread_attr_init (&attr);
  sigemptyset (&mask);
  sigaddset (&mask, SIGUSR2);
  pthread_attr_setsigmask_np (&attr, &mask);
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, &attr, report_mask, &seen), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  ck_assert (sigismember (&seen, SIGUSR2));
  ck_assert (!sigismember (&seen, SIGUSR1));
  pthread_attr_destroy (&attr);
}
END_TEST

static void *
return_arg (void *arg)
{
  return arg;
}

/* Copied by the setter, refused by the kernel at creation.  */
START_TEST (attr_affinity_refused_at_create)
{
  pthread_attr_t attr;
  size_t size = CPU_ALLOC_SIZE (8192);
  cpu_set_t *set = CPU_ALLOC (8192);
  CPU_ZERO_S (size, set);
  CPU_SET_S (8000, size, set);
  pthread_attr_init (&attr);
  ck_assert_int_eq (pthread_attr_setaffinity_np (&attr, size, set), 0);
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, &attr, return_arg, NULL), EINVAL);
  pthread_attr_destroy (&attr);
  CPU_FREE (set);
}
END_TEST

/* --- process defaults --------------------------------------------------- */

START_TEST (default_attr_initial)
{
  pthread_attr_t attr;
  size_t size;
  int value;
  ck_assert_int_eq (pthread_getattr_default_np (&attr), 0);
  ck_assert_int_eq (pthread_attr_getstacksize (&attr, &size), 0);
  ck_assert_uint_eq (size, rlimit_default_stack ());
  ck_assert_int_eq (pthread_attr_getguardsize (&attr, &size), 0);
  ck_assert_uint_eq (size, page_size ());
  ck_assert_int_eq (pthread_attr_getdetachstate (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_CREATE_JOINABLE);
  ck_assert_int_eq (pthread_attr_getschedpolicy (&attr, &value), 0);
  ck_assert_int_eq (value, SCHED_OTHER);
  pthread_attr_destroy (&attr);
}
END_TEST

START_TEST (default_attr_refusals)
{
  static char area[256 * 1024];
  pthread_attr_t attr;
  struct sched_param param = { .sched_priority = 10 };
  pthread_attr_init (&attr);
  ck_assert_int_eq (pthread_attr_setstack (&attr, area, sizeof area), 0);
  ck_assert_int_eq (pthread_setattr_default_np (&attr), EINVAL);
  pthread_attr_destroy (&attr);

  /* setschedpolicy does not recheck the priority; the default does.  */
  pthread_attr_init (&attr);
  pthread_attr_setschedpolicy (&attr, SCHED_FIFO);
  ck_assert_int_eq (pthread_attr_setschedparam (&attr, &param), 0);
  pthread_attr_setschedpolicy (&attr, SCHED_OTHER);
  ck_assert_int_eq (pthread_setattr_default_np (&attr), EINVAL);
  pthread_attr_destroy (&attr);
}
END_TEST

static void *
report_own_stack_size (void *arg)
{
  pthread_attr_t attr;
  size_t *size = arg;
  ck_assert_int_eq (pthread_getattr_np (pthread_self (), &attr), 0);
  pthread_attr_getstacksize (&attr, size);
  pthread_attr_destroy (&attr);
  return NULL;
}

/* The stack size of a thread created with ATTR (NULL: the defaults).  */
static size_t
stack_size_of_new_thread (const pthread_attr_t *attr)
{
  size_t size;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, attr, report_own_stack_size, &size),
                    0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  return size;
}

START_TEST (default_attr_stack_size_used)
{
  const size_t wanted = 1 << 20;
  pthread_attr_t attr;
  size_t size;
  pthread_attr_init (&attr);
  pthread_attr_setstacksize (&attr, wanted);
  ck_assert_int_eq (pthread_setattr_default_np (&attr), 0);
  pthread_attr_destroy (&attr);
  ck_assert_uint_eq (stack_size_of_new_thread (NULL), wanted);

  /* An attr left at the default size follows the new default.  */
  pthread_attr_init (&attr);
  ck_assert_int_eq (pthread_attr_getstacksize (&attr, &size), 0);
  ck_assert_uint_eq (size, wanted);
  ck_assert_uint_eq (stack_size_of_new_thread (&attr), wanted);

  /* Size 0 keeps the current default.  */
  ck_assert_int_eq (pthread_setattr_default_np (&attr), 0);
  pthread_attr_destroy (&attr);
  ck_assert_int_eq (pthread_getattr_default_np (&attr), 0);
  pthread_attr_getstacksize (&attr, &size);
  ck_assert_uint_eq (size, wanted);
  pthread_attr_destroy (&attr);
}
END_TEST

/* The default stack size is the one RLIMIT_STACK gave at start-up, as in
   glibc: a program that changes the limit later (stress-ng lifts it)
   keeps that size, for the default attributes and for its threads.  The
   limit this test starts with is the one the program started with.  */
START_TEST (default_attr_stack_size_from_start)
{
  size_t at_start = rlimit_default_stack ();
  struct rlimit limit;
  ck_assert_int_eq (getrlimit (RLIMIT_STACK, &limit), 0);
  struct rlimit changed = limit;
  changed.rlim_cur = at_start == 4 << 20 ? 3 << 20 : 4 << 20;
  if (limit.rlim_max != RLIM_INFINITY && changed.rlim_cur > limit.rlim_max)
    return;
  ck_assert_int_eq (setrlimit (RLIMIT_STACK, &changed), 0);

  pthread_attr_t attr;
  size_t size;
  ck_assert_int_eq (pthread_getattr_default_np (&attr), 0);
  ck_assert_int_eq (pthread_attr_getstacksize (&attr, &size), 0);
  ck_assert_uint_eq (size, at_start);
  pthread_attr_destroy (&attr);
  ck_assert_uint_eq (stack_size_of_new_thread (NULL), at_start);
  ck_assert_int_eq (setrlimit (RLIMIT_STACK, &limit), 0);
}
END_TEST

START_TEST (default_attr_affinity_copied)
{
  pthread_attr_t attr, got;
  cpu_set_t set, read;
  pthread_attr_init (&attr);
  CPU_ZERO (&set);
  CPU_SET (0, &set);
  pthread_attr_setaffinity_np (&attr, sizeof set, &set);
  ck_assert_int_eq (pthread_setattr_default_np (&attr), 0);
  /* The default keeps its own copy.  */
  pthread_attr_destroy (&attr);
  ck_assert_int_eq (pthread_getattr_default_np (&got), 0);
  ck_assert_int_eq (pthread_attr_getaffinity_np (&got, sizeof read, &read),
                    0);
  ck_assert (CPU_EQUAL (&set, &read));
  pthread_attr_destroy (&got);

  /* A new default replaces it.  */
  pthread_attr_init (&attr);
  ck_assert_int_eq (pthread_setattr_default_np (&attr), 0);
  pthread_attr_destroy (&attr);
  ck_assert_int_eq (pthread_getattr_default_np (&got), 0);
  pthread_attr_getaffinity_np (&got, sizeof read, &read);
  ck_assert_int_eq (CPU_COUNT (&read), CPU_SETSIZE);
  pthread_attr_destroy (&got);
}
END_TEST

/* --- pthread_getattr_np ------------------------------------------------- */

struct stack_report
{
  void *addr;
  size_t size;
  size_t guard;
  int detach;
  void *local;
  struct parked park;
};

static void
read_stack (pthread_t thread, struct stack_report *r)
{
  pthread_attr_t attr;
  ck_assert_int_eq (pthread_getattr_np (thread, &attr), 0);
  ck_assert_int_eq (pthread_attr_getstack (&attr, &r->addr, &r->size), 0);
  ck_assert_int_eq (pthread_attr_getguardsize (&attr, &r->guard), 0);
  ck_assert_int_eq (pthread_attr_getdetachstate (&attr, &r->detach), 0);
  pthread_attr_destroy (&attr);
}

static void *
report_own_stack (void *arg)
{
  struct stack_report *r = arg;
  int local;
  read_stack (pthread_self (), r);
  __atomic_store_n (&r->local, &local, __ATOMIC_RELEASE);
  return park (&r->park);
}

static void
check_stack_holds (const struct stack_report *r, void *address)
{
  ck_assert_ptr_nonnull (r->addr);
  ck_assert ((char *) address >= (char *) r->addr);
  ck_assert ((char *) address < (char *) r->addr + r->size);
}

START_TEST (getattr_created_thread)
{
  const size_t stack_size = 256 * 1024;
  const size_t guard = 2 * page_size ();
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setstacksize (&attr, stack_size);
  pthread_attr_setguardsize (&attr, guard);
  struct stack_report inside = { 0 }, outside;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, &attr, report_own_stack, &inside), 0);
  pthread_attr_destroy (&attr);
  while (!__atomic_load_n (&inside.local, __ATOMIC_ACQUIRE))
    sleep_ms (1);
  read_stack (t, &outside);
  __atomic_store_n (&inside.park.release, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq (pthread_join (t, NULL), 0);

  ck_assert_uint_eq (inside.size, stack_size);
  ck_assert_uint_eq (inside.guard, guard);
  ck_assert_int_eq (inside.detach, PTHREAD_CREATE_JOINABLE);
  check_stack_holds (&inside, inside.local);
  ck_assert_ptr_eq (outside.addr, inside.addr);
  ck_assert_uint_eq (outside.size, inside.size);
  ck_assert_uint_eq (outside.guard, inside.guard);
}
END_TEST

START_TEST (getattr_user_stack)
{
  const size_t size = 256 * 1024;
  void *area = aligned_alloc (page_size (), size);
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setstack (&attr, area, size);
  struct stack_report inside = { 0 };
  inside.park.release = 1;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, &attr, report_own_stack, &inside), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  pthread_attr_destroy (&attr);
  ck_assert_ptr_eq (inside.addr, area);
  ck_assert_uint_eq (inside.size, size);
  ck_assert_uint_eq (inside.guard, 0);
  check_stack_holds (&inside, inside.local);
  free (area);
}
END_TEST

static void *
report_detached (void *arg)
{
  struct stack_report *r = arg;
  read_stack (pthread_self (), r);
  __atomic_store_n (&r->local, (void *) 1, __ATOMIC_RELEASE);
  return NULL;
}

START_TEST (getattr_detached_thread)
{
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  static struct stack_report r;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, &attr, report_detached, &r), 0);
  pthread_attr_destroy (&attr);
  while (!__atomic_load_n (&r.local, __ATOMIC_ACQUIRE))
    sleep_ms (1);
  ck_assert_int_eq (r.detach, PTHREAD_CREATE_DETACHED);
}
END_TEST

START_TEST (getattr_main_thread)
{
  int local;
  struct stack_report r;
  read_stack (pthread_self (), &r);
  ck_assert_uint_gt (r.size, 0);
  ck_assert_uint_eq (r.guard, 0);
  check_stack_holds (&r, &local);
}
END_TEST

START_TEST (getattr_scheduling_and_affinity)
{
  pthread_attr_t attr;
  ck_assert_int_eq (pthread_getattr_np (pthread_self (), &attr), 0);
  int policy;
  struct sched_param param;
  pthread_attr_getschedpolicy (&attr, &policy);
  pthread_attr_getschedparam (&attr, &param);
  ck_assert_int_eq (policy, sched_getscheduler (0));
  ck_assert_int_eq (param.sched_priority, 0);
  cpu_set_t from_attr, from_kernel;
  ck_assert_int_eq (pthread_attr_getaffinity_np (&attr, sizeof from_attr,
                                                 &from_attr), 0);
  ck_assert_int_eq (sched_getaffinity (0, sizeof from_kernel, &from_kernel),
                    0);
  ck_assert (CPU_EQUAL (&from_attr, &from_kernel));
  pthread_attr_destroy (&attr);
}
END_TEST

START_TEST (minstack)
{
  size_t (*get_minstack) (const pthread_attr_t *)
    = xp_test_symbol ("__pthread_get_minstack", "GLIBC_PRIVATE");
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  ck_assert_uint_gt (get_minstack (&attr), PTHREAD_STACK_MIN);
  pthread_attr_destroy (&attr);
}
END_TEST

/* --- thread-specific data ----------------------------------------------- */

static void *
read_key (void *arg)
{
  pthread_key_t key = (pthread_key_t) (uintptr_t) arg;
  void *before = pthread_getspecific (key);
  pthread_setspecific (key, (void *) 2);
  return before == NULL && pthread_getspecific (key) == (void *) 2
         ? (void *) 1 : NULL;
}

START_TEST (key_basics)
{
  pthread_key_t key;
  ck_assert_int_eq (pthread_key_create (&key, NULL), 0);
  ck_assert_ptr_null (pthread_getspecific (key));
  ck_assert_int_eq (pthread_setspecific (key, (void *) 1), 0);
  ck_assert_ptr_eq (pthread_getspecific (key), (void *) 1);

  /* Each thread has its own value.  */
  pthread_t t;
  void *ok;
  pthread_create (&t, NULL, read_key, (void *) (uintptr_t) key);
  pthread_join (t, &ok);
  ck_assert_ptr_eq (ok, (void *) 1);
  ck_assert_ptr_eq (pthread_getspecific (key), (void *) 1);

  ck_assert_int_eq (pthread_key_delete (key), 0);
  ck_assert_ptr_null (pthread_getspecific (key));
  ck_assert_int_eq (pthread_setspecific (key, (void *) 1), EINVAL);
  ck_assert_int_eq (pthread_key_delete (key), EINVAL);
  ck_assert_int_eq (pthread_key_delete (PTHREAD_KEYS_MAX), EINVAL);
  ck_assert_int_eq (pthread_setspecific (PTHREAD_KEYS_MAX, NULL), EINVAL);
  ck_assert_ptr_null (pthread_getspecific (PTHREAD_KEYS_MAX));
}
END_TEST

/* A value stored under a deleted key never shows through the key that
   reuses its slot.  */
START_TEST (key_stale_value_after_delete)
{
  pthread_key_t keys[100], again;
  for (int i = 0; i < 100; i++)
    {
      ck_assert_int_eq (pthread_key_create (&keys[i], NULL), 0);
      ck_assert_int_eq (pthread_setspecific (keys[i], &keys[i]), 0);
    }
  for (int i = 0; i < 100; i++)
    ck_assert_ptr_eq (pthread_getspecific (keys[i]), &keys[i]);
  for (int i = 0; i < 100; i++)
    ck_assert_int_eq (pthread_key_delete (keys[i]), 0);
  for (int i = 0; i < 100; i++)
    {
      ck_assert_int_eq (pthread_key_create (&again, NULL), 0);
      ck_assert_ptr_null (pthread_getspecific (again));
    }
}
END_TEST

START_TEST (key_exhaustion)
{
  static pthread_key_t keys[PTHREAD_KEYS_MAX + 1];
  int n = 0;
  int err;
  while ((err = pthread_key_create (&keys[n], NULL)) == 0)
    {
      ck_assert_int_lt (n, PTHREAD_KEYS_MAX);
      n++;
    }
  ck_assert_int_eq (err, EAGAIN);
  ck_assert_int_ge (n, PTHREAD_KEYS_MAX - 16);
  /* The last keys live in second-level blocks.  */
  ck_assert_int_eq (pthread_setspecific (keys[n - 1], &n), 0);
  ck_assert_ptr_eq (pthread_getspecific (keys[n - 1]), &n);
  for (int i = 0; i < n; i++)
    ck_assert_int_eq (pthread_key_delete (keys[i]), 0);
  pthread_key_t key;
  ck_assert_int_eq (pthread_key_create (&key, NULL), 0);
}
END_TEST

static pthread_key_t round_key;
static int destructor_calls;
static void *destructor_last_value;

static void
resetting_destructor (void *value)
{
  destructor_calls++;
  destructor_last_value = value;
  pthread_setspecific (round_key, (char *) value + 1);
}

static void *
set_round_key (void *arg)
{
  pthread_setspecific (round_key, (void *) 100);
  return NULL;
}

/* POSIX: a destructor that stores a new value is called again, for at
   most PTHREAD_DESTRUCTOR_ITERATIONS rounds.  */
START_TEST (key_destructor_rounds)
{
  ck_assert_int_eq (pthread_key_create (&round_key, resetting_destructor), 0);
  pthread_t t;
  pthread_create (&t, NULL, set_round_key, NULL);
  pthread_join (t, NULL);
  ck_assert_int_eq (destructor_calls, PTHREAD_DESTRUCTOR_ITERATIONS);
  ck_assert_ptr_eq (destructor_last_value,
                    (char *) 100 + PTHREAD_DESTRUCTOR_ITERATIONS - 1);

  /* The value left after the last round must not reach the next thread
     that reuses the descriptor.  */
  void *ok;
  pthread_create (&t, NULL, read_key, (void *) (uintptr_t) round_key);
  pthread_join (t, &ok);
  ck_assert_ptr_eq (ok, (void *) 1);
}
END_TEST

static int counting_calls;

static void
counting_destructor (void *value)
{
  counting_calls++;
}

static void *
set_two_keys (void *arg)
{
  pthread_key_t *keys = arg;
  pthread_setspecific (keys[0], (void *) 1);
  pthread_setspecific (keys[1], (void *) 1);
  pthread_setspecific (keys[1], NULL);
  return NULL;
}

/* NULL values and deleted keys get no destructor call.  */
START_TEST (key_destructor_skips)
{
  pthread_key_t keys[2];
  pthread_key_create (&keys[0], counting_destructor);
  pthread_key_create (&keys[1], counting_destructor);
  pthread_t t;
  pthread_create (&t, NULL, set_two_keys, keys);
  pthread_join (t, NULL);
  ck_assert_int_eq (counting_calls, 1);
  counting_calls = 0;
  pthread_key_delete (keys[0]);
  pthread_create (&t, NULL, set_two_keys, keys);
  pthread_join (t, NULL);
  ck_assert_int_eq (counting_calls, 0);
}
END_TEST

START_TEST (key_old_names)
{
  int (*create) (pthread_key_t *, void (*) (void *))
    = xp_test_oldest_symbol ("__pthread_key_create");
  int (*set) (pthread_key_t, const void *)
    = xp_test_oldest_symbol ("__pthread_setspecific");
  void *(*get) (pthread_key_t)
    = xp_test_oldest_symbol ("__pthread_getspecific");
  pthread_key_t key;
  ck_assert_int_eq (create (&key, NULL), 0);
  ck_assert_int_eq (set (key, &key), 0);
  ck_assert_ptr_eq (get (key), &key);
  ck_assert_ptr_eq (pthread_getspecific (key), &key);
}
END_TEST

/* --- pthread_once ------------------------------------------------------- */

#define ONCE_THREADS 16

static pthread_once_t once_control = PTHREAD_ONCE_INIT;
static int once_runs;
static int once_effect;

static void
slow_init (void)
{
  __atomic_fetch_add (&once_runs, 1, __ATOMIC_RELAXED);
  sleep_ms (20);
  once_effect = 42;
}

static void *
run_the_once (void *arg)
{
  pthread_once (&once_control, slow_init);
  return (void *) (uintptr_t) once_effect;
}

START_TEST (once_runs_once)
{
  pthread_t threads[ONCE_THREADS];
  for (int i = 0; i < ONCE_THREADS; i++)
    ck_assert_int_eq (pthread_create (&threads[i], NULL, run_the_once, NULL), 0);
  for (int i = 0; i < ONCE_THREADS; i++)
    {
      void *seen;
      pthread_join (threads[i], &seen);
      ck_assert_ptr_eq (seen, (void *) 42);
    }
  ck_assert_int_eq (once_runs, 1);
  ck_assert_int_eq (pthread_once (&once_control, slow_init), 0);
  ck_assert_int_eq (once_runs, 1);
}
END_TEST

static int old_once_runs;

static void
count_old_once (void)
{
  old_once_runs++;
}

START_TEST (once_old_name)
{
  int (*once) (pthread_once_t *, void (*) (void))
    = xp_test_oldest_symbol ("__pthread_once");
  pthread_once_t control = PTHREAD_ONCE_INIT;
  ck_assert_int_eq (once (&control, count_old_once), 0);
  ck_assert_int_eq (once (&control, count_old_once), 0);
  ck_assert_int_eq (pthread_once (&control, count_old_once), 0);
  ck_assert_int_eq (old_once_runs, 1);
}
END_TEST

/* A fork while another thread runs an initialiser: the child has no
   runner, so its own pthread_once must run the routine rather than wait
   for ever (an alarm turns a hang into a failure).  */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static int fork_once_gate[2];
static int fork_once_runs;

/* Waits for a byte on the gate: the parent's runner until the test
   releases it, the child's at once (its gate already holds a byte).  */
static void
init_blocked_in_parent (void)
{
  fork_once_runs++;
  char c;
  if (read (fork_once_gate[0], &c, 1) != 1)
    abort ();
}

static void *
run_fork_once (void *arg)
{
  (void) arg;
  pthread_once (&fork_once, init_blocked_in_parent);
  return NULL;
}

START_TEST (once_in_fork_child_while_running)
{
  ck_assert_int_eq (pipe (fork_once_gate), 0);
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, run_fork_once, NULL), 0);
  while (__atomic_load_n (&fork_once_runs, __ATOMIC_RELAXED) == 0)
    sleep_ms (1);
  pid_t child = fork ();
  ck_assert_int_ne (child, -1);
  if (child == 0)
    {
      alarm (5);
      if (pipe (fork_once_gate) != 0 || write (fork_once_gate[1], "c", 1) != 1)
        _exit (3);
      pthread_once (&fork_once, init_blocked_in_parent);
      _exit (fork_once_runs == 2 ? 0 : 4);
    }
  int status;
  ck_assert_int_eq (waitpid (child, &status, 0), child);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "fork child: status %#x (a hang ends in SIGALRM)", status);
  ck_assert_int_eq (write (fork_once_gate[1], "p", 1), 1);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  ck_assert_int_eq (fork_once_runs, 1);
}
END_TEST

/* --- names -------------------------------------------------------------- */

START_TEST (name_self)
{
  char name[16];
  ck_assert_int_eq (pthread_setname_np (pthread_self (), "fifteen-chars-x"),
                    0);
  ck_assert_int_eq (pthread_getname_np (pthread_self (), name, sizeof name),
                    0);
  ck_assert_str_eq (name, "fifteen-chars-x");
  ck_assert_int_eq (pthread_setname_np (pthread_self (), "sixteen-chars-xx"),
                    ERANGE);
  ck_assert_int_eq (pthread_getname_np (pthread_self (), name, 15), ERANGE);
  prctl (PR_GET_NAME, name);
  ck_assert_str_eq (name, "fifteen-chars-x");
}
END_TEST

struct named
{
  struct parked park;
  char seen[16];
};

static void *
report_name_when_released (void *arg)
{
  struct named *n = arg;
  park (&n->park);
  prctl (PR_GET_NAME, n->seen);
  return NULL;
}

START_TEST (name_other_thread)
{
  struct named n;
  memset (&n, 0, sizeof n);
  char name[32];
  ck_assert_int_eq (pthread_create (&n.park.thread, NULL,
                                    report_name_when_released, &n), 0);
  ck_assert_int_eq (pthread_setname_np (n.park.thread, "worker-7"), 0);
  ck_assert_int_eq (pthread_getname_np (n.park.thread, name, sizeof name), 0);
  ck_assert_str_eq (name, "worker-7");
  ck_assert_int_eq (pthread_setname_np (n.park.thread, "sixteen-chars-xx"),
                    ERANGE);
  ck_assert_int_eq (pthread_getname_np (n.park.thread, name, 15), ERANGE);
  park_finish (&n.park);
  ck_assert_str_eq (n.seen, "worker-7");
}
END_TEST

/* --- exited threads ----------------------------------------------------- */

START_TEST (exited_thread_esrch)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, return_arg, NULL), 0);
  wait_until_exited (t);
  char name[16];
  int policy;
  struct sched_param param = { 0 };
  clockid_t clock;
  cpu_set_t cpus;
  CPU_ZERO (&cpus);
  CPU_SET (0, &cpus);
  union sigval value = { .sival_int = 1 };
  /* glibc's answers: signals to an exited thread whose ID lives are not
     sent and are no error (since 2.34); its comm file is gone.  */
  ck_assert_int_eq (pthread_kill (t, 0), 0);
  ck_assert_int_eq (pthread_kill (t, SIGUSR1), 0);
  /* Binaries built before glibc 2.34 get ESRCH, as glibc gives them.  */
  int (*old_kill) (pthread_t, int) = old_abi_symbol ("pthread_kill");
  if (old_kill != NULL)
    ck_assert_int_eq (old_kill (t, 0), ESRCH);
  ck_assert_int_eq (pthread_sigqueue (t, SIGUSR1, value), ESRCH);
  ck_assert_int_eq (pthread_setname_np (t, "gone"), ENOENT);
  ck_assert_int_eq (pthread_getname_np (t, name, sizeof name), ENOENT);
  ck_assert_int_eq (pthread_getschedparam (t, &policy, &param), ESRCH);
  ck_assert_int_eq (pthread_setschedparam (t, SCHED_OTHER, &param), ESRCH);
  ck_assert_int_eq (pthread_setschedprio (t, 0), ESRCH);
  ck_assert_int_eq (pthread_getcpuclockid (t, &clock), ESRCH);
  ck_assert_int_eq (pthread_setaffinity_np (t, sizeof cpus, &cpus), ESRCH);
  ck_assert_int_eq (pthread_getaffinity_np (t, sizeof cpus, &cpus), ESRCH);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
}
END_TEST

/* --- scheduling --------------------------------------------------------- */

static void
check_schedparam (pthread_t t, int want_policy, int want_priority)
{
  int policy = -1;
  struct sched_param param = { .sched_priority = -1 };
  ck_assert_int_eq (pthread_getschedparam (t, &policy, &param), 0);
  ck_assert_int_eq (policy, want_policy);
  ck_assert_int_eq (param.sched_priority, want_priority);
}

static void
exercise_scheduling (pthread_t t)
{
  struct sched_param param = { .sched_priority = 0 };
  check_schedparam (t, SCHED_OTHER, 0);
  ck_assert_int_eq (pthread_setschedparam (t, SCHED_BATCH, &param), 0);
  check_schedparam (t, SCHED_BATCH, 0);
  ck_assert_int_eq (pthread_setschedparam (t, SCHED_OTHER, &param), 0);
  check_schedparam (t, SCHED_OTHER, 0);
  ck_assert_int_eq (pthread_setschedparam (t, 12345, &param), EINVAL);
  param.sched_priority = 5;
  ck_assert_int_eq (pthread_setschedparam (t, SCHED_OTHER, &param), EINVAL);
  ck_assert_int_eq (pthread_setschedprio (t, 5), EINVAL);
  ck_assert_int_eq (pthread_setschedprio (t, 0), 0);

  /* Real-time policies need privilege; both answers are legitimate.  */
  param.sched_priority = 1;
  int err = pthread_setschedparam (t, SCHED_FIFO, &param);
  ck_assert_msg (err == 0 || err == EPERM, "SCHED_FIFO: %d", err);
  if (err == 0)
    {
      check_schedparam (t, SCHED_FIFO, 1);
      ck_assert_int_eq (pthread_setschedprio (t, 2), 0);
      check_schedparam (t, SCHED_FIFO, 2);
      param.sched_priority = 0;
      ck_assert_int_eq (pthread_setschedparam (t, SCHED_OTHER, &param), 0);
    }
}

START_TEST (sched_self)
{
  exercise_scheduling (pthread_self ());
}
END_TEST

START_TEST (sched_other_thread)
{
  struct parked p;
  park_start (&p);
  exercise_scheduling (p.thread);
  park_finish (&p);
}
END_TEST

/* --- affinity ----------------------------------------------------------- */

static void
pin_to_each_cpu (pthread_t t, bool check_cpu)
{
  cpu_set_t allowed, one, got;
  ck_assert_int_eq (pthread_getaffinity_np (t, sizeof allowed, &allowed), 0);
  ck_assert_int_gt (CPU_COUNT (&allowed), 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    {
      if (!CPU_ISSET (cpu, &allowed))
        continue;
      CPU_ZERO (&one);
      CPU_SET (cpu, &one);
      ck_assert_int_eq (pthread_setaffinity_np (t, sizeof one, &one), 0);
      ck_assert_int_eq (pthread_getaffinity_np (t, sizeof got, &got), 0);
      ck_assert (CPU_EQUAL (&one, &got));
      if (check_cpu)
        ck_assert_int_eq (sched_getcpu (), cpu);
    }
  ck_assert_int_eq (pthread_setaffinity_np (t, sizeof allowed, &allowed), 0);
}

START_TEST (affinity_self)
{
  pin_to_each_cpu (pthread_self (), true);
}
END_TEST

static void *
pin_self (void *arg)
{
  pin_to_each_cpu (pthread_self (), true);
  return NULL;
}

START_TEST (affinity_created_thread)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, pin_self, NULL), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  struct parked p;
  park_start (&p);
  pin_to_each_cpu (p.thread, false);
  park_finish (&p);
}
END_TEST

/* The same where glibc registers no rseq area (as on a kernel without
   rseq, or under qemu-user): a new thread's sched_getcpu must then ask
   the kernel, not read a cpu_id of 0.  The suite runs again in a child,
   as the tunable is read at start-up.  */
#define NO_RSEQ_ARG "--affinity-without-rseq"

START_TEST (affinity_created_thread_without_rseq)
{
  const char *const settings[] = { "GLIBC_TUNABLES=glibc.pthread.rseq=0",
                                   NULL };
  int status = xp_test_rerun (NO_RSEQ_ARG, settings);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "affinity without rseq: status %#x", status);
}
END_TEST

START_TEST (affinity_zero_fill_and_errors)
{
  size_t size = CPU_ALLOC_SIZE (8192);
  cpu_set_t *big = CPU_ALLOC (8192);
  memset (big, 0xff, size);
  ck_assert_int_eq (pthread_getaffinity_np (pthread_self (), size, big), 0);
  ck_assert (!CPU_ISSET_S (8000, size, big));
  cpu_set_t set;
  sched_getaffinity (0, sizeof set, &set);
  ck_assert_int_eq (CPU_COUNT_S (size, big), CPU_COUNT (&set));

  /* No CPU the kernel knows.  */
  CPU_ZERO_S (size, big);
  CPU_SET_S (8000, size, big);
  ck_assert_int_eq (pthread_setaffinity_np (pthread_self (), size, big),
                    EINVAL);
  CPU_FREE (big);
}
END_TEST

START_TEST (affinity_old_abi)
{
  int (*set_old) (pthread_t, const cpu_set_t *)
    = old_abi_symbol ("pthread_setaffinity_np");
  int (*get_old) (pthread_t, cpu_set_t *)
    = old_abi_symbol ("pthread_getaffinity_np");
  if (set_old == NULL || get_old == NULL)
    return;
  cpu_set_t allowed, got, one;
  ck_assert_int_eq (get_old (pthread_self (), &allowed), 0);
  sched_getaffinity (0, sizeof got, &got);
  ck_assert (CPU_EQUAL (&allowed, &got));
  int cpu = 0;
  while (!CPU_ISSET (cpu, &allowed))
    cpu++;
  CPU_ZERO (&one);
  CPU_SET (cpu, &one);
  ck_assert_int_eq (set_old (pthread_self (), &one), 0);
  ck_assert_int_eq (sched_getcpu (), cpu);
  ck_assert_int_eq (set_old (pthread_self (), &allowed), 0);
}
END_TEST

/* --- signals ------------------------------------------------------------ */

START_TEST (sigmask_keeps_reserved_signals)
{
  sigset_t all, now, saved;
  memset (&all, 0xff, sizeof all);
  ck_assert_int_eq (pthread_sigmask (SIG_SETMASK, &all, &saved), 0);
  ck_assert_int_eq (pthread_sigmask (SIG_SETMASK, NULL, &now), 0);
  ck_assert (!sigset_has (&now, 32));
  ck_assert (!sigset_has (&now, 33));
  ck_assert (sigset_has (&now, SIGUSR1));
  ck_assert (sigset_has (&now, SIGRTMIN));

  ck_assert_int_eq (pthread_sigmask (SIG_SETMASK, &saved, NULL), 0);
  ck_assert_int_eq (pthread_sigmask (SIG_BLOCK, &all, NULL), 0);
  ck_assert_int_eq (pthread_sigmask (SIG_SETMASK, NULL, &now), 0);
  ck_assert (!sigset_has (&now, 32));
  ck_assert (!sigset_has (&now, 33));
  ck_assert (sigset_has (&now, SIGUSR2));

  ck_assert_int_eq (pthread_sigmask (SIG_UNBLOCK, &all, NULL), 0);
  ck_assert_int_eq (pthread_sigmask (SIG_SETMASK, NULL, &now), 0);
  ck_assert (!sigset_has (&now, SIGUSR2));
  ck_assert_int_eq (pthread_sigmask (SIG_SETMASK, &saved, NULL), 0);
}
END_TEST

START_TEST (sigmask_errors_leave_errno)
{
  sigset_t set;
  sigemptyset (&set);
  errno = 1234;
  ck_assert_int_eq (pthread_sigmask (12345, &set, NULL), EINVAL);
  ck_assert_int_eq (errno, 1234);
}
END_TEST

static pthread_t handled_by;
static int handled_signal;

static void
record_handler (int sig)
{
  handled_by = pthread_self ();
  __atomic_store_n (&handled_signal, sig, __ATOMIC_RELEASE);
}

static void *
wait_for_signal (void *arg)
{
  while (!__atomic_load_n (&handled_signal, __ATOMIC_ACQUIRE))
    sleep_ms (1);
  return NULL;
}

START_TEST (kill_reaches_the_thread)
{
  struct sigaction sa = { .sa_handler = record_handler };
  sigaction (SIGUSR1, &sa, NULL);
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, wait_for_signal, NULL), 0);
  ck_assert_int_eq (pthread_kill (t, 0), 0);
  ck_assert_int_eq (pthread_kill (t, SIGUSR1), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  ck_assert_int_eq (handled_signal, SIGUSR1);
  ck_assert (pthread_equal (handled_by, t));

  handled_signal = 0;
  ck_assert_int_eq (pthread_kill (pthread_self (), SIGUSR1), 0);
  ck_assert_int_eq (handled_signal, SIGUSR1);
  ck_assert (pthread_equal (handled_by, pthread_self ()));
}
END_TEST

/* A signal sent as soon as pthread_create returns runs its handler in the
   new thread, which already knows its ID there; so does a cancel, and
   the thread's CPU clock exists.  */
START_TEST (kill_right_after_create)
{
  struct sigaction sa = { .sa_handler = record_handler };
  sigaction (SIGUSR1, &sa, NULL);
  for (int i = 0; i < 200; i++)
    {
      struct parked p = { .release = 0 };
      clockid_t clock;
      handled_signal = 0;
      ck_assert_int_eq (pthread_create (&p.thread, NULL, park, &p), 0);
      ck_assert_int_eq (pthread_kill (p.thread, SIGUSR1), 0);
      ck_assert_int_eq (pthread_getcpuclockid (p.thread, &clock), 0);
      __atomic_store_n (&p.release, 1, __ATOMIC_RELEASE);
      ck_assert_int_eq (pthread_join (p.thread, NULL), 0);
      ck_assert_int_eq (handled_signal, SIGUSR1);
      ck_assert (pthread_equal (handled_by, p.thread));

      void *result;
      p.release = 0;
      ck_assert_int_eq (pthread_create (&p.thread, NULL, park, &p), 0);
      ck_assert_int_eq (pthread_cancel (p.thread), 0);
      ck_assert_int_eq (pthread_join (p.thread, &result), 0);
      ck_assert_ptr_eq (result, PTHREAD_CANCELED);
    }
}
END_TEST

START_TEST (kill_refuses_bad_signals)
{
  union sigval value = { 0 };
  const int bad[] = { 32, 33, -1, _NSIG, 1000 };
  for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      ck_assert_int_eq (pthread_kill (pthread_self (), bad[i]), EINVAL);
      ck_assert_int_eq (pthread_sigqueue (pthread_self (), bad[i], value),
                        EINVAL);
    }
}
END_TEST

static int queued_value;
static int queued_code;
static pid_t queued_pid;
static pthread_t queued_to;

static void
record_info (int sig, siginfo_t *info, void *context)
{
  queued_code = info->si_code;
  queued_pid = info->si_pid;
  queued_to = pthread_self ();
  __atomic_store_n (&queued_value, info->si_value.sival_int,
                    __ATOMIC_RELEASE);
}

static void *
wait_for_queued (void *arg)
{
  while (!__atomic_load_n (&queued_value, __ATOMIC_ACQUIRE))
    sleep_ms (1);
  return NULL;
}

START_TEST (sigqueue_delivers_value)
{
  struct sigaction sa = { .sa_sigaction = record_info,
                          .sa_flags = SA_SIGINFO };
  sigaction (SIGRTMIN, &sa, NULL);
  union sigval value = { .sival_int = 4242 };
  ck_assert_int_eq (pthread_sigqueue (pthread_self (), SIGRTMIN, value), 0);
  ck_assert_int_eq (queued_value, 4242);
  ck_assert_int_eq (queued_code, SI_QUEUE);
  ck_assert_int_eq (queued_pid, getpid ());

  queued_value = 0;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, wait_for_queued, NULL), 0);
  value.sival_int = 77;
  ck_assert_int_eq (pthread_sigqueue (t, SIGRTMIN, value), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  ck_assert_int_eq (queued_value, 77);
  ck_assert (pthread_equal (queued_to, t));
}
END_TEST

/* --- CPU clocks --------------------------------------------------------- */

static double
clock_seconds (clockid_t clock)
{
  struct timespec ts;
  ck_assert_int_eq (clock_gettime (clock, &ts), 0);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int stop_spinning;

static void *
spin (void *arg)
{
  while (!__atomic_load_n (&stop_spinning, __ATOMIC_RELAXED))
    ;
  return NULL;
}

START_TEST (cpuclock_advances)
{
  clockid_t own;
  ck_assert_int_eq (pthread_getcpuclockid (pthread_self (), &own), 0);
  double mine = clock_seconds (own);
  ck_assert (mine <= clock_seconds (CLOCK_THREAD_CPUTIME_ID));

  pthread_t t;
  clockid_t clock;
  ck_assert_int_eq (pthread_create (&t, NULL, spin, NULL), 0);
  ck_assert_int_eq (pthread_getcpuclockid (t, &clock), 0);
  ck_assert_int_ne (clock, own);
  /* The spinner's clock must pass 10 ms; how soon depends on how busy
     the machine is, so wait for it with a generous deadline.  */
  double before = clock_seconds (clock), after = before;
  for (int waited = 0; after - before <= 0.01 && waited < 20000; waited += 10)
    {
      sleep_ms (10);
      after = clock_seconds (clock);
    }
  __atomic_store_n (&stop_spinning, 1, __ATOMIC_RELAXED);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  ck_assert_msg (after - before > 0.01, "spinning thread used %f s in 20 s",
                 after - before);
}
END_TEST

/* --- small entry points ------------------------------------------------- */

START_TEST (misc_equal_and_concurrency)
{
  struct parked p;
  park_start (&p);
  ck_assert (pthread_equal (pthread_self (), pthread_self ()));
  ck_assert (!pthread_equal (pthread_self (), p.thread));
  park_finish (&p);

  ck_assert_int_eq (pthread_getconcurrency (), 0);
  ck_assert_int_eq (pthread_setconcurrency (5), 0);
  ck_assert_int_eq (pthread_getconcurrency (), 5);
  ck_assert_int_eq (pthread_setconcurrency (-1), EINVAL);
  ck_assert_int_eq (pthread_getconcurrency (), 5);
  ck_assert_int_eq (pthread_setconcurrency (0), 0);
}
END_TEST

START_TEST (misc_old_entry_points)
{
  int (*yield) (void) = xp_test_oldest_symbol ("pthread_yield");
  void (*kill_others) (void)
    = xp_test_oldest_symbol ("pthread_kill_other_threads_np");
  ck_assert_int_eq (yield (), 0);
  struct parked p;
  park_start (&p);
  kill_others ();
  ck_assert_int_eq (pthread_kill (p.thread, 0), 0);
  park_finish (&p);
}
END_TEST

static int fork_steps;

static void
prepare_step (void)
{
  fork_steps |= 1;
}

static void
parent_step (void)
{
  fork_steps |= 2;
}

static void
child_step (void)
{
  fork_steps |= 4;
}

START_TEST (misc_atfork_old_abi)
{
  /* Exported only where glibc's port once exported it (x86_64).  */
  if (xp_test_abi_oldest ("pthread_atfork") == NULL)
    return;
  int (*atfork) (void (*) (void), void (*) (void), void (*) (void))
    = xp_test_oldest_symbol ("pthread_atfork");
  ck_assert_int_eq (atfork (prepare_step, parent_step, child_step), 0);
  pid_t child = fork ();
  ck_assert_int_ne (child, -1);
  if (child == 0)
    _exit (fork_steps);
  int status;
  ck_assert_int_eq (waitpid (child, &status, 0), child);
  ck_assert (WIFEXITED (status));
  ck_assert_int_eq (WEXITSTATUS (status), 1 | 4);
  ck_assert_int_eq (fork_steps, 1 | 2);
}
END_TEST

/* --- suite -------------------------------------------------------------- */

static void
add_case (Suite *suite, const char *name, const TTest *const *tests)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, TIMEOUT);
  for (; *tests != NULL; tests++)
    tcase_add_test (tc, *tests);
  suite_add_tcase (suite, tc);
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], NO_RSEQ_ARG) == 0)
    {
      Suite *rerun = suite_create ("api-without-rseq");
      add_case (rerun, "affinity", (const TTest *const[]) {
          affinity_created_thread, NULL });
      return xp_test_run (rerun);
    }
  Suite *suite = suite_create ("api");
  add_case (suite, "attr", (const TTest *const[]) {
      attr_defaults, attr_flags_round_trip, attr_scheduling,
      attr_stack_size, attr_user_stack, attr_affinity,
      attr_affinity_old_abi, attr_sigmask, attr_sigmask_applies,
      attr_affinity_refused_at_create, NULL });
  add_case (suite, "default-attr", (const TTest *const[]) {
      default_attr_initial, default_attr_refusals,
      default_attr_stack_size_used, default_attr_stack_size_from_start,
      default_attr_affinity_copied, NULL });
  add_case (suite, "getattr", (const TTest *const[]) {
      getattr_created_thread, getattr_user_stack, getattr_detached_thread,
      getattr_main_thread, getattr_scheduling_and_affinity, minstack,
      NULL });
  add_case (suite, "key", (const TTest *const[]) {
      key_basics, key_stale_value_after_delete, key_exhaustion,
      key_destructor_rounds, key_destructor_skips, key_old_names, NULL });
  add_case (suite, "once", (const TTest *const[]) {
      once_runs_once, once_old_name, once_in_fork_child_while_running,
      NULL });
  add_case (suite, "name", (const TTest *const[]) {
      name_self, name_other_thread, NULL });
  add_case (suite, "exited", (const TTest *const[]) {
      exited_thread_esrch, NULL });
  add_case (suite, "sched", (const TTest *const[]) {
      sched_self, sched_other_thread, NULL });
  add_case (suite, "affinity", (const TTest *const[]) {
      affinity_self, affinity_created_thread,
      affinity_created_thread_without_rseq, affinity_zero_fill_and_errors, affinity_old_abi, NULL });
  add_case (suite, "signal", (const TTest *const[]) {
      sigmask_keeps_reserved_signals, sigmask_errors_leave_errno,
      kill_reaches_the_thread, kill_right_after_create,
      kill_refuses_bad_signals,
      sigqueue_delivers_value, NULL });
  add_case (suite, "cpuclock", (const TTest *const[]) {
      cpuclock_advances, NULL });
  add_case (suite, "misc", (const TTest *const[]) {
      misc_equal_and_concurrency, misc_old_entry_points,
      misc_atfork_old_abi, NULL });
  return xp_test_run (suite);
}
