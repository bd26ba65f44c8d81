/* Barriers and spinlocks: errors, EBUSY on destroying a barrier in use,
   destruction right after the last round, phases in step under stress,
   process-shared barriers across fork, and spinlocks in glibc's
   representation.  */
#define _GNU_SOURCE
#include "sync-helpers.h"
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define TIMEOUT 60

/* --- barriers ----------------------------------------------------------- */

START_TEST (test_barrier_errors)
{
  ck_assert_uint_eq (sizeof (pthread_barrier_t), 32);
  pthread_barrier_t b;
  pthread_barrierattr_t attr;
  int pshared;
  ck_assert_int_eq (pthread_barrier_init (&b, NULL, 0), EINVAL);
  ck_assert_int_eq (pthread_barrier_init (&b, NULL, INT_MAX), EINVAL);
  ck_assert_int_eq (pthread_barrier_init (&b, NULL, UINT_MAX), EINVAL);
  ck_assert_int_eq (pthread_barrier_init (&b, NULL, INT_MAX - 1), 0);
  ck_assert_int_eq (pthread_barrier_destroy (&b), 0);

  ck_assert_int_eq (pthread_barrierattr_init (&attr), 0);
  ck_assert_int_eq (pthread_barrierattr_getpshared (&attr, &pshared), 0);
  ck_assert_int_eq (pshared, PTHREAD_PROCESS_PRIVATE);
  ck_assert_int_eq (pthread_barrierattr_setpshared (&attr, 2), EINVAL);
  ck_assert_int_eq (pthread_barrierattr_setpshared (&attr,
                                                    PTHREAD_PROCESS_SHARED),
                    0);
  ck_assert_int_eq (pthread_barrierattr_getpshared (&attr, &pshared), 0);
  ck_assert_int_eq (pshared, PTHREAD_PROCESS_SHARED);
  ck_assert_int_eq (pthread_barrierattr_destroy (&attr), 0);

  /* A barrier of one: every wait is the serial one.  */
  ck_assert_int_eq (pthread_barrier_init (&b, NULL, 1), 0);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq (pthread_barrier_wait (&b), PTHREAD_BARRIER_SERIAL_THREAD);
  ck_assert_int_eq (pthread_barrier_destroy (&b), 0);
}
END_TEST

struct waiter
{
  pthread_barrier_t *barrier;
  _Atomic int tid;
  int result;
};

static void *
wait_once (void *arg)
{
  struct waiter *w = arg;
  atomic_store (&w->tid, current_tid ());
  w->result = pthread_barrier_wait (w->barrier);
  return NULL;
}

START_TEST (test_destroy_busy)
{
  pthread_barrier_t b;
  struct waiter w = { .barrier = &b };
  pthread_t th;
  ck_assert_int_eq (pthread_barrier_init (&b, NULL, 2), 0);
  ck_assert_int_eq (pthread_create (&th, NULL, wait_once, &w), 0);
  while (atomic_load (&w.tid) == 0)
    usleep (100);
  wait_until_sleeping (atomic_load (&w.tid));
  ck_assert_int_eq (pthread_barrier_destroy (&b), EBUSY);
  int mine = pthread_barrier_wait (&b);
  /* The barrier may go as soon as this thread is through.  */
  ck_assert_int_eq (pthread_barrier_destroy (&b), 0);
  ck_assert_int_eq (pthread_join (th, NULL), 0);
  ck_assert_msg ((mine == PTHREAD_BARRIER_SERIAL_THREAD) != (w.result
                  == PTHREAD_BARRIER_SERIAL_THREAD), "exactly one serial");
  ck_assert (mine == 0 || w.result == 0);
}
END_TEST

/* Destroy and free a barrier as soon as one thread is out of it.  */
START_TEST (test_destroy_after_round)
{
  for (int round = 0; round < 300; round++)
    {
      pthread_barrier_t *b = malloc (sizeof *b);
      struct waiter w[2] = { { .barrier = b }, { .barrier = b } };
      pthread_t th[2];
      ck_assert_int_eq (pthread_barrier_init (b, NULL, 3), 0);
      for (int i = 0; i < 2; i++)
        ck_assert_int_eq (pthread_create (&th[i], NULL, wait_once, &w[i]), 0);
      int mine = pthread_barrier_wait (b);
      ck_assert (mine == 0 || mine == PTHREAD_BARRIER_SERIAL_THREAD);
      ck_assert_int_eq (pthread_barrier_destroy (b), 0);
      memset (b, 0xa5, sizeof *b);
      free (b);
      for (int i = 0; i < 2; i++)
        ck_assert_int_eq (pthread_join (th[i], NULL), 0);
    }
}
END_TEST

#define PHASE_THREADS 4
#define PHASES 3000

struct phases
{
  pthread_barrier_t barrier;
  _Atomic int arrived[PHASES];
  _Atomic int serial[PHASES];
  _Atomic int out_of_step;
  _Atomic int bad_result;
};

/* Every thread counts itself into the phase, waits, and must then see
   the whole count (a thread let through early sees fewer) and nobody in
   the phase after next (a thread let through late lags behind).  */
static void *
run_phases (void *arg)
{
  struct phases *p = arg;
  for (int i = 0; i < PHASES; i++)
    {
      atomic_fetch_add (&p->arrived[i], 1);
      int r = pthread_barrier_wait (&p->barrier);
      if (r == PTHREAD_BARRIER_SERIAL_THREAD)
        atomic_fetch_add (&p->serial[i], 1);
      else if (r != 0)
        atomic_fetch_add (&p->bad_result, 1);
      if (atomic_load (&p->arrived[i]) != PHASE_THREADS
          || (i + 2 < PHASES && atomic_load (&p->arrived[i + 2]) != 0))
        atomic_fetch_add (&p->out_of_step, 1);
    }
  return NULL;
}

static void
check_phases (struct phases *p)
{
  ck_assert_int_eq (atomic_load (&p->out_of_step), 0);
  ck_assert_int_eq (atomic_load (&p->bad_result), 0);
  for (int i = 0; i < PHASES; i++)
    {
      ck_assert_int_eq (atomic_load (&p->arrived[i]), PHASE_THREADS);
      ck_assert_int_eq (atomic_load (&p->serial[i]), 1);
    }
}

START_TEST (test_phases_in_step)
{
  static struct phases p;
  memset (&p, 0, sizeof p);
  ck_assert_int_eq (pthread_barrier_init (&p.barrier, NULL, PHASE_THREADS),
                    0);
  pthread_t th[PHASE_THREADS];
  for (int i = 0; i < PHASE_THREADS; i++)
    ck_assert_int_eq (pthread_create (&th[i], NULL, run_phases, &p), 0);
  for (int i = 0; i < PHASE_THREADS; i++)
    ck_assert_int_eq (pthread_join (th[i], NULL), 0);
  check_phases (&p);
  ck_assert_int_eq (pthread_barrier_destroy (&p.barrier), 0);
}
END_TEST

/* Two processes of two threads each go through a process-shared
   barrier of four.  */
START_TEST (test_pshared_barrier)
{
  struct phases *p = mmap (NULL, sizeof *p, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert (p != MAP_FAILED);
  pthread_barrierattr_t attr;
  pthread_barrierattr_init (&attr);
  pthread_barrierattr_setpshared (&attr, PTHREAD_PROCESS_SHARED);
  ck_assert_int_eq (pthread_barrier_init (&p->barrier, &attr, PHASE_THREADS),
                    0);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  pthread_t th;
  if (pthread_create (&th, NULL, run_phases, p) != 0)
    _exit (2);
  run_phases (p);
  pthread_join (th, NULL);
  if (pid == 0)
    _exit (0);
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  check_phases (p);
  munmap (p, sizeof *p);
}
END_TEST

/* --- spinlocks ---------------------------------------------------------- */

START_TEST (test_spin_api)
{
  pthread_spinlock_t s;
  ck_assert_int_eq (pthread_spin_init (&s, PTHREAD_PROCESS_PRIVATE), 0);
  ck_assert_int_eq (pthread_spin_trylock (&s), 0);
  ck_assert_int_eq (pthread_spin_trylock (&s), EBUSY);
  ck_assert_int_eq (pthread_spin_unlock (&s), 0);
  ck_assert_int_eq (pthread_spin_lock (&s), 0);
  ck_assert_int_eq (pthread_spin_trylock (&s), EBUSY);
  ck_assert_int_eq (pthread_spin_unlock (&s), 0);
  ck_assert_int_eq (pthread_spin_destroy (&s), 0);
  ck_assert_int_eq (pthread_spin_init (&s, PTHREAD_PROCESS_SHARED), 0);
  ck_assert_int_eq (pthread_spin_lock (&s), 0);
  ck_assert_int_eq (pthread_spin_unlock (&s), 0);
}
END_TEST

/* The lock word means what it means to glibc: glibc's own functions,
   taken from libc.so.6, and xpthread's exclude each other.  */
START_TEST (test_spin_glibc_representation)
{
  void *libc = dlopen ("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ck_assert (libc != NULL);
  int (*glibc_lock) (pthread_spinlock_t *)
    = (int (*) (pthread_spinlock_t *)) dlvsym (libc, "pthread_spin_lock",
                                               "GLIBC_2.34");
  int (*glibc_unlock) (pthread_spinlock_t *)
    = (int (*) (pthread_spinlock_t *)) dlvsym (libc, "pthread_spin_unlock",
                                               "GLIBC_2.34");
  int (*glibc_init) (pthread_spinlock_t *, int)
    = (int (*) (pthread_spinlock_t *, int)) dlvsym (libc, "pthread_spin_init",
                                                    "GLIBC_2.34");
  ck_assert (glibc_lock != NULL && glibc_unlock != NULL && glibc_init != NULL);
  pthread_spinlock_t ours, theirs;
  pthread_spin_init (&ours, 0);
  glibc_init (&theirs, 0);
  ck_assert_int_eq (ours, theirs);
  glibc_lock (&ours);
  ck_assert_int_eq (pthread_spin_trylock (&ours), EBUSY);
  glibc_unlock (&ours);
  ck_assert_int_eq (pthread_spin_trylock (&ours), 0);
  pthread_spin_unlock (&ours);
  ck_assert_int_eq (ours, theirs);
  dlclose (libc);
}
END_TEST

#define SPIN_THREADS 4
#define SPIN_ROUNDS 200000

struct spin_counter
{
  pthread_spinlock_t lock;
  unsigned long count;
};

static void *
spin_increment (void *arg)
{
  struct spin_counter *c = arg;
  for (int i = 0; i < SPIN_ROUNDS; i++)
    {
      pthread_spin_lock (&c->lock);
      c->count++;
      pthread_spin_unlock (&c->lock);
    }
  return NULL;
}

START_TEST (test_spin_stress)
{
  static struct spin_counter c;
  pthread_spin_init (&c.lock, 0);
  pthread_t th[SPIN_THREADS];
  for (int i = 0; i < SPIN_THREADS; i++)
    ck_assert_int_eq (pthread_create (&th[i], NULL, spin_increment, &c), 0);
  for (int i = 0; i < SPIN_THREADS; i++)
    ck_assert_int_eq (pthread_join (th[i], NULL), 0);
  ck_assert_uint_eq (c.count, (unsigned long) SPIN_THREADS * SPIN_ROUNDS);
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("barrier");
  TCase *tc = tcase_create ("barrier");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_barrier_errors);
  tcase_add_test (tc, test_destroy_busy);
  tcase_add_test (tc, test_destroy_after_round);
  tcase_add_test (tc, test_phases_in_step);
  tcase_add_test (tc, test_pshared_barrier);
  suite_add_tcase (s, tc);

  tc = tcase_create ("spinlock");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_spin_api);
  tcase_add_test (tc, test_spin_glibc_representation);
  tcase_add_test (tc, test_spin_stress);
  suite_add_tcase (s, tc);
  return xp_test_run (s);
}
