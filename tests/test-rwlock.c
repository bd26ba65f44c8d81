/* Read-write locks: glibc's initialisers and attribute layout, every
   error code, the writer preference, readers counted per CPU, process-
   shared locks across fork, and stress with torn-read and lost-update
   invariants.  */
#define _GNU_SOURCE
#include "sync-helpers.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define TIMEOUT 60

/* --- initialisers and attributes ---------------------------------------- */

START_TEST (test_initialisers)
{
  ck_assert_uint_eq (sizeof (pthread_rwlock_t), 56);
  pthread_rwlock_t a = PTHREAD_RWLOCK_INITIALIZER;
  pthread_rwlock_t w = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
  ck_assert_uint_eq (w.__data.__flags,
                     PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  pthread_rwlock_t *zero = calloc (1, sizeof *zero);
  pthread_rwlock_t *locks[] = { &a, &w, zero };
  for (int i = 0; i < 3; i++)
    {
      pthread_rwlock_t *l = locks[i];
      ck_assert_int_eq (pthread_rwlock_rdlock (l), 0);
      ck_assert_int_eq (pthread_rwlock_tryrdlock (l), 0);
      ck_assert_int_eq (pthread_rwlock_trywrlock (l), EBUSY);
      ck_assert_int_eq (pthread_rwlock_unlock (l), 0);
      ck_assert_int_eq (pthread_rwlock_unlock (l), 0);
      ck_assert_int_eq (pthread_rwlock_wrlock (l), 0);
      ck_assert_int_eq (pthread_rwlock_tryrdlock (l), EBUSY);
      ck_assert_int_eq (pthread_rwlock_unlock (l), 0);
      ck_assert_int_eq (pthread_rwlock_destroy (l), 0);
    }
  free (zero);
}
END_TEST

START_TEST (test_attributes)
{
  pthread_rwlockattr_t attr;
  int value;
  ck_assert_int_eq (pthread_rwlockattr_init (&attr), 0);
  ck_assert_int_eq (pthread_rwlockattr_getkind_np (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_RWLOCK_PREFER_READER_NP);
  ck_assert_int_eq (pthread_rwlockattr_getpshared (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_PROCESS_PRIVATE);
  ck_assert_int_eq (pthread_rwlockattr_setkind_np (&attr, -1), EINVAL);
  ck_assert_int_eq (pthread_rwlockattr_setkind_np (&attr, 3), EINVAL);
  ck_assert_int_eq (pthread_rwlockattr_setpshared (&attr, 2), EINVAL);
  int kinds[] = { PTHREAD_RWLOCK_PREFER_READER_NP,
                  PTHREAD_RWLOCK_PREFER_WRITER_NP,
                  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP };
  for (int i = 0; i < 3; i++)
    {
      ck_assert_int_eq (pthread_rwlockattr_setkind_np (&attr, kinds[i]), 0);
      ck_assert_int_eq (pthread_rwlockattr_getkind_np (&attr, &value), 0);
      ck_assert_int_eq (value, kinds[i]);
    }
  ck_assert_int_eq (pthread_rwlockattr_setpshared (&attr,
                                                   PTHREAD_PROCESS_SHARED), 0);
  ck_assert_int_eq (pthread_rwlockattr_getpshared (&attr, &value), 0);
  ck_assert_int_eq (value, PTHREAD_PROCESS_SHARED);

  /* The kind and the pshared indicator go where glibc puts them.  */
  pthread_rwlock_t l;
  memset (&l, 0xff, sizeof l);
  ck_assert_int_eq (pthread_rwlock_init (&l, &attr), 0);
  ck_assert_uint_eq (l.__data.__flags,
                     PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  ck_assert_int_ne (l.__data.__shared, 0);
  ck_assert_int_eq (pthread_rwlock_destroy (&l), 0);
  ck_assert_int_eq (pthread_rwlock_init (&l, NULL), 0);
  ck_assert_uint_eq (l.__data.__flags, PTHREAD_RWLOCK_DEFAULT_NP);
  ck_assert_int_eq (l.__data.__shared, 0);
  ck_assert_int_eq (pthread_rwlockattr_destroy (&attr), 0);
}
END_TEST

/* Binaries built before glibc 2.34 bind to the old versions and the
   LinuxThreads-era names; they must reach xpthread too.  */
START_TEST (test_old_versions)
{
  static const char *const names[] = {
    "pthread_rwlock_rdlock", "pthread_rwlock_clockwrlock",
    "__pthread_rwlock_wrlock", "__pthread_rwlock_unlock",
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    xp_test_oldest_symbol (names[i]);
}
END_TEST

/* --- errors ------------------------------------------------------------- */

START_TEST (test_errors_own_write_lock)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  struct timespec past = { -1, 0 }, bad = { 0, 1000000000 };
  struct timespec soon = in_ms (CLOCK_REALTIME, 10);
  ck_assert_int_eq (pthread_rwlock_wrlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_rdlock (&l), EDEADLK);
  ck_assert_int_eq (pthread_rwlock_wrlock (&l), EDEADLK);
  ck_assert_int_eq (pthread_rwlock_timedrdlock (&l, &soon), EDEADLK);
  ck_assert_int_eq (pthread_rwlock_timedwrlock (&l, &past), EDEADLK);
  ck_assert_int_eq (pthread_rwlock_clockrdlock (&l, CLOCK_MONOTONIC, &past),
                    EDEADLK);
  ck_assert_int_eq (pthread_rwlock_clockwrlock (&l, CLOCK_MONOTONIC, &past),
                    EDEADLK);
  ck_assert_int_eq (pthread_rwlock_tryrdlock (&l), EBUSY);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&l), EBUSY);
  /* An invalid time is reported before anything else.  */
  ck_assert_int_eq (pthread_rwlock_timedwrlock (&l, &bad), EINVAL);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_destroy (&l), 0);
}
END_TEST

START_TEST (test_errors_free_lock)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  struct timespec past = { -1, 0 }, bad = { 0, -1 }, zero = { 0, 0 };
  ck_assert_int_eq (pthread_rwlock_unlock (&l), EPERM);
  ck_assert_int_eq (pthread_rwlock_timedrdlock (&l, &bad), EINVAL);
  ck_assert_int_eq (pthread_rwlock_clockwrlock (&l, CLOCK_PROCESS_CPUTIME_ID,
                                                &zero), EINVAL);
  ck_assert_int_eq (pthread_rwlock_clockrdlock (&l, CLOCK_THREAD_CPUTIME_ID,
                                                &zero), EINVAL);
  /* A lock that is free is taken whatever the deadline.  */
  ck_assert_int_eq (pthread_rwlock_timedrdlock (&l, &past), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_clockwrlock (&l, CLOCK_MONOTONIC, &past),
                    0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
}
END_TEST

/* Unlocking a lock one does not hold is EPERM, also while holding others
   (which is when unlock assumes a reader's unlock first), and leaves both
   locks working.  */
START_TEST (test_errors_not_held_while_holding_others)
{
  pthread_rwlock_t held = PTHREAD_RWLOCK_INITIALIZER;
  pthread_rwlock_t free_lock = PTHREAD_RWLOCK_INITIALIZER;
  ck_assert_int_eq (pthread_rwlock_rdlock (&held), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&free_lock), EPERM);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&free_lock), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&free_lock), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&free_lock), EPERM);
  ck_assert_int_eq (pthread_rwlock_unlock (&held), 0);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&held), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&free_lock), EPERM);
  ck_assert_int_eq (pthread_rwlock_tryrdlock (&free_lock), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&free_lock), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&held), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&held), EPERM);
  ck_assert_int_eq (pthread_rwlock_destroy (&held), 0);
  ck_assert_int_eq (pthread_rwlock_destroy (&free_lock), 0);
}
END_TEST

struct timed_try
{
  pthread_rwlock_t *lock;
  int rd, wr, rd_mono, wr_mono, past;
};

static void *
try_timed (void *arg)
{
  struct timed_try *t = arg;
  struct timespec rt = in_ms (CLOCK_REALTIME, 20);
  struct timespec mono = in_ms (CLOCK_MONOTONIC, 20);
  struct timespec past = { -1, 0 };
  t->rd = pthread_rwlock_timedrdlock (t->lock, &rt);
  t->wr = pthread_rwlock_timedwrlock (t->lock, &rt);
  t->rd_mono = pthread_rwlock_clockrdlock (t->lock, CLOCK_MONOTONIC, &mono);
  t->wr_mono = pthread_rwlock_clockwrlock (t->lock, CLOCK_MONOTONIC, &mono);
  t->past = pthread_rwlock_timedwrlock (t->lock, &past);
  return NULL;
}

START_TEST (test_timeouts)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  struct timed_try t = { .lock = &l };
  pthread_t th;
  ck_assert_int_eq (pthread_rwlock_wrlock (&l), 0);
  ck_assert_int_eq (pthread_create (&th, NULL, try_timed, &t), 0);
  ck_assert_int_eq (pthread_join (th, NULL), 0);
  ck_assert_int_eq (t.rd, ETIMEDOUT);
  ck_assert_int_eq (t.wr, ETIMEDOUT);
  ck_assert_int_eq (t.rd_mono, ETIMEDOUT);
  ck_assert_int_eq (t.wr_mono, ETIMEDOUT);
  ck_assert_int_eq (t.past, ETIMEDOUT);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);

  /* Held for reading: readers enter, writers time out.  */
  ck_assert_int_eq (pthread_rwlock_rdlock (&l), 0);
  ck_assert_int_eq (pthread_create (&th, NULL, try_timed, &t), 0);
  ck_assert_int_eq (pthread_join (th, NULL), 0);
  ck_assert_int_eq (t.rd, 0);
  ck_assert_int_eq (t.wr, ETIMEDOUT);
  ck_assert_int_eq (t.rd_mono, 0);
  ck_assert_int_eq (t.wr_mono, ETIMEDOUT);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_destroy (&l), 0);
}
END_TEST

/* --- preference ---------------------------------------------------------- */

struct blocked
{
  pthread_rwlock_t *lock;
  _Atomic int tid;
  _Atomic int done;
  int result;
};

static void *
blocked_writer (void *arg)
{
  struct blocked *b = arg;
  atomic_store (&b->tid, current_tid ());
  b->result = pthread_rwlock_wrlock (b->lock);
  atomic_store (&b->done, 1);
  if (b->result == 0)
    pthread_rwlock_unlock (b->lock);
  return NULL;
}

static void *
blocked_reader (void *arg)
{
  struct blocked *b = arg;
  atomic_store (&b->tid, current_tid ());
  b->result = pthread_rwlock_rdlock (b->lock);
  atomic_store (&b->done, 1);
  if (b->result == 0)
    pthread_rwlock_unlock (b->lock);
  return NULL;
}

static void
start_blocked (pthread_t *th, struct blocked *b, void *(*fn) (void *))
{
  ck_assert_int_eq (pthread_create (th, NULL, fn, b), 0);
  while (atomic_load (&b->tid) == 0)
    usleep (100);
  wait_until_sleeping (atomic_load (&b->tid));
  ck_assert_int_eq (atomic_load (&b->done), 0);
}

static void *
read_and_keep (void *arg)
{
  ck_assert_int_eq (pthread_rwlock_rdlock (arg), 0);
  return NULL;
}

/* glibc destroys a held lock, and programs go on: one destroys a lock
   that a thread which has since exited still holds.  The lock can be
   initialised again and used.  */
START_TEST (test_destroy_held)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, read_and_keep, &l), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&l), EBUSY);
  ck_assert_int_eq (pthread_rwlock_destroy (&l), 0);
  ck_assert_int_eq (pthread_rwlock_init (&l, NULL), 0);
  ck_assert_int_eq (pthread_rwlock_wrlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_destroy (&l), 0);
  ck_assert_int_eq (pthread_rwlock_init (&l, NULL), 0);
  ck_assert_int_eq (pthread_rwlock_rdlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_wrlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_destroy (&l), 0);
}
END_TEST

/* Sleepers would never wake: that lock stays busy.  */
START_TEST (test_destroy_with_sleepers)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  struct blocked r = { .lock = &l };
  pthread_t rt;
  ck_assert_int_eq (pthread_rwlock_wrlock (&l), 0);
  start_blocked (&rt, &r, blocked_reader);
  ck_assert_int_eq (pthread_rwlock_destroy (&l), EBUSY);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_join (rt, NULL), 0);
  ck_assert_int_eq (r.result, 0);
  ck_assert_int_eq (pthread_rwlock_destroy (&l), 0);
}
END_TEST

/* With a reader inside and a writer waiting: can a new reader enter?  */
static void
check_preference (pthread_rwlock_t *l, bool writer_first)
{
  struct blocked w = { .lock = l }, r = { .lock = l };
  pthread_t wt, rt;
  ck_assert_int_eq (pthread_rwlock_rdlock (l), 0);
  start_blocked (&wt, &w, blocked_writer);
  if (writer_first)
    {
      ck_assert_int_eq (pthread_rwlock_tryrdlock (l), EBUSY);
      start_blocked (&rt, &r, blocked_reader);
    }
  else
    {
      ck_assert_int_eq (pthread_rwlock_tryrdlock (l), 0);
      ck_assert_int_eq (pthread_rwlock_unlock (l), 0);
    }
  ck_assert_int_eq (pthread_rwlock_unlock (l), 0);
  ck_assert_int_eq (pthread_join (wt, NULL), 0);
  ck_assert_int_eq (w.result, 0);
  if (writer_first)
    {
      ck_assert_int_eq (pthread_join (rt, NULL), 0);
      ck_assert_int_eq (r.result, 0);
    }
  ck_assert_int_eq (pthread_rwlock_destroy (l), 0);
}

START_TEST (test_writer_preference)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
  check_preference (&l, true);
  pthread_rwlockattr_t attr;
  pthread_rwlockattr_init (&attr);
  pthread_rwlockattr_setkind_np (&attr,
                                 PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  pthread_rwlock_init (&l, &attr);
  check_preference (&l, true);
}
END_TEST

START_TEST (test_reader_preference)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  check_preference (&l, false);
  pthread_rwlockattr_t attr;
  pthread_rwlockattr_init (&attr);
  pthread_rwlockattr_setkind_np (&attr, PTHREAD_RWLOCK_PREFER_WRITER_NP);
  pthread_rwlock_init (&l, &attr);
  check_preference (&l, false);
}
END_TEST

/* A writer waits for every reader, a reader for the writer.  */
START_TEST (test_blocking)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  struct blocked w = { .lock = &l }, r = { .lock = &l };
  pthread_t wt, rt;
  ck_assert_int_eq (pthread_rwlock_rdlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_rdlock (&l), 0);
  start_blocked (&wt, &w, blocked_writer);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (atomic_load (&w.done), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_join (wt, NULL), 0);
  ck_assert_int_eq (w.result, 0);

  ck_assert_int_eq (pthread_rwlock_wrlock (&l), 0);
  start_blocked (&rt, &r, blocked_reader);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_join (rt, NULL), 0);
  ck_assert_int_eq (r.result, 0);
}
END_TEST

/* --- readers counted per CPU -------------------------------------------- */

extern const unsigned int __rseq_size __attribute__ ((weak));

/* The identity a lock has in the per-CPU reader slots (0: none), and
   whether its readers count themselves there now (rwlock.c).  */
static unsigned
slot_identity (const pthread_rwlock_t *l)
{
  return l->__data.__writers_futex;
}

static bool
slots_on (const pthread_rwlock_t *l)
{
  return (l->__data.__pad4 & 0x80000000u) != 0;
}

#define MEETINGS 100000

/* Read-lock and unlock until the lock's readers use the slots, at most
   MEETINGS times, while the caller holds it for reading.  */
static void *
meet_reader (void *arg)
{
  pthread_rwlock_t *l = arg;
  for (int i = 0; i < MEETINGS && !slots_on (l); i++)
    {
      ck_assert_int_eq (pthread_rwlock_rdlock (l), 0);
      ck_assert_int_eq (pthread_rwlock_unlock (l), 0);
    }
  return NULL;
}

static void
readers_meet (pthread_rwlock_t *l)
{
  pthread_t t;
  ck_assert_int_eq (pthread_rwlock_rdlock (l), 0);
  ck_assert_int_eq (pthread_create (&t, NULL, meet_reader, l), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (l), 0);
}

/* Readers meeting inside a reader-preferring lock move its readers to
   the per-CPU slots.  False (and nothing to test) when glibc keeps no
   rseq area, which is how xpthread tells CPUs apart.  */
static bool
give_slots (pthread_rwlock_t *l)
{
  readers_meet (l);
  if (&__rseq_size == NULL || __rseq_size == 0)
    return false;
  ck_assert_uint_ne (slot_identity (l), 0);
  ck_assert (slots_on (l));
  return true;
}

/* glibc lets another thread release a read lock; so do the slots.  */
START_TEST (test_slots_unlock_by_other_thread)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  if (!give_slots (&l))
    return;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, read_and_keep, &l), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&l), EBUSY);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), EPERM);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_destroy (&l), 0);
}
END_TEST

/* The last reader to leave its slot wakes the writer that sleeps; a
   reader inside may take the lock again while that writer waits.  */
START_TEST (test_slots_writer_waits_for_readers)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  if (!give_slots (&l))
    return;
  struct blocked w = { .lock = &l };
  pthread_t wt;
  ck_assert_int_eq (pthread_rwlock_rdlock (&l), 0);
  start_blocked (&wt, &w, blocked_writer);
  ck_assert_int_eq (pthread_rwlock_rdlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_tryrdlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (atomic_load (&w.done), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_join (wt, NULL), 0);
  ck_assert_int_eq (w.result, 0);
  ck_assert_int_eq (pthread_rwlock_destroy (&l), 0);
}
END_TEST

static bool
run_on_cpu (int cpu)
{
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  return sched_setaffinity (0, sizeof set, &set) == 0;
}

/* A reader that moved to another CPU still leaves through the slot it
   entered by, and until it does, writers see it.  */
START_TEST (test_slots_reader_moves)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  cpu_set_t allowed;
  ck_assert_int_eq (sched_getaffinity (0, sizeof allowed, &allowed), 0);
  if (!CPU_ISSET (0, &allowed) || !CPU_ISSET (1, &allowed)
      || !give_slots (&l))
    return;
  ck_assert (run_on_cpu (0));
  ck_assert_int_eq (pthread_rwlock_rdlock (&l), 0);
  ck_assert (run_on_cpu (1));
  ck_assert_int_eq (sched_getcpu (), 1);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&l), EBUSY);
  ck_assert_int_eq (pthread_rwlock_rdlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&l), EBUSY);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), EPERM);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_destroy (&l), 0);
}
END_TEST

/* Locks whose identities share a column of slots keep their readers
   apart: the second counts its readers in the lock word.  */
START_TEST (test_slots_shared_column)
{
  enum { COLUMNS = 64 };
  static pthread_rwlock_t locks[COLUMNS + 1];
  for (int i = 0; i <= COLUMNS; i++)
    {
      ck_assert_int_eq (pthread_rwlock_init (&locks[i], NULL), 0);
      if (!give_slots (&locks[i]))
        return;
    }
  pthread_rwlock_t *first = &locks[0], *same_column = &locks[COLUMNS];
  ck_assert_uint_eq (slot_identity (same_column) - slot_identity (first),
                     COLUMNS);
  ck_assert_int_eq (pthread_rwlock_rdlock (first), 0);
  ck_assert_int_eq (pthread_rwlock_rdlock (same_column), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (same_column), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (same_column), EPERM);
  ck_assert_int_eq (pthread_rwlock_trywrlock (same_column), 0);
  ck_assert_int_eq (pthread_rwlock_trywrlock (first), EBUSY);
  ck_assert_int_eq (pthread_rwlock_unlock (same_column), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (first), 0);
  ck_assert_int_eq (pthread_rwlock_trywrlock (first), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (first), 0);
}
END_TEST

/* Writes with no reads between them turn the slots off; readers that
   meet again turn them on.  The lock works throughout.  */
START_TEST (test_slots_turn_off_and_on)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  if (!give_slots (&l))
    return;
  for (int i = 0; i < 100; i++)
    {
      ck_assert_int_eq (pthread_rwlock_wrlock (&l), 0);
      ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
    }
  ck_assert (!slots_on (&l));
  ck_assert_int_eq (pthread_rwlock_rdlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&l), EBUSY);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert (give_slots (&l));
  ck_assert_int_eq (pthread_rwlock_rdlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&l), EBUSY);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_destroy (&l), 0);
}
END_TEST

/* Readers counted in the lock word and readers in the slots, with a
   writer between them: counts are interchangeable, so an unlock from the
   lock word may take a slot's count, and a reader that entered a slot
   and stepped back for the writer must then take the other count.  Lock
   q shares its column of slots with lock p, whose reader holds the slot
   of CPU 0: q's readers on CPU 0 count in the lock word, on CPU 1 in the
   slot.  No count may be left over at the end.  */
enum { MIXED_ROUNDS = 200000, MIXED_WRITES = 2000 };

struct mixed
{
  pthread_rwlock_t *lock;
  int cpu;
  int rounds;
  bool write;
};

static void *
mixed_body (void *arg)
{
  struct mixed *m = arg;
  ck_assert (run_on_cpu (m->cpu));
  for (int i = 0; i < m->rounds; i++)
    {
      int err = m->write ? pthread_rwlock_wrlock (m->lock)
                         : pthread_rwlock_rdlock (m->lock);
      ck_assert_int_eq (err, 0);
      ck_assert_int_eq (pthread_rwlock_unlock (m->lock), 0);
    }
  return NULL;
}

START_TEST (test_slots_mixed_counts)
{
  enum { COLUMNS = 64 };
  static pthread_rwlock_t locks[COLUMNS + 1];
  cpu_set_t allowed;
  ck_assert_int_eq (sched_getaffinity (0, sizeof allowed, &allowed), 0);
  if (!CPU_ISSET (0, &allowed) || !CPU_ISSET (1, &allowed))
    return;
  for (int i = 0; i <= COLUMNS; i++)
    {
      ck_assert_int_eq (pthread_rwlock_init (&locks[i], NULL), 0);
      if (!give_slots (&locks[i]))
        return;
    }
  pthread_rwlock_t *p = &locks[0], *q = &locks[COLUMNS];
  ck_assert_uint_eq (slot_identity (q) - slot_identity (p), COLUMNS);
  ck_assert (run_on_cpu (0));
  ck_assert_int_eq (pthread_rwlock_rdlock (p), 0);
  struct mixed m[] = {
    { q, 0, MIXED_ROUNDS, false },
    { q, 1, MIXED_ROUNDS, false },
    { q, 1, MIXED_ROUNDS, false },
    { q, 0, MIXED_WRITES, true },
  };
  enum { THREADS = sizeof m / sizeof m[0] };
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    ck_assert_int_eq (pthread_create (&th[i], NULL, mixed_body, &m[i]), 0);
  for (int i = 0; i < THREADS; i++)
    ck_assert_int_eq (pthread_join (th[i], NULL), 0);
  ck_assert_int_eq (pthread_rwlock_trywrlock (q), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (q), 0);
  ck_assert_int_eq (pthread_rwlock_destroy (q), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (p), 0);
}
END_TEST

/* A thread holding some lock for writing unlocks its read lock by the
   general path (the hint does not say reader); a writer-preferring lock
   never moves to slots, its waiting writers must keep readers out.  */
START_TEST (test_slots_unlock_while_writing_another)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  pthread_rwlock_t other = PTHREAD_RWLOCK_INITIALIZER;
  pthread_rwlock_t pref = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
  if (!give_slots (&l))
    return;
  readers_meet (&pref);
  ck_assert_uint_eq (slot_identity (&pref), 0);
  ck_assert_int_eq (pthread_rwlock_rdlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_wrlock (&other), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), EPERM);
  ck_assert_int_eq (pthread_rwlock_trywrlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (&other), 0);
}
END_TEST

/* --- stress ------------------------------------------------------------ */

#define WORDS 8
#define STRESS_THREADS 4
#define STRESS_OPS 40000

struct shared_data
{
  pthread_rwlock_t lock;
  unsigned long words[WORDS];
  unsigned long writes;      /* plain: a lost update shows */
  _Atomic unsigned long expected_writes;
  _Atomic int torn;
  _Atomic int errors;
  bool timed;
  bool recursive;            /* readers sometimes read-lock again */
  int write_every;           /* on average one operation in this many */
};

static int
take (struct shared_data *d, bool write)
{
  if (!d->timed)
    return write ? pthread_rwlock_wrlock (&d->lock)
                 : pthread_rwlock_rdlock (&d->lock);
  /* Short deadlines: many waits give up, exercising the timeout paths
     and the waiting bits they leave behind.  */
  for (;;)
    {
      struct timespec soon = in_ms (CLOCK_MONOTONIC, 1);
      int err = write
                ? pthread_rwlock_clockwrlock (&d->lock, CLOCK_MONOTONIC, &soon)
                : pthread_rwlock_clockrdlock (&d->lock, CLOCK_MONOTONIC, &soon);
      if (err != ETIMEDOUT)
        return err;
    }
}

static void *
stress_body (void *arg)
{
  struct shared_data *d = arg;
  unsigned seed = (unsigned) current_tid ();
  for (int i = 0; i < STRESS_OPS; i++)
    {
      bool write = rand_r (&seed) % d->write_every == 0;
      if (take (d, write) != 0)
        {
          atomic_fetch_add (&d->errors, 1);
          continue;
        }
      if (write)
        {
          unsigned long v = d->words[0] + 1;
          for (int w = 0; w < WORDS; w++)
            d->words[w] = v;
          d->writes++;
          atomic_fetch_add (&d->expected_writes, 1);
        }
      else
        {
          bool again = d->recursive && rand_r (&seed) % 8 == 0;
          if (again && take (d, false) != 0)
            atomic_fetch_add (&d->errors, 1);
          for (int w = 1; w < WORDS; w++)
            if (d->words[w] != d->words[0])
              atomic_fetch_add (&d->torn, 1);
          if (again && pthread_rwlock_unlock (&d->lock) != 0)
            atomic_fetch_add (&d->errors, 1);
        }
      if (pthread_rwlock_unlock (&d->lock) != 0)
        atomic_fetch_add (&d->errors, 1);
    }
  return NULL;
}

static void
run_stress (struct shared_data *d)
{
  pthread_t th[STRESS_THREADS];
  for (int i = 0; i < STRESS_THREADS; i++)
    ck_assert_int_eq (pthread_create (&th[i], NULL, stress_body, d), 0);
  for (int i = 0; i < STRESS_THREADS; i++)
    ck_assert_int_eq (pthread_join (th[i], NULL), 0);
  ck_assert_int_eq (atomic_load (&d->torn), 0);
  ck_assert_int_eq (atomic_load (&d->errors), 0);
  ck_assert_uint_eq (d->writes, atomic_load (&d->expected_writes));
  ck_assert_uint_eq (d->words[0], d->writes);
  ck_assert_int_eq (pthread_rwlock_destroy (&d->lock), 0);
}

static const int stress_kinds[] = {
  PTHREAD_RWLOCK_PREFER_READER_NP,
  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP,
};

START_TEST (test_stress)
{
  static struct shared_data d;
  memset (&d, 0, sizeof d);
  pthread_rwlockattr_t attr;
  pthread_rwlockattr_init (&attr);
  pthread_rwlockattr_setkind_np (&attr, stress_kinds[_i % 2]);
  pthread_rwlock_init (&d.lock, &attr);
  d.timed = _i % 4 >= 2;
  /* Few writes keep a reader-preferring lock's readers in the per-CPU
     slots; more make the writers turn them off.  */
  d.write_every = _i >= 4 ? 200 : 16;
  /* A reader-preferring lock must let a reader in again while writers
     wait; the writer-preferring kind is for programs that never do.  */
  d.recursive = stress_kinds[_i % 2] == PTHREAD_RWLOCK_PREFER_READER_NP;
  run_stress (&d);
}
END_TEST

/* Two processes take turns under a process-shared write lock.  */
START_TEST (test_pshared)
{
  struct shared_data *d = mmap (NULL, sizeof *d, PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert (d != MAP_FAILED);
  pthread_rwlockattr_t attr;
  pthread_rwlockattr_init (&attr);
  pthread_rwlockattr_setpshared (&attr, PTHREAD_PROCESS_SHARED);
  pthread_rwlockattr_setkind_np (&attr, stress_kinds[_i]);
  ck_assert_int_eq (pthread_rwlock_init (&d->lock, &attr), 0);
  d->write_every = 16;
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  stress_body (d);
  if (pid == 0)
    _exit (0);
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  ck_assert_int_eq (atomic_load (&d->torn), 0);
  ck_assert_int_eq (atomic_load (&d->errors), 0);
  ck_assert_uint_eq (d->writes, atomic_load (&d->expected_writes));
  munmap (d, sizeof *d);
}
END_TEST

/* ---- a writer starts late ---------------------------------------- */

#define LATE_ONLY_ARG "--late-only"
#define WRITERS_WAITING_BIT 2u   /* of __readers, rwlock.c */

static void
write_and_unlock (void *l)
{
  ck_assert_int_eq (pthread_rwlock_wrlock (l), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (l), 0);
}

static void
unlock (void *l)
{
  ck_assert_int_eq (pthread_rwlock_unlock (l), 0);
}

/* The writer marks itself waiting just before it sleeps.  */
static bool
writer_shown (void *l)
{
  pthread_rwlock_t *rw = l;
  return __atomic_load_n (&rw->__data.__readers, __ATOMIC_RELAXED)
         & WRITERS_WAITING_BIT;
}

/* Under XPTHREAD_SPIN_LATE (run in a fresh copy of this program) a
   writer that finds the lock held lets that many rounds pass before it
   spins and then marks itself waiting.  */
START_TEST (test_writer_starts_late)
{
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  ck_assert_int_eq (pthread_rwlock_wrlock (&l), 0);
  xp_test_check_late_start (&l, write_and_unlock, unlock, writer_shown, NULL);
}
END_TEST

struct away_writer
{
  pthread_rwlock_t *l;
  pthread_mutex_t blocker;
  pid_t tid;
};

/* Hold the lock for writing while asleep on a mutex the test holds.  */
static void *
write_while_asleep (void *arg)
{
  struct away_writer *w = arg;
  ck_assert_int_eq (pthread_rwlock_wrlock (w->l), 0);
  __atomic_store_n (&w->tid, gettid (), __ATOMIC_RELEASE);
  ck_assert_int_eq (pthread_mutex_lock (&w->blocker), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&w->blocker), 0);
  ck_assert_int_eq (pthread_rwlock_unlock (w->l), 0);
  return NULL;
}

static void *
write_once (void *l)
{
  write_and_unlock (l);
  return NULL;
}

/* The CPU time a thread uses to start, take a free lock for writing and
   let it go: what the writer below spends besides its wait.  */
static void *
write_once_timed (void *l)
{
  write_and_unlock (l);
  struct timespec *used = malloc (sizeof *used);
  ck_assert_ptr_nonnull (used);
  ck_assert_int_eq (clock_gettime (CLOCK_THREAD_CPUTIME_ID, used), 0);
  return used;
}

static double
start_and_write_seconds (void)
{
  pthread_rwlock_t free_lock = PTHREAD_RWLOCK_INITIALIZER;
  pthread_t t;
  void *used;
  ck_assert_int_eq (pthread_create (&t, NULL, write_once_timed, &free_lock),
                    0);
  ck_assert_int_eq (pthread_join (t, &used), 0);
  const struct timespec *ts = used;
  double seconds = ts->tv_sec + ts->tv_nsec / 1e9;
  free (used);
  return seconds;
}

/* A writer that finds the lock held by a writer asleep in the library
   (marked away) does not start late but sleeps at once: by the time it
   shows itself waiting it has used less than half the CPU time that the
   late start's rounds take, beyond what starting a thread and taking a
   free lock costs (on a CPU with a short pause, 16,000 rounds last
   about 220 us, and a quarter of that is within the reach of a thread
   that is slow to get going).  */
START_TEST (test_no_late_start_for_away_writer)
{
  XP_TEST_SKIP_EMULATED ("timings are the translator's, not the program's");
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  struct away_writer w = { .l = &l, .tid = 0 };
  ck_assert_int_eq (pthread_mutex_init (&w.blocker, NULL), 0);
  ck_assert_int_eq (pthread_mutex_lock (&w.blocker), 0);
  pthread_t holder, waiter;
  ck_assert_int_eq (pthread_create (&holder, NULL, write_while_asleep, &w),
                    0);
  pid_t tid;
  while ((tid = __atomic_load_n (&w.tid, __ATOMIC_ACQUIRE)) == 0
         || w.blocker.__data.__lock != 2 || !xp_test_sleeps_in_kernel (tid))
    usleep (100);
  ck_assert_int_eq (pthread_create (&waiter, NULL, write_once, &l), 0);
  while (!writer_shown (&l))
    usleep (100);
  clockid_t clock;
  struct timespec used;
  ck_assert_int_eq (pthread_getcpuclockid (waiter, &clock), 0);
  ck_assert_int_eq (clock_gettime (clock, &used), 0);
  double late = xp_test_pause_seconds (XP_TEST_LATE_ROUNDS);
  double seconds = used.tv_sec + used.tv_nsec / 1e9;
  ck_assert_int_eq (pthread_mutex_unlock (&w.blocker), 0);
  ck_assert_int_eq (pthread_join (holder, NULL), 0);
  ck_assert_int_eq (pthread_join (waiter, NULL), 0);
  double start = start_and_write_seconds ();
  ck_assert_msg (seconds < start + late / 2, "the writer used %.0f us "
                 "before it slept, a thread that did not wait %.0f us; the "
                 "late start takes %.0f us", seconds * 1e6, start * 1e6,
                 late * 1e6);
}
END_TEST

START_TEST (test_start_late)
{
  xp_test_rerun_late (LATE_ONLY_ARG);
}
END_TEST

static Suite *
late_suite (void)
{
  Suite *s = suite_create ("rwlock-late");
  TCase *tc = tcase_create ("late");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_writer_starts_late);
  tcase_add_test (tc, test_no_late_start_for_away_writer);
  suite_add_tcase (s, tc);
  return s;
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], LATE_ONLY_ARG) == 0)
    return xp_test_run (late_suite ());
  Suite *s = suite_create ("rwlock");
  TCase *tc = tcase_create ("api");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_initialisers);
  tcase_add_test (tc, test_attributes);
  tcase_add_test (tc, test_old_versions);
  tcase_add_test (tc, test_errors_own_write_lock);
  tcase_add_test (tc, test_errors_free_lock);
  tcase_add_test (tc, test_errors_not_held_while_holding_others);
  tcase_add_test (tc, test_timeouts);
  suite_add_tcase (s, tc);

  tc = tcase_create ("blocking");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_writer_preference);
  tcase_add_test (tc, test_reader_preference);
  tcase_add_test (tc, test_blocking);
  tcase_add_test (tc, test_destroy_held);
  tcase_add_test (tc, test_destroy_with_sleepers);
  tcase_add_test (tc, test_start_late);
  suite_add_tcase (s, tc);

  tc = tcase_create ("slots");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_slots_unlock_by_other_thread);
  tcase_add_test (tc, test_slots_writer_waits_for_readers);
  tcase_add_test (tc, test_slots_reader_moves);
  tcase_add_test (tc, test_slots_shared_column);
  tcase_add_test (tc, test_slots_turn_off_and_on);
  tcase_add_test (tc, test_slots_unlock_while_writing_another);
  suite_add_tcase (s, tc);

  tc = tcase_create ("stress");
  tcase_set_timeout (tc, TIMEOUT);
  /* Both kinds, plain and with short timeouts, with many and few
     writes.  */
  tcase_add_loop_test (tc, test_stress, 0, 8);
  tcase_add_test (tc, test_slots_mixed_counts);
  tcase_add_loop_test (tc, test_pshared, 0, 2);
  suite_add_tcase (s, tc);
  return xp_test_run (s);
}
