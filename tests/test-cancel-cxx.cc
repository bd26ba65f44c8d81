// pthread_exit and pthread_cancel unwind C++ frames: destructors run,
// `catch (abi::__forced_unwind &)` and `catch (...)` see the unwinding and
// rethrowing it carries on, C cleanup handlers (in C++ the class-based
// pthread_cleanup_push) and RAII objects run together in stack order,
// thread_local destructors run after them and thread-specific data
// destructors last, and swallowing the unwinding aborts the process with a
// message, as glibc does.
//
// Worker threads never call the Check API: they record what they saw and
// the main thread asserts.

#include "common.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

namespace
{
// ---- helpers ---------------------------------------------------------

// The events of a test, in order, as letters.
char event_log[64];
std::atomic<int> event_len{0};

void
record (char c)
{
  int i = event_len++;
  if (i < (int) sizeof event_log - 1)
    event_log[i] = c;
}

extern "C" void
record_handler (void *arg)
{
  record ((char) (uintptr_t) arg);
}

void *
ev (char c)
{
  return (void *) (uintptr_t) c;
}

struct Recorder
{
  char c;
  explicit Recorder (char c_) : c (c_) {}
  ~Recorder () { record (c); }
};

std::atomic<int> ready{0};

// How a worker leaves its innermost frame: pthread_exit with this value,
// or a cancel acting at pthread_testcancel.
void *const exit_value = (void *) 0x1234;

enum How
{
  BY_EXIT,
  BY_CANCEL
};

[[noreturn]] void
leave (How how)
{
  if (how == BY_EXIT)
    pthread_exit (exit_value);
  ready = 1;
  for (;;)
    pthread_testcancel ();
}

void *
join_result (pthread_t t)
{
  void *result = (void *) 0xdead;
  ck_assert_int_eq (pthread_join (t, &result), 0);
  return result;
}

// Start the worker, let it leave as told, and check its result.
void
run_worker (void *(*start) (void *), How how)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, nullptr, start, (void *) how), 0);
  if (how == BY_CANCEL)
    {
      while (ready.load () == 0)
        sched_yield ();
      ck_assert_int_eq (pthread_cancel (t), 0);
      ck_assert_ptr_eq (join_result (t), PTHREAD_CANCELED);
    }
  else
    ck_assert_ptr_eq (join_result (t), exit_value);
}

How
how_of (void *arg)
{
  return (How) (uintptr_t) arg;
}

void
require_bound_to_xpthread (const char *name, void *address)
{
  Dl_info info;
  ck_assert_msg (dladdr (address, &info) != 0 && info.dli_fname != nullptr,
                 "%s: no object contains it", name);
  ck_assert_msg (std::strstr (info.dli_fname, "libxpthread") != nullptr,
                 "%s is bound to %s, not libxpthread", name, info.dli_fname);
}
}

START_TEST (cancel_functions_are_xpthread)
{
  require_bound_to_xpthread ("pthread_cancel", (void *) &pthread_cancel);
  require_bound_to_xpthread ("pthread_exit", (void *) &pthread_exit);
  require_bound_to_xpthread ("pthread_testcancel",
                             (void *) &pthread_testcancel);
}
END_TEST

// ---- destructors -----------------------------------------------------

namespace
{
void __attribute__ ((noinline))
destructors_deep (How how, int depth)
{
  if (depth < 0)
    return;
  Recorder r ((char) ('0' + depth));
  if (depth == 0)
    leave (how);
  destructors_deep (how, depth - 1);
}

void *
destructors_start (void *arg)
{
  Recorder outer ('o');
  destructors_deep (how_of (arg), 5);
  return nullptr;
}
}

START_TEST (unwinding_runs_destructors)
{
  run_worker (destructors_start, How (_i));
  ck_assert_str_eq (event_log, "012345o");
}
END_TEST

// ---- catch (abi::__forced_unwind &) and catch (...) ------------------

namespace
{
void __attribute__ ((noinline))
inner_frame (How how)
{
  Recorder r ('i');
  leave (how);
}

void *
catch_forced_unwind (void *arg)
{
  Recorder outer ('o');
  try
    {
      Recorder in_try ('t');
      inner_frame (how_of (arg));
    }
  catch (abi::__forced_unwind &)
    {
      record ('F');
      throw;
    }
  catch (...)
    {
      record ('?');
      throw;
    }
  return nullptr;
}

void *
catch_all (void *arg)
{
  Recorder outer ('o');
  try
    {
      Recorder in_try ('t');
      inner_frame (how_of (arg));
    }
  catch (...)
    {
      record ('A');
      throw;
    }
  return nullptr;
}

// Ordinary exceptions still work in a thread that is then cancelled: a
// catch of std::exception does not see the unwinding.
void *
catch_typed (void *arg)
{
  Recorder outer ('o');
  try
    {
      throw std::string ("x");
    }
  catch (const std::string &s)
    {
      record (s[0]);
    }
  try
    {
      inner_frame (how_of (arg));
    }
  catch (const std::exception &)
    {
      record ('?');
    }
  return nullptr;
}
}

START_TEST (forced_unwind_caught_and_rethrown)
{
  run_worker (catch_forced_unwind, How (_i));
  ck_assert_str_eq (event_log, "itFo");
}
END_TEST

START_TEST (catch_all_rethrown)
{
  run_worker (catch_all, How (_i));
  ck_assert_str_eq (event_log, "itAo");
}
END_TEST

START_TEST (typed_catch_does_not_see_unwinding)
{
  run_worker (catch_typed, How (_i));
  ck_assert_str_eq (event_log, "xio");
}
END_TEST

// ---- C cleanup handlers and RAII objects -----------------------------

namespace
{
void __attribute__ ((noinline))
interleaved_inner (How how)
{
  pthread_cleanup_push (record_handler, ev ('d'));
  Recorder e ('e');
  pthread_cleanup_push (record_handler, ev ('x'));
  pthread_cleanup_pop (1);
  pthread_cleanup_push (record_handler, ev ('y'));
  pthread_cleanup_pop (0);
  pthread_cleanup_push (record_handler, ev ('f'));
  Recorder g ('g');
  leave (how);
  pthread_cleanup_pop (0);
  pthread_cleanup_pop (0);
}

void *
interleaved_start (void *arg)
{
  Recorder a ('a');
  pthread_cleanup_push (record_handler, ev ('b'));
  {
    Recorder c ('c');
    interleaved_inner (how_of (arg));
  }
  pthread_cleanup_pop (0);
  return nullptr;
}
}

START_TEST (cleanup_handlers_and_raii_in_stack_order)
{
  run_worker (interleaved_start, How (_i));
  ck_assert_str_eq (event_log, "xgfedcba");
}
END_TEST

// ---- thread_local and thread-specific data ---------------------------

namespace
{
thread_local Recorder tls_recorder ('T');
pthread_key_t tsd_key;

extern "C" void
tsd_destructor (void *value)
{
  record ((char) (uintptr_t) value);
}

void *
thread_local_start (void *arg)
{
  pthread_setspecific (tsd_key, ev ('K'));
  pthread_cleanup_push (record_handler, ev ('C'));
  Recorder r ('R');
  // Constructed here, in this thread: destroyed at its exit.
  if (tls_recorder.c != 'T')
    record ('?');
  leave (how_of (arg));
  pthread_cleanup_pop (0);
  return nullptr;
}
}

START_TEST (thread_local_after_cleanup_handlers)
{
  ck_assert_int_eq (pthread_key_create (&tsd_key, tsd_destructor), 0);
  run_worker (thread_local_start, How (_i));
  ck_assert_str_eq (event_log, "RCTK");
}
END_TEST

// ---- std::thread -----------------------------------------------------

// libstdc++'s thread trampoline lets the unwinding through.
START_TEST (pthread_exit_in_std_thread)
{
  std::thread t ([] {
    Recorder r ('s');
    pthread_cleanup_push (record_handler, ev ('c'));
    pthread_exit (nullptr);
    pthread_cleanup_pop (0);
  });
  t.join ();
  ck_assert_str_eq (event_log, "cs");
}
END_TEST

// ---- swallowing the unwinding ----------------------------------------

namespace
{
void *
swallow (void *arg)
{
  try
    {
      inner_frame (how_of (arg));
    }
  catch (...)
    {
      record ('S');
    }
  // Reached only after the catch ended, which must have aborted.
  std::fputs ("swallowed\n", stdout);
  std::fflush (stdout);
  return nullptr;
}
}

// glibc aborts with "FATAL: exception not rethrown"; xpthread aborts
// with a message too.  Both say "not rethrown".
START_TEST (swallowed_unwinding_aborts)
{
  int err[2];
  ck_assert_int_eq (pipe (err), 0);
  std::fflush (nullptr);
  pid_t pid = fork ();
  ck_assert_int_ne (pid, -1);
  if (pid == 0)
    {
      dup2 (err[1], 2);
      dup2 (err[1], 1);
      close (err[0]);
      close (err[1]);
      pthread_t t;
      if (pthread_create (&t, nullptr, swallow, (void *) (uintptr_t) _i) != 0)
        _exit (3);
      if (_i == BY_CANCEL)
        {
          while (ready.load () == 0)
            sched_yield ();
          pthread_cancel (t);
        }
      pthread_join (t, nullptr);
      _exit (0);
    }
  close (err[1]);
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = read (err[0], buf, sizeof buf)) > 0)
    out.append (buf, (size_t) n);
  close (err[0]);
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert_msg (WIFSIGNALED (status) && WTERMSIG (status) == SIGABRT,
                 "child status %#x, output: %s", status, out.c_str ());
  ck_assert_msg (out.find ("not rethrown") != std::string::npos,
                 "no message: %s", out.c_str ());
  ck_assert_msg (out.find ("swallowed") == std::string::npos,
                 "the thread went on: %s", out.c_str ());
}
END_TEST

// ---- the suite -------------------------------------------------------

static void
add_case (Suite *s, const char *name, const TTest *test, int loops)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, 20);
  tcase_add_loop_test (tc, test, 0, loops);
  suite_add_tcase (s, tc);
}

int
main ()
{
  Suite *s = suite_create ("cancel-cxx");
  add_case (s, "binding-cancel", cancel_functions_are_xpthread, 1);
  // Each loop runs by pthread_exit (0) and by pthread_cancel (1).
  add_case (s, "destructors", unwinding_runs_destructors, 2);
  add_case (s, "forced_unwind", forced_unwind_caught_and_rethrown, 2);
  add_case (s, "catch-all", catch_all_rethrown, 2);
  add_case (s, "typed-catch", typed_catch_does_not_see_unwinding, 2);
  add_case (s, "cleanup-and-raii", cleanup_handlers_and_raii_in_stack_order,
            2);
  add_case (s, "thread_local", thread_local_after_cleanup_handlers, 2);
  add_case (s, "std-thread", pthread_exit_in_std_thread, 1);
  add_case (s, "swallow", swallowed_unwinding_aborts, 2);
  return xp_test_run (s);
}
