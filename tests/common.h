/* Shared by every Check suite.  */
#ifndef XP_TESTS_COMMON_H
#define XP_TESTS_COMMON_H

#include <check.h>
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

/* The storm length make stress asks for (XP_STORM_SECONDS), FALLBACK
   when it asks nothing.  */
int xp_test_storm_seconds (int fallback);

/* Run the suite (fork mode, per-test timeouts set by the suite) and return
   the process exit status.  Every suite's main() is this call.  */
int xp_test_run (Suite *suite);

#ifdef __cplusplus
}
#endif

#endif
