/* Semaphores: glibc's layout, every error code, wake-ups, signals,
   destruction right after the last wait, named semaphores in /dev/shm,
   and a semaphore shared with a plain glibc process (sem-glibc-helper).  */
#define _GNU_SOURCE
#include "sync-helpers.h"
#include "sem-ping-pong.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define TIMEOUT 60
/* A wait this long that times out in a stress test is a lost wake-up.  */
#define WATCHDOG_MS 10000

#define ck_assert_fails_with(call, err) \
  do { errno = 0; ck_assert_int_eq ((call), -1); \
       ck_assert_int_eq (errno, (err)); } while (0)

static int
value_of (sem_t *sem)
{
  int value = -1;
  ck_assert_int_eq (sem_getvalue (sem, &value), 0);
  return value;
}

/* --- layout and errors --------------------------------------------------- */

/* sem_init writes what glibc's sem_init writes, for both kinds, and a
   zero in the pad word, which glibc leaves as it was and xpthread keeps
   its spin state in.  */
START_TEST (test_layout)
{
  ck_assert_uint_eq (sizeof (sem_t), 32);
  void *libc = dlopen ("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ck_assert (libc != NULL);
  int (*glibc_init) (sem_t *, int, unsigned)
    = (int (*) (sem_t *, int, unsigned)) dlvsym (libc, "sem_init",
                                                 "GLIBC_2.34");
  ck_assert (glibc_init != NULL);
  for (int pshared = 0; pshared < 2; pshared++)
    {
      sem_t ours, theirs;
      memset (&ours, 0x5a, sizeof ours);
      memset (&theirs, 0x5a, sizeof theirs);
      ck_assert_int_eq (sem_init (&ours, pshared, 42), 0);
      ck_assert_int_eq (glibc_init (&theirs, pshared, 42), 0);
      ck_assert_int_eq (((int *) &ours)[3], 0);
      ((int *) &theirs)[3] = 0;
      ck_assert_msg (memcmp (&ours, &theirs, sizeof ours) == 0,
                     "pshared %d: layout differs from glibc's", pshared);
    }
  dlclose (libc);
}
END_TEST

START_TEST (test_errors)
{
  sem_t sem;
  struct timespec bad = { 0, 1000000000 }, past = { -1, 0 }, zero = { 0, 0 };
  ck_assert_fails_with (sem_init (&sem, 0, (unsigned) SEM_VALUE_MAX + 1),
                        EINVAL);
  ck_assert_int_eq (sem_init (&sem, 0, SEM_VALUE_MAX), 0);
  ck_assert_fails_with (sem_post (&sem), EOVERFLOW);
  ck_assert_int_eq (value_of (&sem), SEM_VALUE_MAX);

  ck_assert_int_eq (sem_init (&sem, 0, 1), 0);
  /* Invalid times are errors even when a token is there.  */
  ck_assert_fails_with (sem_timedwait (&sem, &bad), EINVAL);
  ck_assert_fails_with (sem_clockwait (&sem, CLOCK_PROCESS_CPUTIME_ID, &zero),
                        EINVAL);
  ck_assert_int_eq (value_of (&sem), 1);
  /* A token is taken whatever the deadline.  */
  ck_assert_int_eq (sem_timedwait (&sem, &past), 0);
  ck_assert_fails_with (sem_trywait (&sem), EAGAIN);
  ck_assert_fails_with (sem_timedwait (&sem, &past), ETIMEDOUT);
  struct timespec soon = in_ms (CLOCK_REALTIME, 20);
  ck_assert_fails_with (sem_timedwait (&sem, &soon), ETIMEDOUT);
  soon = in_ms (CLOCK_MONOTONIC, 20);
  ck_assert_fails_with (sem_clockwait (&sem, CLOCK_MONOTONIC, &soon),
                        ETIMEDOUT);
  ck_assert_int_eq (value_of (&sem), 0);
  ck_assert_int_eq (sem_destroy (&sem), 0);
}
END_TEST

START_TEST (test_counting)
{
  sem_t sem;
  ck_assert_int_eq (sem_init (&sem, 0, 3), 0);
  ck_assert_int_eq (value_of (&sem), 3);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq (sem_wait (&sem), 0);
  ck_assert_fails_with (sem_trywait (&sem), EAGAIN);
  ck_assert_int_eq (sem_post (&sem), 0);
  ck_assert_int_eq (sem_post (&sem), 0);
  ck_assert_int_eq (value_of (&sem), 2);
  ck_assert_int_eq (sem_trywait (&sem), 0);
  ck_assert_int_eq (value_of (&sem), 1);
}
END_TEST

/* --- waking ------------------------------------------------------------ */

struct sleeper
{
  sem_t *sem;
  _Atomic int tid;
  int result;
  int error;
};

static void *
sleep_on_sem (void *arg)
{
  struct sleeper *s = arg;
  atomic_store (&s->tid, current_tid ());
  s->result = sem_wait (s->sem);
  s->error = errno;
  return NULL;
}

static void
start_sleeper (pthread_t *th, struct sleeper *s)
{
  ck_assert_int_eq (pthread_create (th, NULL, sleep_on_sem, s), 0);
  while (atomic_load (&s->tid) == 0)
    usleep (100);
  wait_until_sleeping (atomic_load (&s->tid));
}

START_TEST (test_post_wakes)
{
  sem_t sem;
  struct sleeper s = { .sem = &sem };
  pthread_t th;
  ck_assert_int_eq (sem_init (&sem, 0, 0), 0);
  start_sleeper (&th, &s);
  ck_assert_int_eq (sem_post (&sem), 0);
  ck_assert_int_eq (pthread_join (th, NULL), 0);
  ck_assert_int_eq (s.result, 0);
  ck_assert_int_eq (value_of (&sem), 0);
}
END_TEST

static void
on_signal (int sig)
{
}

START_TEST (test_signal_interrupts)
{
  struct sigaction sa = { .sa_handler = on_signal };
  sigemptyset (&sa.sa_mask);
  ck_assert_int_eq (sigaction (SIGUSR1, &sa, NULL), 0);
  sem_t sem;
  struct sleeper s = { .sem = &sem };
  pthread_t th;
  ck_assert_int_eq (sem_init (&sem, 0, 0), 0);
  start_sleeper (&th, &s);
  ck_assert_int_eq (pthread_kill (th, SIGUSR1), 0);
  ck_assert_int_eq (pthread_join (th, NULL), 0);
  ck_assert_int_eq (s.result, -1);
  ck_assert_int_eq (s.error, EINTR);
  /* The interrupted waiter is no longer counted: a post needs no wake.  */
  ck_assert_int_eq (sem_post (&sem), 0);
  ck_assert_int_eq (sem_trywait (&sem), 0);
}
END_TEST

/* The thread that takes the last token frees the semaphore at once,
   while the poster may still be in sem_post.  */
static void *
post_then_leave (void *arg)
{
  sem_post (arg);
  return NULL;
}

START_TEST (test_destroy_after_wait)
{
  for (int i = 0; i < 500; i++)
    {
      sem_t *sem = malloc (sizeof *sem);
      ck_assert_int_eq (sem_init (sem, 0, 0), 0);
      pthread_t th;
      ck_assert_int_eq (pthread_create (&th, NULL, post_then_leave, sem), 0);
      ck_assert_int_eq (sem_wait (sem), 0);
      ck_assert_int_eq (sem_destroy (sem), 0);
      memset (sem, 0xa5, sizeof *sem);
      free (sem);
      ck_assert_int_eq (pthread_join (th, NULL), 0);
    }
}
END_TEST

/* --- stress: no lost wake-up ------------------------------------------- */

#define PRODUCERS 3
#define CONSUMERS 5
#define TOKENS_EACH 30000   /* per consumer */

struct traffic
{
  sem_t sem;
  _Atomic long taken;
  _Atomic int lost;
  _Atomic int errors;
};

static void *
produce (void *arg)
{
  struct traffic *t = arg;
  for (int i = 0; i < TOKENS_EACH * CONSUMERS / PRODUCERS; i++)
    {
      if (sem_post (&t->sem) != 0)
        atomic_fetch_add (&t->errors, 1);
      if (i % 64 == 0)
        sched_yield ();
    }
  return NULL;
}

static void *
consume (void *arg)
{
  struct traffic *t = arg;
  for (int i = 0; i < TOKENS_EACH; i++)
    {
      struct timespec deadline = in_ms (CLOCK_MONOTONIC, WATCHDOG_MS);
      if (sem_clockwait (&t->sem, CLOCK_MONOTONIC, &deadline) == 0)
        atomic_fetch_add (&t->taken, 1);
      else if (errno == ETIMEDOUT)
        {
          atomic_fetch_add (&t->lost, 1);
          break;
        }
      else
        atomic_fetch_add (&t->errors, 1);
    }
  return NULL;
}

START_TEST (test_no_lost_wakeup)
{
  _Static_assert (TOKENS_EACH * CONSUMERS % PRODUCERS == 0, "whole shares");
  static struct traffic t;
  memset (&t, 0, sizeof t);
  ck_assert_int_eq (sem_init (&t.sem, _i, 0), 0);
  pthread_t th[PRODUCERS + CONSUMERS];
  for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
    ck_assert_int_eq (pthread_create (&th[i], NULL,
                                      i < CONSUMERS ? consume : produce, &t),
                      0);
  for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
    ck_assert_int_eq (pthread_join (th[i], NULL), 0);
  ck_assert_msg (atomic_load (&t.lost) == 0, "a wake-up was lost");
  ck_assert_int_eq (atomic_load (&t.errors), 0);
  ck_assert_int_eq (atomic_load (&t.taken), (long) TOKENS_EACH * CONSUMERS);
  ck_assert_int_eq (value_of (&t.sem), 0);
}
END_TEST

/* --- named semaphores ---------------------------------------------------- */

static void
unique_name (char *buf, size_t size, const char *what)
{
  snprintf (buf, size, "/xptest-%s-%d", what, (int) getpid ());
  sem_unlink (buf);
}

START_TEST (test_named_api)
{
  char name[64], path[128];
  unique_name (name, sizeof name, "api");
  snprintf (path, sizeof path, "/dev/shm/sem.%s", name + 1);
  mode_t old_mask = umask (022);
  sem_t *a = sem_open (name, O_CREAT | O_EXCL, 0640, 2);
  umask (old_mask);
  ck_assert (a != SEM_FAILED);
  struct stat st;
  ck_assert_int_eq (stat (path, &st), 0);
  ck_assert_int_eq (st.st_size, sizeof (sem_t));
  ck_assert_int_eq (st.st_mode & 0777, 0640);
  ck_assert_int_eq (value_of (a), 2);

  /* Opened again, with or without O_CREAT or the slash: the same one.  */
  sem_t *b = sem_open (name, 0);
  sem_t *c = sem_open (name + 1, O_CREAT, 0600, 9);
  ck_assert_ptr_eq (a, b);
  ck_assert_ptr_eq (a, c);
  ck_assert_int_eq (value_of (c), 2);
  errno = 0;
  ck_assert_ptr_eq (sem_open (name, O_CREAT | O_EXCL, 0600, 1), SEM_FAILED);
  ck_assert_int_eq (errno, EEXIST);

  ck_assert_int_eq (sem_wait (b), 0);
  ck_assert_int_eq (sem_close (a), 0);
  ck_assert_int_eq (sem_close (b), 0);
  ck_assert_int_eq (value_of (c), 1);   /* still mapped once */
  ck_assert_int_eq (sem_close (c), 0);
  ck_assert_fails_with (sem_close (c), EINVAL);
  sem_t unnamed;
  sem_init (&unnamed, 0, 0);
  ck_assert_fails_with (sem_close (&unnamed), EINVAL);

  /* Reopened after the last close: the value lives in the file.  */
  a = sem_open (name, 0);
  ck_assert (a != SEM_FAILED);
  ck_assert_int_eq (value_of (a), 1);
  ck_assert_int_eq (sem_close (a), 0);
  ck_assert_int_eq (sem_unlink (name), 0);
  ck_assert_fails_with (sem_unlink (name), ENOENT);
  ck_assert_int_eq (access (path, F_OK), -1);
}
END_TEST

START_TEST (test_named_errors)
{
  char name[64], longest[NAME_MAX + 3], too_long[NAME_MAX + 3];
  unique_name (name, sizeof name, "errors");
  errno = 0;
  ck_assert_ptr_eq (sem_open (name, 0), SEM_FAILED);
  ck_assert_int_eq (errno, ENOENT);
  const char *invalid[] = { "/a/b", "", "/", "//", "a/" };
  for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
    {
      errno = 0;
      ck_assert_ptr_eq (sem_open (invalid[i], O_CREAT, 0600, 1), SEM_FAILED);
      ck_assert_int_eq (errno, EINVAL);
      ck_assert_fails_with (sem_unlink (invalid[i]), ENOENT);
    }
  /* Longer than NAME_MAX: EINVAL, as glibc 2.36.  A name that fits
     NAME_MAX but not with the "sem." prefix: the kernel's ENAMETOOLONG.  */
  too_long[0] = longest[0] = '/';
  memset (too_long + 1, 'x', NAME_MAX + 1);
  too_long[NAME_MAX + 2] = '\0';
  memset (longest + 1, 'x', NAME_MAX);
  longest[NAME_MAX + 1] = '\0';
  errno = 0;
  ck_assert_ptr_eq (sem_open (too_long, O_CREAT, 0600, 1), SEM_FAILED);
  ck_assert_int_eq (errno, EINVAL);
  errno = 0;
  ck_assert_ptr_eq (sem_open (longest, O_CREAT, 0600, 1), SEM_FAILED);
  ck_assert_int_eq (errno, ENAMETOOLONG);
  errno = 0;
  ck_assert_ptr_eq (sem_open (name, O_CREAT, 0600,
                              (unsigned) SEM_VALUE_MAX + 1), SEM_FAILED);
  ck_assert_int_eq (errno, EINVAL);
  ck_assert_fails_with (sem_unlink (name), ENOENT);
}
END_TEST

/* EACCES: a semaphore only its owner may open, opened by another user:
   a child of root that becomes nobody.  Without root there is no other
   user to become.  */
START_TEST (test_named_eacces)
{
  if (geteuid () != 0)
    return;
  char name[64];
  unique_name (name, sizeof name, "eacces");
  sem_t *sem = sem_open (name, O_CREAT | O_EXCL, 0600, 0);
  ck_assert (sem != SEM_FAILED);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      if (setuid (65534) != 0)
        _exit (2);
      errno = 0;
      sem_t *other = sem_open (name, 0);
      _exit (other == SEM_FAILED && errno == EACCES ? 0 : 1);
    }
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert_int_eq (sem_close (sem), 0);
  ck_assert_int_eq (sem_unlink (name), 0);
  ck_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
}
END_TEST

/* Two xpthread processes meet on a named semaphore.  */
START_TEST (test_named_processes)
{
  char name[64];
  unique_name (name, sizeof name, "procs");
  sem_t *sem = sem_open (name, O_CREAT | O_EXCL, 0600, 0);
  ck_assert (sem != SEM_FAILED);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      sem_t *child = sem_open (name, 0);
      for (int i = 0; i < 100; i++)
        if (child == SEM_FAILED || sem_post (child) != 0)
          _exit (1);
      _exit (0);
    }
  for (int i = 0; i < 100; i++)
    {
      struct timespec deadline = in_ms (CLOCK_REALTIME, WATCHDOG_MS);
      ck_assert_int_eq (sem_timedwait (sem, &deadline), 0);
    }
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  ck_assert_int_eq (sem_close (sem), 0);
  ck_assert_int_eq (sem_unlink (name), 0);
}
END_TEST

/* --- a glibc process on the other side ----------------------------------- */

static pid_t
start_glibc_helper (char *const args[])
{
  char self[PATH_MAX], helper[PATH_MAX + 32];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  ck_assert (n > 0);
  self[n] = '\0';
  snprintf (helper, sizeof helper, "%s/sem-glibc-helper", dirname (self));
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      char *argv[8] = { helper };
      for (int i = 0; args[i] != NULL && i < 6; i++)
        argv[i + 1] = args[i];
      unsetenv ("LD_PRELOAD");
      execv (helper, argv);
      _exit (127);
    }
  return pid;
}

static void
finish_glibc_helper (pid_t pid)
{
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert_msg (WIFEXITED (status), "helper died");
  ck_assert_msg (WEXITSTATUS (status) != 3, "helper ran under xpthread");
  ck_assert_msg (WEXITSTATUS (status) == 0, "helper failed: %d",
                 WEXITSTATUS (status));
}

/* Post ping, wait for pong, round after round; the counter in shared
   memory (when there is one) proves the two sides alternate.  */
static void
play_ping (sem_t *ping, sem_t *pong, unsigned *counter)
{
  for (unsigned i = 0; i < PING_PONG_ROUNDS; i++)
    {
      if (counter != NULL)
        *counter = 2 * i;
      if (i % PING_PONG_SLOW_EVERY == PING_PONG_SLOW_EVERY / 2)
        usleep (1000);
      ck_assert_int_eq (sem_post (ping), 0);
      struct timespec deadline = in_ms (CLOCK_REALTIME, WATCHDOG_MS);
      ck_assert_msg (sem_timedwait (pong, &deadline) == 0,
                     "round %u: no pong (errno %d)", i, errno);
      if (counter != NULL)
        ck_assert_uint_eq (*counter, 2 * i + 1);
    }
  ck_assert_int_eq (value_of (ping), 0);
  ck_assert_int_eq (value_of (pong), 0);
}

START_TEST (test_glibc_unnamed)
{
  int fd = memfd_create ("ping-pong", 0);
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (ftruncate (fd, sizeof (struct ping_pong)), 0);
  struct ping_pong *pp = mmap (NULL, sizeof *pp, PROT_READ | PROT_WRITE,
                               MAP_SHARED, fd, 0);
  ck_assert (pp != MAP_FAILED);
  ck_assert_int_eq (sem_init (&pp->ping, 1, 0), 0);
  ck_assert_int_eq (sem_init (&pp->pong, 1, 0), 0);
  char fd_arg[16], rounds[16];
  snprintf (fd_arg, sizeof fd_arg, "%d", fd);
  snprintf (rounds, sizeof rounds, "%d", PING_PONG_ROUNDS);
  char *args[] = { "unnamed", fd_arg, rounds, NULL };
  pid_t pid = start_glibc_helper (args);
  play_ping (&pp->ping, &pp->pong, &pp->counter);
  finish_glibc_helper (pid);
  munmap (pp, sizeof *pp);
  close (fd);
}
END_TEST

START_TEST (test_glibc_named)
{
  char ping_name[64], pong_name[64], rounds[16];
  unique_name (ping_name, sizeof ping_name, "ping");
  unique_name (pong_name, sizeof pong_name, "pong");
  sem_t *ping = sem_open (ping_name, O_CREAT | O_EXCL, 0600, 0);
  sem_t *pong = sem_open (pong_name, O_CREAT | O_EXCL, 0600, 0);
  ck_assert (ping != SEM_FAILED && pong != SEM_FAILED);
  snprintf (rounds, sizeof rounds, "%d", PING_PONG_ROUNDS);
  char *args[] = { "named", ping_name, pong_name, rounds, NULL };
  pid_t pid = start_glibc_helper (args);
  play_ping (ping, pong, NULL);
  finish_glibc_helper (pid);
  sem_close (ping);
  sem_close (pong);
  sem_unlink (ping_name);
  sem_unlink (pong_name);
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("sem");
  TCase *tc = tcase_create ("unnamed");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_layout);
  tcase_add_test (tc, test_errors);
  tcase_add_test (tc, test_counting);
  tcase_add_test (tc, test_post_wakes);
  tcase_add_test (tc, test_signal_interrupts);
  tcase_add_test (tc, test_destroy_after_wait);
  /* Private and process-shared.  */
  tcase_add_loop_test (tc, test_no_lost_wakeup, 0, 2);
  suite_add_tcase (s, tc);

  tc = tcase_create ("named");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_named_api);
  tcase_add_test (tc, test_named_errors);
  tcase_add_test (tc, test_named_eacces);
  tcase_add_test (tc, test_named_processes);
  suite_add_tcase (s, tc);

  tc = tcase_create ("glibc");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_glibc_unnamed);
  tcase_add_test (tc, test_glibc_named);
  suite_add_tcase (s, tc);
  return xp_test_run (s);
}
