/* fork while other threads are inside the library: the child must be able
   to use every API whose implementation takes an internal lock.

   For each API, two threads call it in a loop while the test forks; each
   child calls the same API once and exits.  A child that inherited a lock
   held by a thread of the parent (which does not exist in the child)
   would wait for it forever, so the parent gives each child a few seconds
   and fails the test naming the API if it is still running.

   One "storm" case, one loop iteration per API: 200 forks per API in
   make check; make stress (XP_STORM_SECONDS set) runs 2000, or as many
   as fit in XP_STORM_SECONDS.  */
#define _GNU_SOURCE
#include "common.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef XP_TEST_MODULE_DIR
# error "XP_TEST_MODULE_DIR must name the directory of the test modules"
#endif
#define TLS_MODULE XP_TEST_MODULE_DIR "/tls-dynamic.so"

enum
{
  HAMMERS = 2,
  CHECK_FORKS = 200,
  STRESS_FORKS = 2000,
  /* A child does one call and exits: milliseconds.  Seconds leave room
     for a loaded machine without letting a hang pass.  */
  CHILD_SECONDS = 10,
};

static int stop;
static pthread_t main_thread;
static char sem_name[64];
static int (*setfsuid_np) (uid_t);

/* Each returns 0 when the call worked.  The hammers call it in a loop,
   each child once.  */

static int
use_keys (void)
{
  pthread_key_t key;
  if (pthread_key_create (&key, NULL) != 0)
    return 1;
  return pthread_key_delete (key) != 0;
}

static int
use_default_attr (void)
{
  pthread_attr_t attr;
  if (pthread_getattr_default_np (&attr) != 0)
    return 1;
  int err = pthread_setattr_default_np (&attr);
  pthread_attr_destroy (&attr);
  return err != 0;
}

static int
use_named_sem (void)
{
  sem_t *sem = sem_open (sem_name, O_CREAT, 0600, 0);
  if (sem == SEM_FAILED)
    return 1;
  return sem_close (sem) != 0;
}

static int
use_system (void)
{
  return system ("exit 0") != 0;
}

static void *
nothing (void *arg)
{
  return arg;
}

/* A joined thread and a detached one: the joiner gives its block back to
   the cache at once, the detached thread's goes through the gone queue.  */
static int
use_threads (void)
{
  pthread_t t;
  if (pthread_create (&t, NULL, nothing, NULL) != 0
      || pthread_join (t, NULL) != 0)
    return 1;
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  int err = pthread_create (&t, &attr, nothing, NULL);
  pthread_attr_destroy (&attr);
  return err != 0;
}

/* Only the hammers: the child cannot take this path after a fork that
   cut another thread's dlopen (below).  */
static int
use_tls_module (void)
{
  void *handle = dlopen (TLS_MODULE, RTLD_NOW);
  if (handle == NULL)
    return 1;
  int (*get) (void) = (int (*) (void)) dlsym (handle, "xp_tls_dynamic_get");
  int ok = get != NULL && get () == 0x3333;
  return dlclose (handle) != 0 || !ok;
}

/* Switch away from our own file-system uid and back.  */
static int
use_fsuid (void)
{
  uid_t own = geteuid ();
  setfsuid_np (own == 0 ? 1 : own);
  return setfsuid_np (own) < 0;
}

/* A process-wide change to what we have: glibc's set*id broadcast.  */
static int
use_setuid (void)
{
  return setuid (geteuid ()) != 0;
}

/* Scheduling another thread pins it (holds its exit lock) and takes its
   scheduling lock: the hammers aim at the forking thread, whose own locks
   the child inherits.  */
static int
sched_main_thread (void)
{
  struct sched_param param = { .sched_priority = 0 };
  return pthread_setschedparam (main_thread, SCHED_OTHER, &param) != 0;
}

/* The child changes its own parameters, then ends with pthread_exit, which
   takes its exit lock.  */
static int
sched_then_exit (void)
{
  if (sched_main_thread () != 0)
    return 1;
  pthread_exit (NULL);
}

struct api
{
  const char *name;
  int (*use) (void);
  int (*child) (void);         /* what the child calls, if not use */
};

static const struct api apis[] = {
  { "pthread_key_create/delete", use_keys, NULL },
  { "pthread_getattr/setattr_default_np", use_default_attr, NULL },
  { "sem_open/sem_close", use_named_sem, NULL },
  { "system", use_system, NULL },
  { "pthread_create/exit", use_threads, NULL },
  /* The child uses keys: glibc 2.36's own fork child cannot use the
     dynamic loader after a fork that cut another thread's dlopen or TLS
     update in two, without xpthread too (dlopen and a new thread's TLS
     trip ld.so's assertions, dl_iterate_phdr waits for a loader lock the
     fork copied held, a stack from glibc's cache frees a hammer's TLS
     block again).  xpthread takes no lock of its own on that path, and
     keys need neither the loader nor TLS.  */
  { "dlopen of a TLS module", use_tls_module, use_keys },
  { "xpthread_setfsuid_np", use_fsuid, NULL },
  { "setuid", use_setuid, NULL },
  { "pthread_setschedparam", sched_main_thread, sched_then_exit },
};
enum { N_APIS = sizeof apis / sizeof apis[0] };

static void *
hammer (void *arg)
{
  const struct api *api = arg;
  unsigned long failures = 0;
  while (!__atomic_load_n (&stop, __ATOMIC_RELAXED))
    failures += (unsigned long) api->use ();
  return (void *) failures;
}

/* The child's wait status, or -1 if it was still running after
   CHILD_SECONDS (it is then killed).  */
static int
wait_with_timeout (pid_t pid)
{
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  const struct timespec pause = { 0, 200 * 1000 };
  for (;;)
    {
      int status;
      pid_t got = waitpid (pid, &status, WNOHANG);
      if (got == pid)
        return status;
      ck_assert_msg (got == 0 || errno == EINTR, "waitpid: %s",
                     strerror (errno));
      if (xp_test_seconds_since (&start) > CHILD_SECONDS)
        {
          kill (pid, SIGKILL);
          waitpid (pid, &status, 0);
          return -1;
        }
      nanosleep (&pause, NULL);
    }
}

START_TEST (fork_while_in_library)
{
  const struct api *api = &apis[_i];
  XP_TEST_SKIP_EMULATED ("a child forked while other threads map memory "
                         "or start threads can hang in the emulator's own "
                         "locks (plain glibc programs hang the same)");
  main_thread = pthread_self ();
  snprintf (sem_name, sizeof sem_name, "/xp-fork-locks-%d", (int) getpid ());
  *(void **) &setfsuid_np = dlsym (RTLD_DEFAULT, "xpthread_setfsuid_np");
  ck_assert_msg (setfsuid_np != NULL, "xpthread_setfsuid_np is not exported");
  ck_assert_msg (api->use () == 0, "%s fails before any fork", api->name);

  int seconds = xp_test_storm_seconds (0);
  int forks = seconds > 0 ? STRESS_FORKS : CHECK_FORKS;
  pthread_t hammers[HAMMERS];
  for (int i = 0; i < HAMMERS; i++)
    ck_assert_int_eq (pthread_create (&hammers[i], NULL, hammer,
                                      (void *) api), 0);
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  int done = 0;
  const char *failure = NULL;
  while (done < forks && failure == NULL
         && (seconds == 0 || xp_test_seconds_since (&start) < seconds))
    {
      pid_t pid = fork ();
      ck_assert_int_ge (pid, 0);
      if (pid == 0)
        _exit (api->child != NULL ? api->child () : api->use ());
      int status = wait_with_timeout (pid);
      if (status < 0)
        failure = "did not finish in time (a lock held across fork?)";
      else if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
        failure = "failed";
      else
        done++;
    }
  __atomic_store_n (&stop, 1, __ATOMIC_RELAXED);
  unsigned long failures = 0;
  for (int i = 0; i < HAMMERS; i++)
    {
      void *result;
      ck_assert_int_eq (pthread_join (hammers[i], &result), 0);
      failures += (unsigned long) result;
    }
  sem_unlink (sem_name);
  if (getenv ("XP_STORM_VERBOSE") != NULL)
    fprintf (stderr, "fork-locks: %s: %d forks in %.1f s\n", api->name, done,
             xp_test_seconds_since (&start));
  ck_assert_msg (failure == NULL, "fork %d: the child calling %s %s",
                 done + 1, api->name, failure);
  ck_assert_msg (failures == 0, "%s failed %lu times in the hammers",
                 api->name, failures);
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("fork-locks");
  TCase *tc = tcase_create ("storm");
  tcase_set_timeout (tc, xp_test_storm_seconds (0) + 120);
  tcase_add_loop_test (tc, fork_while_in_library, 0, N_APIS);
  suite_add_tcase (s, tc);
  return xp_test_run (s);
}
