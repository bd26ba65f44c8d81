/* Threads and the process: fork from a thread, exit from a thread, the
   process ending while threads run, the main thread calling pthread_exit,
   the default stack size and the guard page.

   Everything that ends or replaces a process runs in a child made with
   fork() inside the test, or in this program re-executed through
   /proc/self/exe with a helper argument when the behaviour depends on
   process start-up (the default stack size) or on the real main().  The
   test then checks the child's output and wait status.  */
#define _GNU_SOURCE
#include "common.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers -------------------------------------------------------- */

/* Read everything from FD until end of file into BUF (NUL-terminated).  */
static void
read_all (int fd, char *buf, size_t size)
{
  size_t len = 0;
  for (;;)
    {
      ck_assert_msg (len < size - 1, "child wrote too much");
      ssize_t n = read (fd, buf + len, size - 1 - len);
      if (n < 0 && errno == EINTR)
        continue;
      ck_assert_msg (n >= 0, "read: %s", strerror (errno));
      if (n == 0)
        break;
      len += (size_t) n;
    }
  buf[len] = '\0';
}

static void
assert_exited_zero (int status)
{
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "child status %#x, expected exit 0", status);
}

/* Fork a child whose standard output is the write end of a pipe; return
   the read end in *OUT.  */
static pid_t
fork_with_pipe (int *out)
{
  int fds[2];
  ck_assert_int_eq (pipe (fds), 0);
  fflush (NULL);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      close (fds[0]);
      if (dup2 (fds[1], STDOUT_FILENO) < 0)
        _exit (120);
      close (fds[1]);
      return 0;
    }
  close (fds[1]);
  *out = fds[0];
  return pid;
}

/* Run this program again with one helper argument (see main), its output
   going to a pipe; the limit, when non-null, becomes RLIMIT_STACK first.
   Return the wait status and the output in BUF.  */
static int
run_helper (const char *mode, const struct rlimit *stack_limit,
            char *buf, size_t size)
{
  int out;
  pid_t pid = fork_with_pipe (&out);
  if (pid == 0)
    {
      if (stack_limit != NULL && setrlimit (RLIMIT_STACK, stack_limit) != 0)
        _exit (121);
      execl ("/proc/self/exe", "test-process", mode, (char *) NULL);
      _exit (122);
    }
  read_all (out, buf, size);
  close (out);
  return xp_test_wait_child (pid);
}

static pthread_t
start_thread (void *(*fn) (void *), void *arg)
{
  pthread_t t;
  int err = pthread_create (&t, NULL, fn, arg);
  ck_assert_msg (err == 0, "pthread_create: %s", strerror (err));
  return t;
}

/* ---- fork from a thread --------------------------------------------- */

static void *
say_hello (void *p)
{
  printf ("grandchild thread %d\n", *(int *) p);
  return p;
}

/* The child of a fork from a thread is a normal single-threaded process:
   stdio, malloc and thread creation must all work in it.  */
static void
forked_child (int round)
{
  printf ("child %d\n", round);
  size_t size = 1 << 20;
  unsigned char *block = malloc (size);
  if (block == NULL)
    _exit (10);
  memset (block, round & 0xff, size);
  for (size_t i = 0; i < size; i++)
    if (block[i] != (round & 0xff))
      _exit (11);
  free (block);
  pthread_t t;
  void *result;
  if (pthread_create (&t, NULL, say_hello, &round) != 0)
    _exit (12);
  if (pthread_join (t, &result) != 0 || result != &round)
    _exit (13);
  exit (0);
}

static int fork_stop;

/* Keeps malloc's locks busy while the other thread forks, so that fork
   must take and reset them properly.  */
static void *
malloc_churner (void *p)
{
  (void) p;
  while (!__atomic_load_n (&fork_stop, __ATOMIC_ACQUIRE))
    {
      void *blocks[16];
      for (int i = 0; i < 16; i++)
        blocks[i] = malloc ((size_t) (16 << (i % 8)));
      for (int i = 0; i < 16; i++)
        free (blocks[i]);
    }
  return NULL;
}

enum { FORK_ROUNDS = 20 };

static void *
forker (void *p)
{
  (void) p;
  for (int round = 0; round < FORK_ROUNDS; round++)
    {
      int out;
      pid_t pid = fork_with_pipe (&out);
      if (pid == 0)
        forked_child (round);
      char buf[256], expected[256];
      read_all (out, buf, sizeof buf);
      close (out);
      int status = xp_test_wait_child (pid);
      if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
        return "forked child failed";
      snprintf (expected, sizeof expected,
                "child %d\ngrandchild thread %d\n", round, round);
      if (strcmp (buf, expected) != 0)
        return "forked child's output is wrong";
    }
  return NULL;
}

START_TEST (fork_from_thread)
{
  pthread_t churner = start_thread (malloc_churner, NULL);
  pthread_t t = start_thread (forker, NULL);
  void *result = (void *) 1;
  ck_assert_int_eq (pthread_join (t, &result), 0);
  __atomic_store_n (&fork_stop, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq (pthread_join (churner, NULL), 0);
  ck_assert_msg (result == NULL, "%s", (const char *) result);
}
END_TEST

/* ---- exit from a thread --------------------------------------------- */

static void
atexit_handler (void)
{
  static const char msg[] = "atexit ran\n";
  if (write (STDOUT_FILENO, msg, sizeof msg - 1) < 0)
    _exit (30);
}

static void *
call_exit (void *p)
{
  (void) p;
  exit (0);
}

START_TEST (exit_from_thread_runs_atexit)
{
  int out;
  pid_t pid = fork_with_pipe (&out);
  if (pid == 0)
    {
      atexit (atexit_handler);
      /* Buffered output must be flushed by the exit in the thread.  */
      printf ("buffered\n");
      pthread_t t;
      if (pthread_create (&t, NULL, call_exit, NULL) != 0)
        _exit (31);
      pthread_join (t, NULL);
      _exit (32);
    }
  char buf[256];
  read_all (out, buf, sizeof buf);
  close (out);
  assert_exited_zero (xp_test_wait_child (pid));
  ck_assert_str_eq (buf, "atexit ran\nbuffered\n");
}
END_TEST

/* ---- main returns while threads run -------------------------------- */

static void *
spin_forever (void *p)
{
  (void) p;
  for (;;)
    sched_yield ();
  return NULL;
}

static void *
sleep_forever (void *p)
{
  (void) p;
  for (;;)
    pause ();
  return NULL;
}

/* Helper: main returns with four threads still running.  */
static int
helper_main_returns (void)
{
  for (int i = 0; i < 4; i++)
    {
      pthread_t t;
      if (pthread_create (&t, NULL, i % 2 ? spin_forever : sleep_forever,
                          NULL) != 0)
        return 40;
    }
  printf ("main returns\n");
  return 0;
}

START_TEST (main_returns_with_threads_running)
{
  char buf[256];
  int status = run_helper ("--main-returns", NULL, buf, sizeof buf);
  assert_exited_zero (status);
  ck_assert_str_eq (buf, "main returns\n");
}
END_TEST

/* ---- the main thread calls pthread_exit ---------------------------- */

enum { SURVIVORS = 3 };

static int main_leaving;

static void
main_key_destructor (void *value)
{
  (void) value;
  __atomic_store_n (&main_leaving, 1, __ATOMIC_RELEASE);
}

/* Waits until the main thread is inside pthread_exit (its thread-specific
   data destructor has run), then reports through stdio, which only the
   final exit flushes.  */
static void *
survivor (void *p)
{
  while (!__atomic_load_n (&main_leaving, __ATOMIC_ACQUIRE))
    sched_yield ();
  printf ("survivor %d\n", (int) (long) p);
  return NULL;
}

static int
helper_main_pthread_exit (void)
{
  pthread_key_t key;
  if (pthread_key_create (&key, main_key_destructor) != 0
      || pthread_setspecific (key, &key) != 0)
    return 50;
  setvbuf (stdout, NULL, _IOFBF, BUFSIZ);
  for (long i = 0; i < SURVIVORS; i++)
    {
      pthread_t t;
      if (pthread_create (&t, NULL, survivor, (void *) i) != 0)
        return 51;
    }
  pthread_exit (NULL);
}

START_TEST (main_pthread_exit_keeps_process)
{
  char buf[256];
  int status = run_helper ("--main-pthread-exit", NULL, buf, sizeof buf);
  assert_exited_zero (status);
  /* The survivors' lines, in any order.  */
  int seen[SURVIVORS] = { 0 };
  int lines = 0;
  for (char *line = strtok (buf, "\n"); line != NULL;
       line = strtok (NULL, "\n"))
    {
      int id;
      ck_assert_msg (sscanf (line, "survivor %d", &id) == 1
                     && id >= 0 && id < SURVIVORS, "unexpected: %s", line);
      seen[id]++;
      lines++;
    }
  ck_assert_int_eq (lines, SURVIVORS);
  for (int i = 0; i < SURVIVORS; i++)
    ck_assert_int_eq (seen[i], 1);
}
END_TEST

/* ---- default stack size -------------------------------------------- */

static void *
report_stack (void *p)
{
  pthread_attr_t attr;
  size_t *size = p;
  if (pthread_getattr_np (pthread_self (), &attr) != 0)
    return p;
  pthread_attr_getstacksize (&attr, size);
  pthread_attr_destroy (&attr);
  return NULL;
}

/* Helper: print the stack size of a thread created with default
   attributes and the default attribute's stack size.  */
static int
helper_stack_probe (void)
{
  size_t thread_size = 0, default_size = 0;
  pthread_t t;
  void *result;
  pthread_attr_t attr;
  if (pthread_create (&t, NULL, report_stack, &thread_size) != 0
      || pthread_join (t, &result) != 0 || result != NULL)
    return 60;
  if (pthread_getattr_default_np (&attr) != 0
      || pthread_attr_getstacksize (&attr, &default_size) != 0)
    return 61;
  pthread_attr_destroy (&attr);
  printf ("%zu %zu\n", thread_size, default_size);
  return 0;
}

/* The default stack size is taken from RLIMIT_STACK at start-up, rounded
   up to the page size, as glibc does.  */
static void
check_stack_default (rlim_t limit, size_t expected)
{
  struct rlimit rl;
  ck_assert_int_eq (getrlimit (RLIMIT_STACK, &rl), 0);
  if (rl.rlim_max != RLIM_INFINITY && limit > rl.rlim_max)
    limit = rl.rlim_max;
  rl.rlim_cur = limit;
  char buf[256];
  int status = run_helper ("--stack-probe", &rl, buf, sizeof buf);
  assert_exited_zero (status);
  size_t thread_size, default_size;
  ck_assert_msg (sscanf (buf, "%zu %zu", &thread_size, &default_size) == 2,
                 "probe said: %s", buf);
  ck_assert_msg (thread_size == expected,
                 "limit %lu: thread stack %zu, expected %zu",
                 (unsigned long) limit, thread_size, expected);
  ck_assert_msg (default_size == expected,
                 "limit %lu: default attribute %zu, expected %zu",
                 (unsigned long) limit, default_size, expected);
}

START_TEST (stack_size_follows_rlimit)
{
  XP_TEST_SKIP_EMULATED ("RLIMIT_STACK is not applied to the guest");
  size_t page = (size_t) sysconf (_SC_PAGESIZE);
  check_stack_default (4 << 20, 4 << 20);
  size_t odd = (3 << 20) + 1000;
  check_stack_default (odd, (odd + page - 1) / page * page);
}
END_TEST

/* ---- memory exhausted at the first thread ---------------------------- */

static void *
return_arg (void *arg)
{
  return arg;
}

/* A fresh process whose address space is nearly used up: its first
   pthread_create answers EAGAIN, as POSIX and glibc do, and once memory
   is back a thread starts.  */
static int
helper_create_without_memory (void)
{
  struct rlimit saved, tight;
  long pages = 0;
  FILE *statm = fopen ("/proc/self/statm", "r");
  if (statm == NULL || fscanf (statm, "%ld", &pages) != 1
      || getrlimit (RLIMIT_AS, &saved) != 0)
    return 30;
  fclose (statm);
  tight = saved;
  tight.rlim_cur = (rlim_t) pages * (rlim_t) sysconf (_SC_PAGESIZE)
                   + (1 << 20);
  if (setrlimit (RLIMIT_AS, &tight) != 0)
    return 31;
  pthread_t t;
  int err = pthread_create (&t, NULL, return_arg, NULL);
  if (setrlimit (RLIMIT_AS, &saved) != 0)
    return 32;
  printf ("without memory: %s\n", strerror (err));
  void *result = NULL;
  if (pthread_create (&t, NULL, return_arg, &saved) != 0
      || pthread_join (t, &result) != 0 || result != &saved)
    return 33;
  printf ("with memory: started\n");
  return 0;
}

START_TEST (create_without_memory_fails)
{
  XP_TEST_SKIP_EMULATED ("RLIMIT_AS is not applied to the guest");
  char out[256];
  assert_exited_zero (run_helper ("--create-without-memory", NULL, out,
                                  sizeof out));
  ck_assert_str_eq (out, "without memory: Resource temporarily unavailable\n"
                         "with memory: started\n");
}
END_TEST

/* ---- guard page ----------------------------------------------------- */

/* Far beyond any stack; the compiler cannot tell the recursion ends.  */
static volatile int recursion_limit = 1 << 30;

static int __attribute__ ((noinline))
recurse_big_frames (int depth)
{
  volatile char frame[4096];
  if (depth == recursion_limit)
    return 0;
  frame[0] = (char) depth;
  frame[sizeof frame - 1] = (char) depth;
  /* Not a tail call: the frame is used after the recursive call.  */
  return recurse_big_frames (depth + 1) + frame[0];
}

static void *
overflow_stack (void *p)
{
  (void) p;
  recurse_big_frames (0);
  return NULL;
}

START_TEST (guard_page_stops_overflow)
{
  fflush (NULL);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      struct rlimit no_core = { 0, 0 };
      setrlimit (RLIMIT_CORE, &no_core);
      signal (SIGSEGV, SIG_DFL);
      pthread_attr_t attr;
      pthread_t t;
      if (pthread_attr_init (&attr) != 0
          || pthread_attr_setstacksize (&attr, 256 << 10) != 0
          || pthread_create (&t, &attr, overflow_stack, NULL) != 0)
        _exit (70);
      pthread_join (t, NULL);
      _exit (71);
    }
  int status = xp_test_wait_child (pid);
  ck_assert_msg (WIFSIGNALED (status) && WTERMSIG (status) == SIGSEGV,
                 "child status %#x, expected death by SIGSEGV", status);
}
END_TEST

/* ---- the suite ------------------------------------------------------ */

static void
add_case (Suite *s, const char *name, const TTest *test)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, 20);
  tcase_add_test (tc, test);
  suite_add_tcase (s, tc);
}

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], "--stack-probe") == 0)
    return helper_stack_probe ();
  if (argc == 2 && strcmp (argv[1], "--main-returns") == 0)
    return helper_main_returns ();
  if (argc == 2 && strcmp (argv[1], "--main-pthread-exit") == 0)
    return helper_main_pthread_exit ();
  if (argc == 2 && strcmp (argv[1], "--create-without-memory") == 0)
    return helper_create_without_memory ();

  Suite *s = suite_create ("process");
  add_case (s, "fork", fork_from_thread);
  add_case (s, "exit", exit_from_thread_runs_atexit);
  add_case (s, "main-returns", main_returns_with_threads_running);
  add_case (s, "main-pthread-exit", main_pthread_exit_keeps_process);
  add_case (s, "stack-size", stack_size_follows_rlimit);
  add_case (s, "guard-page", guard_page_stops_overflow);
  add_case (s, "create-without-memory", create_without_memory_fails);
  return xp_test_run (s);
}
