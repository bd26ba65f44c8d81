/* Condition variables: attributes, the static initialiser, signal,
   broadcast and the three waits with their error codes, the mutex held
   again on every return, destruction right after a broadcast, EBUSY from
   destroy while a thread waits, and stress whose invariants show that no
   wake-up is lost (items through a bounded queue; tickets, where each
   signal hands out one ticket and waiters take them, also racing with
   timed waits that expire).

   Worker threads never assert: they record what they saw and the main
   thread checks it.  Deadlines only serve as watchdogs, so that a hang
   becomes a failure; no result depends on timing.  */
#define _GNU_SOURCE
#include "common.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
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

static struct timespec
watchdog_deadline (clockid_t clock)
{
  return deadline_after_ms (clock, WATCHDOG_SECONDS * 1000L);
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

/* Join T, failing the test instead of hanging when it never finishes.  */
static void *
join_or_fail (pthread_t t)
{
  struct timespec deadline = watchdog_deadline (CLOCK_MONOTONIC);
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

static void
init_mutex (pthread_mutex_t *m, int type)
{
  pthread_mutexattr_t attr;
  ck_assert_int_eq (pthread_mutexattr_init (&attr), 0);
  ck_assert_int_eq (pthread_mutexattr_settype (&attr, type), 0);
  ck_assert_int_eq (pthread_mutex_init (m, &attr), 0);
  pthread_mutexattr_destroy (&attr);
}

/* Process-shared condition variables keep glibc's protocol, a separate
   implementation, so the behaviour cases run a second time with every
   condition variable they make process-shared (set by a fixture).  */
static bool make_pshared;

static void
pshared_fixture (void)
{
  make_pshared = true;
}

static void
init_cond (pthread_cond_t *c, clockid_t clock)
{
  pthread_condattr_t attr;
  ck_assert_int_eq (pthread_condattr_init (&attr), 0);
  ck_assert_int_eq (pthread_condattr_setclock (&attr, clock), 0);
  if (make_pshared)
    ck_assert_int_eq (pthread_condattr_setpshared (&attr,
                                                   PTHREAD_PROCESS_SHARED),
                      0);
  ck_assert_int_eq (pthread_cond_init (c, &attr), 0);
  pthread_condattr_destroy (&attr);
}

/* Hold M until PREDICATE (read under M) holds, giving other threads the
   mutex in between; false when the watchdog expires first.  Returns
   holding M.  */
static bool
lock_until (pthread_mutex_t *m, bool (*predicate) (void *), void *arg)
{
  struct timespec deadline = watchdog_deadline (CLOCK_MONOTONIC);
  pthread_mutex_lock (m);
  while (!predicate (arg))
    {
      if (time_reached (CLOCK_MONOTONIC, &deadline))
        return false;
      pthread_mutex_unlock (m);
      sched_yield ();
      pthread_mutex_lock (m);
    }
  return true;
}

/* ---- attributes ----------------------------------------------------- */

START_TEST (condattr_defaults)
{
  pthread_condattr_t attr;
  clockid_t clock = -1;
  int pshared = -1;
  ck_assert_int_eq (pthread_condattr_init (&attr), 0);
  ck_assert_int_eq (pthread_condattr_getclock (&attr, &clock), 0);
  ck_assert_int_eq (clock, CLOCK_REALTIME);
  ck_assert_int_eq (pthread_condattr_getpshared (&attr, &pshared), 0);
  ck_assert_int_eq (pshared, PTHREAD_PROCESS_PRIVATE);
  ck_assert_int_eq (pthread_condattr_destroy (&attr), 0);
}
END_TEST

START_TEST (condattr_clock)
{
  static const clockid_t bad[] = {
    CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, -1, 12345
  };
  pthread_condattr_t attr;
  clockid_t clock = -1;
  ck_assert_int_eq (pthread_condattr_init (&attr), 0);
  ck_assert_int_eq (pthread_condattr_setclock (&attr, CLOCK_MONOTONIC), 0);
  ck_assert_int_eq (pthread_condattr_getclock (&attr, &clock), 0);
  ck_assert_int_eq (clock, CLOCK_MONOTONIC);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_int_eq (pthread_condattr_setclock (&attr, bad[i]), EINVAL);
  /* A rejected clock leaves the attribute as it was.  */
  ck_assert_int_eq (pthread_condattr_getclock (&attr, &clock), 0);
  ck_assert_int_eq (clock, CLOCK_MONOTONIC);
  ck_assert_int_eq (pthread_condattr_setclock (&attr, CLOCK_REALTIME), 0);
  ck_assert_int_eq (pthread_condattr_getclock (&attr, &clock), 0);
  ck_assert_int_eq (clock, CLOCK_REALTIME);
  ck_assert_int_eq (pthread_condattr_destroy (&attr), 0);
}
END_TEST

START_TEST (condattr_pshared)
{
  pthread_condattr_t attr;
  int pshared = -1;
  clockid_t clock = -1;
  ck_assert_int_eq (pthread_condattr_init (&attr), 0);
  ck_assert_int_eq (pthread_condattr_setpshared (&attr,
                                                 PTHREAD_PROCESS_SHARED), 0);
  ck_assert_int_eq (pthread_condattr_getpshared (&attr, &pshared), 0);
  ck_assert_int_eq (pshared, PTHREAD_PROCESS_SHARED);
  ck_assert_int_eq (pthread_condattr_setpshared (&attr, 2), EINVAL);
  ck_assert_int_eq (pthread_condattr_setpshared (&attr, -1), EINVAL);
  ck_assert_int_eq (pthread_condattr_getpshared (&attr, &pshared), 0);
  ck_assert_int_eq (pshared, PTHREAD_PROCESS_SHARED);
  /* The two fields are independent.  */
  ck_assert_int_eq (pthread_condattr_setclock (&attr, CLOCK_MONOTONIC), 0);
  ck_assert_int_eq (pthread_condattr_getpshared (&attr, &pshared), 0);
  ck_assert_int_eq (pshared, PTHREAD_PROCESS_SHARED);
  ck_assert_int_eq (pthread_condattr_setpshared (&attr,
                                                 PTHREAD_PROCESS_PRIVATE), 0);
  ck_assert_int_eq (pthread_condattr_getclock (&attr, &clock), 0);
  ck_assert_int_eq (clock, CLOCK_MONOTONIC);
  ck_assert_int_eq (pthread_condattr_getpshared (&attr, &pshared), 0);
  ck_assert_int_eq (pshared, PTHREAD_PROCESS_PRIVATE);
  ck_assert_int_eq (pthread_condattr_destroy (&attr), 0);
}
END_TEST

/* ---- one waiter ----------------------------------------------------- */

/* How a waiter waits.  */
enum wait_kind
{
  WAIT_PLAIN,            /* pthread_cond_wait */
  WAIT_TIMED,            /* pthread_cond_timedwait, the cond's clock */
  WAIT_CLOCK_REALTIME,   /* pthread_cond_clockwait */
  WAIT_CLOCK_MONOTONIC,
  N_WAIT_KINDS
};

static clockid_t
wait_clock (enum wait_kind kind, clockid_t cond_clock)
{
  switch (kind)
    {
    case WAIT_CLOCK_REALTIME:
      return CLOCK_REALTIME;
    case WAIT_CLOCK_MONOTONIC:
      return CLOCK_MONOTONIC;
    default:
      return cond_clock;
    }
}

/* One wait of KIND on C with M held; DEADLINE is ignored by WAIT_PLAIN.  */
static int
wait_once (pthread_cond_t *c, pthread_mutex_t *m, enum wait_kind kind,
           const struct timespec *deadline)
{
  switch (kind)
    {
    case WAIT_PLAIN:
      return pthread_cond_wait (c, m);
    case WAIT_TIMED:
      return pthread_cond_timedwait (c, m, deadline);
    case WAIT_CLOCK_REALTIME:
      return pthread_cond_clockwait (c, m, CLOCK_REALTIME, deadline);
    default:
      return pthread_cond_clockwait (c, m, CLOCK_MONOTONIC, deadline);
    }
}

struct one_waiter
{
  pthread_mutex_t m;
  pthread_cond_t c;
  clockid_t cond_clock;
  enum wait_kind kind;
  bool use_broadcast;
  int waiting;          /* the waiter is in its wait (read under m) */
  int go;               /* the predicate */
  int result;           /* last wait's result */
  int unlock;           /* unlocking afterwards: 0 if the waiter held m */
};

static bool
one_waiting (void *arg)
{
  return ((struct one_waiter *) arg)->waiting;
}

static void *
one_wait (void *arg)
{
  struct one_waiter *w = arg;
  clockid_t clock = wait_clock (w->kind, w->cond_clock);
  struct timespec deadline = watchdog_deadline (clock);
  pthread_mutex_lock (&w->m);
  w->waiting = 1;
  while (!w->go && w->result == 0)
    w->result = wait_once (&w->c, &w->m, w->kind, &deadline);
  w->unlock = pthread_mutex_unlock (&w->m);
  return NULL;
}

/* Looped over the wait kinds x {signal, broadcast} x {REALTIME,
   MONOTONIC} condition clock.  The waiter is woken well before its
   (watchdog) deadline and returns holding the (error-checking) mutex.  */
START_TEST (wake_one_waiter)
{
  struct one_waiter w;
  memset (&w, 0, sizeof w);
  w.kind = (enum wait_kind) (_i % N_WAIT_KINDS);
  w.use_broadcast = (_i / N_WAIT_KINDS) % 2;
  w.cond_clock = _i / (2 * N_WAIT_KINDS) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
  init_mutex (&w.m, PTHREAD_MUTEX_ERRORCHECK);
  init_cond (&w.c, w.cond_clock);
  pthread_t t = start_thread (one_wait, &w);
  /* Once the waiter has set its flag, holding the mutex means it is in
     the wait: it released the mutex there.  */
  ck_assert (lock_until (&w.m, one_waiting, &w));
  w.go = 1;
  if (w.use_broadcast)
    ck_assert_int_eq (pthread_cond_broadcast (&w.c), 0);
  else
    ck_assert_int_eq (pthread_cond_signal (&w.c), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&w.m), 0);
  join_or_fail (t);
  ck_assert_int_eq (w.result, 0);
  ck_assert_int_eq (w.unlock, 0);
  ck_assert_int_eq (pthread_cond_destroy (&w.c), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&w.m), 0);
}
END_TEST

/* Nothing waits: signal and broadcast do nothing, and a later waiter is
   not woken by them (checked by its timing out).  */
START_TEST (static_initialiser)
{
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  pthread_mutex_t m = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
  ck_assert_int_eq (pthread_cond_signal (&c), 0);
  ck_assert_int_eq (pthread_cond_broadcast (&c), 0);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  struct timespec deadline = deadline_after_ms (CLOCK_REALTIME, 10);
  ck_assert_int_eq (pthread_cond_timedwait (&c, &m, &deadline), ETIMEDOUT);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_cond_destroy (&c), 0);

  /* And a waiter on a statically initialised condition is woken.  */
  struct one_waiter w;
  memset (&w, 0, sizeof w);
  w.c = (pthread_cond_t) PTHREAD_COND_INITIALIZER;
  w.m = (pthread_mutex_t) PTHREAD_MUTEX_INITIALIZER;
  w.cond_clock = CLOCK_REALTIME;
  pthread_t t = start_thread (one_wait, &w);
  ck_assert (lock_until (&w.m, one_waiting, &w));
  w.go = 1;
  pthread_cond_signal (&w.c);
  pthread_mutex_unlock (&w.m);
  join_or_fail (t);
  ck_assert_int_eq (w.result, 0);
  ck_assert_int_eq (w.unlock, 0);
}
END_TEST

/* ---- timeouts and argument errors ----------------------------------- */

struct trylock_probe
{
  pthread_mutex_t *m;
  int result;
};

static void *
probe_trylock (void *arg)
{
  struct trylock_probe *p = arg;
  p->result = pthread_mutex_trylock (p->m);
  if (p->result == 0)
    pthread_mutex_unlock (p->m);
  return NULL;
}

/* Whether another thread finds M locked.  */
static int
trylock_elsewhere (pthread_mutex_t *m)
{
  struct trylock_probe p = { m, -1 };
  join_or_fail (start_thread (probe_trylock, &p));
  return p.result;
}

/* Looped over the timed wait kinds x condition clock.  */
START_TEST (timed_wait_times_out_holding_mutex)
{
  enum wait_kind kind = (enum wait_kind) (1 + _i % 3);
  clockid_t cond_clock = _i / 3 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
  clockid_t clock = wait_clock (kind, cond_clock);
  pthread_mutex_t m;
  pthread_cond_t c;
  init_mutex (&m, PTHREAD_MUTEX_ERRORCHECK);
  init_cond (&c, cond_clock);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);

  struct timespec deadline = deadline_after_ms (clock, 20);
  ck_assert_int_eq (wait_once (&c, &m, kind, &deadline), ETIMEDOUT);
  ck_assert_msg (time_reached (clock, &deadline),
                 "timed out before the deadline");
  /* Held again: another thread cannot take it.  */
  ck_assert_int_eq (trylock_elsewhere (&m), EBUSY);

  /* A deadline already past: ETIMEDOUT at once, still holding.  */
  struct timespec past = { 0, 0 };
  ck_assert_int_eq (wait_once (&c, &m, kind, &past), ETIMEDOUT);
  ck_assert_int_eq (trylock_elsewhere (&m), EBUSY);

  /* Out-of-range tv_nsec: EINVAL, and the mutex was never released.  */
  struct timespec bad = deadline_after_ms (clock, 20);
  bad.tv_nsec = 1000000000;
  ck_assert_int_eq (wait_once (&c, &m, kind, &bad), EINVAL);
  bad.tv_nsec = -1;
  ck_assert_int_eq (wait_once (&c, &m, kind, &bad), EINVAL);
  ck_assert_int_eq (trylock_elsewhere (&m), EBUSY);

  /* The error-checking mutex says this thread owns it.  */
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (trylock_elsewhere (&m), 0);
  ck_assert_int_eq (pthread_cond_destroy (&c), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

START_TEST (clockwait_bad_clock)
{
  static const clockid_t bad[] = {
    CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, -1, 12345
  };
  pthread_mutex_t m;
  pthread_cond_t c;
  init_mutex (&m, PTHREAD_MUTEX_ERRORCHECK);
  init_cond (&c, CLOCK_REALTIME);
  ck_assert_int_eq (pthread_mutex_lock (&m), 0);
  struct timespec deadline = deadline_after_ms (CLOCK_REALTIME, 20);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_int_eq (pthread_cond_clockwait (&c, &m, bad[i], &deadline),
                      EINVAL);
  ck_assert_int_eq (trylock_elsewhere (&m), EBUSY);
  ck_assert_int_eq (pthread_mutex_unlock (&m), 0);
  ck_assert_int_eq (pthread_cond_destroy (&c), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

struct foreign_lock
{
  pthread_mutex_t *m;
  int locked;
  int release;
};

static bool
flag_set (void *arg)
{
  return __atomic_load_n ((int *) arg, __ATOMIC_ACQUIRE) != 0;
}

static void *
hold_until_released (void *arg)
{
  struct foreign_lock *f = arg;
  pthread_mutex_lock (f->m);
  __atomic_store_n (&f->locked, 1, __ATOMIC_RELEASE);
  struct timespec deadline = watchdog_deadline (CLOCK_MONOTONIC);
  while (!flag_set (&f->release) && !time_reached (CLOCK_MONOTONIC, &deadline))
    sched_yield ();
  pthread_mutex_unlock (f->m);
  return NULL;
}

/* Waiting with an error-checking mutex the caller does not own: EPERM,
   whether the mutex is free or held by another thread, and the condition
   is left with no waiter (destroy succeeds).  */
START_TEST (wait_with_unowned_errorcheck_mutex)
{
  pthread_mutex_t m;
  pthread_cond_t c;
  init_mutex (&m, PTHREAD_MUTEX_ERRORCHECK);
  init_cond (&c, CLOCK_REALTIME);
  struct timespec deadline = deadline_after_ms (CLOCK_REALTIME, 1000);
  for (int kind = 0; kind < N_WAIT_KINDS; kind++)
    ck_assert_int_eq (wait_once (&c, &m, (enum wait_kind) kind, &deadline),
                      EPERM);

  struct foreign_lock f = { &m, 0, 0 };
  pthread_t t = start_thread (hold_until_released, &f);
  struct timespec watchdog = watchdog_deadline (CLOCK_MONOTONIC);
  while (!flag_set (&f.locked))
    {
      ck_assert (!time_reached (CLOCK_MONOTONIC, &watchdog));
      sched_yield ();
    }
  for (int kind = 0; kind < N_WAIT_KINDS; kind++)
    ck_assert_int_eq (wait_once (&c, &m, (enum wait_kind) kind, &deadline),
                      EPERM);
  __atomic_store_n (&f.release, 1, __ATOMIC_RELEASE);
  join_or_fail (t);
  ck_assert_int_eq (pthread_cond_destroy (&c), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&m), 0);
}
END_TEST

/* A recursive mutex locked once is released by the wait (the signaller
   can take it) and held exactly once again afterwards.  */
START_TEST (wait_with_recursive_mutex)
{
  struct one_waiter w;
  memset (&w, 0, sizeof w);
  w.cond_clock = CLOCK_REALTIME;
  init_mutex (&w.m, PTHREAD_MUTEX_RECURSIVE);
  init_cond (&w.c, CLOCK_REALTIME);
  pthread_t t = start_thread (one_wait, &w);
  ck_assert (lock_until (&w.m, one_waiting, &w));
  w.go = 1;
  ck_assert_int_eq (pthread_cond_signal (&w.c), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&w.m), 0);
  join_or_fail (t);
  ck_assert_int_eq (w.result, 0);
  /* The waiter's single unlock released it completely.  */
  ck_assert_int_eq (w.unlock, 0);
  ck_assert_int_eq (trylock_elsewhere (&w.m), 0);

  /* The same in this thread: wait with a timeout, then count.  */
  ck_assert_int_eq (pthread_mutex_lock (&w.m), 0);
  struct timespec deadline = deadline_after_ms (CLOCK_REALTIME, 10);
  ck_assert_int_eq (pthread_cond_timedwait (&w.c, &w.m, &deadline),
                    ETIMEDOUT);
  ck_assert_int_eq (trylock_elsewhere (&w.m), EBUSY);
  ck_assert_int_eq (pthread_mutex_unlock (&w.m), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&w.m), EPERM);
  ck_assert_int_eq (trylock_elsewhere (&w.m), 0);
  ck_assert_int_eq (pthread_cond_destroy (&w.c), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&w.m), 0);
}
END_TEST

/* ---- broadcast ------------------------------------------------------ */

#define CROWD 8

struct crowd
{
  pthread_mutex_t m;
  pthread_cond_t *c;
  int waiting;          /* waiters that reached their wait, under m */
  int go;               /* the predicate */
  int returned;         /* waiters past their wait */
  int errors;           /* waits that failed, or returned without m */
  enum wait_kind kinds[CROWD];
  long short_ms;        /* > 0: timed waiters use deadlines this short */
};

struct crowd_member
{
  struct crowd *crowd;
  int index;
};

static bool
crowd_all_waiting (void *arg)
{
  struct crowd *cr = arg;
  return cr->waiting == CROWD;
}

static void *
crowd_wait (void *arg)
{
  struct crowd_member *me = arg;
  struct crowd *cr = me->crowd;
  enum wait_kind kind = cr->kinds[me->index];
  clockid_t clock = wait_clock (kind, CLOCK_REALTIME);
  pthread_mutex_lock (&cr->m);
  cr->waiting++;
  while (!cr->go)
    {
      struct timespec deadline
        = cr->short_ms > 0 ? deadline_after_ms (clock, cr->short_ms)
                           : watchdog_deadline (clock);
      int err = wait_once (cr->c, &cr->m, kind, &deadline);
      if (err != 0 && !(err == ETIMEDOUT && cr->short_ms > 0))
        {
          __atomic_fetch_add (&cr->errors, 1, __ATOMIC_RELAXED);
          break;
        }
    }
  cr->returned++;
  if (pthread_mutex_unlock (&cr->m) != 0)
    __atomic_fetch_add (&cr->errors, 1, __ATOMIC_RELAXED);
  return NULL;
}

static void
start_crowd (struct crowd *cr, struct crowd_member *members, pthread_t *t)
{
  for (int i = 0; i < CROWD; i++)
    {
      members[i] = (struct crowd_member) { cr, i };
      t[i] = start_thread (crowd_wait, &members[i]);
    }
}

/* Broadcast wakes every waiter, whatever its kind of wait.  */
START_TEST (broadcast_wakes_all)
{
  struct crowd cr;
  pthread_cond_t c;
  memset (&cr, 0, sizeof cr);
  init_mutex (&cr.m, PTHREAD_MUTEX_ERRORCHECK);
  init_cond (&c, CLOCK_REALTIME);
  cr.c = &c;
  for (int i = 0; i < CROWD; i++)
    cr.kinds[i] = (enum wait_kind) (i % N_WAIT_KINDS);
  struct crowd_member members[CROWD];
  pthread_t t[CROWD];
  start_crowd (&cr, members, t);
  ck_assert (lock_until (&cr.m, crowd_all_waiting, &cr));
  cr.go = 1;
  ck_assert_int_eq (pthread_cond_broadcast (&c), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&cr.m), 0);
  for (int i = 0; i < CROWD; i++)
    join_or_fail (t[i]);
  ck_assert_int_eq (cr.errors, 0);
  ck_assert_int_eq (cr.returned, CROWD);
  ck_assert_int_eq (pthread_cond_destroy (&c), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&cr.m), 0);
}
END_TEST

#define DESTROY_ROUNDS 200

/* POSIX lets a condition variable be destroyed once no thread is blocked
   on it, which is so right after a broadcast that woke them all, even
   before they run.  Each round the broadcaster sets the predicate,
   broadcasts, destroys at once, scribbles over the memory and reuses it
   as a fresh condition variable; every waiter must still return.
   Looped: waiters with plain and long timed waits, then waiters whose
   very short timed waits keep expiring and racing with the broadcast.  */
START_TEST (destroy_after_broadcast)
{
  for (int round = 0; round < DESTROY_ROUNDS; round++)
    {
      struct crowd cr;
      memset (&cr, 0, sizeof cr);
      init_mutex (&cr.m, PTHREAD_MUTEX_NORMAL);
      cr.c = malloc (sizeof *cr.c);
      ck_assert (cr.c != NULL);
      init_cond (cr.c, round % 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME);
      cr.short_ms = _i == 1 ? 1 : 0;
      for (int i = 0; i < CROWD; i++)
        cr.kinds[i] = (enum wait_kind) ((i + round) % N_WAIT_KINDS);
      if (cr.short_ms > 0)
        for (int i = 0; i < CROWD; i++)
          if (cr.kinds[i] == WAIT_PLAIN)
            cr.kinds[i] = WAIT_TIMED;
      struct crowd_member members[CROWD];
      pthread_t t[CROWD];
      start_crowd (&cr, members, t);
      ck_assert (lock_until (&cr.m, crowd_all_waiting, &cr));
      cr.go = 1;
      ck_assert_int_eq (pthread_cond_broadcast (cr.c), 0);
      ck_assert_int_eq (pthread_cond_destroy (cr.c), 0);
      memset (cr.c, 0xff, sizeof *cr.c);
      init_cond (cr.c, CLOCK_REALTIME);
      ck_assert_int_eq (pthread_mutex_unlock (&cr.m), 0);
      for (int i = 0; i < CROWD; i++)
        join_or_fail (t[i]);
      ck_assert_int_eq (cr.errors, 0);
      ck_assert_int_eq (cr.returned, CROWD);
      ck_assert_int_eq (pthread_cond_destroy (cr.c), 0);
      free (cr.c);
      ck_assert_int_eq (pthread_mutex_destroy (&cr.m), 0);
    }
}
END_TEST

/* The same, with the broadcast made after unlocking and the memory
   freed: the waiters may still be inside the wait's return path.  */
START_TEST (free_after_unlocked_broadcast)
{
  for (int round = 0; round < DESTROY_ROUNDS; round++)
    {
      struct crowd cr;
      memset (&cr, 0, sizeof cr);
      init_mutex (&cr.m, PTHREAD_MUTEX_NORMAL);
      cr.c = malloc (sizeof *cr.c);
      ck_assert (cr.c != NULL);
      init_cond (cr.c, CLOCK_REALTIME);
      for (int i = 0; i < CROWD; i++)
        cr.kinds[i] = (enum wait_kind) ((i + round) % N_WAIT_KINDS);
      struct crowd_member members[CROWD];
      pthread_t t[CROWD];
      start_crowd (&cr, members, t);
      ck_assert (lock_until (&cr.m, crowd_all_waiting, &cr));
      cr.go = 1;
      ck_assert_int_eq (pthread_mutex_unlock (&cr.m), 0);
      ck_assert_int_eq (pthread_cond_broadcast (cr.c), 0);
      ck_assert_int_eq (pthread_cond_destroy (cr.c), 0);
      memset (cr.c, 0xff, sizeof *cr.c);
      free (cr.c);
      for (int i = 0; i < CROWD; i++)
        join_or_fail (t[i]);
      ck_assert_int_eq (cr.errors, 0);
      ck_assert_int_eq (cr.returned, CROWD);
      ck_assert_int_eq (pthread_mutex_destroy (&cr.m), 0);
    }
}
END_TEST

/* destroy refuses while a thread is blocked in a wait.  */
START_TEST (destroy_with_waiter_is_busy)
{
  for (int kind = 0; kind < N_WAIT_KINDS; kind++)
    {
      struct one_waiter w;
      memset (&w, 0, sizeof w);
      w.kind = (enum wait_kind) kind;
      w.cond_clock = CLOCK_REALTIME;
      init_mutex (&w.m, PTHREAD_MUTEX_NORMAL);
      init_cond (&w.c, CLOCK_REALTIME);
      pthread_t t = start_thread (one_wait, &w);
      ck_assert (lock_until (&w.m, one_waiting, &w));
      ck_assert_int_eq (pthread_mutex_unlock (&w.m), 0);
      ck_assert_int_eq (pthread_cond_destroy (&w.c), EBUSY);
      /* Still a working condition variable.  */
      ck_assert_int_eq (pthread_mutex_lock (&w.m), 0);
      w.go = 1;
      ck_assert_int_eq (pthread_cond_signal (&w.c), 0);
      ck_assert_int_eq (pthread_mutex_unlock (&w.m), 0);
      join_or_fail (t);
      ck_assert_int_eq (w.result, 0);
      ck_assert_int_eq (w.unlock, 0);
      ck_assert_int_eq (pthread_cond_destroy (&w.c), 0);
      ck_assert_int_eq (pthread_mutex_destroy (&w.m), 0);
    }
}
END_TEST

/* ---- no lost wake-ups ----------------------------------------------- */

#define QUEUE_ITEMS 100000
#define QUEUE_SIZE 16
#define PRODUCERS 4
#define CONSUMERS 4

/* A bounded queue with a condition for each direction, signalled (not
   broadcast) once per item: a lost wake-up leaves a thread asleep for
   good, and the watchdog turns that into a failure.  */
struct queue
{
  pthread_mutex_t m;
  pthread_cond_t not_empty, not_full;
  int items[QUEUE_SIZE];
  int head, count;
  int produced, consumed;
  long long sum;
  unsigned char *seen;   /* per item value: times consumed */
  int errors;
};

static void *
producer (void *arg)
{
  struct queue *q = arg;
  for (;;)
    {
      pthread_mutex_lock (&q->m);
      while (q->count == QUEUE_SIZE && q->produced < QUEUE_ITEMS)
        if (pthread_cond_wait (&q->not_full, &q->m) != 0)
          q->errors++;
      if (q->produced == QUEUE_ITEMS)
        {
          pthread_mutex_unlock (&q->m);
          return NULL;
        }
      int value = ++q->produced;
      q->items[(q->head + q->count) % QUEUE_SIZE] = value;
      q->count++;
      pthread_cond_signal (&q->not_empty);
      pthread_mutex_unlock (&q->m);
    }
}

static void *
consumer (void *arg)
{
  struct queue *q = arg;
  for (;;)
    {
      pthread_mutex_lock (&q->m);
      while (q->count == 0 && q->consumed < QUEUE_ITEMS)
        if (pthread_cond_wait (&q->not_empty, &q->m) != 0)
          q->errors++;
      if (q->consumed == QUEUE_ITEMS)
        {
          /* Let the other consumers see the end too.  */
          pthread_cond_broadcast (&q->not_empty);
          pthread_mutex_unlock (&q->m);
          return NULL;
        }
      int value = q->items[q->head];
      q->head = (q->head + 1) % QUEUE_SIZE;
      q->count--;
      q->consumed++;
      q->sum += value;
      q->seen[value - 1]++;
      pthread_cond_signal (&q->not_full);
      pthread_mutex_unlock (&q->m);
    }
}

START_TEST (producers_consumers)
{
  struct queue q;
  memset (&q, 0, sizeof q);
  init_mutex (&q.m, PTHREAD_MUTEX_NORMAL);
  init_cond (&q.not_empty, CLOCK_REALTIME);
  init_cond (&q.not_full, CLOCK_MONOTONIC);
  q.seen = calloc (QUEUE_ITEMS, 1);
  ck_assert (q.seen != NULL);
  pthread_t t[PRODUCERS + CONSUMERS];
  for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
    t[i] = start_thread (i < PRODUCERS ? producer : consumer, &q);
  for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
    join_or_fail (t[i]);
  ck_assert_int_eq (q.errors, 0);
  ck_assert_int_eq (q.produced, QUEUE_ITEMS);
  ck_assert_int_eq (q.consumed, QUEUE_ITEMS);
  ck_assert_int_eq (q.count, 0);
  ck_assert (q.sum == (long long) QUEUE_ITEMS * (QUEUE_ITEMS + 1) / 2);
  for (int i = 0; i < QUEUE_ITEMS; i++)
    ck_assert_msg (q.seen[i] == 1, "item %d consumed %d times", i + 1,
                   q.seen[i]);
  free (q.seen);
  ck_assert_int_eq (pthread_cond_destroy (&q.not_empty), 0);
  ck_assert_int_eq (pthread_cond_destroy (&q.not_full), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&q.m), 0);
}
END_TEST

/* Tickets: each signal is paired with one new ticket, and a woken waiter
   takes one.  Untimed waiters check for a ticket before they sleep; timed
   waiters with very short deadlines take a ticket only when a wait
   returns 0 (woken), and never look after a timeout.  So a ticket can
   only be left over if a signal went to a waiter that then reported a
   timeout instead (or to nobody while untimed waiters slept): the lost
   wake-up this checks for.  The main thread waits, with a watchdog, for
   every ticket to be taken.  */
#define TICKETS 20000
#define SIGNALLERS 2
#define UNTIMED_WAITERS 3
#define TIMED_WAITERS 4

struct tickets
{
  pthread_mutex_t m;
  pthread_cond_t c;
  int tickets;           /* issued and not yet taken */
  int issued;
  int taken;
  int stop;
  int errors;
  int timeouts;          /* expired timed waits, for the record */
};

static void *
issue_tickets (void *arg)
{
  struct tickets *tk = arg;
  for (int i = 0; i < TICKETS / SIGNALLERS; i++)
    {
      pthread_mutex_lock (&tk->m);
      tk->tickets++;
      tk->issued++;
      if (pthread_cond_signal (&tk->c) != 0)
        tk->errors++;
      pthread_mutex_unlock (&tk->m);
      if (i % 64 == 0)
        sched_yield ();
    }
  return NULL;
}

static void *
take_tickets (void *arg)
{
  struct tickets *tk = arg;
  pthread_mutex_lock (&tk->m);
  while (!tk->stop)
    {
      if (tk->tickets > 0)
        {
          tk->tickets--;
          tk->taken++;
          continue;
        }
      if (pthread_cond_wait (&tk->c, &tk->m) != 0)
        tk->errors++;
    }
  pthread_mutex_unlock (&tk->m);
  return NULL;
}

static void *
take_tickets_timed (void *arg)
{
  struct tickets *tk = arg;
  pthread_mutex_lock (&tk->m);
  for (unsigned n = 0; !tk->stop; n++)
    {
      /* Alternate the clocks and the calls that take them.  */
      clockid_t clock = n % 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
      struct timespec deadline = deadline_after_ms (clock, 1);
      int err = n % 3 == 0
                ? pthread_cond_timedwait (&tk->c, &tk->m, &deadline)
                : pthread_cond_clockwait (&tk->c, &tk->m, clock, &deadline);
      if (err == ETIMEDOUT)
        tk->timeouts++;
      else if (err != 0)
        tk->errors++;
      else if (tk->tickets > 0)
        {
          tk->tickets--;
          tk->taken++;
        }
    }
  pthread_mutex_unlock (&tk->m);
  return NULL;
}

static bool
tickets_drained (void *arg)
{
  struct tickets *tk = arg;
  return tk->issued == TICKETS && tk->tickets == 0;
}

/* Looped: untimed waiters only; untimed and timed waiters together.  */
START_TEST (signal_tickets)
{
  int timed = _i == 1 ? TIMED_WAITERS : 0;
  struct tickets tk;
  memset (&tk, 0, sizeof tk);
  init_mutex (&tk.m, PTHREAD_MUTEX_NORMAL);
  init_cond (&tk.c, CLOCK_REALTIME);
  pthread_t waiters[UNTIMED_WAITERS + TIMED_WAITERS];
  pthread_t signallers[SIGNALLERS];
  int n = 0;
  for (int i = 0; i < UNTIMED_WAITERS; i++)
    waiters[n++] = start_thread (take_tickets, &tk);
  for (int i = 0; i < timed; i++)
    waiters[n++] = start_thread (take_tickets_timed, &tk);
  for (int i = 0; i < SIGNALLERS; i++)
    signallers[i] = start_thread (issue_tickets, &tk);
  for (int i = 0; i < SIGNALLERS; i++)
    join_or_fail (signallers[i]);
  bool drained = lock_until (&tk.m, tickets_drained, &tk);
  int left = tk.tickets;
  tk.stop = 1;
  pthread_cond_broadcast (&tk.c);
  pthread_mutex_unlock (&tk.m);
  for (int i = 0; i < n; i++)
    join_or_fail (waiters[i]);
  ck_assert_msg (drained, "%d of %d tickets never taken: wake-ups lost",
                 left, TICKETS);
  ck_assert_int_eq (tk.errors, 0);
  ck_assert_int_eq (tk.issued, TICKETS);
  ck_assert_int_eq (tk.taken, TICKETS);
  ck_assert_int_eq (pthread_cond_destroy (&tk.c), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&tk.m), 0);
}
END_TEST

/* ---- process-shared ------------------------------------------------- */

#define PSHARED_ROUNDS 2000

struct shared_turns
{
  pthread_mutex_t m;
  pthread_cond_t c;
  int turn;
  int moves[2];
};

/* Take the move whenever it is SIDE's turn, ROUNDS times.  */
static int
play (struct shared_turns *s, int side, int rounds)
{
  for (int r = 0; r < rounds; r++)
    {
      int err = pthread_mutex_lock (&s->m);
      if (err != 0)
        return err;
      struct timespec deadline = watchdog_deadline (CLOCK_MONOTONIC);
      while (s->turn != side && err == 0)
        err = pthread_cond_timedwait (&s->c, &s->m, &deadline);
      if (err == 0)
        {
          s->moves[side]++;
          s->turn = 1 - side;
          err = pthread_cond_signal (&s->c);
        }
      int unlock = pthread_mutex_unlock (&s->m);
      if (err != 0 || unlock != 0)
        return err != 0 ? err : unlock;
    }
  return 0;
}

/* A parent and a forked child pass the move back and forth through a
   process-shared condition variable (on CLOCK_MONOTONIC).  */
START_TEST (pshared_between_processes)
{
  struct shared_turns *s = mmap (NULL, sizeof *s, PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert (s != MAP_FAILED);
  pthread_mutexattr_t mattr;
  pthread_condattr_t cattr;
  ck_assert_int_eq (pthread_mutexattr_init (&mattr), 0);
  ck_assert_int_eq (pthread_mutexattr_setpshared (&mattr,
                                                  PTHREAD_PROCESS_SHARED), 0);
  ck_assert_int_eq (pthread_mutex_init (&s->m, &mattr), 0);
  ck_assert_int_eq (pthread_condattr_init (&cattr), 0);
  ck_assert_int_eq (pthread_condattr_setpshared (&cattr,
                                                 PTHREAD_PROCESS_SHARED), 0);
  ck_assert_int_eq (pthread_condattr_setclock (&cattr, CLOCK_MONOTONIC), 0);
  ck_assert_int_eq (pthread_cond_init (&s->c, &cattr), 0);
  fflush (NULL);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (play (s, 1, PSHARED_ROUNDS) == 0 ? 0 : 1);
  int err = play (s, 0, PSHARED_ROUNDS);
  int status;
  while (waitpid (pid, &status, 0) < 0)
    ck_assert_int_eq (errno, EINTR);
  ck_assert_msg (err == 0, "parent: %s", strerror (err));
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "child status %#x", status);
  ck_assert_int_eq (s->moves[0], PSHARED_ROUNDS);
  ck_assert_int_eq (s->moves[1], PSHARED_ROUNDS);
  ck_assert_int_eq (pthread_cond_destroy (&s->c), 0);
  ck_assert_int_eq (pthread_mutex_destroy (&s->m), 0);
  munmap (s, sizeof *s);
}
END_TEST

/* ---- the suite ------------------------------------------------------ */

static void
add_loop_case (Suite *s, const char *name, const TTest *test, int n,
               int timeout)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, timeout);
  tcase_add_loop_test (tc, test, 0, n);
  suite_add_tcase (s, tc);
}

static void
add_case (Suite *s, const char *name, const TTest *test, int timeout)
{
  add_loop_case (s, name, test, 1, timeout);
}

/* A case run twice: with private and with process-shared condition
   variables.  */
static void
add_both (Suite *s, const char *name, const TTest *test, int n, int timeout)
{
  add_loop_case (s, name, test, n, timeout);
  char shared_name[64];
  snprintf (shared_name, sizeof shared_name, "pshared-%s", name);
  TCase *tc = tcase_create (strdup (shared_name));
  tcase_set_timeout (tc, timeout);
  tcase_add_checked_fixture (tc, pshared_fixture, NULL);
  tcase_add_loop_test (tc, test, 0, n);
  suite_add_tcase (s, tc);
}

int
main (void)
{
  Suite *s = suite_create ("cond");
  add_case (s, "attr-defaults", condattr_defaults, 10);
  add_case (s, "attr-clock", condattr_clock, 10);
  add_case (s, "attr-pshared", condattr_pshared, 10);
  add_both (s, "wake-one", wake_one_waiter, 4 * N_WAIT_KINDS, 20);
  add_case (s, "initialiser", static_initialiser, 20);
  add_both (s, "timeout", timed_wait_times_out_holding_mutex, 6, 10);
  add_both (s, "bad-clock", clockwait_bad_clock, 1, 10);
  add_both (s, "errorcheck-eperm", wait_with_unowned_errorcheck_mutex, 1, 20);
  add_both (s, "recursive", wait_with_recursive_mutex, 1, 20);
  add_both (s, "broadcast", broadcast_wakes_all, 1, 20);
  add_both (s, "destroy-after-broadcast", destroy_after_broadcast, 2, 30);
  add_both (s, "free-after-broadcast", free_after_unlocked_broadcast, 1, 30);
  add_both (s, "destroy-busy", destroy_with_waiter_is_busy, 1, 20);
  add_both (s, "producers-consumers", producers_consumers, 1, 30);
  add_both (s, "tickets", signal_tickets, 2, 30);
  add_case (s, "pshared-fork", pshared_between_processes, 30);
  return xp_test_run (s);
}
