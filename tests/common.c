#define _GNU_SOURCE
#include "common.h"
#include <xp-cpu.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

double
xp_test_pause_seconds (int rounds)
{
  double best = 1e9;
  for (int try = 0; try < 3; try++)
    {
      struct timespec start;
      clock_gettime (CLOCK_MONOTONIC, &start);
      for (int n = 0; n < rounds; n++)
        xp_cpu_relax ();
      double took = xp_test_seconds_since (&start);
      best = took < best ? took : best;
    }
  return best;
}

int
xp_test_storm_seconds (int fallback)
{
  const char *s = getenv ("XP_STORM_SECONDS");
  int n = s != NULL ? atoi (s) : 0;
  return n > 0 ? n : fallback;
}

pid_t
xp_test_spawn (const char *path, char *const argv[], char **env)
{
  fflush (NULL);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      execve (path, argv, env);
      _exit (127);
    }
  free (env);
  return pid;
}

char **
xp_test_environment_without (const char *const drop[], size_t extra,
                             size_t *used)
{
  extern char **environ;
  size_t n = 0;
  while (environ[n] != NULL)
    n++;
  char **env = calloc (n + extra + 1, sizeof *env);
  ck_assert_ptr_nonnull (env);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    {
      bool keep = true;
      for (int d = 0; drop[d] != NULL; d++)
        keep &= strncmp (environ[i], drop[d], strlen (drop[d])) != 0;
      if (keep)
        env[k++] = environ[i];
    }
  *used = k;
  return env;
}

int
xp_test_wait_child (pid_t pid)
{
  int status;
  pid_t got;
  do
    got = waitpid (pid, &status, 0);
  while (got < 0 && errno == EINTR);
  ck_assert_int_eq (got, pid);
  return status;
}

bool
xp_test_emulated (const char *why)
{
  const char *emulator = getenv ("XP_TEST_EMULATOR");
  if (emulator == NULL || *emulator == '\0')
    return false;
  fprintf (stderr, "skipped under %s: %s\n", emulator, why);
  return true;
}

bool
xp_test_robust_list_works (void)
{
  void *head;
  size_t len;
  if (syscall (SYS_get_robust_list, 0, &head, &len) == 0)
    return true;
  fprintf (stderr, "skipped: the kernel takes no robust list (%s)\n",
           strerror (errno));
  return false;
}

/* NAME's line of the abilist, split into fields (name first); how many.  */
static int
abilist_fields (const char *name, char *line, size_t size, char *field[],
                int max)
{
  FILE *f = fopen (XP_TEST_ABILIST, "r");
  ck_assert_msg (f != NULL, "cannot read %s", XP_TEST_ABILIST);
  int n = 0;
  while (n == 0 && fgets (line, (int) size, f) != NULL)
    {
      if (line[0] == '#')
        continue;
      char *save;
      for (char *w = strtok_r (line, " \t\n", &save); w != NULL && n < max;
           w = strtok_r (NULL, " \t\n", &save))
        field[n++] = w;
      if (n > 0 && strcmp (field[0], name) != 0)
        n = 0;
    }
  fclose (f);
  return n;
}

#define ABILIST_FIELDS 8

int
xp_test_abi_versions (const char *name, const char *out[], int max)
{
  char line[512];
  char *field[ABILIST_FIELDS];
  int n = abilist_fields (name, line, sizeof line, field, ABILIST_FIELDS);
  int k = 0;
  for (int i = 1; i < n && k < max; i++)
    out[k++] = strndup (field[i], strcspn (field[i], "="));
  return k;
}

/* Whether glibc version A is older than B (GLIBC_x.y.z, numerically).  */
static bool
version_older (const char *a, const char *b)
{
  for (a += strcspn (a, "0123456789"), b += strcspn (b, "0123456789");
       *a != '\0' || *b != '\0';)
    {
      char *end_a, *end_b;
      long x = strtol (a, &end_a, 10), y = strtol (b, &end_b, 10);
      if (x != y)
        return x < y;
      a = *end_a == '.' ? end_a + 1 : end_a;
      b = *end_b == '.' ? end_b + 1 : end_b;
    }
  return false;
}

const char *
xp_test_abi_oldest (const char *name)
{
  const char *v[ABILIST_FIELDS];
  int n = xp_test_abi_versions (name, v, ABILIST_FIELDS);
  const char *oldest = NULL;
  for (int i = 0; i < n; i++)
    if (strcmp (v[i], "-") != 0
        && (oldest == NULL || version_older (v[i], oldest)))
      oldest = v[i];
  return oldest;
}

const char *
xp_test_abi_old_impl (const char *name)
{
  char line[512];
  char *field[ABILIST_FIELDS];
  int n = abilist_fields (name, line, sizeof line, field, ABILIST_FIELDS);
  for (int i = 2; i < n; i++)
    if (strchr (field[i], '=') != NULL)
      return strndup (field[i], strcspn (field[i], "="));
  return NULL;
}

void *
xp_test_symbol (const char *name, const char *version)
{
  ck_assert_msg (version != NULL, "%s: not in this architecture's abilist",
                 name);
  void *sym = dlvsym (RTLD_DEFAULT, name, version);
  ck_assert_msg (sym != NULL, "%s@%s is missing", name, version);
  Dl_info info;
  ck_assert (dladdr (sym, &info) != 0 && info.dli_fname != NULL);
  ck_assert_msg (strstr (info.dli_fname, "libxpthread") != NULL,
                 "%s@%s comes from %s", name, version, info.dli_fname);
  return sym;
}

void *
xp_test_oldest_symbol (const char *name)
{
  return xp_test_symbol (name, xp_test_abi_oldest (name));
}

int
xp_test_rerun (const char *arg, const char *const settings[])
{
  static const char *const drop[] = { "XPTHREAD_SPIN", "CK_RUN_", NULL };
  size_t k;
  char **env = xp_test_environment_without (drop, 3, &k);
  for (int i = 0; i < 3 && settings[i] != NULL; i++)
    env[k++] = (char *) settings[i];
  char self[4096];
  ssize_t len = readlink ("/proc/self/exe", self, sizeof self - 1);
  ck_assert_int_gt (len, 0);
  self[len] = '\0';
  char *argv[] = { self, (char *) arg, NULL };
  return xp_test_wait_child (xp_test_spawn (self, argv, env));
}

void
xp_test_rerun_late (const char *arg)
{
  cpu_set_t cpus;
  ck_assert_int_eq (sched_getaffinity (0, sizeof cpus, &cpus), 0);
  if (CPU_COUNT (&cpus) < 2
      || xp_test_emulated ("timings are the translator's, not the program's"))
    return;
  char setting[64];
  snprintf (setting, sizeof setting, "XPTHREAD_SPIN_LATE=%d",
            XP_TEST_LATE_ROUNDS);
  const char *const settings[] = { setting, NULL };
  int status = xp_test_rerun (arg, settings);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "the late start test: status %#x", status);
}

struct late_call
{
  void (*take_and_release) (void *);
  void *lock;
  struct timespec called;
  int calling;
};

static void *
call_after_reading_clock (void *arg)
{
  struct late_call *c = arg;
  clock_gettime (CLOCK_MONOTONIC, &c->called);
  __atomic_store_n (&c->calling, 1, __ATOMIC_RELEASE);
  c->take_and_release (c->lock);
  return NULL;
}

bool
xp_test_sleeps_in_kernel (pid_t tid)
{
  char path[64], line[512];
  snprintf (path, sizeof path, "/proc/self/task/%d/stat", (int) tid);
  FILE *f = fopen (path, "r");
  ck_assert_msg (f != NULL, "no %s", path);
  size_t len = fread (line, 1, sizeof line - 1, f);
  fclose (f);
  line[len] = '\0';
  const char *end_of_name = strrchr (line, ')');
  return end_of_name != NULL && strncmp (end_of_name, ") S", 3) == 0;
}

void
xp_test_check_late_start (void *lock, void (*take_and_release) (void *),
                          void (*release) (void *), bool (*shown) (void *),
                          const pthread_attr_t *attr)
{
  double late = xp_test_pause_seconds (XP_TEST_LATE_ROUNDS);
  struct late_call c = { .take_and_release = take_and_release,
                         .lock = lock };
  pthread_t waiter;
  ck_assert_int_eq (pthread_create (&waiter, attr, call_after_reading_clock,
                                    &c), 0);
  while (!__atomic_load_n (&c.calling, __ATOMIC_ACQUIRE))
    ;
  bool seen = false;
  while (!seen && xp_test_seconds_since (&c.called) < 2)
    seen = shown (lock);
  double after = xp_test_seconds_since (&c.called);
  release (lock);
  ck_assert_int_eq (pthread_join (waiter, NULL), 0);
  ck_assert_msg (seen, "the waiter neither spun nor slept within 2 s");
  ck_assert_msg (after >= late / 4, "the waiter showed itself after %.0f "
                 "us, not letting %d rounds (%.0f us) pass first",
                 after * 1e6, XP_TEST_LATE_ROUNDS, late * 1e6);
}
