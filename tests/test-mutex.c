/* Mutexes: the error codes and semantics of every mutex and mutex
   attribute function, for each type; static initialisers; timed locks;
   robust, priority-inheritance and priority-protection mutexes;
   process-shared mutexes between forked processes and between an xpthread
   process and a plain glibc one (tests/sync-peer); and contention stress
   whose invariants (exact counts, no overlap in the critical section)
   show that no update is lost.

   Worker threads never assert: they record what they saw and the main
   thread checks it.  Deadlines only serve as watchdogs, so that a hang
   becomes a failure; no result depends on timing.  */
#define _GNU_SOURCE
#include "common.h"
#include "sync-peer.h"
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Every wait for another thread or process gives up after this long.  */
#define WATCHDOG_SECONDS 15

/* ---- helpers -------------------------------------------------------- */

static struct timespec
deadline_after_ms (clockid_t clock, long ms)
{
  struct timespec t;
  clock_gettime (clock, &t);
  t.tv_sec += ms / 1000;
  t.tv_nsec += (ms % 1000) * 1000000;
  if (t.tv_nsec >= 1000000000)
    {
      t.tv_sec++;
      t.tv_nsec -= 1000000000;
    }
  return t;
}

static bool
time_reached (clockid_t clock, const struct timespec *deadline)
{
  struct timespec now;
  clock_gettime (clock, &now);
  return now.tv_sec > deadline->tv_sec
         || (now.tv_sec == deadline->tv_sec
             && now.tv_nsec >= deadline->tv_nsec);
}

static void
sleep_ms (long ms)
{
  struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };
  while (nanosleep (&t, &t) != 0 && errno == EINTR)
    ;
}

/* Join T, failing the test instead of hanging when it never finishes.  */
static void *
join_or_fail (pthread_t t)
{
  struct timespec deadline
    = deadline_after_ms (CLOCK_MONOTONIC, WATCHDOG_SECONDS * 1000L);
  void *result = NULL;
  int err = pthread_clockjoin_np (t, &result, CLOCK_MONOTONIC, &deadline);
  ck_assert_msg (err == 0, "a thread did not finish within %d s: %s",
                 WATCHDOG_SECONDS, strerror (err));
  return result;
}

static pthread_t
start_thread (void *(*fn) (void *), void *arg)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, fn, arg), 0);
  return t;
}

/* Spin (politely) until *FLAG is set, with a watchdog.  */
static bool
await_flag (const int *flag)
{
  struct timespec deadline
    = deadline_after_ms (CLOCK_MONOTONIC, WATCHDOG_SECONDS * 1000L);
  while (!__atomic_load_n (flag, __ATOMIC_ACQUIRE))
    {
      if (time_reached (CLOCK_MONOTONIC, &deadline))
        return false;
      sched_yield ();
    }
  return true;
}

static void
set_flag (int *flag)
{
  __atomic_store_n (flag, 1, __ATOMIC_RELEASE);
}

/* Extra properties of a mutex besides its type.  */
enum
{
  MX_PSHARED = 1,
  MX_ROBUST = 2,
  MX_PI = 4,
  MX_PP = 8
};

static void
init_mutex (pthread_mutex_t *m, int type, int flags)
{
  pthread_mutexattr_t attr;
  ck_assert_int_eq (pthread_mutexattr_init (&attr), 0);
  ck_assert_int_eq (pthread_mutexattr_settype (&attr, type), 0);
  if (flags & MX_PSHARED)
    ck_assert_int_eq (pthread_mutexattr_setpshared (&attr,
                                                    PTHREAD_PROCESS_SHARED),
                      0);
  if (flags & MX_ROBUST)
    ck_assert_int_eq (pthread_mutexattr_setrobust (&attr,
                                                   PTHREAD_MUTEX_ROBUST), 0);
  if (flags & MX_PI)
    ck_assert_int_eq (pthread_mutexattr_setprotocol (&attr,
                                                     PTHREAD_PRIO_INHERIT),
                      0);
  if (flags & MX_PP)
    {
      ck_assert_int_eq (pthread_mutexattr_setprotocol (&attr,
                                                       PTHREAD_PRIO_PROTECT),
                        0);
      ck_assert_int_eq (pthread_mutexattr_setprioceiling
                          (&attr, sched_get_priority_min (SCHED_FIFO)), 0);
    }
  ck_assert_int_eq (pthread_mutex_init (m, &attr), 0);
  ck_assert_int_eq (pthread_mutexattr_destroy (&attr), 0);
}

/* Memory visible to forked children and exec'd programs alike.  */
static void *
map_shared (size_t size)
{
  void *p = mmap (NULL, size, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert (p != MAP_FAILED);
  return p;
}

/* ---- calls made from another thread --------------------------------- */

/* Ownership is per thread, so several checks need a second thread to
   make one call and report its result.  */
struct call
{
  int (*fn) (pthread_mutex_t *);
  pthread_mutex_t *m;
  bool unlock_after;    /* undo a successful lock before returning */
  int result;
};

static void *
run_call (void *p)
{
  struct call *c = p;
  c->result = c->fn (c->m);
  if (c->unlock_after && c->result == 0)
    pthread_mutex_unlock (c->m);
  return NULL;
}

static int
call_in_thread (int (*fn) (pthread_mutex_t *), pthread_mutex_t *m,
                bool unlock_after)
{
  struct call c = { fn, m, unlock_after, -1 };
  join_or_fail (start_thread (run_call, &c));
  return c.result;
}

/* trylock from another thread, which lets go again on success.  */
static int
trylock_elsewhere (pthread_mutex_t *m)
{
  return call_in_thread (pthread_mutex_trylock, m, true);
}

static int
unlock_elsewhere (pthread_mutex_t *m)
{
  return call_in_thread (pthread_mutex_unlock, m, false);
}

static const int all_types[] = {
  PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK,
  PTHREAD_MUTEX_ADAPTIVE_NP
};
#define N_TYPES (int) (sizeof all_types / sizeof all_types[0])

/* ---- init and destroy ----------------------------------------------- */

START_TEST (init_lock_destroy)
{
  pthread_mutex_t m;
  ck_assert_int_eq (pthread_mutex_init (&m, NULL), 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* Looped over all_types.  */
START_TEST (destroy_locked_is_busy)
{
  pthread_mutex_t m;
  init_mutex (&m, all_types[_i], 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), EBUSY);
  /* The failed destroy left the mutex intact.  */
  ck_assert_int_eq (trylock_elsewhere (&m), EBUSY);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (trylock_elsewhere (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* Looped over all_types.  */
START_TEST (use_after_destroy_is_invalid)
{
  pthread_mutex_t m;
  init_mutex (&m, all_types[_i], 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), EINVAL);
  ck_assert_int_eq (pthread_mutex_trylock (&m), EINVAL);
  struct timespec deadline = deadline_after_ms (CLOCK_REALTIME, 10);
  ck_assert_int_eq (pthread_mutex_timedlock (&m, &deadline), EINVAL);
  ck_assert_int_eq (pthread_mutex_unlock (&m), EINVAL);
  /* A destroyed mutex may be initialised again.  */
  init_mutex (&m, all_types[_i], 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* ---- each type ------------------------------------------------------ */

static void
check_normal_semantics (pthread_mutex_t *m)
{
  ck_assert_int_eq (pthread_mutex_lock (m), 0);
  /* A normal mutex does not recurse: trylock by the owner is EBUSY.  */
  ck_assert_int_eq (pthread_mutex_trylock (m), EBUSY);
  ck_assert_int_eq (trylock_elsewhere (m), EBUSY);
  ck_assert_int_eq (pthread_mutex_unlock (m), 0);
  ck_assert_int_eq (trylock_elsewhere (m), 0);
  ck_assert_int_eq (pthread_mutex_trylock (m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (m), 0);
}

static void
check_recursive_semantics (pthread_mutex_t *m)
{
  ck_assert_int_eq (pthread_mutex_lock (m), 0);
  ck_assert_int_eq (pthread_mutex_lock (m), 0);
  ck_assert_int_eq (pthread_mutex_trylock (m), 0);
  struct timespec deadline = deadline_after_ms (CLOCK_REALTIME, 10);
  ck_assert_int_eq (pthread_mutex_timedlock (m, &deadline), 0);
  /* Held four times: another thread can take it only after four
     unlocks, and cannot unlock it itself.  */
  for (int held = 4; held > 0; held--)
    {
      ck_assert_int_eq (trylock_elsewhere (m), EBUSY);
      ck_assert_int_eq (unlock_elsewhere (m), EPERM);
      ck_assert_int_eq (pthread_mutex_unlock (m), 0);
    }
  ck_assert_int_eq (pthread_mutex_unlock (m), EPERM);
  ck_assert_int_eq (trylock_elsewhere (m), 0);
}

static void
check_errorcheck_semantics (pthread_mutex_t *m)
{
  ck_assert_int_eq (pthread_mutex_unlock (m), EPERM);
  ck_assert_int_eq (pthread_mutex_lock (m), 0);
  ck_assert_int_eq (pthread_mutex_lock (m), EDEADLK);
  struct timespec deadline = deadline_after_ms (CLOCK_REALTIME, 10);
  ck_assert_int_eq (pthread_mutex_timedlock (m, &deadline), EDEADLK);
  ck_assert_int_eq (pthread_mutex_clocklock (m, CLOCK_MONOTONIC, &deadline),
                    EDEADLK);
  ck_assert_int_eq (pthread_mutex_trylock (m), EBUSY);
  ck_assert_int_eq (unlock_elsewhere (m), EPERM);
  ck_assert_int_eq (trylock_elsewhere (m), EBUSY);
  ck_assert_int_eq (pthread_mutex_unlock (m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (m), EPERM);
  ck_assert_int_eq (unlock_elsewhere (m), EPERM);
  ck_assert_int_eq (trylock_elsewhere (m), 0);
}

START_TEST (normal_type)
{
  pthread_mutex_t m;
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, 0);
  check_normal_semantics (&m);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
  /* PTHREAD_MUTEX_DEFAULT and a null attribute give the same.  */
  init_mutex (&m, PTHREAD_MUTEX_DEFAULT, 0);
  check_normal_semantics (&m);
  ck_assert_int_eq (pthread_mutex_init (&m, NULL), 0);
  check_normal_semantics (&m);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

START_TEST (recursive_type)
{
  pthread_mutex_t m;
  init_mutex (&m, PTHREAD_MUTEX_RECURSIVE, 0);
  check_recursive_semantics (&m);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

START_TEST (errorcheck_type)
{
  pthread_mutex_t m;
  init_mutex (&m, PTHREAD_MUTEX_ERRORCHECK, 0);
  check_errorcheck_semantics (&m);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

START_TEST (adaptive_type)
{
  pthread_mutex_t m;
  init_mutex (&m, PTHREAD_MUTEX_ADAPTIVE_NP, 0);
  check_normal_semantics (&m);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* The static initialisers give the type they name; each check ends with
   the mutex unlocked, so it can be destroyed.  */
START_TEST (static_initialisers)
{
  pthread_mutex_t normal = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_t recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
  pthread_mutex_t errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
  pthread_mutex_t adaptive = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
  check_normal_semantics (&normal);
  check_recursive_semantics (&recursive);
  check_errorcheck_semantics (&errorcheck);
  check_normal_semantics (&adaptive);
  ck_assert_int_eq (pthread_mutex_destroy (&normal), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&recursive), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&errorcheck), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&adaptive), 0);
}
END_TEST

/* ---- timed locks ---------------------------------------------------- */

/* How a contender waits for a mutex it cannot have.  */
enum timed_kind { TIMED_LOCK, CLOCK_REALTIME_LOCK, CLOCK_MONOTONIC_LOCK };

struct timed_try
{
  pthread_mutex_t *m;
  enum timed_kind kind;
  long ms;                     /* deadline from now */
  bool replace_nsec;           /* then use tv_nsec in the deadline */
  long tv_nsec;
  int result;
  bool early;                  /* returned ETIMEDOUT before the deadline */
};

static clockid_t
timed_clock (enum timed_kind kind)
{
  return kind == CLOCK_MONOTONIC_LOCK ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

static void *
try_timed (void *p)
{
  struct timed_try *t = p;
  clockid_t clock = timed_clock (t->kind);
  struct timespec deadline = deadline_after_ms (clock, t->ms);
  if (t->replace_nsec)
    deadline.tv_nsec = t->tv_nsec;
  if (t->kind == TIMED_LOCK)
    t->result = pthread_mutex_timedlock (t->m, &deadline);
  else
    t->result = pthread_mutex_clocklock (t->m, clock, &deadline);
  t->early = t->result == ETIMEDOUT && !time_reached (clock, &deadline);
  if (t->result == 0)
    pthread_mutex_unlock (t->m);
  return NULL;
}

static struct timed_try
timed_elsewhere (pthread_mutex_t *m, enum timed_kind kind, long ms)
{
  struct timed_try t = { .m = m, .kind = kind, .ms = ms, .result = -1 };
  join_or_fail (start_thread (try_timed, &t));
  return t;
}

static int
timed_elsewhere_nsec (pthread_mutex_t *m, enum timed_kind kind, long nsec)
{
  struct timed_try t = { .m = m, .kind = kind, .ms = 20,
                         .replace_nsec = true, .tv_nsec = nsec,
                         .result = -1 };
  join_or_fail (start_thread (try_timed, &t));
  return t.result;
}

/* Looped over all_types x the three timed calls.  */
START_TEST (timed_lock_times_out)
{
  int type = all_types[_i / 3];
  enum timed_kind kind = (enum timed_kind) (_i % 3);
  pthread_mutex_t m;
  init_mutex (&m, type, 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);

  struct timed_try t = timed_elsewhere (&m, kind, 20);
  ck_assert_int_eq (t.result, ETIMEDOUT);
  ck_assert_msg (!t.early, "timed out before the deadline");
  /* A deadline already past: ETIMEDOUT at once.  */
  t = timed_elsewhere (&m, kind, -1000);
  ck_assert_int_eq (t.result, ETIMEDOUT);
  /* tv_nsec out of range is EINVAL when the call would have to wait.  */
  ck_assert_int_eq (timed_elsewhere_nsec (&m, kind, -1), EINVAL);
  ck_assert_int_eq (timed_elsewhere_nsec (&m, kind, 1000000000), EINVAL);
  ck_assert_int_eq (timed_elsewhere_nsec (&m, kind, LONG_MAX), EINVAL);

  /* The timed-out waiters left the mutex working: after the unlock a
     timed lock takes it.  */
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  t = timed_elsewhere (&m, kind, WATCHDOG_SECONDS * 1000L);
  ck_assert_int_eq (t.result, 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

START_TEST (clocklock_bad_clock)
{
  static const clockid_t bad[] = {
    CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, -1, 12345
  };
  pthread_mutex_t m;
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, 0);
  struct timespec deadline = deadline_after_ms (CLOCK_REALTIME, 10);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      ck_assert_int_eq (pthread_mutex_clocklock (&m, bad[i], &deadline),
                        EINVAL);
      ck_assert_int_eq (pthread_mutex_lock (&m), 0);
      ck_assert_int_eq (pthread_mutex_clocklock (&m, bad[i], &deadline),
                        EINVAL);
      ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
    }
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* A free mutex is taken even when the deadline has passed.  */
START_TEST (timed_lock_free_mutex)
{
  pthread_mutex_t m;
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, 0);
  struct timespec past = { 0, 0 };
  ck_assert_int_eq (pthread_mutex_timedlock (&m, &past), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_clocklock (&m, CLOCK_MONOTONIC, &past), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* ---- attributes ----------------------------------------------------- */

START_TEST (attr_defaults)
{
  pthread_mutexattr_t attr;
  int value;
  ck_assert_int_eq (pthread_mutexattr_init (&attr), 0);
  ck_assert_int_eq (pthread_mutexattr_gettype (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_MUTEX_DEFAULT);
  ck_assert_int_eq (pthread_mutexattr_getpshared (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_PROCESS_PRIVATE);
  ck_assert_int_eq (pthread_mutexattr_getrobust (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_MUTEX_STALLED);
  ck_assert_int_eq (pthread_mutexattr_getprotocol (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_PRIO_NONE);
  ck_assert_int_eq (pthread_mutexattr_destroy (&attr), 0);
}
END_TEST

START_TEST (attr_type)
{
  pthread_mutexattr_t attr;
  int type;
  ck_assert_int_eq (pthread_mutexattr_init (&attr), 0);
  for (int i = 0; i < N_TYPES; i++)
    {
      ck_assert_int_eq (pthread_mutexattr_settype (&attr, all_types[i]), 0);
      ck_assert_int_eq (pthread_mutexattr_gettype (&attr, &type), 0);
      ck_assert_int_eq (type, all_types[i]);
    }
  ck_assert_int_eq (pthread_mutexattr_settype (&attr, PTHREAD_MUTEX_RECURSIVE),
                    0);
  static const int bad[] = { -1, 4, 42, INT_MAX, INT_MIN };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_int_eq (pthread_mutexattr_settype (&attr, bad[i]), EINVAL);
  /* A rejected value leaves the attribute as it was.  */
  ck_assert_int_eq (pthread_mutexattr_gettype (&attr, &type), 0);
  ck_assert_int_eq (type, PTHREAD_MUTEX_RECURSIVE);
  ck_assert_int_eq (pthread_mutexattr_destroy (&attr), 0);
}
END_TEST

START_TEST (attr_pshared)
{
  pthread_mutexattr_t attr;
  int value;
  ck_assert_int_eq (pthread_mutexattr_init (&attr), 0);
  ck_assert_int_eq (pthread_mutexattr_setpshared (&attr,
                                                  PTHREAD_PROCESS_SHARED), 0);
  ck_assert_int_eq (pthread_mutexattr_getpshared (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_PROCESS_SHARED);
  ck_assert_int_eq (pthread_mutexattr_setpshared (&attr, 2), EINVAL);
  ck_assert_int_eq (pthread_mutexattr_setpshared (&attr, -1), EINVAL);
  ck_assert_int_eq (pthread_mutexattr_getpshared (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_PROCESS_SHARED);
  ck_assert_int_eq (pthread_mutexattr_setpshared (&attr,
                                                  PTHREAD_PROCESS_PRIVATE), 0);
  ck_assert_int_eq (pthread_mutexattr_getpshared (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_PROCESS_PRIVATE);
  ck_assert_int_eq (pthread_mutexattr_destroy (&attr), 0);
}
END_TEST

/* glibc reads and writes the fields of any attribute object, never
   initialised or destroyed (POSIX leaves that undefined), so a program
   that sets the type of a destroyed attribute gets that type there: it
   must here too.  */
START_TEST (attr_any_object_works_as_in_glibc)
{
  pthread_mutexattr_t attr;
  int value = -1;
  memset (&attr, 0x5a, sizeof attr);
  ck_assert_int_eq (pthread_mutexattr_settype (&attr,
                                               PTHREAD_MUTEX_ERRORCHECK), 0);
  ck_assert_int_eq (pthread_mutexattr_gettype (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_MUTEX_ERRORCHECK);

  ck_assert_int_eq (pthread_mutexattr_init (&attr), 0);
  ck_assert_int_eq (pthread_mutexattr_destroy (&attr), 0);
  ck_assert_int_eq (pthread_mutexattr_settype (&attr,
                                               PTHREAD_MUTEX_RECURSIVE), 0);
  ck_assert_int_eq (pthread_mutexattr_gettype (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_t m;
  ck_assert_int_eq (pthread_mutex_init (&m, &attr), 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* glibc's destroy touches nothing and answers 0 even for NULL (Open
   POSIX Test Suite pthread_mutexattr_destroy/4-1 expects no crash).  */
START_TEST (attr_destroy_null)
{
  pthread_mutexattr_t *volatile none = NULL;
  ck_assert_int_eq (pthread_mutexattr_destroy (none), 0);
}
END_TEST

START_TEST (attr_robust)
{
  pthread_mutexattr_t attr;
  int value;
  ck_assert_int_eq (pthread_mutexattr_init (&attr), 0);
  ck_assert_int_eq (pthread_mutexattr_setrobust (&attr, PTHREAD_MUTEX_ROBUST),
                    0);
  ck_assert_int_eq (pthread_mutexattr_getrobust (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_MUTEX_ROBUST);
  ck_assert_int_eq (pthread_mutexattr_setrobust (&attr, 2), EINVAL);
  ck_assert_int_eq (pthread_mutexattr_setrobust (&attr, -1), EINVAL);
  ck_assert_int_eq (pthread_mutexattr_getrobust (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_MUTEX_ROBUST);
  ck_assert_int_eq (pthread_mutexattr_setrobust (&attr,
                                                 PTHREAD_MUTEX_STALLED), 0);
  ck_assert_int_eq (pthread_mutexattr_getrobust (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_MUTEX_STALLED);
  ck_assert_int_eq (pthread_mutexattr_destroy (&attr), 0);
}
END_TEST

START_TEST (attr_protocol)
{
  static const int protocols[] = {
    PTHREAD_PRIO_INHERIT, PTHREAD_PRIO_PROTECT, PTHREAD_PRIO_NONE
  };
  pthread_mutexattr_t attr;
  int value;
  ck_assert_int_eq (pthread_mutexattr_init (&attr), 0);
  for (size_t i = 0; i < sizeof protocols / sizeof protocols[0]; i++)
    {
      ck_assert_int_eq (pthread_mutexattr_setprotocol (&attr, protocols[i]),
                        0);
      ck_assert_int_eq (pthread_mutexattr_getprotocol (&attr, &value), 0);
      ck_assert_int_eq (value, protocols[i]);
    }
  ck_assert_int_eq (pthread_mutexattr_setprotocol (&attr, 3), EINVAL);
  ck_assert_int_eq (pthread_mutexattr_setprotocol (&attr, -1), EINVAL);
  ck_assert_int_eq (pthread_mutexattr_getprotocol (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_PRIO_NONE);
  ck_assert_int_eq (pthread_mutexattr_destroy (&attr), 0);
}
END_TEST

START_TEST (attr_prioceiling)
{
  int min = sched_get_priority_min (SCHED_FIFO);
  int max = sched_get_priority_max (SCHED_FIFO);
  pthread_mutexattr_t attr;
  int value;
  ck_assert_int_eq (pthread_mutexattr_init (&attr), 0);
  ck_assert_int_eq (pthread_mutexattr_setprotocol (&attr,
                                                   PTHREAD_PRIO_PROTECT), 0);
  for (int ceiling = min; ceiling <= max; ceiling++)
    {
      ck_assert_int_eq (pthread_mutexattr_setprioceiling (&attr, ceiling), 0);
      ck_assert_int_eq (pthread_mutexattr_getprioceiling (&attr, &value), 0);
      ck_assert_int_eq (value, ceiling);
    }
  ck_assert_int_eq (pthread_mutexattr_setprioceiling (&attr, min - 1),
                    EINVAL);
  ck_assert_int_eq (pthread_mutexattr_setprioceiling (&attr, max + 1),
                    EINVAL);
  ck_assert_int_eq (pthread_mutexattr_setprioceiling (&attr, INT_MIN),
                    EINVAL);
  ck_assert_int_eq (pthread_mutexattr_getprioceiling (&attr, &value), 0);
  ck_assert_int_eq (value, max);
  ck_assert_int_eq (pthread_mutexattr_destroy (&attr), 0);
}
END_TEST

/* Every field keeps its value whatever is set after it.  */
START_TEST (attr_fields_independent)
{
  int max = sched_get_priority_max (SCHED_FIFO);
  pthread_mutexattr_t attr;
  int value;
  ck_assert_int_eq (pthread_mutexattr_init (&attr), 0);
  ck_assert_int_eq (pthread_mutexattr_settype (&attr,
                                               PTHREAD_MUTEX_ERRORCHECK), 0);
  ck_assert_int_eq (pthread_mutexattr_setpshared (&attr,
                                                  PTHREAD_PROCESS_SHARED), 0);
  ck_assert_int_eq (pthread_mutexattr_setrobust (&attr, PTHREAD_MUTEX_ROBUST),
                    0);
  ck_assert_int_eq (pthread_mutexattr_setprotocol (&attr,
                                                   PTHREAD_PRIO_PROTECT), 0);
  ck_assert_int_eq (pthread_mutexattr_setprioceiling (&attr, max), 0);
  ck_assert_int_eq (pthread_mutexattr_gettype (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_MUTEX_ERRORCHECK);
  ck_assert_int_eq (pthread_mutexattr_getpshared (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_PROCESS_SHARED);
  ck_assert_int_eq (pthread_mutexattr_getrobust (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_MUTEX_ROBUST);
  ck_assert_int_eq (pthread_mutexattr_getprotocol (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_PRIO_PROTECT);
  ck_assert_int_eq (pthread_mutexattr_getprioceiling (&attr, &value), 0);
  ck_assert_int_eq (value, max);
  ck_assert_int_eq (pthread_mutexattr_destroy (&attr), 0);
}
END_TEST

START_TEST (np_names)
{
  int (*setkind) (pthread_mutexattr_t *, int)
    = xp_test_oldest_symbol ("pthread_mutexattr_setkind_np");
  int (*getkind) (const pthread_mutexattr_t *, int *)
    = xp_test_oldest_symbol ("pthread_mutexattr_getkind_np");
  int (*setrobust) (pthread_mutexattr_t *, int)
    = xp_test_oldest_symbol ("pthread_mutexattr_setrobust_np");
  int (*getrobust) (const pthread_mutexattr_t *, int *)
    = xp_test_oldest_symbol ("pthread_mutexattr_getrobust_np");
  int (*consistent) (pthread_mutex_t *)
    = xp_test_oldest_symbol ("pthread_mutex_consistent_np");

  pthread_mutexattr_t attr;
  int value;
  ck_assert_int_eq (pthread_mutexattr_init (&attr), 0);
  ck_assert_int_eq (setkind (&attr, PTHREAD_MUTEX_ERRORCHECK_NP), 0);
  ck_assert_int_eq (getkind (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_MUTEX_ERRORCHECK_NP);
  ck_assert_int_eq (setkind (&attr, 4), EINVAL);
  ck_assert_int_eq (setrobust (&attr, PTHREAD_MUTEX_ROBUST_NP), 0);
  ck_assert_int_eq (getrobust (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_MUTEX_ROBUST_NP);
  ck_assert_int_eq (pthread_mutexattr_getrobust (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_MUTEX_ROBUST);
  ck_assert_int_eq (setrobust (&attr, 2), EINVAL);

  /* consistent_np on a robust mutex that is consistent, and on a mutex
     that is not robust at all: EINVAL both.  */
  pthread_mutex_t m;
  ck_assert_int_eq (pthread_mutex_init (&m, &attr), 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), EDEADLK);
  ck_assert_int_eq (consistent (&m), EINVAL);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
  ck_assert_int_eq (pthread_mutex_init (&m, NULL), 0);
  ck_assert_int_eq (consistent (&m), EINVAL);
  ck_assert_int_eq (pthread_mutex_consistent (&m), EINVAL);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
  ck_assert_int_eq (pthread_mutexattr_destroy (&attr), 0);
}
END_TEST

/* ---- robust mutexes ------------------------------------------------- */

static void *
lock_and_exit (void *p)
{
  return (void *) (long) pthread_mutex_lock (p);
}

/* Have a thread lock M and exit holding it.  */
static void
owner_thread_dies (pthread_mutex_t *m)
{
  ck_assert_int_eq ((int) (long) join_or_fail (start_thread (lock_and_exit,
                                                              m)), 0);
}

/* Looped over all_types.  */
START_TEST (robust_owner_thread_dies)
{
  XP_TEST_NEEDS_ROBUST_LIST ();
  pthread_mutex_t m;
  init_mutex (&m, all_types[_i], MX_ROBUST);
  owner_thread_dies (&m);
  ck_assert_int_eq (pthread_mutex_lock (&m), EOWNERDEAD);
  ck_assert_int_eq (pthread_mutex_consistent (&m), 0);
  /* Now an ordinary, usable mutex, held once by this thread.  */
  ck_assert_int_eq (trylock_elsewhere (&m), EBUSY);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (pthread_mutex_consistent (&m), EINVAL);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (trylock_elsewhere (&m), 0);
  /* trylock reports the death too.  */
  owner_thread_dies (&m);
  ck_assert_int_eq (pthread_mutex_trylock (&m), EOWNERDEAD);
  ck_assert_int_eq (pthread_mutex_consistent (&m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  /* An heir that dies before making it consistent passes the death on;
     only the holder may make the mutex consistent.  */
  owner_thread_dies (&m);
  ck_assert_int_eq (call_in_thread (pthread_mutex_lock, &m, false),
                    EOWNERDEAD);
  ck_assert_int_eq (pthread_mutex_consistent (&m), EINVAL);
  ck_assert_int_eq (pthread_mutex_lock (&m), EOWNERDEAD);
  ck_assert_int_eq (pthread_mutex_consistent (&m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

START_TEST (robust_not_recoverable)
{
  XP_TEST_NEEDS_ROBUST_LIST ();
  pthread_mutex_t m;
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, MX_ROBUST);
  owner_thread_dies (&m);
  ck_assert_int_eq (pthread_mutex_lock (&m), EOWNERDEAD);
  /* Unlocked without pthread_mutex_consistent: permanently unusable.  */
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), ENOTRECOVERABLE);
  struct timespec deadline = deadline_after_ms (CLOCK_REALTIME, 10);
  ck_assert_int_eq (pthread_mutex_timedlock (&m, &deadline), ENOTRECOVERABLE);
  ck_assert_int_eq (call_in_thread (pthread_mutex_lock, &m, true),
                    ENOTRECOVERABLE);
  ck_assert_int_eq (pthread_mutex_trylock (&m), ENOTRECOVERABLE);
  /* This proves that xpthread's code ran: glibc's trylock leaves a
     not-recoverable mutex locked by the caller (it tests the value the
     word had before its compare-and-swap to decide whether to undo it),
     and this timed lock would then time out instead.  */
  struct timed_try t = timed_elsewhere (&m, TIMED_LOCK,
                                        WATCHDOG_SECONDS * 1000L / 3);
  ck_assert_int_eq (t.result, ENOTRECOVERABLE);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

struct robust_waiter
{
  pthread_mutex_t *m;
  int release;              /* the owner may exit */
  int locked;               /* the owner holds the mutex */
  int result;
  int consistent;
  int unlock;
};

static void *
lock_wait_exit (void *p)
{
  struct robust_waiter *w = p;
  if (pthread_mutex_lock (w->m) == 0)
    set_flag (&w->locked);
  await_flag (&w->release);
  return NULL;
}

static void *
lock_recover (void *p)
{
  struct robust_waiter *w = p;
  w->result = pthread_mutex_lock (w->m);
  if (w->result == EOWNERDEAD)
    w->consistent = pthread_mutex_consistent (w->m);
  w->unlock = pthread_mutex_unlock (w->m);
  return NULL;
}

/* A thread that is (or soon will be) asleep waiting for the mutex when
   its owner exits gets EOWNERDEAD, whichever happens first.  */
START_TEST (robust_waiter_sees_death)
{
  XP_TEST_NEEDS_ROBUST_LIST ();
  pthread_mutex_t m;
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, MX_ROBUST);
  struct robust_waiter w = { .m = &m, .result = -1, .consistent = -1,
                             .unlock = -1 };
  pthread_t owner = start_thread (lock_wait_exit, &w);
  ck_assert (await_flag (&w.locked));
  pthread_t waiter = start_thread (lock_recover, &w);
  set_flag (&w.release);
  join_or_fail (owner);
  join_or_fail (waiter);
  ck_assert_int_eq (w.result, EOWNERDEAD);
  ck_assert_int_eq (w.consistent, 0);
  ck_assert_int_eq (w.unlock, 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* A process holding a process-shared robust mutex is killed: the kernel
   walks its robust list and the next locker, possibly already asleep,
   gets EOWNERDEAD.  */
START_TEST (robust_owner_process_killed)
{
  XP_TEST_NEEDS_ROBUST_LIST ();
  pthread_mutex_t *m = map_shared (sizeof *m);
  init_mutex (m, PTHREAD_MUTEX_NORMAL, MX_ROBUST | MX_PSHARED);
  int fds[2];
  ck_assert_int_eq (pipe (fds), 0);
  fflush (NULL);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      char ok = pthread_mutex_lock (m) == 0 ? 'y' : 'n';
      if (write (fds[1], &ok, 1) != 1)
        _exit (1);
      for (;;)
        pause ();
    }
  close (fds[1]);
  char ok = 0;
  ck_assert_int_eq (read (fds[0], &ok, 1), 1);
  ck_assert_int_eq (ok, 'y');
  close (fds[0]);

  struct robust_waiter w = { .m = m, .result = -1, .consistent = -1,
                             .unlock = -1 };
  pthread_t waiter = start_thread (lock_recover, &w);
  ck_assert_int_eq (kill (pid, SIGKILL), 0);
  int status = xp_test_wait_child (pid);
  ck_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  join_or_fail (waiter);
  ck_assert_int_eq (w.result, EOWNERDEAD);
  ck_assert_int_eq (w.consistent, 0);
  ck_assert_int_eq (w.unlock, 0);
  ck_assert_int_eq (pthread_mutex_lock (m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (m), 0);
  munmap (m, sizeof *m);
}
END_TEST

/* Robust flavours of every type: plain, with priority inheritance.  */
static const int robust_flavours[] = { MX_ROBUST, MX_ROBUST | MX_PI };
#define N_ROBUST_FLAVOURS 2

static bool
all_bytes_are (const void *p, unsigned char byte, size_t size)
{
  for (size_t i = 0; i < size; i++)
    if (((const unsigned char *) p)[i] != byte)
      return false;
  return true;
}

/* Looped over robust_flavours.  glibc destroys a robust mutex its caller
   holds, and programs go on.  The mutex leaves the caller's robust list:
   its memory, reused, is not written when a mutex next to it on the list
   is unlocked, and the list still reports an owner's death.  */
START_TEST (robust_destroy_held)
{
  XP_TEST_NEEDS_ROBUST_LIST ();
  pthread_mutex_t m, neighbour;
  init_mutex (&neighbour, PTHREAD_MUTEX_NORMAL, robust_flavours[_i]);
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, robust_flavours[_i]);
  ck_assert_int_eq (pthread_mutex_lock (&neighbour), 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
  memset (&m, 0xab, sizeof m);
  ck_assert_int_eq (pthread_mutex_unlock (&neighbour), 0);
  ck_assert (all_bytes_are (&m, 0xab, sizeof m));
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, robust_flavours[_i]);
  owner_thread_dies (&m);
  ck_assert_int_eq (pthread_mutex_lock (&m), EOWNERDEAD);
  ck_assert_int_eq (pthread_mutex_consistent (&m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&neighbour), 0);
}
END_TEST

static void *
lock_unlock (void *p)
{
  int err = pthread_mutex_lock (p);
  if (err == 0)
    err = pthread_mutex_unlock (p);
  return (void *) (long) err;
}

/* Looped over robust_flavours.  Still busy: held by another live thread,
   whose robust list links it, or with a sleeper, who would never wake. */
START_TEST (robust_destroy_busy)
{
  XP_TEST_NEEDS_ROBUST_LIST ();
  pthread_mutex_t m;
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, robust_flavours[_i]);
  struct robust_waiter w = { .m = &m };
  pthread_t owner = start_thread (lock_wait_exit, &w);
  ck_assert (await_flag (&w.locked));
  ck_assert_int_eq (pthread_mutex_destroy (&m), EBUSY);
  set_flag (&w.release);
  join_or_fail (owner);
  ck_assert_int_eq (pthread_mutex_lock (&m), EOWNERDEAD);
  ck_assert_int_eq (pthread_mutex_consistent (&m), 0);
  pthread_t waiter = start_thread (lock_unlock, &m);
  struct timespec deadline
    = deadline_after_ms (CLOCK_MONOTONIC, WATCHDOG_SECONDS * 1000L);
  while (!(__atomic_load_n (&m.__data.__lock, __ATOMIC_RELAXED)
           & FUTEX_WAITERS))
    {
      ck_assert (!time_reached (CLOCK_MONOTONIC, &deadline));
      sched_yield ();
    }
  ck_assert_int_eq (pthread_mutex_destroy (&m), EBUSY);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq ((int) (long) join_or_fail (waiter), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* Looped over all_types x robust_flavours: glibc's answers for each.  */
START_TEST (robust_type_answers)
{
  int type = all_types[_i % N_TYPES];
  pthread_mutex_t m;
  init_mutex (&m, type, robust_flavours[_i / N_TYPES]);
  /* Only the owner may unlock, whatever the type.  */
  ck_assert_int_eq (pthread_mutex_unlock (&m), EPERM);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (unlock_elsewhere (&m), EPERM);
  ck_assert_int_eq (trylock_elsewhere (&m), EBUSY);
  struct timed_try t = timed_elsewhere (&m, CLOCK_MONOTONIC_LOCK, 20);
  ck_assert_int_eq (t.result, ETIMEDOUT);
  t = timed_elsewhere (&m, TIMED_LOCK, 20);
  ck_assert_int_eq (t.result, ETIMEDOUT);
  ck_assert_int_eq (timed_elsewhere_nsec (&m, TIMED_LOCK, -1), EINVAL);
  struct timespec deadline = deadline_after_ms (CLOCK_REALTIME, 10);
  switch (type)
    {
    case PTHREAD_MUTEX_ERRORCHECK:
      ck_assert_int_eq (pthread_mutex_lock (&m), EDEADLK);
      ck_assert_int_eq (pthread_mutex_timedlock (&m, &deadline), EDEADLK);
      /* Where glibc differs from the non-robust kind: EDEADLK, not
         EBUSY.  */
      ck_assert_int_eq (pthread_mutex_trylock (&m), EDEADLK);
      break;
    case PTHREAD_MUTEX_RECURSIVE:
      ck_assert_int_eq (pthread_mutex_lock (&m), 0);
      ck_assert_int_eq (pthread_mutex_trylock (&m), 0);
      ck_assert_int_eq (pthread_mutex_timedlock (&m, &deadline), 0);
      for (int held = 4; held > 1; held--)
        {
          ck_assert_int_eq (unlock_elsewhere (&m), EPERM);
          ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
          ck_assert_int_eq (trylock_elsewhere (&m), EBUSY);
        }
      /* The count saturates rather than wrapping (<pthread.h> documents
         the field, and this saves four billion locks).  */
      m.__data.__count = UINT_MAX;
      ck_assert_int_eq (pthread_mutex_lock (&m), EAGAIN);
      ck_assert_int_eq (pthread_mutex_trylock (&m), EAGAIN);
      m.__data.__count = 1;
      break;
    default:
      ck_assert_int_eq (pthread_mutex_trylock (&m), EBUSY);
      break;
    }
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m), EPERM);
  ck_assert_int_eq (pthread_mutex_consistent (&m), EINVAL);
  ck_assert_int_eq (trylock_elsewhere (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* A dying thread holds several robust mutexes, after unlocking others
   out of order: the kernel must find exactly the held ones through the
   links, which also mix priority-inheritance entries (tagged) with plain
   ones.  Looped: all plain, all PI, mixed.  */
#define N_LINKED 5

struct linked
{
  pthread_mutex_t m[N_LINKED];
  int err;
};

static void *
lock_all_release_some (void *p)
{
  struct linked *l = p;
  for (int i = 0; i < N_LINKED; i++)
    if ((l->err = pthread_mutex_lock (&l->m[i])) != 0)
      return NULL;
  /* The newest, one in the middle, the oldest: held remain 1 and 3.  */
  static const int release[] = { 4, 2, 0 };
  for (int i = 0; i < 3; i++)
    if ((l->err = pthread_mutex_unlock (&l->m[release[i]])) != 0)
      return NULL;
  return NULL;
}

START_TEST (robust_list_links)
{
  XP_TEST_NEEDS_ROBUST_LIST ();
  struct linked l = { .err = -1 };
  for (int i = 0; i < N_LINKED; i++)
    {
      int pi = _i == 1 || (_i == 2 && i % 2 == 1) ? MX_PI : 0;
      init_mutex (&l.m[i], all_types[i % N_TYPES], MX_ROBUST | pi);
    }
  join_or_fail (start_thread (lock_all_release_some, &l));
  ck_assert_int_eq (l.err, 0);
  for (int i = 0; i < N_LINKED; i++)
    {
      int want = i == 1 || i == 3 ? EOWNERDEAD : 0;
      ck_assert_msg (pthread_mutex_trylock (&l.m[i]) == want,
                     "mutex %d: expected %d", i, want);
      if (want == EOWNERDEAD)
        ck_assert_int_eq (pthread_mutex_consistent (&l.m[i]), 0);
    }
  /* Held here now, in another order: unlock and relock all, then let
     them go.  */
  for (int i = 0; i < N_LINKED; i++)
    ck_assert_int_eq (pthread_mutex_unlock (&l.m[(i * 2) % N_LINKED]), 0);
  for (int i = 0; i < N_LINKED; i++)
    {
      ck_assert_int_eq (trylock_elsewhere (&l.m[i]), 0);
      ck_assert_int_eq (pthread_mutex_destroy (&l.m[i]), 0);
    }
}
END_TEST

/* A condition wait whose mutex's owner died meanwhile: the relock
   reports EOWNERDEAD and leaves the mutex held.  Looped: private and
   process-shared condition variable, then the same with a robust PI
   mutex.  */
struct cond_death
{
  pthread_mutex_t m;
  pthread_cond_t c;
  int waiting;
  int wait_result;
  int consistent;
  int unlock;
};

static void *
wait_for_signal (void *p)
{
  struct cond_death *d = p;
  d->wait_result = pthread_mutex_lock (&d->m);
  if (d->wait_result != 0)
    return NULL;
  set_flag (&d->waiting);
  d->wait_result = pthread_cond_wait (&d->c, &d->m);
  if (d->wait_result == EOWNERDEAD)
    d->consistent = pthread_mutex_consistent (&d->m);
  d->unlock = pthread_mutex_unlock (&d->m);
  return NULL;
}

START_TEST (robust_cond_wait_owner_died)
{
  XP_TEST_NEEDS_ROBUST_LIST ();
  struct cond_death d = { .wait_result = -1, .consistent = -1,
                          .unlock = -1 };
  bool pshared = _i % 2 == 1;
  init_mutex (&d.m, PTHREAD_MUTEX_NORMAL, MX_ROBUST
              | (pshared ? MX_PSHARED : 0) | (_i >= 2 ? MX_PI : 0));
  pthread_condattr_t attr;
  ck_assert_int_eq (pthread_condattr_init (&attr), 0);
  ck_assert_int_eq (pthread_condattr_setpshared (&attr, pshared
                                                 ? PTHREAD_PROCESS_SHARED
                                                 : PTHREAD_PROCESS_PRIVATE),
                    0);
  ck_assert_int_eq (pthread_cond_init (&d.c, &attr), 0);
  pthread_t waiter = start_thread (wait_for_signal, &d);
  ck_assert (await_flag (&d.waiting));
  /* The lock succeeds only once the waiter's wait has released it; the
     thread then exits holding it.  */
  owner_thread_dies (&d.m);
  ck_assert_int_eq (pthread_cond_signal (&d.c), 0);
  join_or_fail (waiter);
  ck_assert_int_eq (d.wait_result, EOWNERDEAD);
  ck_assert_int_eq (d.consistent, 0);
  ck_assert_int_eq (d.unlock, 0);
  ck_assert_int_eq (pthread_cond_destroy (&d.c), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&d.m), 0);
}
END_TEST

/* A fork child starts with an empty robust list of its own: a mutex the
   parent held at the fork is not the child's, and one the child takes
   is reported when the child exits holding it.  */
START_TEST (robust_fork_child_list)
{
  XP_TEST_NEEDS_ROBUST_LIST ();
  pthread_mutex_t *m = map_shared (2 * sizeof *m);
  init_mutex (&m[0], PTHREAD_MUTEX_NORMAL, MX_ROBUST | MX_PSHARED);
  init_mutex (&m[1], PTHREAD_MUTEX_ERRORCHECK, MX_ROBUST | MX_PSHARED);
  ck_assert_int_eq (pthread_mutex_lock (&m[0]), 0);
  fflush (NULL);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (pthread_mutex_trylock (&m[0]) == EBUSY
           && pthread_mutex_lock (&m[1]) == 0 ? 0 : 1);
  int status = xp_test_wait_child (pid);
  ck_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m[0]), 0);
  ck_assert_int_eq (pthread_mutex_lock (&m[1]), EOWNERDEAD);
  ck_assert_int_eq (pthread_mutex_consistent (&m[1]), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m[1]), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m[0]), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m[1]), 0);
  munmap (m, 2 * sizeof *m);
}
END_TEST

/* ---- priority inheritance and protection ---------------------------- */

/* Looped over all_types.  */
START_TEST (pi_basic)
{
  int type = all_types[_i];
  pthread_mutex_t m;
  init_mutex (&m, type, MX_PI);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (trylock_elsewhere (&m), EBUSY);
  if (type == PTHREAD_MUTEX_ERRORCHECK)
    ck_assert_int_eq (pthread_mutex_lock (&m), EDEADLK);
  if (type == PTHREAD_MUTEX_RECURSIVE)
    {
      ck_assert_int_eq (pthread_mutex_lock (&m), 0);
      ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
    }
  if (type == PTHREAD_MUTEX_ERRORCHECK || type == PTHREAD_MUTEX_RECURSIVE)
    ck_assert_int_eq (unlock_elsewhere (&m), EPERM);
  if (type == PTHREAD_MUTEX_NORMAL)
    {
      /* Relocking deadlocks, here until the deadline.  */
      struct timespec soon = deadline_after_ms (CLOCK_REALTIME, 20);
      ck_assert_int_eq (pthread_mutex_timedlock (&m, &soon), ETIMEDOUT);
    }
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (trylock_elsewhere (&m), 0);
  struct timed_try t = timed_elsewhere (&m, CLOCK_MONOTONIC_LOCK, 1000);
  ck_assert_int_eq (t.result, 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  t = timed_elsewhere (&m, CLOCK_MONOTONIC_LOCK, 20);
  ck_assert_int_eq (t.result, ETIMEDOUT);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* Two threads each hold one error-checking PI mutex and want the
   other's: the kernel sees the cycle and the thread that closes it gets
   EDEADLK, which an error-checking mutex reports.  glibc's own code
   aborts on an assertion here (it assumes the kernel's EDEADLK can only
   mean relocking one's own mutex, which it checks before), so this also
   proves that xpthread's code ran.  */
struct pi_cycle
{
  pthread_mutex_t a, b;
  int holds_b;
  int result;
};

static void *
hold_b_want_a (void *p)
{
  struct pi_cycle *c = p;
  c->result = pthread_mutex_lock (&c->b);
  if (c->result != 0)
    return NULL;
  set_flag (&c->holds_b);
  c->result = pthread_mutex_lock (&c->a);
  if (c->result == 0)
    c->result = pthread_mutex_unlock (&c->a);
  pthread_mutex_unlock (&c->b);
  return NULL;
}

START_TEST (pi_deadlock_detected)
{
  struct pi_cycle c = { .result = -1 };
  init_mutex (&c.a, PTHREAD_MUTEX_ERRORCHECK, MX_PI);
  init_mutex (&c.b, PTHREAD_MUTEX_ERRORCHECK, MX_PI);
  ck_assert_int_eq (pthread_mutex_lock (&c.a), 0);
  pthread_t t = start_thread (hold_b_want_a, &c);
  ck_assert (await_flag (&c.holds_b));
  /* The kernel marks the word once the other thread is queued on it.  */
  struct timespec deadline
    = deadline_after_ms (CLOCK_MONOTONIC, WATCHDOG_SECONDS * 1000L);
  while ((__atomic_load_n (&c.a.__data.__lock, __ATOMIC_ACQUIRE)
          & 0x80000000u) == 0)
    {
      ck_assert_msg (!time_reached (CLOCK_MONOTONIC, &deadline),
                     "the other thread never waited");
      sched_yield ();
    }
  /* The kernel sets that bit a moment before the waiter is queued on its
     side; if this lock comes in between, the waiter closes the cycle
     instead, gets EDEADLK and lets b go.  When both walk the chain at
     once, both see the cycle and both get EDEADLK (seen once in CI).  At
     least one of the two gets it.  */
  int mine = pthread_mutex_lock (&c.b);
  if (mine == 0)
    {
      join_or_fail (t);
      ck_assert_int_eq (c.result, EDEADLK);
      ck_assert_int_eq (pthread_mutex_unlock (&c.b), 0);
      ck_assert_int_eq (pthread_mutex_unlock (&c.a), 0);
    }
  else
    {
      ck_assert_int_eq (mine, EDEADLK);
      ck_assert_int_eq (pthread_mutex_unlock (&c.a), 0);
      join_or_fail (t);
      ck_assert_msg (c.result == 0 || c.result == EDEADLK,
                     "the other thread's lock answered %d", c.result);
    }
  ck_assert_int_eq (pthread_mutex_destroy (&c.a), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&c.b), 0);
}
END_TEST

/* The effective priority the kernel reports for the calling thread
   (field 18 of its stat file): -1 - p for SCHED_FIFO priority p,
   boosts included.  */
static int
effective_priority (int *prio)
{
  char buf[1024];
  FILE *f = fopen ("/proc/thread-self/stat", "r");
  if (f == NULL)
    return errno;
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[n] = '\0';
  char *p = strrchr (buf, ')');
  if (p == NULL)
    return EINVAL;
  /* After the command: state, then fields 4 to 17, then priority.  */
  p += 2;
  for (int field = 3; field < 18; field++)
    {
      p = strchr (p, ' ');
      if (p == NULL)
        return EINVAL;
      p++;
    }
  *prio = atoi (p);
  return 0;
}

enum { PI_LOW = 10, PI_MID = 20, PI_HIGH = 30 };

/* H waits for m_outer, held by M, which waits for m_inner, held by L: the
   kernel must raise L to H's priority through the chain.  */
struct pi_chain
{
  pthread_mutex_t m_inner, m_outer;
  int low_holds, mid_holds;
  int sched_err[3];
  int lock_err[3];
  int low_seen;          /* highest effective priority L observed */
  int boosted;           /* L reached H's priority */
};

static int
become_fifo (int priority)
{
  struct sched_param p = { .sched_priority = priority };
  return pthread_setschedparam (pthread_self (), SCHED_FIFO, &p);
}

static void *
pi_low (void *arg)
{
  struct pi_chain *c = arg;
  if ((c->sched_err[0] = become_fifo (PI_LOW)) != 0)
    return NULL;
  c->lock_err[0] = pthread_mutex_lock (&c->m_inner);
  set_flag (&c->low_holds);
  /* Poll, sleeping, rather than spin: a realtime spinner could keep the
     other threads of the chain off a shared CPU.  Give up well within the
     main thread's watchdog, so that a missing boost is reported as such. */
  struct timespec deadline
    = deadline_after_ms (CLOCK_MONOTONIC, WATCHDOG_SECONDS * 1000L / 3);
  int want = -1 - PI_HIGH;
  int prio = 0;
  c->low_seen = 0;
  while (!time_reached (CLOCK_MONOTONIC, &deadline))
    {
      if (effective_priority (&prio) != 0)
        break;
      if (prio < c->low_seen)
        c->low_seen = prio;
      if (prio == want)
        {
          c->boosted = 1;
          break;
        }
      sleep_ms (1);
    }
  if (c->lock_err[0] == 0)
    c->lock_err[0] = pthread_mutex_unlock (&c->m_inner);
  return NULL;
}

static void *
pi_mid (void *arg)
{
  struct pi_chain *c = arg;
  if ((c->sched_err[1] = become_fifo (PI_MID)) != 0)
    return NULL;
  int err = pthread_mutex_lock (&c->m_outer);
  set_flag (&c->mid_holds);
  if (err == 0)
    {
      err = pthread_mutex_lock (&c->m_inner);
      if (err == 0)
        err = pthread_mutex_unlock (&c->m_inner);
      int unlock = pthread_mutex_unlock (&c->m_outer);
      if (err == 0)
        err = unlock;
    }
  c->lock_err[1] = err;
  return NULL;
}

static void *
pi_high (void *arg)
{
  struct pi_chain *c = arg;
  if ((c->sched_err[2] = become_fifo (PI_HIGH)) != 0)
    return NULL;
  int err = pthread_mutex_lock (&c->m_outer);
  if (err == 0)
    err = pthread_mutex_unlock (&c->m_outer);
  c->lock_err[2] = err;
  return NULL;
}

static void *
probe_fifo (void *unused)
{
  return (void *) (long) become_fifo (PI_LOW);
}

static bool
fifo_permitted (const char *what)
{
  if (geteuid () == 0
      && join_or_fail (start_thread (probe_fifo, NULL)) == NULL)
    return true;
  fprintf (stderr, "%s: skipped, SCHED_FIFO not permitted\n", what);
  return false;
}

START_TEST (pi_chain_boosts_owner)
{
  if (!fifo_permitted ("pi-chain"))
    return;
  struct pi_chain c;
  memset (&c, 0, sizeof c);
  init_mutex (&c.m_inner, PTHREAD_MUTEX_NORMAL, MX_PI);
  init_mutex (&c.m_outer, PTHREAD_MUTEX_NORMAL, MX_PI);
  /* Start the chain from its end, each link once the previous holds.  */
  pthread_t low = start_thread (pi_low, &c);
  ck_assert (await_flag (&c.low_holds));
  pthread_t mid = start_thread (pi_mid, &c);
  ck_assert (await_flag (&c.mid_holds));
  pthread_t high = start_thread (pi_high, &c);
  join_or_fail (high);
  join_or_fail (mid);
  join_or_fail (low);
  for (int i = 0; i < 3; i++)
    {
      ck_assert_int_eq (c.sched_err[i], 0);
      ck_assert_int_eq (c.lock_err[i], 0);
    }
  ck_assert_msg (c.boosted, "the owner at the end of the chain reached "
                 "effective priority %d, not %d", c.low_seen, -1 - PI_HIGH);
  ck_assert_int_eq (pthread_mutex_destroy (&c.m_inner), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&c.m_outer), 0);
}
END_TEST

START_TEST (pp_prioceiling)
{
  int min = sched_get_priority_min (SCHED_FIFO);
  int max = sched_get_priority_max (SCHED_FIFO);
  pthread_mutex_t m;
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, MX_PP);
  int ceiling = -1, old = -1;
  ck_assert_int_eq (pthread_mutex_getprioceiling (&m, &ceiling), 0);
  ck_assert_int_eq (ceiling, min);
  ck_assert_int_eq (pthread_mutex_setprioceiling (&m, min + 5, &old), 0);
  ck_assert_int_eq (old, min);
  ck_assert_int_eq (pthread_mutex_getprioceiling (&m, &ceiling), 0);
  ck_assert_int_eq (ceiling, min + 5);
  ck_assert_int_eq (pthread_mutex_setprioceiling (&m, max + 1, &old), EINVAL);
  ck_assert_int_eq (pthread_mutex_setprioceiling (&m, min - 1, &old), EINVAL);
  ck_assert_int_eq (pthread_mutex_getprioceiling (&m, &ceiling), 0);
  ck_assert_int_eq (ceiling, min + 5);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);

  /* Mutexes without the protocol have no ceiling.  */
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, 0);
  ck_assert_int_eq (pthread_mutex_getprioceiling (&m, &ceiling), EINVAL);
  ck_assert_int_eq (pthread_mutex_setprioceiling (&m, min, &old), EINVAL);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, MX_PI);
  ck_assert_int_eq (pthread_mutex_getprioceiling (&m, &ceiling), EINVAL);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* An attribute whose ceiling was never set: glibc reports, and a mutex
   made from it gets, the lowest SCHED_FIFO priority.  */
START_TEST (pp_default_ceiling)
{
  int min = sched_get_priority_min (SCHED_FIFO);
  pthread_mutexattr_t attr;
  pthread_mutex_t m;
  int ceiling = -1;
  ck_assert_int_eq (pthread_mutexattr_init (&attr), 0);
  ck_assert_int_eq (pthread_mutexattr_getprioceiling (&attr, &ceiling), 0);
  ck_assert_int_eq (ceiling, min);
  ck_assert_int_eq (pthread_mutexattr_setprotocol (&attr,
                                                   PTHREAD_PRIO_PROTECT), 0);
  ck_assert_int_eq (pthread_mutex_init (&m, &attr), 0);
  ceiling = -1;
  ck_assert_int_eq (pthread_mutex_getprioceiling (&m, &ceiling), 0);
  ck_assert_int_eq (ceiling, min);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
  ck_assert_int_eq (pthread_mutexattr_destroy (&attr), 0);
}
END_TEST

/* Locking a priority-protection mutex raises the caller to the ceiling
   and unlocking restores its priority.  Needs SCHED_FIFO.  */
struct pp_probe
{
  pthread_mutex_t *m;
  int sched_err;
  int lock_err;
  int during;            /* effective priority inside the section */
  int unlock_err;
  int after;             /* and after it */
  int above_err;         /* lock when above the ceiling */
  int final;             /* effective priority at the end */
};

static void *
pp_lock_as_fifo (void *arg)
{
  struct pp_probe *p = arg;
  if ((p->sched_err = become_fifo (PI_LOW)) != 0)
    return NULL;
  p->lock_err = pthread_mutex_lock (p->m);
  if (p->lock_err != 0)
    return NULL;
  effective_priority (&p->during);
  p->unlock_err = pthread_mutex_unlock (p->m);
  effective_priority (&p->after);
  return NULL;
}

/* A thread that has locked a priority-protection mutex before raises
   its priority above the ceiling with pthread_setschedparam: locking is
   now refused, and its priority stays what it set.  */
static void *
pp_lock_above_ceiling (void *arg)
{
  struct pp_probe *p = arg;
  pp_lock_as_fifo (p);
  if (p->sched_err != 0 || p->lock_err != 0)
    return NULL;
  p->sched_err = become_fifo (PI_HIGH);
  p->above_err = pthread_mutex_lock (p->m);
  if (p->above_err == 0)
    pthread_mutex_unlock (p->m);
  effective_priority (&p->final);
  return NULL;
}

static struct pp_probe
run_pp_probe (void *(*probe) (void *), pthread_mutex_t *m)
{
  struct pp_probe p = { .m = m, .lock_err = -1, .unlock_err = -1,
                        .above_err = -1 };
  join_or_fail (start_thread (probe, &p));
  ck_assert_int_eq (p.sched_err, 0);
  ck_assert_int_eq (p.lock_err, 0);
  ck_assert_int_eq (p.during, -1 - PI_MID);
  ck_assert_int_eq (p.unlock_err, 0);
  ck_assert_int_eq (p.after, -1 - PI_LOW);
  return p;
}

START_TEST (pp_lock_raises_priority)
{
  if (!fifo_permitted ("pp-lock"))
    return;
  pthread_mutex_t m;
  int old;
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, MX_PP);
  ck_assert_int_eq (pthread_mutex_setprioceiling (&m, PI_MID, &old), 0);
  run_pp_probe (pp_lock_as_fifo, &m);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

START_TEST (pp_after_setschedparam)
{
  if (!fifo_permitted ("pp-after-setschedparam"))
    return;
  pthread_mutex_t m;
  int old;
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, MX_PP);
  ck_assert_int_eq (pthread_mutex_setprioceiling (&m, PI_MID, &old), 0);
  struct pp_probe p = run_pp_probe (pp_lock_above_ceiling, &m);
  ck_assert_int_eq (p.sched_err, 0);
  ck_assert_msg (p.above_err == EINVAL && p.final == -1 - PI_HIGH,
                 "above the ceiling: lock gave %d (expected EINVAL), "
                 "effective priority afterwards %d (expected %d)",
                 p.above_err, p.final, -1 - PI_HIGH);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* Every type's answers for priority protection, from a SCHED_FIFO
   thread below the ceilings (a SCHED_OTHER thread cannot be raised).  */
struct pp_types
{
  int type;
  int sched_err;
  int errors;            /* checks that failed */
  int first_failure;     /* line of the first one */
};

#define PP_CHECK(t, expr, want) \
  do \
    { \
      if ((expr) != (want) && (t)->errors++ == 0) \
        (t)->first_failure = __LINE__; \
    } \
  while (0)

static void *
pp_type_answers (void *arg)
{
  struct pp_types *t = arg;
  if ((t->sched_err = become_fifo (PI_LOW)) != 0)
    return NULL;
  pthread_mutex_t m;
  pthread_mutexattr_t attr;
  PP_CHECK (t, pthread_mutexattr_init (&attr), 0);
  PP_CHECK (t, pthread_mutexattr_settype (&attr, t->type), 0);
  PP_CHECK (t, pthread_mutexattr_setprotocol (&attr, PTHREAD_PRIO_PROTECT), 0);
  PP_CHECK (t, pthread_mutexattr_setprioceiling (&attr, PI_MID), 0);
  PP_CHECK (t, pthread_mutex_init (&m, &attr), 0);
  /* The owner alone undoes its raise, so every type refuses this.
     glibc's own code answers 0 for a normal or adaptive one (and then
     miscounts its ceilings): EPERM also shows that xpthread's code ran. */
  PP_CHECK (t, pthread_mutex_unlock (&m), EPERM);
  PP_CHECK (t, pthread_mutex_lock (&m), 0);
  PP_CHECK (t, trylock_elsewhere (&m), EBUSY);
  PP_CHECK (t, unlock_elsewhere (&m), EPERM);
  int ceiling = -1;
  switch (t->type)
    {
    case PTHREAD_MUTEX_ERRORCHECK:
      PP_CHECK (t, pthread_mutex_lock (&m), EDEADLK);
      PP_CHECK (t, pthread_mutex_trylock (&m), EDEADLK);
      PP_CHECK (t, pthread_mutex_setprioceiling (&m, PI_MID, &ceiling),
                EDEADLK);
      break;
    case PTHREAD_MUTEX_RECURSIVE:
      PP_CHECK (t, pthread_mutex_lock (&m), 0);
      PP_CHECK (t, pthread_mutex_trylock (&m), 0);
      /* The owner may move the ceiling; its raise moves along.  */
      PP_CHECK (t, pthread_mutex_setprioceiling (&m, PI_HIGH, &ceiling), 0);
      PP_CHECK (t, ceiling, PI_MID);
      int prio = 0;
      effective_priority (&prio);
      PP_CHECK (t, prio, -1 - PI_HIGH);
      PP_CHECK (t, pthread_mutex_unlock (&m), 0);
      PP_CHECK (t, pthread_mutex_unlock (&m), 0);
      break;
    default:
      PP_CHECK (t, pthread_mutex_trylock (&m), EBUSY);
      break;
    }
  PP_CHECK (t, pthread_mutex_unlock (&m), 0);
  PP_CHECK (t, pthread_mutex_unlock (&m), EPERM);
  int prio = 0;
  effective_priority (&prio);
  PP_CHECK (t, prio, -1 - PI_LOW);
  PP_CHECK (t, pthread_mutex_trylock (&m), 0);
  PP_CHECK (t, pthread_mutex_destroy (&m), EBUSY);
  PP_CHECK (t, pthread_mutex_unlock (&m), 0);
  PP_CHECK (t, pthread_mutex_destroy (&m), 0);
  /* No robust priority-protection mutexes, as with glibc.  */
  PP_CHECK (t, pthread_mutexattr_setrobust (&attr, PTHREAD_MUTEX_ROBUST), 0);
  PP_CHECK (t, pthread_mutex_init (&m, &attr), ENOTSUP);
  return NULL;
}

/* Looped over all_types.  */
START_TEST (pp_type_answers_as_fifo)
{
  if (!fifo_permitted ("pp-types"))
    return;
  struct pp_types t = { .type = all_types[_i] };
  join_or_fail (start_thread (pp_type_answers, &t));
  ck_assert_int_eq (t.sched_err, 0);
  ck_assert_msg (t.errors == 0, "%d checks failed, the first at line %d",
                 t.errors, t.first_failure);
}
END_TEST

/* Nested priority-protection mutexes: the thread runs at the highest
   ceiling it holds, whatever the order of unlocking, and
   pthread_getschedparam reports its own priority all along, as glibc's
   does (only the code that made the raise knows that priority).  */
struct pp_nested
{
  int sched_err;
  int lock_err;
  int seen[4];           /* effective priorities after each step */
  int reported;          /* pthread_getschedparam while raised */
};

static void *
pp_nest (void *arg)
{
  struct pp_nested *n = arg;
  if ((n->sched_err = become_fifo (PI_LOW)) != 0)
    return NULL;
  pthread_mutex_t mid, high;
  int old;
  init_mutex (&mid, PTHREAD_MUTEX_NORMAL, MX_PP);
  init_mutex (&high, PTHREAD_MUTEX_NORMAL, MX_PP);
  pthread_mutex_setprioceiling (&mid, PI_MID, &old);
  pthread_mutex_setprioceiling (&high, PI_HIGH, &old);
  n->lock_err = pthread_mutex_lock (&mid);
  effective_priority (&n->seen[0]);
  if (n->lock_err == 0)
    n->lock_err = pthread_mutex_lock (&high);
  effective_priority (&n->seen[1]);
  struct sched_param param;
  int policy;
  if (pthread_getschedparam (pthread_self (), &policy, &param) == 0)
    n->reported = param.sched_priority;
  if (n->lock_err == 0)
    n->lock_err = pthread_mutex_unlock (&mid);
  effective_priority (&n->seen[2]);
  if (n->lock_err == 0)
    n->lock_err = pthread_mutex_unlock (&high);
  effective_priority (&n->seen[3]);
  pthread_mutex_destroy (&mid);
  pthread_mutex_destroy (&high);
  return NULL;
}

START_TEST (pp_nested_ceilings)
{
  if (!fifo_permitted ("pp-nested"))
    return;
  struct pp_nested n = { .lock_err = -1 };
  join_or_fail (start_thread (pp_nest, &n));
  ck_assert_int_eq (n.sched_err, 0);
  ck_assert_int_eq (n.lock_err, 0);
  ck_assert_int_eq (n.seen[0], -1 - PI_MID);
  ck_assert_int_eq (n.seen[1], -1 - PI_HIGH);
  ck_assert_int_eq (n.reported, PI_LOW);
  ck_assert_int_eq (n.seen[2], -1 - PI_HIGH);
  ck_assert_int_eq (n.seen[3], -1 - PI_LOW);
}
END_TEST

/* ---- process-shared mutexes ----------------------------------------- */

#define SHARED_ROUNDS 20000

struct shared_counter
{
  pthread_mutex_t m;
  long counter;
};

static int
count_under (struct shared_counter *s, int rounds)
{
  for (int i = 0; i < rounds; i++)
    {
      int err = pthread_mutex_lock (&s->m);
      if (err != 0)
        return err;
      s->counter++;
      if ((err = pthread_mutex_unlock (&s->m)) != 0)
        return err;
    }
  return 0;
}

/* A process-shared mutex of every non-robust type names its owner and
   counts its users while held, as glibc's does, so that a glibc process
   sharing it sees the same state (glibc's destroy answers EBUSY from the
   count).  Looped over the types.  */
START_TEST (pshared_records_owner)
{
  static const int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ADAPTIVE_NP,
                               PTHREAD_MUTEX_ERRORCHECK,
                               PTHREAD_MUTEX_RECURSIVE };
  pthread_mutex_t m;
  init_mutex (&m, types[_i], MX_PSHARED);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (m.__data.__owner, gettid ());
  ck_assert_int_eq (m.__data.__nusers, 1);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (m.__data.__owner, 0);
  ck_assert_int_eq (m.__data.__nusers, 0);
  ck_assert_int_eq (pthread_mutex_trylock (&m), 0);
  ck_assert_int_eq (m.__data.__owner, gettid ());
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* Looped over the types (normal, recursive, errorcheck, adaptive), then
   the same robust and with priority inheritance.  */
START_TEST (pshared_between_forked_processes)
{
  static const int extra[] = { 0, MX_ROBUST, MX_PI };
  struct shared_counter *s = map_shared (sizeof *s);
  init_mutex (&s->m, all_types[_i % N_TYPES],
              MX_PSHARED | extra[_i / N_TYPES]);
  fflush (NULL);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (count_under (s, SHARED_ROUNDS) == 0 ? 0 : 1);
  ck_assert_int_eq (count_under (s, SHARED_ROUNDS), 0);
  int status = xp_test_wait_child (pid);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "child status %#x", status);
  ck_assert_int_eq (s->counter, 2 * SHARED_ROUNDS);
  ck_assert_int_eq (pthread_mutex_destroy (&s->m), 0);
  munmap (s, sizeof *s);
}
END_TEST

/* ---- contention stress ---------------------------------------------- */

#define STRESS_TOTAL 200000

/* How a worker takes the mutex.  */
enum style
{
  STYLE_LOCK,          /* pthread_mutex_lock */
  STYLE_NESTED,        /* lock twice (recursive mutexes) */
  STYLE_TRYLOCK,       /* trylock until it succeeds */
  STYLE_TIMEDLOCK,     /* timedlock with short deadlines until it succeeds */
  STYLE_CLOCKLOCK,     /* the same with clocklock and CLOCK_MONOTONIC */
  STYLE_MIXED          /* by thread: lock, trylock, timedlock, clocklock */
};

struct stress_config
{
  const char *name;
  int type;
  int flags;
  int threads;
  enum style style;
};

static const struct stress_config stress_configs[] = {
  { "default/4", PTHREAD_MUTEX_DEFAULT, 0, 4, STYLE_LOCK },
  { "default/8", PTHREAD_MUTEX_DEFAULT, 0, 8, STYLE_LOCK },
  { "recursive/4", PTHREAD_MUTEX_RECURSIVE, 0, 4, STYLE_NESTED },
  { "recursive/8", PTHREAD_MUTEX_RECURSIVE, 0, 8, STYLE_NESTED },
  { "errorcheck/4", PTHREAD_MUTEX_ERRORCHECK, 0, 4, STYLE_LOCK },
  { "errorcheck/8", PTHREAD_MUTEX_ERRORCHECK, 0, 8, STYLE_LOCK },
  { "adaptive/4", PTHREAD_MUTEX_ADAPTIVE_NP, 0, 4, STYLE_LOCK },
  { "adaptive/8", PTHREAD_MUTEX_ADAPTIVE_NP, 0, 8, STYLE_LOCK },
  { "trylock/4", PTHREAD_MUTEX_DEFAULT, 0, 4, STYLE_TRYLOCK },
  { "trylock-errorcheck/8", PTHREAD_MUTEX_ERRORCHECK, 0, 8, STYLE_TRYLOCK },
  { "mixed/4", PTHREAD_MUTEX_DEFAULT, 0, 4, STYLE_MIXED },
  { "mixed-recursive/8", PTHREAD_MUTEX_RECURSIVE, 0, 8, STYLE_MIXED },
  { "pshared/4", PTHREAD_MUTEX_DEFAULT, MX_PSHARED, 4, STYLE_LOCK },
  { "robust/4", PTHREAD_MUTEX_DEFAULT, MX_ROBUST, 4, STYLE_LOCK },
  { "robust-mixed/4", PTHREAD_MUTEX_DEFAULT, MX_ROBUST, 4, STYLE_MIXED },
  { "robust-recursive/4", PTHREAD_MUTEX_RECURSIVE, MX_ROBUST, 4,
    STYLE_NESTED },
  { "robust-pi/4", PTHREAD_MUTEX_ERRORCHECK, MX_ROBUST | MX_PI, 4,
    STYLE_MIXED },
  { "pi/4", PTHREAD_MUTEX_DEFAULT, MX_PI, 4, STYLE_MIXED },
};
#define N_STRESS (int) (sizeof stress_configs / sizeof stress_configs[0])

struct stress
{
  pthread_mutex_t m;
  const struct stress_config *config;
  int per_thread;
  int go;
  long counter;         /* the protected data */
  int inside;           /* threads in the critical section */
  int overlaps;         /* times a thread found another inside */
  int errors;           /* unexpected results */
};

struct stress_worker
{
  struct stress *s;
  int index;
};

static void
record_error (struct stress *s)
{
  __atomic_fetch_add (&s->errors, 1, __ATOMIC_RELAXED);
}

/* Retry a timed lock with short deadlines, so that timeouts happen under
   contention and must leave the mutex consistent.  */
static int
timed_acquire (pthread_mutex_t *m, bool clocklock)
{
  for (;;)
    {
      clockid_t clock = clocklock ? CLOCK_MONOTONIC : CLOCK_REALTIME;
      struct timespec deadline = deadline_after_ms (clock, 1);
      int err = clocklock ? pthread_mutex_clocklock (m, clock, &deadline)
                          : pthread_mutex_timedlock (m, &deadline);
      if (err != ETIMEDOUT)
        return err;
    }
}

static enum style
style_of (const struct stress_config *config, int index)
{
  static const enum style mix[] = {
    STYLE_LOCK, STYLE_TRYLOCK, STYLE_TIMEDLOCK, STYLE_CLOCKLOCK
  };
  return config->style == STYLE_MIXED ? mix[index % 4] : config->style;
}

static int
acquire (struct stress *s, enum style style)
{
  int err;
  switch (style)
    {
    case STYLE_NESTED:
      err = pthread_mutex_lock (&s->m);
      if (err == 0 && (err = pthread_mutex_lock (&s->m)) == 0)
        err = pthread_mutex_unlock (&s->m);
      return err;
    case STYLE_TRYLOCK:
      while ((err = pthread_mutex_trylock (&s->m)) == EBUSY)
        sched_yield ();
      return err;
    case STYLE_TIMEDLOCK:
      return timed_acquire (&s->m, false);
    case STYLE_CLOCKLOCK:
      return timed_acquire (&s->m, true);
    default:
      return pthread_mutex_lock (&s->m);
    }
}

static void *
stress_worker (void *arg)
{
  struct stress_worker *w = arg;
  struct stress *s = w->s;
  enum style style = style_of (s->config, w->index);
  if (!await_flag (&s->go))
    {
      record_error (s);
      return NULL;
    }
  for (int i = 0; i < s->per_thread; i++)
    {
      if (acquire (s, style) != 0)
        {
          record_error (s);
          continue;
        }
      if (__atomic_fetch_add (&s->inside, 1, __ATOMIC_RELAXED) != 0)
        __atomic_fetch_add (&s->overlaps, 1, __ATOMIC_RELAXED);
      /* A plain read-modify-write: only mutual exclusion keeps it exact. */
      long v = s->counter;
      s->counter = v + 1;
      __atomic_fetch_sub (&s->inside, 1, __ATOMIC_RELAXED);
      if (pthread_mutex_unlock (&s->m) != 0)
        record_error (s);
    }
  return NULL;
}

/* Looped over stress_configs.  */
START_TEST (stress_counter)
{
  const struct stress_config *config = &stress_configs[_i];
  struct stress s;
  memset (&s, 0, sizeof s);
  init_mutex (&s.m, config->type, config->flags);
  s.config = config;
  s.per_thread = STRESS_TOTAL / config->threads;
  struct stress_worker workers[8];
  pthread_t t[8];
  for (int i = 0; i < config->threads; i++)
    {
      workers[i] = (struct stress_worker) { &s, i };
      t[i] = start_thread (stress_worker, &workers[i]);
    }
  set_flag (&s.go);
  for (int i = 0; i < config->threads; i++)
    join_or_fail (t[i]);
  ck_assert_msg (s.errors == 0, "%s: %d calls failed", config->name,
                 s.errors);
  ck_assert_msg (s.overlaps == 0, "%s: %d overlaps in the critical section",
                 config->name, s.overlaps);
  ck_assert_msg (s.counter == (long) s.per_thread * config->threads,
                 "%s: counter %ld, expected %ld", config->name, s.counter,
                 (long) s.per_thread * config->threads);
  ck_assert_int_eq (pthread_mutex_destroy (&s.m), 0);
}
END_TEST

/* The spin policy is read from the environment at start-up, so the stress
   cases run again in a fresh copy of this program under other settings:
   up to three waiters may spin on one lock, for up to ten times longer, and
   either looks at the word after every round or with gaps up to the
   largest allowed, or asks for a turn at once, or never; or waiters look
   at once, or start very late.  */
static const char *const spin_settings[][4] = {
  { "XPTHREAD_SPIN_BACKOFF=1", "XPTHREAD_SPIN_MAX=2000",
    "XPTHREAD_SPINNERS=3", NULL },
  { "XPTHREAD_SPIN_BACKOFF=1024", "XPTHREAD_SPIN_MAX=2000",
    "XPTHREAD_SPINNERS=3", NULL },
  { "XPTHREAD_SPIN_TURN=1", "XPTHREAD_SPIN_MAX=2000",
    "XPTHREAD_SPINNERS=3", NULL },
  { "XPTHREAD_SPIN_TURN=0", NULL, NULL, NULL },
  { "XPTHREAD_SPIN_LATE=0", NULL, NULL, NULL },
  { "XPTHREAD_SPIN_LATE=16000", "XPTHREAD_SPINNERS=3", NULL, NULL },
};
#define N_SPIN_SETTINGS \
  (int) (sizeof spin_settings / sizeof spin_settings[0])
#define STRESS_ONLY_ARG "--stress-only"

/* Looped over spin_settings.  */
START_TEST (stress_under_spin_settings)
{
  int status = xp_test_rerun (STRESS_ONLY_ARG, spin_settings[_i]);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "stress with spin setting %d (%s...): status %#x", _i,
                 spin_settings[_i][0], status);
}
END_TEST

/* With XPTHREAD_SPIN_TURN=1 a spinner marks the held word at once, and
   the owner's unlock leaves it the lock: the owner's trylock straight
   after its unlock finds the lock taken.  Run in a fresh copy of this
   program (TURN_ONLY_ARG) with that setting.  A spinner can lose its
   spinning slot and sleep (marking the word 2) instead of asking, or lose
   its CPU after asking, so such rounds are tried again.  Each round
   starts from a fresh mutex: a round whose spin was in vain (the owner
   lost its CPU) would otherwise leave the lock's spin estimate at its
   bound, where later waiters spin only as probes and hardly ever ask.
   The fresh mutex's hold estimate (__elision, in 16 ns units) says that
   turns pay, so that every spin asks: otherwise only one in 16, drawn at
   random, would.  */
#define TURN_ONLY_ARG "--turn-only"
#define TURN_ASKED_BIT 4
#define TURN_ATTEMPTS 50

enum turn_round { NOT_ASKED, SLEPT, ASKED_NOT_TAKEN, TURN_TAKEN };

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;

static void *
take_turn (void *arg)
{
  ck_assert_int_eq (pthread_mutex_lock (&turn_lock), 0);
  usleep (2000);   /* long enough for the owner's trylock to meet it */
  ck_assert_int_eq (pthread_mutex_unlock (&turn_lock), 0);
  return arg;
}

/* The first two CPUs this process may run on, in TWO; false if it has
   only one.  */
static bool
two_cpus (int two[2])
{
  cpu_set_t allowed;
  ck_assert_int_eq (sched_getaffinity (0, sizeof allowed, &allowed), 0);
  int found = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++)
    if (CPU_ISSET (cpu, &allowed))
      two[found++] = cpu;
  return found == 2;
}

/* Pin the calling thread to CPU, or set ATTR to start a thread there.  */
static void
pin (int cpu, pthread_attr_t *attr)
{
  cpu_set_t one;
  CPU_ZERO (&one);
  CPU_SET (cpu, &one);
  if (attr == NULL)
    ck_assert_int_eq (pthread_setaffinity_np (pthread_self (), sizeof one,
                                              &one), 0);
  else
    ck_assert_int_eq (pthread_attr_setaffinity_np (attr, sizeof one, &one),
                      0);
}

/* Where the library keeps a private mutex's hold estimate: the 16-bit
   word after __spins (glibc's __elision up to 2.42, renamed in 2.43).  */
static short *
mutex_hold_estimate (pthread_mutex_t *m)
{
  return (short *) ((char *) m + offsetof (pthread_mutex_t, __data.__spins)
                    + sizeof (short));
}

/* The owner and its waiter run on two CPUs: sharing one, the waiter
   would run only while the owner is off the CPU, and its spin (asking)
   would end in sleep (marking the word 2, which drops the ask) before
   the owner could see the ask.  */
static enum turn_round
one_turn (const int cpus[2])
{
  ck_assert_int_eq (pthread_mutex_init (&turn_lock, NULL), 0);
  *mutex_hold_estimate (&turn_lock) = 1000;
  pin (cpus[0], NULL);
  pthread_attr_t attr;
  ck_assert_int_eq (pthread_attr_init (&attr), 0);
  pin (cpus[1], &attr);
  ck_assert_int_eq (pthread_mutex_lock (&turn_lock), 0);
  pthread_t waiter;
  ck_assert_int_eq (pthread_create (&waiter, &attr, take_turn, NULL), 0);
  ck_assert_int_eq (pthread_attr_destroy (&attr), 0);
  struct timespec deadline = deadline_after_ms (CLOCK_MONOTONIC, 500);
  int word = 0;
  while (!time_reached (CLOCK_MONOTONIC, &deadline))
    {
      word = __atomic_load_n (&turn_lock.__data.__lock, __ATOMIC_RELAXED);
      if (word & (TURN_ASKED_BIT | 2))
        break;
    }
  ck_assert_int_eq (pthread_mutex_unlock (&turn_lock), 0);
  int busy = pthread_mutex_trylock (&turn_lock);
  ck_assert (busy == 0 || busy == EBUSY);
  if (busy == 0)
    ck_assert_int_eq (pthread_mutex_unlock (&turn_lock), 0);
  ck_assert_int_eq (pthread_join (waiter, NULL), 0);
  if (!(word & TURN_ASKED_BIT))
    return word & 2 ? SLEPT : NOT_ASKED;
  return busy == EBUSY ? TURN_TAKEN : ASKED_NOT_TAKEN;
}

START_TEST (spinner_gets_its_turn)
{
  int cpus[2];
  ck_assert_msg (two_cpus (cpus), "one CPU: nobody spins");
  int asked = 0, slept = 0;
  enum turn_round r = NOT_ASKED;
  for (int i = 0; i < TURN_ATTEMPTS && r != TURN_TAKEN; i++)
    {
      r = one_turn (cpus);
      asked += r >= ASKED_NOT_TAKEN;
      slept += r == SLEPT;
    }
  ck_assert_msg (asked > 0, "no spinner asked for a turn in %d rounds (in "
                 "%d the waiter slept without asking)", TURN_ATTEMPTS, slept);
  ck_assert_msg (r == TURN_TAKEN, "a spinner asked for a turn in %d of %d "
                 "rounds but never had the lock after the unlock", asked,
                 TURN_ATTEMPTS);
}
END_TEST

START_TEST (turn_when_asked)
{
  static const char *const settings[] = {
    "XPTHREAD_SPIN_TURN=1", "XPTHREAD_SPIN_MAX=16000", "XPTHREAD_SPINNERS=3",
  };
  int status = xp_test_rerun (TURN_ONLY_ARG, settings);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "the turn test: status %#x", status);
}
END_TEST

/* ---- the spin state ------------------------------------------------ */

/* A private mutex's __spins is its spin state (spin-policy.h): the
   threads spinning on it in the top two bits, below them the estimate of
   its spins' length, whose bound (XPTHREAD_SPIN_MAX, by default scaled
   to the CPU) says that spins there keep failing.  */
#define SPINNERS_SHIFT 14
#define ESTIMATE_MASK 0x3fff
#define SPIN_ROUNDS 40

static unsigned
spin_state (pthread_mutex_t *m)
{
  return (unsigned short) __atomic_load_n (&m->__data.__spins,
                                           __ATOMIC_RELAXED);
}

static int
lock_word (pthread_mutex_t *m)
{
  return __atomic_load_n (&m->__data.__lock, __ATOMIC_RELAXED);
}

/* Spinning is on in this process: more than one usable CPU and no
   XPTHREAD_SPIN* setting from outside.  */
static bool
spinning_expected (void)
{
  cpu_set_t cpus;
  if (sched_getaffinity (0, sizeof cpus, &cpus) != 0 || CPU_COUNT (&cpus) < 2)
    return false;
  extern char **environ;
  for (char **e = environ; *e != NULL; e++)
    if (strncmp (*e, "XPTHREAD_SPIN", 13) == 0)
      return false;
  return true;
}

static void *
lock_and_unlock (void *arg)
{
  ck_assert_int_eq (pthread_mutex_lock (arg), 0);
  ck_assert_int_eq (pthread_mutex_unlock (arg), 0);
  return NULL;
}

struct waiter
{
  pthread_mutex_t *m;
  int watched;
};

/* lock_and_unlock, once the holder watches: a spin lasts microseconds,
   and pthread_create may return later than that after the thread
   started.  */
static void *
lock_when_watched (void *arg)
{
  struct waiter *w = arg;
  while (!__atomic_load_n (&w->watched, __ATOMIC_ACQUIRE))
    ;
  return lock_and_unlock (w->m);
}

/* Run the calling thread on the first usable CPU and return an
   attribute for a thread on the second, so that a spinner never shares
   its CPU with the holder it waits for.  */
static pthread_attr_t
on_two_cpus (void)
{
  static int cpu[2], n;   /* found before this thread is pinned */
  cpu_set_t usable, one;
  if (n == 0)
    {
      ck_assert_int_eq (sched_getaffinity (0, sizeof usable, &usable), 0);
      for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
        if (CPU_ISSET (c, &usable))
          cpu[n++] = c;
    }
  ck_assert_int_eq (n, 2);
  CPU_ZERO (&one);
  CPU_SET (cpu[0], &one);
  ck_assert_int_eq (pthread_setaffinity_np (pthread_self (), sizeof one,
                                            &one), 0);
  pthread_attr_t attr;
  ck_assert_int_eq (pthread_attr_init (&attr), 0);
  CPU_ZERO (&one);
  CPU_SET (cpu[1], &one);
  ck_assert_int_eq (pthread_attr_setaffinity_np (&attr, sizeof one, &one),
                    0);
  return attr;
}

/* One contended acquisition by a fresh thread (on a lock where spins
   fail, it spins only if its wait is drawn for a probe).  RELEASE_EARLY:
   unlock as soon as the waiter spins, so that its spin succeeds; else
   once it has stopped spinning, so that its spin fails.  Returns the
   highest number of spinners seen.  */
static unsigned
contended_once (pthread_mutex_t *m, bool release_early)
{
  pthread_attr_t attr = on_two_cpus ();
  ck_assert_int_eq (pthread_mutex_lock (m), 0);
  pthread_t waiter;
  struct waiter w = { m, 0 };
  ck_assert_int_eq (pthread_create (&waiter, &attr, lock_when_watched, &w),
                    0);
  ck_assert_int_eq (pthread_attr_destroy (&attr), 0);
  struct timespec deadline = deadline_after_ms (CLOCK_MONOTONIC, 2000);
  __atomic_store_n (&w.watched, 1, __ATOMIC_RELEASE);
  unsigned most = 0, spinners = 0;
  while (!time_reached (CLOCK_MONOTONIC, &deadline))
    {
      spinners = spin_state (m) >> SPINNERS_SHIFT;
      most = spinners > most ? spinners : most;
      if (release_early ? spinners > 0 : most > 0 && spinners == 0)
        break;
      if (most == 0 && (lock_word (m) & 2))
        break;   /* asleep without a spin: the lock was not worth one */
    }
  ck_assert_int_eq (pthread_mutex_unlock (m), 0);
  join_or_fail (waiter);
  return most;
}

/* Spins that watch the lock held all along push its estimate up until it
   stays, each failure moving it half way there.  Returns that estimate,
   the bound where waiters stop spinning but for probes.  */
static unsigned
drive_estimate_to_bound (pthread_mutex_t *m)
{
  unsigned bound = 0, before;
  int rounds = 0;
  do
    {
      before = bound;
      contended_once (m, false);
      bound = spin_state (m) & ESTIMATE_MASK;
    }
  while ((bound != before || bound == 0) && ++rounds < SPIN_ROUNDS);
  ck_assert_msg (bound > 0 && bound == before,
                 "estimate %u, still moving after %d failed spins", bound,
                 rounds);
  return bound;
}

/* One wait in eight probes a lock at the bound: this many fresh waiters
   include a probe but for odds of (7/8)^200, about 3e-12.  */
#define PROBE_TRIES 200

/* Failing spins reach the bound; one probe that gets the lock brings the
   estimate back under; no spinner is left counted.  */
START_TEST (failing_spins_stop)
{
  if (!spinning_expected ())
    return;
  pthread_mutex_t m;
  ck_assert_int_eq (pthread_mutex_init (&m, NULL), 0);
  unsigned bound = drive_estimate_to_bound (&m);
  int rounds = 0;
  while ((spin_state (&m) & ESTIMATE_MASK) == bound && rounds++ < PROBE_TRIES)
    contended_once (&m, true);
  ck_assert_msg ((spin_state (&m) & ESTIMATE_MASK) < bound,
                 "estimate still at the bound after %d waits", rounds);
  ck_assert_uint_eq (spin_state (&m) >> SPINNERS_SHIFT, 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* ---- owners away ---------------------------------------------------- */

struct away_owner
{
  pthread_mutex_t held, blocker;
  pid_t tid;
  int holds, stop;
};

/* Hold the mutex while asleep on another, which the test holds.  */
static void *
hold_while_asleep (void *arg)
{
  struct away_owner *o = arg;
  ck_assert_int_eq (pthread_mutex_lock (&o->held), 0);
  __atomic_store_n (&o->tid, gettid (), __ATOMIC_RELEASE);
  __atomic_store_n (&o->holds, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq (pthread_mutex_lock (&o->blocker), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&o->blocker), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&o->held), 0);
  return NULL;
}

/* Hold the mutex while yielding, until told to stop.  */
static void *
hold_while_yielding (void *arg)
{
  struct away_owner *o = arg;
  ck_assert_int_eq (pthread_mutex_lock (&o->held), 0);
  __atomic_store_n (&o->holds, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n (&o->stop, __ATOMIC_ACQUIRE))
    sched_yield ();
  ck_assert_int_eq (pthread_mutex_unlock (&o->held), 0);
  return NULL;
}

/* While OWNER holds a fresh mutex and has left its CPU in the library
   (asleep or yielding: marked away), a waiter neither waits late nor
   spins but sleeps at once.  A spin there would watch the lock held all
   along and push its estimate up, and would be counted while it lasts:
   the spin state must read 0 once the waiter sleeps.  The owner runs on
   a CPU of its own: one that shared the waiter's could be preempted
   between two yields, off its CPU without a mark.  Another process on
   that CPU (make -j check) can still preempt it, so one round in three
   must see no spin.  Returns the spin states seen in one round.  */
static unsigned
spin_seen_while_owner_away (void *(*owner) (void *))
{
  struct away_owner o = { .tid = 0 };
  ck_assert_int_eq (pthread_mutex_init (&o.held, NULL), 0);
  ck_assert_int_eq (pthread_mutex_init (&o.blocker, NULL), 0);
  ck_assert_int_eq (pthread_mutex_lock (&o.blocker), 0);
  pthread_attr_t own_cpu = on_two_cpus (), this_cpu;
  cpu_set_t mine;
  ck_assert_int_eq (pthread_getaffinity_np (pthread_self (), sizeof mine,
                                            &mine), 0);
  ck_assert_int_eq (pthread_attr_init (&this_cpu), 0);
  ck_assert_int_eq (pthread_attr_setaffinity_np (&this_cpu, sizeof mine,
                                                 &mine), 0);
  pthread_t owner_thread, waiter;
  ck_assert_int_eq (pthread_create (&owner_thread, &own_cpu, owner, &o), 0);
  while (!__atomic_load_n (&o.holds, __ATOMIC_ACQUIRE))
    sched_yield ();
  if (owner == hold_while_asleep)
    while (lock_word (&o.blocker) != 2
           || !xp_test_sleeps_in_kernel (__atomic_load_n (&o.tid,
                                                          __ATOMIC_ACQUIRE)))
      usleep (100);
  ck_assert_int_eq (pthread_create (&waiter, &this_cpu, lock_and_unlock,
                                    &o.held), 0);
  ck_assert_int_eq (pthread_attr_destroy (&own_cpu), 0);
  ck_assert_int_eq (pthread_attr_destroy (&this_cpu), 0);
  struct timespec deadline = deadline_after_ms (CLOCK_MONOTONIC, 5000);
  unsigned seen = 0;
  while (lock_word (&o.held) != 2 && !time_reached (CLOCK_MONOTONIC,
                                                      &deadline))
    seen |= spin_state (&o.held);
  ck_assert_msg (lock_word (&o.held) == 2, "the waiter never slept");
  seen |= spin_state (&o.held);
  __atomic_store_n (&o.stop, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq (pthread_mutex_unlock (&o.blocker), 0);
  join_or_fail (owner_thread);
  join_or_fail (waiter);
  ck_assert_int_eq (pthread_mutex_destroy (&o.held), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&o.blocker), 0);
  return seen;
}

static void
waiter_sleeps_at_once (void *(*owner) (void *))
{
  if (!spinning_expected ())
    return;
  unsigned seen = 0;
  for (int round = 0; round < 3; round++)
    {
      unsigned this_round = spin_seen_while_owner_away (owner);
      if (this_round == 0)
        return;
      seen |= this_round;
    }
  ck_assert_msg (seen == 0, "the waiter spun while the owner was away, "
                 "in three rounds: spin states %#x", seen);
}

START_TEST (owner_asleep_no_spin)
{
  waiter_sleeps_at_once (hold_while_asleep);
}
END_TEST

/* sched_yield is the library's, which marks the thread away.  */
START_TEST (owner_yielding_no_spin)
{
  Dl_info info;
  ck_assert_int_ne (dladdr ((void *) &sched_yield, &info), 0);
  ck_assert_msg (strstr (info.dli_fname, "libxpthread") != NULL,
                 "sched_yield is bound to %s", info.dli_fname);
  waiter_sleeps_at_once (hold_while_yielding);
}
END_TEST

/* A private normal or adaptive mutex names its owner while held, as
   glibc's does, for waiters to read its away mark; it counts no users
   (it has no error checks).  Looped over the two types and the three ways
   to lock.  */
START_TEST (private_records_owner)
{
  pthread_mutex_t m;
  init_mutex (&m, _i % 2 ? PTHREAD_MUTEX_ADAPTIVE_NP : PTHREAD_MUTEX_NORMAL,
              0);
  struct timespec later = deadline_after_ms (CLOCK_REALTIME, 1000);
  int how = _i / 2;
  ck_assert_int_eq (how == 0 ? pthread_mutex_lock (&m)
                    : how == 1 ? pthread_mutex_trylock (&m)
                               : pthread_mutex_timedlock (&m, &later), 0);
  ck_assert_int_eq (m.__data.__owner, gettid ());
  ck_assert_int_eq (m.__data.__nusers, 0);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (m.__data.__owner, 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* In the child of fork the owner recorded is the child's tid, which
   waiters there read for its away mark.  */
START_TEST (private_owner_after_fork)
{
  pthread_mutex_t m;
  init_mutex (&m, PTHREAD_MUTEX_NORMAL, 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  ck_assert_int_eq (m.__data.__owner, gettid ());
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  pid_t child = fork ();
  ck_assert_int_ge (child, 0);
  if (child == 0)
    {
      bool right = pthread_mutex_lock (&m) == 0
                   && m.__data.__owner == gettid ()
                   && pthread_mutex_unlock (&m) == 0
                   && m.__data.__owner == 0;
      _exit (right ? 0 : 1);
    }
  int status;
  ck_assert_int_eq (waitpid (child, &status, 0), child);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "the child recorded another owner than itself");
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

#define ASKING_ONLY_ARG "--asking-only"
#define ASKING_MAX_SPINS 400

/* A spinner that asks for a turn marks the held word itself; its spin,
   if the lock stays held all along, still fails.  Run with
   XPTHREAD_SPIN_MAX=ASKING_MAX_SPINS, on a mutex whose hold estimate
   (__elision, in 16 ns units) says turns pay, so that every spin long
   enough asks.  */
START_TEST (asking_spins_fail)
{
  int cpus[2];
  ck_assert_msg (two_cpus (cpus), "one CPU: nobody spins");
  pthread_mutex_t m;
  ck_assert_int_eq (pthread_mutex_init (&m, NULL), 0);
  *mutex_hold_estimate (&m) = 1000;
  ck_assert_uint_eq (drive_estimate_to_bound (&m), ASKING_MAX_SPINS);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

START_TEST (asking_spins)
{
  int cpus[2];
  if (!two_cpus (cpus))
    return;
  char max[64];
  snprintf (max, sizeof max, "XPTHREAD_SPIN_MAX=%d", ASKING_MAX_SPINS);
  const char *const settings[] = { max, NULL };
  int status = xp_test_rerun (ASKING_ONLY_ARG, settings);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "the asking spins test: status %#x", status);
}
END_TEST

#define FRESH_WAITERS 64

/* Which waits probe a lock at the bound is drawn at random, one in eight:
   not every thread's first wait, which a program that starts threads by
   the thousand, each waiting once, would pay for in spins.  Half of them
   or more would be odds of about 4e-13.  */
START_TEST (probes_are_drawn)
{
  if (!spinning_expected ())
    return;
  pthread_mutex_t m;
  ck_assert_int_eq (pthread_mutex_init (&m, NULL), 0);
  drive_estimate_to_bound (&m);
  int probes = 0;
  for (int i = 0; i < FRESH_WAITERS; i++)
    probes += contended_once (&m, false) > 0;
  ck_assert_msg (probes < FRESH_WAITERS / 2, "%d of %d fresh waiters probed",
                 probes, FRESH_WAITERS);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

#define CROWD 6

/* However many threads wait, at most one spins on the lock (the
   default); the rest sleep, and none is left counted.  */
START_TEST (one_spinner_per_lock)
{
  if (!spinning_expected ())
    return;
  pthread_mutex_t m;
  ck_assert_int_eq (pthread_mutex_init (&m, NULL), 0);
  unsigned most = 0;
  for (int round = 0; round < 10; round++)
    {
      ck_assert_int_eq (pthread_mutex_lock (&m), 0);
      pthread_t t[CROWD];
      for (int i = 0; i < CROWD; i++)
        ck_assert_int_eq (pthread_create (&t[i], NULL, lock_and_unlock, &m),
                          0);
      struct timespec until = deadline_after_ms (CLOCK_MONOTONIC, 20);
      while (!time_reached (CLOCK_MONOTONIC, &until))
        {
          unsigned spinners = spin_state (&m) >> SPINNERS_SHIFT;
          most = spinners > most ? spinners : most;
        }
      ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
      for (int i = 0; i < CROWD; i++)
        join_or_fail (t[i]);
    }
  ck_assert_uint_le (most, 1);
  ck_assert_uint_eq (spin_state (&m) >> SPINNERS_SHIFT, 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* ---- with a glibc process ------------------------------------------- */

#ifndef XP_SYNC_PEER
# error "XP_SYNC_PEER must name the tests/sync-peer program"
#endif

#define PEER_COUNT 30000     /* per thread, on each side */
#define PEER_ROUNDS 2000
#define PEER_QUEUE_ITEMS 3000  /* produced by each side */

struct peer_area
{
  int fd;
  struct xp_peer_area *area;
};

static struct peer_area
make_peer_area (void)
{
  struct peer_area p;
  p.fd = memfd_create ("xp-peer-area", 0);
  ck_assert_int_ge (p.fd, 0);
  ck_assert_int_eq (ftruncate (p.fd, sizeof *p.area), 0);
  p.area = mmap (NULL, sizeof *p.area, PROT_READ | PROT_WRITE, MAP_SHARED,
                 p.fd, 0);
  ck_assert (p.area != MAP_FAILED);
  return p;
}

static void
free_peer_area (struct peer_area *p)
{
  munmap (p->area, sizeof *p->area);
  close (p->fd);
}

/* The environment minus LD_PRELOAD, so the peer runs on glibc alone.  */
static char **
environment_without_preload (void)
{
  static const char *const drop[] = { "LD_PRELOAD=", NULL };
  size_t used;
  return xp_test_environment_without (drop, 0, &used);
}

/* Start tests/sync-peer on the area with the given command words.  */
static pid_t
spawn_peer (const struct peer_area *p, const char *command, const char *arg1,
            const char *arg2)
{
  char fd_arg[16];
  snprintf (fd_arg, sizeof fd_arg, "%d", p->fd);
  char *argv[] = { (char *) XP_SYNC_PEER, fd_arg, (char *) command,
                   (char *) arg1, (char *) arg2, NULL };
  return xp_test_spawn (XP_SYNC_PEER, argv, environment_without_preload ());
}

static void
assert_peer_succeeded (pid_t pid)
{
  int status = xp_test_wait_child (pid);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "sync-peer status %#x (exit %d; see tests/sync-peer.h)",
                 status, WIFEXITED (status) ? WEXITSTATUS (status) : -1);
}

static void
init_area_here (struct xp_peer_area *area, int type, int flags)
{
  init_mutex (&area->mutex, type, MX_PSHARED | flags);
  pthread_condattr_t attr;
  ck_assert_int_eq (pthread_condattr_init (&attr), 0);
  ck_assert_int_eq (pthread_condattr_setpshared (&attr,
                                                 PTHREAD_PROCESS_SHARED), 0);
  ck_assert_int_eq (pthread_cond_init (&area->cond, &attr), 0);
  ck_assert_int_eq (pthread_condattr_destroy (&attr), 0);
}

static void
init_area_by_peer (const struct peer_area *p, int type, int flags)
{
  char type_arg[16];
  snprintf (type_arg, sizeof type_arg, "%d", type);
  assert_peer_succeeded (spawn_peer (p, "init", type_arg,
                                     (flags & MX_ROBUST) ? "1" : "0"));
}

struct peer_counter
{
  struct xp_peer_area *area;
  int result;
};

static void *
count_with_peer (void *arg)
{
  struct peer_counter *c = arg;
  for (int i = 0; i < PEER_COUNT && c->result == 0; i++)
    {
      c->result = pthread_mutex_lock (&c->area->mutex);
      if (c->result == 0)
        {
          c->area->counter++;
          c->result = pthread_mutex_unlock (&c->area->mutex);
        }
    }
  return NULL;
}

/* Two threads here and two in the glibc peer increment one counter
   under one process-shared mutex.  Looped: the mutex is made here
   (normal, errorcheck) or by the peer (normal, errorcheck), then the
   same four robust.  */
START_TEST (pshared_with_glibc_process)
{
  int type = _i % 2 == 0 ? PTHREAD_MUTEX_NORMAL : PTHREAD_MUTEX_ERRORCHECK;
  int flags = _i >= 4 ? MX_ROBUST : 0;
  /* glibc will not make a robust mutex without a robust list.  */
  if (flags & MX_ROBUST)
    XP_TEST_NEEDS_ROBUST_LIST ();
  struct peer_area p = make_peer_area ();
  if (_i % 4 < 2)
    init_area_here (p.area, type, flags);
  else
    init_area_by_peer (&p, type, flags);
  char count_arg[16];
  snprintf (count_arg, sizeof count_arg, "%d", PEER_COUNT);
  pid_t pid = spawn_peer (&p, "count", count_arg, "2");
  struct peer_counter c[2] = { { p.area, 0 }, { p.area, 0 } };
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    t[i] = start_thread (count_with_peer, &c[i]);
  for (int i = 0; i < 2; i++)
    join_or_fail (t[i]);
  assert_peer_succeeded (pid);
  ck_assert_int_eq (c[0].result, 0);
  ck_assert_int_eq (c[1].result, 0);
  ck_assert_int_eq (p.area->counter, 4L * PEER_COUNT);
  ck_assert_int_eq (pthread_mutex_destroy (&p.area->mutex), 0);
  free_peer_area (&p);
}
END_TEST

/* A robust process-shared mutex outlives its owner across the two
   implementations.  Looped: 0, made by the glibc peer, which exits
   holding it, and recovered here; 1, made here, held by a forked child
   of ours that is killed, and recovered by the glibc peer.  */
START_TEST (robust_owner_death_with_glibc)
{
  XP_TEST_NEEDS_ROBUST_LIST ();
  struct peer_area p = make_peer_area ();
  if (_i == 0)
    {
      init_area_by_peer (&p, PTHREAD_MUTEX_NORMAL, MX_ROBUST);
      assert_peer_succeeded (spawn_peer (&p, "die-holding", NULL, NULL));
      ck_assert_int_eq (pthread_mutex_lock (&p.area->mutex), EOWNERDEAD);
      ck_assert_int_eq (pthread_mutex_consistent (&p.area->mutex), 0);
      p.area->counter++;
      ck_assert_int_eq (pthread_mutex_unlock (&p.area->mutex), 0);
    }
  else
    {
      init_area_here (p.area, PTHREAD_MUTEX_NORMAL, MX_ROBUST);
      int fds[2];
      ck_assert_int_eq (pipe (fds), 0);
      fflush (NULL);
      pid_t pid = fork ();
      ck_assert_int_ge (pid, 0);
      if (pid == 0)
        {
          char ok = pthread_mutex_lock (&p.area->mutex) == 0 ? 'y' : 'n';
          if (write (fds[1], &ok, 1) != 1)
            _exit (1);
          for (;;)
            pause ();
        }
      close (fds[1]);
      char ok = 0;
      ck_assert_int_eq (read (fds[0], &ok, 1), 1);
      ck_assert_int_eq (ok, 'y');
      close (fds[0]);
      ck_assert_int_eq (kill (pid, SIGKILL), 0);
      xp_test_wait_child (pid);
      assert_peer_succeeded (spawn_peer (&p, "recover", NULL, NULL));
    }
  ck_assert_int_eq (p.area->counter, 1);
  /* Consistent again, for both.  */
  ck_assert_int_eq (pthread_mutex_lock (&p.area->mutex), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&p.area->mutex), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&p.area->mutex), 0);
  free_peer_area (&p);
}
END_TEST

/* Side 0 of the ping-pong (the peer plays side 1).  */
static int
ping (struct xp_peer_area *area, int rounds)
{
  for (int r = 0; r < rounds; r++)
    {
      int err = pthread_mutex_lock (&area->mutex);
      if (err != 0)
        return err;
      struct timespec deadline
        = deadline_after_ms (CLOCK_REALTIME, WATCHDOG_SECONDS * 1000L);
      while (area->turn != 0 && err == 0)
        err = pthread_cond_timedwait (&area->cond, &area->mutex, &deadline);
      if (err == 0)
        {
          area->moves[0]++;
          area->turn = 1;
          err = pthread_cond_signal (&area->cond);
        }
      int unlock = pthread_mutex_unlock (&area->mutex);
      if (err != 0 || unlock != 0)
        return err != 0 ? err : unlock;
    }
  return 0;
}

/* The move passes back and forth through a process-shared condition
   variable and mutex, waited on by both implementations.  Looped: made
   here or by the peer.  */
START_TEST (cond_ping_pong_with_glibc_process)
{
  struct peer_area p = make_peer_area ();
  if (_i == 0)
    init_area_here (p.area, PTHREAD_MUTEX_NORMAL, 0);
  else
    init_area_by_peer (&p, PTHREAD_MUTEX_NORMAL, 0);
  char rounds_arg[16];
  snprintf (rounds_arg, sizeof rounds_arg, "%d", PEER_ROUNDS);
  pid_t pid = spawn_peer (&p, "pong", rounds_arg, NULL);
  int err = ping (p.area, PEER_ROUNDS);
  assert_peer_succeeded (pid);
  ck_assert_msg (err == 0, "ping: %s", strerror (err));
  ck_assert_int_eq (p.area->moves[0], PEER_ROUNDS);
  ck_assert_int_eq (p.area->moves[1], PEER_ROUNDS);
  ck_assert_int_eq (p.area->turn, 0);
  ck_assert_int_eq (pthread_cond_destroy (&p.area->cond), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&p.area->mutex), 0);
  free_peer_area (&p);
}
END_TEST

/* The queue: both processes produce items and consume them, with several
   waiters on each side of one process-shared condition variable, woken
   by signals and broadcasts from either implementation.  An item left
   unconsumed while waiters sleep is a lost wake-up (the peer's and the
   consumers' watchdogs turn it into a failure).  How the items split
   between the sides depends on scheduling (anything from 0 to all on
   one side was seen), so only the totals are checked when both sides
   consume; in the other rounds every wake-up crosses between the
   implementations.  Looped: who produces and consumes x made here or by
   the peer.  */
struct queue_side
{
  struct xp_peer_area *area;
  int result;
};

static bool
queue_drained (const struct xp_peer_area *area)
{
  return area->consumed[0] + area->consumed[1] == area->queue_total;
}

static void *
queue_consume (void *arg)
{
  struct queue_side *q = arg;
  struct xp_peer_area *area = q->area;
  struct timespec deadline
    = deadline_after_ms (CLOCK_REALTIME, WATCHDOG_SECONDS * 1000L);
  q->result = pthread_mutex_lock (&area->mutex);
  if (q->result != 0)
    return NULL;
  area->consumers_ready++;
  while (q->result == 0 && !queue_drained (area))
    {
      if (area->items == 0)
        {
          q->result = pthread_cond_timedwait (&area->cond, &area->mutex,
                                              &deadline);
          continue;
        }
      area->items--;
      area->consumed[0]++;
      if (queue_drained (area))
        q->result = pthread_cond_broadcast (&area->cond);
    }
  int unlock = pthread_mutex_unlock (&area->mutex);
  if (q->result == 0)
    q->result = unlock;
  return NULL;
}

/* As the peer's producer: once every consumer of both sides is in its
   loop, so that waiters of both implementations are there to be woken.  */
static int
wait_for_queue_consumers (struct xp_peer_area *area)
{
  struct timespec deadline
    = deadline_after_ms (CLOCK_MONOTONIC, WATCHDOG_SECONDS * 1000L);
  for (;;)
    {
      int err = pthread_mutex_lock (&area->mutex);
      if (err != 0)
        return err;
      bool ready = area->consumers_ready == area->queue_consumers;
      err = pthread_mutex_unlock (&area->mutex);
      if (err != 0 || ready)
        return err;
      if (time_reached (CLOCK_MONOTONIC, &deadline))
        return ETIMEDOUT;
      usleep (1000);
    }
}

static void *
queue_produce (void *arg)
{
  struct queue_side *q = arg;
  struct xp_peer_area *area = q->area;
  q->result = wait_for_queue_consumers (area);
  for (int i = 0; i < PEER_QUEUE_ITEMS && q->result == 0; i++)
    {
      q->result = pthread_mutex_lock (&area->mutex);
      if (q->result != 0)
        break;
      area->items++;
      area->produced[0]++;
      q->result = i % 4 == 1 ? pthread_cond_broadcast (&area->cond)
                             : pthread_cond_signal (&area->cond);
      int unlock = pthread_mutex_unlock (&area->mutex);
      if (q->result == 0)
        q->result = unlock;
    }
  return NULL;
}

START_TEST (cond_queue_with_glibc_process)
{
  enum { CONSUMERS = 3 };
  /* Who produces and who consumes: each wake-up crosses from glibc to
     xpthread, from xpthread to glibc, or either way.  */
  enum { PEER_PRODUCES, HERE_PRODUCES, BOTH } roles = _i / 2;
  int here_items = roles == PEER_PRODUCES ? 0 : PEER_QUEUE_ITEMS;
  int peer_items = roles == HERE_PRODUCES ? 0 : PEER_QUEUE_ITEMS;
  int here_consumers = roles == HERE_PRODUCES ? 0 : CONSUMERS;
  int peer_consumers = roles == PEER_PRODUCES ? 0 : CONSUMERS;
  struct peer_area p = make_peer_area ();
  if (_i % 2 == 0)
    init_area_here (p.area, PTHREAD_MUTEX_NORMAL, 0);
  else
    init_area_by_peer (&p, PTHREAD_MUTEX_NORMAL, 0);
  p.area->queue_total = here_items + peer_items;
  p.area->queue_consumers = here_consumers + peer_consumers;
  char items_arg[16], consumers_arg[16];
  snprintf (items_arg, sizeof items_arg, "%d", peer_items);
  snprintf (consumers_arg, sizeof consumers_arg, "%d", peer_consumers);
  pid_t pid = spawn_peer (&p, "queue", items_arg, consumers_arg);
  struct queue_side sides[CONSUMERS + 1];
  pthread_t t[CONSUMERS + 1];
  int first = here_items > 0 ? 0 : 1;
  for (int i = first; i <= here_consumers; i++)
    {
      sides[i] = (struct queue_side) { p.area, 0 };
      t[i] = start_thread (i == 0 ? queue_produce : queue_consume, &sides[i]);
    }
  for (int i = first; i <= here_consumers; i++)
    join_or_fail (t[i]);
  assert_peer_succeeded (pid);
  for (int i = first; i <= here_consumers; i++)
    ck_assert_msg (sides[i].result == 0, "thread %d: %s", i,
                   strerror (sides[i].result));
  ck_assert_int_eq (p.area->produced[0], here_items);
  ck_assert_int_eq (p.area->produced[1], peer_items);
  ck_assert_int_eq (p.area->items, 0);
  ck_assert (queue_drained (p.area));
  if (here_consumers == 0)
    ck_assert_int_eq (p.area->consumed[0], 0);
  if (peer_consumers == 0)
    ck_assert_int_eq (p.area->consumed[1], 0);
  ck_assert_int_eq (pthread_cond_destroy (&p.area->cond), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&p.area->mutex), 0);
  free_peer_area (&p);
}
END_TEST

/* ---- starting late -------------------------------------------------- */

#define LATE_ONLY_ARG "--late-only"

/* lock_and_unlock, as xp_test_check_late_start calls it.  */
static void
lock_then_unlock (void *m)
{
  lock_and_unlock (m);
}

static void
unlock (void *m)
{
  ck_assert_int_eq (pthread_mutex_unlock (m), 0);
}

/* The waiter spins (counted in the spin state) or sleeps (the word at
   2).  */
static bool
waiter_shown (void *m)
{
  return (spin_state (m) >> SPINNERS_SHIFT) != 0 || (lock_word (m) & 2);
}

/* Under XPTHREAD_SPIN_LATE (run in a fresh copy of this program) a
   waiter that finds the mutex held lets that many rounds pass before it
   joins the lock's spinners or sleeps.  The holder watches from another
   CPU.  */
START_TEST (waiter_starts_late)
{
  pthread_mutex_t m;
  ck_assert_int_eq (pthread_mutex_init (&m, NULL), 0);
  pthread_attr_t attr = on_two_cpus ();
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  xp_test_check_late_start (&m, lock_then_unlock, unlock, waiter_shown,
                            &attr);
  ck_assert_int_eq (pthread_attr_destroy (&attr), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

START_TEST (start_late)
{
  xp_test_rerun_late (LATE_ONLY_ARG);
}
END_TEST

/* ---- the suite ------------------------------------------------------ */

static TCase *
add_case (Suite *s, const char *name, const TTest *test, int timeout)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, timeout);
  tcase_add_test (tc, test);
  suite_add_tcase (s, tc);
  return tc;
}

static void
add_loop_case (Suite *s, const char *name, const TTest *test, int n,
               int timeout)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, timeout);
  tcase_add_loop_test (tc, test, 0, n);
  suite_add_tcase (s, tc);
}

/* The suite a copy of this program run by xp_test_rerun runs, or NULL.  */
static Suite *
suite_for_rerun (const char *arg)
{
  Suite *s = NULL;
  if (strcmp (arg, STRESS_ONLY_ARG) == 0)
    {
      s = suite_create ("mutex-stress");
      add_loop_case (s, "stress", stress_counter, N_STRESS, 30);
    }
  else if (strcmp (arg, TURN_ONLY_ARG) == 0)
    {
      s = suite_create ("mutex-turn");
      add_case (s, "turn", spinner_gets_its_turn, 30);
    }
  else if (strcmp (arg, ASKING_ONLY_ARG) == 0)
    {
      s = suite_create ("mutex-asking");
      add_case (s, "asking", asking_spins_fail, 30);
    }
  else if (strcmp (arg, LATE_ONLY_ARG) == 0)
    {
      s = suite_create ("mutex-late");
      add_case (s, "late", waiter_starts_late, 30);
    }
  return s;
}

int
main (int argc, char **argv)
{
  Suite *rerun = argc > 1 ? suite_for_rerun (argv[1]) : NULL;
  if (rerun != NULL)
    return xp_test_run (rerun);
  Suite *s = suite_create ("mutex");
  add_case (s, "init", init_lock_destroy, 10);
  add_loop_case (s, "destroy-busy", destroy_locked_is_busy, N_TYPES, 10);
  add_loop_case (s, "after-destroy", use_after_destroy_is_invalid, N_TYPES,
                 10);
  add_case (s, "normal", normal_type, 10);
  add_case (s, "recursive", recursive_type, 10);
  add_case (s, "errorcheck", errorcheck_type, 10);
  add_case (s, "adaptive", adaptive_type, 10);
  add_case (s, "initialisers", static_initialisers, 10);
  add_loop_case (s, "timed-out", timed_lock_times_out, 3 * N_TYPES, 10);
  add_case (s, "bad-clock", clocklock_bad_clock, 10);
  add_case (s, "timed-free", timed_lock_free_mutex, 10);
  add_case (s, "attr-defaults", attr_defaults, 10);
  add_case (s, "attr-type", attr_type, 10);
  add_case (s, "attr-pshared", attr_pshared, 10);
  add_case (s, "attr-robust", attr_robust, 10);
  add_case (s, "attr-any-object", attr_any_object_works_as_in_glibc, 10);
  add_case (s, "attr-destroy-null", attr_destroy_null, 10);
  add_case (s, "attr-protocol", attr_protocol, 10);
  add_case (s, "attr-prioceiling", attr_prioceiling, 10);
  add_case (s, "attr-independent", attr_fields_independent, 10);
  add_case (s, "np-names", np_names, 10);
  add_loop_case (s, "robust-thread", robust_owner_thread_dies, N_TYPES, 10);
  add_case (s, "robust-unrecoverable", robust_not_recoverable, 10);
  add_case (s, "robust-waiter", robust_waiter_sees_death, 20);
  add_case (s, "robust-process", robust_owner_process_killed, 20);
  add_loop_case (s, "robust-destroy-held", robust_destroy_held,
                 N_ROBUST_FLAVOURS, 10);
  add_loop_case (s, "robust-destroy-busy", robust_destroy_busy,
                 N_ROBUST_FLAVOURS, 10);
  add_loop_case (s, "robust-types", robust_type_answers,
                 N_TYPES * N_ROBUST_FLAVOURS, 10);
  add_loop_case (s, "robust-links", robust_list_links, 3, 10);
  add_loop_case (s, "robust-cond", robust_cond_wait_owner_died, 4, 10);
  add_case (s, "robust-fork", robust_fork_child_list, 10);
  add_loop_case (s, "pi", pi_basic, N_TYPES, 10);
  add_case (s, "pi-chain", pi_chain_boosts_owner, 30);
  add_case (s, "pi-deadlock", pi_deadlock_detected, 10);
  add_case (s, "pp-ceiling", pp_prioceiling, 10);
  add_case (s, "pp-default-ceiling", pp_default_ceiling, 10);
  add_case (s, "pp-lock", pp_lock_raises_priority, 10);
  add_case (s, "pp-after-setschedparam", pp_after_setschedparam, 10);
  add_loop_case (s, "pp-types", pp_type_answers_as_fifo, N_TYPES, 10);
  add_case (s, "pp-nested", pp_nested_ceilings, 10);
  add_loop_case (s, "pshared-owner", pshared_records_owner, 4, 10);
  add_loop_case (s, "pshared-fork", pshared_between_forked_processes,
                 3 * N_TYPES, 30);
  add_loop_case (s, "stress", stress_counter, N_STRESS, 30);
  add_loop_case (s, "stress-spin-settings", stress_under_spin_settings,
                 N_SPIN_SETTINGS, 60);
  add_case (s, "turn", turn_when_asked, 60);
  add_case (s, "spin-failing", failing_spins_stop, 30);
  add_case (s, "spin-probes-drawn", probes_are_drawn, 30);
  add_case (s, "spin-asking", asking_spins, 30);
  add_case (s, "spin-one-per-lock", one_spinner_per_lock, 30);
  add_case (s, "spin-late", start_late, 30);
  add_case (s, "spin-owner-asleep", owner_asleep_no_spin, 30);
  add_case (s, "spin-owner-yielding", owner_yielding_no_spin, 30);
  add_loop_case (s, "private-owner", private_records_owner, 6, 10);
  add_case (s, "private-owner-fork", private_owner_after_fork, 10);
  add_loop_case (s, "glibc-peer-count", pshared_with_glibc_process, 8, 30);
  add_loop_case (s, "glibc-peer-robust", robust_owner_death_with_glibc, 2,
                 30);
  add_loop_case (s, "glibc-peer-cond", cond_ping_pong_with_glibc_process, 2,
                 30);
  add_loop_case (s, "glibc-peer-cond-queue", cond_queue_with_glibc_process,
                 6, 60);
  return xp_test_run (s);
}
