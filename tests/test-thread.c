/* Thread lifecycle: create, exit, join in all forms, detach, and the
   errors POSIX and glibc give for misuse.  */
#define _GNU_SOURCE
#include "common.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *
return_arg (void *arg)
{
  return arg;
}

static void *
exit_with_arg (void *arg)
{
  pthread_exit ((char *) arg + 1);
}

START_TEST (join_returns_start_result)
{
  pthread_t t;
  void *result = NULL;
  ck_assert_int_eq (pthread_create (&t, NULL, return_arg, (void *) 42), 0);
  ck_assert_int_eq (pthread_join (t, &result), 0);
  ck_assert_ptr_eq (result, (void *) 42);
}
END_TEST

START_TEST (join_returns_exit_value)
{
  pthread_t t;
  void *result = NULL;
  ck_assert_int_eq (pthread_create (&t, NULL, exit_with_arg, (void *) 7), 0);
  ck_assert_int_eq (pthread_join (t, &result), 0);
  ck_assert_ptr_eq (result, (void *) 8);
}
END_TEST

static pthread_t published;

static void *
read_published (void *arg)
{
  return (void *) (uintptr_t) pthread_equal (published, pthread_self ());
}

START_TEST (handle_published_before_start)
{
  void *equal = NULL;
  ck_assert_int_eq (pthread_create (&published, NULL, read_published, NULL),
                    0);
  ck_assert_int_eq (pthread_join (published, &equal), 0);
  ck_assert_ptr_eq (equal, (void *) 1);
}
END_TEST

START_TEST (many_sequential_threads)
{
  for (uintptr_t i = 0; i < 2000; i++)
    {
      pthread_t t;
      void *result;
      ck_assert_int_eq (pthread_create (&t, NULL, return_arg, (void *) i), 0);
      ck_assert_int_eq (pthread_join (t, &result), 0);
      ck_assert_ptr_eq (result, (void *) i);
    }
}
END_TEST

START_TEST (many_concurrent_threads)
{
  enum { N = 200 };
  pthread_t t[N];
  for (uintptr_t i = 0; i < N; i++)
    ck_assert_int_eq (pthread_create (&t[i], NULL, return_arg, (void *) i), 0);
  for (uintptr_t i = 0; i < N; i++)
    {
      void *result;
      ck_assert_int_eq (pthread_join (t[i], &result), 0);
      ck_assert_ptr_eq (result, (void *) i);
    }
}
END_TEST

static int detached_done;

static void *
count_detached (void *arg)
{
  __atomic_fetch_add (&detached_done, 1, __ATOMIC_ACQ_REL);
  return arg;
}

static void
wait_for_count (int *counter, int want)
{
  while (__atomic_load_n (counter, __ATOMIC_ACQUIRE) < want)
    sched_yield ();
}

START_TEST (detached_threads_run_and_recycle)
{
  enum { N = 3000 };
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  for (int i = 0; i < N; i++)
    {
      pthread_t t;
      ck_assert_int_eq (pthread_create (&t, &attr, count_detached, NULL), 0);
    }
  wait_for_count (&detached_done, N);
  pthread_attr_destroy (&attr);
}
END_TEST

START_TEST (detach_after_exit_releases)
{
  for (int i = 0; i < 500; i++)
    {
      pthread_t t;
      ck_assert_int_eq (pthread_create (&t, NULL, return_arg, NULL), 0);
      if (i % 2)
        sched_yield ();
      ck_assert_int_eq (pthread_detach (t), 0);
    }
}
END_TEST

START_TEST (join_self_is_deadlock)
{
  ck_assert_int_eq (pthread_join (pthread_self (), NULL), EDEADLK);
}
END_TEST

static void *
join_main (void *arg)
{
  pthread_t main_thread = *(pthread_t *) arg;
  return (void *) (intptr_t) pthread_join (main_thread, NULL);
}

static void *
block_forever (void *arg)
{
  for (;;)
    pause ();
  return NULL;
}

START_TEST (join_cycle_is_deadlock)
{
  /* A thread joins the main thread while the main thread joins it.  */
  pthread_t self = pthread_self (), t;
  void *result;
  ck_assert_int_eq (pthread_create (&t, NULL, join_main, &self), 0);
  /* Give the thread time to start waiting; either order must end in one
     EDEADLK rather than a hang.  */
  struct timespec deadline;
  clock_gettime (CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 2;
  int err = pthread_timedjoin_np (t, &result, &deadline);
  if (err == 0)
    ck_assert_int_eq ((intptr_t) result, EDEADLK);
  else
    ck_assert_int_eq (err, EDEADLK);
}
END_TEST

/* An ID used after its thread was joined: glibc answers ESRCH, as POSIX
   recommends, while the memory behind it waits for reuse.  */
START_TEST (join_after_join_is_esrch)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, return_arg, NULL), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  ck_assert_int_eq (pthread_join (t, NULL), ESRCH);
  ck_assert_int_eq (pthread_tryjoin_np (t, NULL), ESRCH);
  ck_assert_int_eq (pthread_detach (t), ESRCH);
}
END_TEST

/* glibc answers ESRCH for a thread already joined, whose ID outlived it;
   before, xpthread described the dead thread.  */
START_TEST (getattr_after_join_is_esrch)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, return_arg, NULL), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  pthread_attr_t attr;
  ck_assert_int_eq (pthread_getattr_np (t, &attr), ESRCH);
}
END_TEST

START_TEST (join_detached_is_invalid)
{
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  ck_assert_int_eq (pthread_create (&t, &attr, block_forever, NULL), 0);
  ck_assert_int_eq (pthread_join (t, NULL), EINVAL);
  ck_assert_int_eq (pthread_detach (t), EINVAL);
  pthread_attr_destroy (&attr);
}
END_TEST

static void *
wait_for_flag (void *arg)
{
  wait_for_count (arg, 1);
  return NULL;
}

START_TEST (tryjoin_busy_then_done)
{
  pthread_t t;
  int flag = 0;
  ck_assert_int_eq (pthread_create (&t, NULL, wait_for_flag, &flag), 0);
  ck_assert_int_eq (pthread_tryjoin_np (t, NULL), EBUSY);
  __atomic_store_n (&flag, 1, __ATOMIC_RELEASE);
  int err;
  while ((err = pthread_tryjoin_np (t, NULL)) == EBUSY)
    sched_yield ();
  ck_assert_int_eq (err, 0);
}
END_TEST

START_TEST (timedjoin_times_out_then_joins)
{
  pthread_t t;
  int flag = 0;
  struct timespec deadline;
  ck_assert_int_eq (pthread_create (&t, NULL, wait_for_flag, &flag), 0);
  clock_gettime (CLOCK_REALTIME, &deadline);
  deadline.tv_nsec += 20 * 1000 * 1000;
  if (deadline.tv_nsec >= 1000000000)
    {
      deadline.tv_sec++;
      deadline.tv_nsec -= 1000000000;
    }
  ck_assert_int_eq (pthread_timedjoin_np (t, NULL, &deadline), ETIMEDOUT);
  clock_gettime (CLOCK_MONOTONIC, &deadline);
  ck_assert_int_eq (pthread_clockjoin_np (t, NULL, CLOCK_MONOTONIC,
                                          &deadline), ETIMEDOUT);
  /* A timed-out join gives up its claim: another join may follow.  */
  __atomic_store_n (&flag, 1, __ATOMIC_RELEASE);
  deadline.tv_sec += 60;
  ck_assert_int_eq (pthread_clockjoin_np (t, NULL, CLOCK_MONOTONIC,
                                          &deadline), 0);
}
END_TEST

START_TEST (timedjoin_rejects_bad_arguments)
{
  pthread_t t;
  int flag = 0;
  struct timespec bad = { .tv_sec = 0, .tv_nsec = 1000000000 };
  struct timespec past = { .tv_sec = -1, .tv_nsec = 0 };
  struct timespec now;
  ck_assert_int_eq (pthread_create (&t, NULL, wait_for_flag, &flag), 0);
  ck_assert_int_eq (pthread_timedjoin_np (t, NULL, &bad), EINVAL);
  ck_assert_int_eq (pthread_timedjoin_np (t, NULL, &past), ETIMEDOUT);
  clock_gettime (CLOCK_REALTIME, &now);
  ck_assert_int_eq (pthread_clockjoin_np (t, NULL, CLOCK_PROCESS_CPUTIME_ID,
                                          &now), EINVAL);
  __atomic_store_n (&flag, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
}
END_TEST

static void *
wait_then_return (void *arg)
{
  wait_for_count (arg, 1);
  return (void *) 5;
}

static void *
second_joiner (void *arg)
{
  int err;
  /* The main thread's trylocks may hold the claim for a moment.  */
  while ((err = pthread_join (*(pthread_t *) arg, NULL)) == EINVAL)
    sched_yield ();
  return (void *) (intptr_t) err;
}

START_TEST (second_joiner_is_invalid)
{
  pthread_t t, other;
  int flag = 0;
  void *result;
  ck_assert_int_eq (pthread_create (&t, NULL, wait_then_return, &flag), 0);
  ck_assert_int_eq (pthread_create (&other, NULL, second_joiner, &t), 0);
  /* Once the other thread's join holds the claim, a second join and a
     detach must both be refused.  */
  int err;
  do
    err = pthread_tryjoin_np (t, NULL);
  while (err == EBUSY);
  ck_assert_int_eq (err, EINVAL);
  ck_assert_int_eq (pthread_detach (t), EINVAL);
  __atomic_store_n (&flag, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq (pthread_join (other, &result), 0);
  ck_assert_ptr_eq (result, (void *) 0);
}
END_TEST

static void *
report_stack (void *arg)
{
  return __builtin_frame_address (0);
}

START_TEST (user_supplied_stack_is_used)
{
  enum { SIZE = 256 * 1024 };
  void *stack = mmap (NULL, SIZE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne (stack, MAP_FAILED);
  pthread_attr_t attr;
  pthread_t t;
  void *where;
  pthread_attr_init (&attr);
  ck_assert_int_eq (pthread_attr_setstack (&attr, stack, SIZE), 0);
  ck_assert_int_eq (pthread_create (&t, &attr, report_stack, NULL), 0);
  ck_assert_int_eq (pthread_join (t, &where), 0);
  ck_assert ((char *) where >= (char *) stack
             && (char *) where < (char *) stack + SIZE);
  pthread_attr_destroy (&attr);
  munmap (stack, SIZE);
}
END_TEST

static void *
deep_recursion_ok (void *arg)
{
  volatile char buf[64 * 1024];
  memset ((char *) buf, 1, sizeof buf);
  return (void *) (uintptr_t) buf[100];
}

START_TEST (requested_stack_size_is_usable)
{
  pthread_attr_t attr;
  pthread_t t;
  void *result;
  pthread_attr_init (&attr);
  ck_assert_int_eq (pthread_attr_setstacksize (&attr, 128 * 1024), 0);
  ck_assert_int_eq (pthread_create (&t, &attr, deep_recursion_ok, NULL), 0);
  ck_assert_int_eq (pthread_join (t, &result), 0);
  ck_assert_ptr_eq (result, (void *) 1);
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

START_TEST (signal_mask_inherited_or_from_attr)
{
  sigset_t block, seen;
  sigemptyset (&block);
  sigaddset (&block, SIGUSR1);
  pthread_sigmask (SIG_BLOCK, &block, NULL);
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, report_mask, &seen), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  ck_assert (sigismember (&seen, SIGUSR1));
  ck_assert (!sigismember (&seen, SIGUSR2));
  pthread_sigmask (SIG_UNBLOCK, &block, NULL);

  pthread_attr_t attr;
  sigset_t want;
  sigemptyset (&want);
  sigaddset (&want, SIGUSR2);
  pthread_attr_init (&attr);
  ck_assert_int_eq (pthread_attr_setsigmask_np (&attr, &want), 0);
  ck_assert_int_eq (pthread_create (&t, &attr, report_mask, &seen), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  ck_assert (sigismember (&seen, SIGUSR2));
  ck_assert (!sigismember (&seen, SIGUSR1));
  pthread_attr_destroy (&attr);
}
END_TEST

static void *
report_cpu (void *arg)
{
  return (void *) (intptr_t) sched_getcpu ();
}

START_TEST (affinity_attribute_applied_before_start)
{
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (0, &set);
  pthread_attr_t attr;
  pthread_t t;
  void *cpu;
  pthread_attr_init (&attr);
  ck_assert_int_eq (pthread_attr_setaffinity_np (&attr, sizeof set, &set), 0);
  ck_assert_int_eq (pthread_create (&t, &attr, report_cpu, NULL), 0);
  ck_assert_int_eq (pthread_join (t, &cpu), 0);
  ck_assert_int_eq ((intptr_t) cpu, 0);
  pthread_attr_destroy (&attr);
}
END_TEST

START_TEST (refused_scheduling_fails_create)
{
  /* SCHED_FIFO needs privilege: drop it in a child, then expect EPERM
     from pthread_create rather than a thread with the wrong policy.  */
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      if (getuid () == 0 && setuid (65534) != 0)
        _exit (2);
      pthread_attr_t attr;
      struct sched_param param = { .sched_priority = 10 };
      pthread_t t;
      pthread_attr_init (&attr);
      pthread_attr_setinheritsched (&attr, PTHREAD_EXPLICIT_SCHED);
      pthread_attr_setschedpolicy (&attr, SCHED_FIFO);
      pthread_attr_setschedparam (&attr, &param);
      int err = pthread_create (&t, &attr, return_arg, NULL);
      _exit (err == EPERM ? 0 : 1);
    }
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFEXITED (status));
  ck_assert_int_eq (WEXITSTATUS (status), 0);
}
END_TEST

START_TEST (mode_is_reported)
{
  const char *(*mode) (void) = (const char *(*) (void))
    dlsym (RTLD_DEFAULT, "xpthread_mode_np");
  ck_assert_ptr_nonnull (mode);
  const char *want = getenv ("XPTHREAD_MODE");
  if (want == NULL || strcmp (want, "hosted") != 0)
    want = "raw";
  ck_assert_str_eq (mode (), want);
}
END_TEST

/* pthread_gettid_np, glibc 2.42's, looked up so that the suite builds
   against older headers; xpthread's whatever glibc runs.  */
typedef pid_t gettid_np_fn (pthread_t);

static gettid_np_fn *
gettid_np (void)
{
  gettid_np_fn *f = (gettid_np_fn *) dlsym (RTLD_DEFAULT, "pthread_gettid_np");
  Dl_info info;
  ck_assert_ptr_nonnull (f);
  ck_assert (dladdr ((void *) f, &info) != 0);
  ck_assert_msg (strstr (info.dli_fname, "libxpthread") != NULL,
                 "pthread_gettid_np comes from %s", info.dli_fname);
  return f;
}

static int tid_checked;

static void *
report_tid (void *arg)
{
  __atomic_store_n ((pid_t *) arg, (pid_t) syscall (SYS_gettid),
                    __ATOMIC_RELEASE);
  while (!__atomic_load_n (&tid_checked, __ATOMIC_ACQUIRE))
    usleep (1000);
  return NULL;
}

/* Each thread's answer is the kernel's tid of that thread.  */
START_TEST (gettid_np_is_the_kernel_tid)
{
  gettid_np_fn *f = gettid_np ();
  ck_assert_int_eq (f (pthread_self ()), (pid_t) syscall (SYS_gettid));
  pid_t seen = 0;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, report_tid, &seen), 0);
  while (__atomic_load_n (&seen, __ATOMIC_ACQUIRE) == 0)
    sched_yield ();
  ck_assert_int_eq (f (t), seen);
  __atomic_store_n (&tid_checked, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
}
END_TEST

/* A thread glibc starts itself (a SIGEV_THREAD timer's) is adopted the
   first time it uses the API, and its thread-specific data destructors run
   when it ends.  */
static pthread_key_t foreign_key;
static int foreign_destructor_ran;
static int foreign_ok;
static pthread_t foreign_main;

static void
foreign_destructor (void *value)
{
  if (value == &foreign_key)
    __atomic_store_n (&foreign_destructor_ran, 1, __ATOMIC_RELEASE);
}

static void
timer_callback (union sigval sv)
{
  pthread_t self = pthread_self ();
  bool distinct = !pthread_equal (self, foreign_main)
                  && pthread_equal (self, pthread_self ());
  bool tsd = pthread_setspecific (foreign_key, &foreign_key) == 0
             && pthread_getspecific (foreign_key) == &foreign_key;
  __atomic_store_n (&foreign_ok, distinct && tsd ? 1 : -1, __ATOMIC_RELEASE);
}

START_TEST (glibc_timer_thread_is_adopted)
{
  foreign_main = pthread_self ();
  ck_assert_int_eq (pthread_key_create (&foreign_key, foreign_destructor), 0);
  struct sigevent sev = { .sigev_notify = SIGEV_THREAD,
                          .sigev_notify_function = timer_callback };
  timer_t timer;
  ck_assert_int_eq (timer_create (CLOCK_MONOTONIC, &sev, &timer), 0);
  struct itimerspec when = { .it_value = { .tv_nsec = 1000000 } };
  ck_assert_int_eq (timer_settime (timer, 0, &when, NULL), 0);
  while (__atomic_load_n (&foreign_ok, __ATOMIC_ACQUIRE) == 0)
    sched_yield ();
  ck_assert_int_eq (foreign_ok, 1);
  wait_for_count (&foreign_destructor_ran, 1);
  timer_delete (timer);
}
END_TEST

Suite *
thread_suite (void)
{
  Suite *s = suite_create ("thread");
  TCase *tc = tcase_create ("lifecycle");
  tcase_set_timeout (tc, 30);
  tcase_add_test (tc, join_returns_start_result);
  tcase_add_test (tc, join_returns_exit_value);
  tcase_add_test (tc, handle_published_before_start);
  tcase_add_test (tc, many_sequential_threads);
  tcase_add_test (tc, many_concurrent_threads);
  tcase_add_test (tc, detached_threads_run_and_recycle);
  tcase_add_test (tc, detach_after_exit_releases);
  tcase_add_test (tc, mode_is_reported);
  tcase_add_test (tc, gettid_np_is_the_kernel_tid);
  tcase_add_test (tc, glibc_timer_thread_is_adopted);
  suite_add_tcase (s, tc);

  tc = tcase_create ("join-errors");
  tcase_set_timeout (tc, 30);
  tcase_add_test (tc, join_self_is_deadlock);
  tcase_add_test (tc, join_cycle_is_deadlock);
  tcase_add_test (tc, join_detached_is_invalid);
  tcase_add_test (tc, join_after_join_is_esrch);
  tcase_add_test (tc, getattr_after_join_is_esrch);
  tcase_add_test (tc, tryjoin_busy_then_done);
  tcase_add_test (tc, timedjoin_times_out_then_joins);
  tcase_add_test (tc, timedjoin_rejects_bad_arguments);
  tcase_add_test (tc, second_joiner_is_invalid);
  suite_add_tcase (s, tc);

  tc = tcase_create ("attributes");
  tcase_set_timeout (tc, 30);
  tcase_add_test (tc, user_supplied_stack_is_used);
  tcase_add_test (tc, requested_stack_size_is_usable);
  tcase_add_test (tc, signal_mask_inherited_or_from_attr);
  tcase_add_test (tc, affinity_attribute_applied_before_start);
  tcase_add_test (tc, refused_scheduling_fails_create);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return xp_test_run (thread_suite ());
}
