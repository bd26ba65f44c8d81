/* The thread lifecycle under races: blocks reused while their creator is
   still in pthread_create, exiting threads meeting set*id broadcasts, a
   fork child joining threads that exited in the parent.  Each case passes
   by finishing: the failures it guards against are crashes and hangs.  */
#define _GNU_SOURCE
#include "common.h"
#include <errno.h>
#include <pthread.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int stop;

static void *
echo (void *arg)
{
  return arg;
}

static void
create_or_fail (pthread_t *t, const pthread_attr_t *attr,
                void *(*fn) (void *), void *arg)
{
  int err;
  while ((err = pthread_create (t, attr, fn, arg)) == EAGAIN)
    sched_yield ();
  ck_assert_int_eq (err, 0);
}

/* Detached threads end, and their blocks are reused or unmapped by the
   other creator (whose joins keep the cache at its bound), while their own
   creator may still be inside pthread_create.  */
static void *
churn (void *detached)
{
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  if (detached != NULL)
    pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  while (!__atomic_load_n (&stop, __ATOMIC_ACQUIRE))
    {
      pthread_t t;
      create_or_fail (&t, &attr, echo, (void *) 7);
      if (detached == NULL)
        {
          void *result;
          ck_assert_int_eq (pthread_join (t, &result), 0);
          ck_assert_ptr_eq (result, (void *) 7);
        }
    }
  pthread_attr_destroy (&attr);
  return NULL;
}

static void
start_churn (pthread_t churners[2])
{
  __atomic_store_n (&stop, 0, __ATOMIC_RELEASE);
  create_or_fail (&churners[0], NULL, churn, NULL);
  create_or_fail (&churners[1], NULL, churn, (void *) 1);
}

static void
stop_churn (pthread_t churners[2])
{
  __atomic_store_n (&stop, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq (pthread_join (churners[0], NULL), 0);
  ck_assert_int_eq (pthread_join (churners[1], NULL), 0);
}

/* A thread joined by a third thread before pthread_create has returned:
   the joiner frees the block under the creator.  */
static pthread_t handed_over;
static int handed;
static int joined;

static void *
hand_over_self (void *arg)
{
  (void) arg;
  __atomic_store_n (&handed_over, pthread_self (), __ATOMIC_RELAXED);
  __atomic_store_n (&handed, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void *
join_handed (void *arg)
{
  long rounds = (long) (intptr_t) arg;
  for (long i = 0; i < rounds; i++)
    {
      while (!__atomic_load_n (&handed, __ATOMIC_ACQUIRE))
        sched_yield ();
      __atomic_store_n (&handed, 0, __ATOMIC_RELAXED);
      ck_assert_int_eq (pthread_join (handed_over, NULL), 0);
      __atomic_store_n (&joined, (int) i + 1, __ATOMIC_RELEASE);
    }
  return NULL;
}

START_TEST (blocks_reused_under_creator)
{
  xp_test_require_xpthread ();
  pthread_t churners[2];
  start_churn (churners);
  enum { rounds = 2000 };
  pthread_t joiner;
  create_or_fail (&joiner, NULL, join_handed, (void *) (intptr_t) rounds);
  for (int i = 0; i < rounds; i++)
    {
      pthread_t t;
      create_or_fail (&t, NULL, hand_over_self, NULL);
      while (__atomic_load_n (&joined, __ATOMIC_ACQUIRE) != i + 1)
        sched_yield ();
    }
  ck_assert_int_eq (pthread_join (joiner, NULL), 0);
  stop_churn (churners);
}
END_TEST

static void *
report_euid (void *arg)
{
  (void) arg;
  return (void *) (uintptr_t) geteuid ();
}

/* Exiting threads either take the broadcast's signal or are passed by;
   neither may hang it, and threads started afterwards have its result.  */
START_TEST (setxid_meets_exiting_threads)
{
  xp_test_require_xpthread ();
  if (geteuid () != 0)
    return;
  pthread_t churners[2];
  start_churn (churners);
  for (int i = 0; i < 2000; i++)
    ck_assert_int_eq (seteuid (i % 2 == 0 ? 65534 : 0), 0);
  stop_churn (churners);
  pthread_t t;
  void *euid;
  create_or_fail (&t, NULL, report_euid, NULL);
  ck_assert_int_eq (pthread_join (t, &euid), 0);
  ck_assert_int_eq ((uintptr_t) euid, 0);
}
END_TEST

/* Threads that exited in the parent keep their place on glibc's thread
   list until joined; the child's glibc rebuilt that list without them.
   Raw mode only: glibc's own threads, which hosted mode uses, crash such a
   child (measured with glibc 2.36).  */
static int
child_joins_and_churns (pthread_t *exited, int n)
{
  for (int i = 0; i < n; i++)
    {
      void *result;
      if (pthread_join (exited[i], &result) != 0 || result != (void *) 7)
        return 1;
      pthread_t t;
      if (pthread_create (&t, NULL, echo, (void *) 7) != 0
          || pthread_join (t, &result) != 0 || result != (void *) 7)
        return 2;
    }
  return 0;
}

START_TEST (fork_child_joins_exited_threads)
{
  xp_test_require_xpthread ();
  const char *(*mode) (void)
    = (const char *(*) (void)) dlsym (RTLD_DEFAULT, "xpthread_mode_np");
  if (strcmp (mode (), "raw") != 0)
    return;
  enum { n = 8 };
  pthread_t exited[n];
  for (int i = 0; i < n; i++)
    create_or_fail (&exited[i], NULL, echo, (void *) 7);
  usleep (100000);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (child_joins_and_churns (exited, n));
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "child status %#x", status);
  for (int i = 0; i < n; i++)
    ck_assert_int_eq (pthread_join (exited[i], NULL), 0);
}
END_TEST

static void
add_case (Suite *s, const char *name, const TTest *test)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test);
  suite_add_tcase (s, tc);
}

int
main (void)
{
  Suite *s = suite_create ("lifecycle");
  add_case (s, "reuse-under-creator", blocks_reused_under_creator);
  add_case (s, "setxid-exiting", setxid_meets_exiting_threads);
  add_case (s, "fork-joins-exited", fork_child_joins_exited_threads);
  return xp_test_run (s);
}
