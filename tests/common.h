/* Shared by every Check suite.  */
#ifndef XP_TESTS_COMMON_H
#define XP_TESTS_COMMON_H

#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fail unless the program's own references to the pthread API are bound
   to libxpthread (linked with -lxpthread or preloaded), so that a suite can
   never pass by testing glibc's implementation instead.  */
void xp_test_require_xpthread (void);

/* Seconds on CLOCK_MONOTONIC since *START.  */
double xp_test_seconds_since (const struct timespec *start);

/* Seconds that ROUNDS pause instructions (the library's cpu_relax)
   take here: the shortest of three tries.  */
double xp_test_pause_seconds (int rounds);

/* How many rounds a waiter lets pass under xp_test_rerun_late.  */
#define XP_TEST_LATE_ROUNDS 16000

/* This program run again with ARG under XPTHREAD_SPIN_LATE=
   XP_TEST_LATE_ROUNDS, failing unless it succeeds; nothing where the
   process has one CPU, where nobody spins or starts late.  */
void xp_test_rerun_late (const char *arg);

/* Whether thread TID of this process sleeps in the kernel (state S).  */
bool xp_test_sleeps_in_kernel (pid_t tid);

/* The caller holds LOCK.  Start a thread (with ATTR, or none) that reads
   the clock and calls TAKE_AND_RELEASE (LOCK), and fail unless SHOWN
   (LOCK), which says that the thread spins or sleeps, stays false for at
   least a quarter of XP_TEST_LATE_ROUNDS pause rounds and becomes true
   within 2 s; then RELEASE (LOCK) and join the thread.  The thread's
   clock is read before its call, so that neither thread losing its CPU
   can make the wait look shorter than it was.  */
void xp_test_check_late_start (void *lock, void (*take_and_release) (void *),
                               void (*release) (void *),
                               bool (*shown) (void *),
                               const pthread_attr_t *attr);

/* The storm length make stress asks for (XP_STORM_SECONDS), FALLBACK
   when it asks nothing.  */
int xp_test_storm_seconds (int fallback);

/* Run PATH with ARGV and ENV in a child and return its pid; ENV
   (malloc'ed) is freed.  */
pid_t xp_test_spawn (const char *path, char *const argv[], char **env);

/* A malloc'ed copy of the environment without the variables starting
   with one of DROP (NULL-terminated), with room for EXTRA more entries;
   *USED is how many it holds.  */
char **xp_test_environment_without (const char *const drop[], size_t extra,
                                    size_t *used);

/* Wait for the child PID; its wait status.  */
int xp_test_wait_child (pid_t pid);

/* This program run again with ARG, with SETTINGS (at most 3, NULL
   ends them early) in place of the XPTHREAD_SPIN variables of the
   environment: the spin policy is read once, at start-up.  Its wait
   status.  */
int xp_test_rerun (const char *arg, const char *const settings[]);

/* Whether the suite runs under an emulator (XP_TEST_EMULATOR, which
   scripts/check-cross sets to qemu-user) that does not do WHY as a
   kernel does; then says that the test is skipped, and why.  A test
   calls XP_TEST_SKIP_EMULATED (WHY) before what the emulator distorts.  */
bool xp_test_emulated (const char *why);
#define XP_TEST_SKIP_EMULATED(why) \
  do \
    if (xp_test_emulated (why)) \
      return; \
  while (0)

/* Whether the kernel takes a robust list (set_robust_list): the kernel
   then marks the mutexes a dead thread held.  qemu-user cannot, and
   answers ENOSYS; the tests that need it then end at once, saying so.  */
bool xp_test_robust_list_works (void);
#define XP_TEST_NEEDS_ROBUST_LIST() \
  do \
    if (!xp_test_robust_list_works ()) \
      return; \
  while (0)

/* The versions this architecture's abilist (nptl-compat/<arch>/abilist)
   gives NAME, as glibc's port for it has them: every one into OUT (at
   most MAX, the default first), and how many; 0 when NAME is not there.
   "-" stands for no default version.  */
int xp_test_abi_versions (const char *name, const char *out[], int max);
/* NAME's oldest version; NULL when NAME is not in the abilist.  */
const char *xp_test_abi_oldest (const char *name);
/* NAME@VERSION, which must be libxpthread's definition; NAME in its
   oldest version.  */
void *xp_test_symbol (const char *name, const char *version);
void *xp_test_oldest_symbol (const char *name);
/* The older version of NAME whose ABI differs and has code of its own in
   libxpthread; NULL where this architecture has none (its glibc port is
   younger than that ABI).  */
const char *xp_test_abi_old_impl (const char *name);

/* Run the suite (fork mode, per-test timeouts set by the suite) and return
   the process exit status.  Every suite's main() is this call.  */
int xp_test_run (Suite *suite);

#ifdef __cplusplus
}
#endif

#endif
