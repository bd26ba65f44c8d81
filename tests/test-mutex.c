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

static int
wait_child (pid_t pid)
{
  int status;
  pid_t got;
  do
    got = waitpid (pid, &status, 0);
  while (got < 0 && errno == EINTR);
  ck_assert_int_eq (got, pid);
  return status;
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

/* An old-ABI name, which <pthread.h> redirects to the POSIX one; fail
   unless libxpthread provides it.  */
static void *
xpthread_symbol (const char *name, const char *version)
{
  void *sym = dlvsym (RTLD_DEFAULT, name, version);
  ck_assert_msg (sym != NULL, "%s@%s is missing", name, version);
  Dl_info info;
  ck_assert (dladdr (sym, &info) != 0 && info.dli_fname != NULL);
  ck_assert_msg (strstr (info.dli_fname, "libxpthread") != NULL,
                 "%s@%s comes from %s", name, version, info.dli_fname);
  return sym;
}

START_TEST (np_names)
{
  int (*setkind) (pthread_mutexattr_t *, int)
    = xpthread_symbol ("pthread_mutexattr_setkind_np", "GLIBC_2.2.5");
  int (*getkind) (const pthread_mutexattr_t *, int *)
    = xpthread_symbol ("pthread_mutexattr_getkind_np", "GLIBC_2.2.5");
  int (*setrobust) (pthread_mutexattr_t *, int)
    = xpthread_symbol ("pthread_mutexattr_setrobust_np", "GLIBC_2.4");
  int (*getrobust) (const pthread_mutexattr_t *, int *)
    = xpthread_symbol ("pthread_mutexattr_getrobust_np", "GLIBC_2.4");
  int (*consistent) (pthread_mutex_t *)
    = xpthread_symbol ("pthread_mutex_consistent_np", "GLIBC_2.4");

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
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

START_TEST (robust_not_recoverable)
{
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
  /* Last: glibc's trylock, which robust mutexes still run, leaves a
     not-recoverable mutex locked by the caller (it tests the value the
     word had before its compare-and-swap to decide whether to undo it),
     so nothing after it could expect ENOTRECOVERABLE.  */
  ck_assert_int_eq (pthread_mutex_trylock (&m), ENOTRECOVERABLE);
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
  int status = wait_child (pid);
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
  int status = wait_child (pid);
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

/* ---- with a glibc process ------------------------------------------- */

#ifndef XP_SYNC_PEER
# error "XP_SYNC_PEER must name the tests/sync-peer program"
#endif

#define PEER_COUNT 30000     /* per thread, on each side */
#define PEER_ROUNDS 2000

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
  extern char **environ;
  size_t n = 0;
  while (environ[n] != NULL)
    n++;
  char **env = calloc (n + 1, sizeof *env);
  ck_assert (env != NULL);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp (environ[i], "LD_PRELOAD=", 11) != 0)
      env[k++] = environ[i];
  env[k] = NULL;
  return env;
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
  char **env = environment_without_preload ();
  fflush (NULL);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      execve (XP_SYNC_PEER, argv, env);
      _exit (127);
    }
  free (env);
  return pid;
}

static void
assert_peer_succeeded (pid_t pid)
{
  int status = wait_child (pid);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "sync-peer status %#x (exit %d; see tests/sync-peer.h)",
                 status, WIFEXITED (status) ? WEXITSTATUS (status) : -1);
}

static void
init_area_here (struct xp_peer_area *area, int type)
{
  init_mutex (&area->mutex, type, MX_PSHARED);
  pthread_condattr_t attr;
  ck_assert_int_eq (pthread_condattr_init (&attr), 0);
  ck_assert_int_eq (pthread_condattr_setpshared (&attr,
                                                 PTHREAD_PROCESS_SHARED), 0);
  ck_assert_int_eq (pthread_cond_init (&area->cond, &attr), 0);
  ck_assert_int_eq (pthread_condattr_destroy (&attr), 0);
}

static void
init_area_by_peer (const struct peer_area *p, int type)
{
  char type_arg[16];
  snprintf (type_arg, sizeof type_arg, "%d", type);
  assert_peer_succeeded (spawn_peer (p, "init", type_arg, NULL));
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
   (normal, errorcheck) or by the peer (normal, errorcheck).  */
START_TEST (pshared_with_glibc_process)
{
  int type = _i % 2 == 0 ? PTHREAD_MUTEX_NORMAL : PTHREAD_MUTEX_ERRORCHECK;
  struct peer_area p = make_peer_area ();
  if (_i < 2)
    init_area_here (p.area, type);
  else
    init_area_by_peer (&p, type);
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
    init_area_here (p.area, PTHREAD_MUTEX_NORMAL);
  else
    init_area_by_peer (&p, PTHREAD_MUTEX_NORMAL);
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

int
main (void)
{
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
  add_case (s, "attr-protocol", attr_protocol, 10);
  add_case (s, "attr-prioceiling", attr_prioceiling, 10);
  add_case (s, "attr-independent", attr_fields_independent, 10);
  add_case (s, "np-names", np_names, 10);
  add_loop_case (s, "robust-thread", robust_owner_thread_dies, N_TYPES, 10);
  add_case (s, "robust-unrecoverable", robust_not_recoverable, 10);
  add_case (s, "robust-waiter", robust_waiter_sees_death, 20);
  add_case (s, "robust-process", robust_owner_process_killed, 20);
  add_loop_case (s, "pi", pi_basic, N_TYPES, 10);
  add_case (s, "pi-chain", pi_chain_boosts_owner, 30);
  add_case (s, "pp-ceiling", pp_prioceiling, 10);
  add_case (s, "pp-default-ceiling", pp_default_ceiling, 10);
  add_case (s, "pp-lock", pp_lock_raises_priority, 10);
  add_case (s, "pp-after-setschedparam", pp_after_setschedparam, 10);
  add_loop_case (s, "pshared-fork", pshared_between_forked_processes,
                 3 * N_TYPES, 30);
  add_loop_case (s, "stress", stress_counter, N_STRESS, 30);
  add_loop_case (s, "glibc-peer-count", pshared_with_glibc_process, 4, 30);
  add_loop_case (s, "glibc-peer-cond", cond_ping_pong_with_glibc_process, 2,
                 30);
  return xp_test_run (s);
}
