#define _GNU_SOURCE
#include "common.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
require_bound_to_xpthread (const char *name, void *address)
{
  Dl_info info;
  if (dladdr (address, &info) == 0 || info.dli_fname == NULL)
    ck_abort_msg ("%s: no object contains it", name);
  ck_assert_msg (strstr (info.dli_fname, "libxpthread") != NULL,
                 "%s is bound to %s, not libxpthread", name, info.dli_fname);
}

void
xp_test_require_xpthread (void)
{
  require_bound_to_xpthread ("pthread_create", (void *) &pthread_create);
  require_bound_to_xpthread ("pthread_join", (void *) &pthread_join);
  require_bound_to_xpthread ("pthread_self", (void *) &pthread_self);
  ck_assert_msg (dlsym (RTLD_DEFAULT, "xpthread_mode_np") != NULL,
                 "xpthread_mode_np is not visible");
}

START_TEST (check_binding)
{
  xp_test_require_xpthread ();
}
END_TEST

int
xp_test_run (Suite *suite)
{
  /* Every suite starts by proving which implementation it tests.  */
  TCase *tc = tcase_create ("binding");
  tcase_add_test (tc, check_binding);
  suite_add_tcase (suite, tc);

  SRunner *runner = srunner_create (suite);
  srunner_set_fork_status (runner, CK_FORK);
  srunner_run_all (runner, CK_NORMAL);
  int failed = srunner_ntests_failed (runner);
  srunner_free (runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

double
xp_test_seconds_since (const struct timespec *start)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (double) (now.tv_sec - start->tv_sec)
         + (double) (now.tv_nsec - start->tv_nsec) / 1e9;
}

int
xp_test_storm_seconds (int fallback)
{
  const char *s = getenv ("XP_STORM_SECONDS");
  int n = s != NULL ? atoi (s) : 0;
  return n > 0 ? n : fallback;
}
