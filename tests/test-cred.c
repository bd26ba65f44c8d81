/* Per-thread credentials (<xpthread.h>), and process-wide set*id reaching
   every thread.  Most checks need root; without it they say so and check
   only what an unprivileged process can.  The functions are looked up
   with dlsym so that the suite also runs as a plain program under
   LD_PRELOAD.  */
#define _GNU_SOURCE
#include "common.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct cred_api
{
  int (*setfsuid) (uid_t);
  int (*setfsgid) (gid_t);
  uid_t (*getfsuid) (void);
  int (*setresuid) (uid_t, uid_t, uid_t);
  int (*getresuid) (uid_t *, uid_t *, uid_t *);
  int (*setgroups) (size_t, const gid_t *);
  int (*getgroups) (size_t, gid_t *, size_t *);
};

static struct cred_api api;

static void *
lookup (const char *name)
{
  void *f = dlsym (RTLD_DEFAULT, name);
  ck_assert_msg (f != NULL, "%s is not exported", name);
  return f;
}

static void
load_api (void)
{
  *(void **) &api.setfsuid = lookup ("xpthread_setfsuid_np");
  *(void **) &api.setfsgid = lookup ("xpthread_setfsgid_np");
  *(void **) &api.getfsuid = lookup ("xpthread_getfsuid_np");
  *(void **) &api.setresuid = lookup ("xpthread_setresuid_np");
  *(void **) &api.getresuid = lookup ("xpthread_getresuid_np");
  *(void **) &api.setgroups = lookup ("xpthread_setgroups_np");
  *(void **) &api.getgroups = lookup ("xpthread_getgroups_np");
}

static bool
need_root (const char *test)
{
  if (geteuid () == 0)
    return true;
  printf ("%s: skipped, needs root\n", test);
  return false;
}

/* Two workers with different file-system identities create files at the
   same time; a third thread and the main thread keep theirs.  */
struct fs_worker
{
  const char *dir;
  uid_t uid;
  pthread_barrier_t *barrier;
  int error;
  uid_t owner;
  uid_t fsuid_after_return;
};

static void *
create_as (void *arg)
{
  struct fs_worker *w = arg;
  char path[PATH_MAX];
  w->error = api.setfsuid (w->uid);
  if (w->error == 0)
    w->error = api.setfsgid (w->uid);
  pthread_barrier_wait (w->barrier);
  snprintf (path, sizeof path, "%s/file-%u", w->dir, (unsigned) w->uid);
  int fd = open (path, O_CREAT | O_WRONLY | O_EXCL, 0644);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) != 0)
    w->error = errno;
  else
    w->owner = st.st_uid;
  if (fd >= 0)
    close (fd);
  pthread_barrier_wait (w->barrier);
  api.setfsuid (0);
  w->fsuid_after_return = api.getfsuid ();
  return NULL;
}

START_TEST (fs_identity_per_thread)
{
  load_api ();
  if (!need_root ("fs_identity_per_thread"))
    return;
  char dir[] = "/tmp/xpthread-cred-XXXXXX";
  ck_assert_ptr_nonnull (mkdtemp (dir));
  ck_assert_int_eq (chmod (dir, 0777), 0);
  pthread_barrier_t barrier;
  pthread_barrier_init (&barrier, NULL, 2);
  struct fs_worker w[2] = { { dir, 1001, &barrier, 0, 0, 1 },
                            { dir, 1002, &barrier, 0, 0, 1 } };
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq (pthread_create (&t[i], NULL, create_as, &w[i]), 0);
  for (int i = 0; i < 2; i++)
    {
      pthread_join (t[i], NULL);
      ck_assert_int_eq (w[i].error, 0);
      ck_assert_int_eq (w[i].owner, w[i].uid);
      ck_assert_int_eq (w[i].fsuid_after_return, 0);
    }
  /* The main thread was never touched.  */
  ck_assert_int_eq (api.getfsuid (), 0);
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/file-main", dir);
  int fd = open (path, O_CREAT | O_WRONLY, 0644);
  struct stat st;
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (fstat (fd, &st), 0);
  ck_assert_int_eq (st.st_uid, 0);
  close (fd);
  pthread_barrier_destroy (&barrier);
  char command[PATH_MAX + 16];
  snprintf (command, sizeof command, "rm -rf %s", dir);
  ck_assert_int_eq (system (command), 0);
}
END_TEST

/* A numeric column of a line of one thread's /proc status; -1 when
   absent.  */
static long
status_field (pid_t tid, const char *field, int column)
{
  char path[64], line[512];
  snprintf (path, sizeof path, "/proc/self/task/%d/status", (int) tid);
  FILE *f = fopen (path, "r");
  long value = -1;
  size_t len = strlen (field);
  while (f != NULL && fgets (line, sizeof line, f) != NULL)
    if (strncmp (line, field, len) == 0)
      {
        char *p = line + len, *end;
        for (int i = 0; i <= column; i++, p = end)
          {
            value = strtol (p, &end, 10);
            if (end == p)
              value = -1;   /* no such column: an empty list */
          }
      }
  if (f != NULL)
    fclose (f);
  return value;
}

struct res_worker
{
  pid_t main_tid;
  int set_error, back_error;
  long own_euid, main_euid;
  size_t ngroups;
  gid_t groups[4];
  long main_groups_first;
};

static void *
switch_res (void *arg)
{
  struct res_worker *w = arg;
  static const gid_t mine[] = { 1001, 1002 };
  w->set_error = api.setresuid (-1, 1001, -1);
  w->own_euid = status_field (gettid (), "Uid:", 1);
  w->main_euid = status_field (w->main_tid, "Uid:", 1);
  w->back_error = api.setresuid (-1, 0, -1);
  if (api.setgroups (2, mine) == 0)
    api.getgroups (4, w->groups, &w->ngroups);
  w->main_groups_first = status_field (w->main_tid, "Groups:", 0);
  return NULL;
}

START_TEST (res_ids_and_groups_per_thread)
{
  load_api ();
  if (!need_root ("res_ids_and_groups_per_thread"))
    return;
  ck_assert_int_eq (setgroups (0, NULL), 0);
  struct res_worker w = { .main_tid = gettid () };
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, switch_res, &w), 0);
  pthread_join (t, NULL);
  ck_assert_int_eq (w.set_error, 0);
  ck_assert_int_eq (w.own_euid, 1001);
  ck_assert_int_eq (w.main_euid, 0);
  ck_assert_int_eq (w.back_error, 0);
  ck_assert_uint_eq (w.ngroups, 2);
  ck_assert_int_eq (w.groups[0], 1001);
  ck_assert_int_eq (w.groups[1], 1002);
  ck_assert_int_eq (w.main_groups_first, -1);   /* still no groups */
  uid_t r, e, s;
  ck_assert_int_eq (api.getresuid (&r, &e, &s), 0);
  ck_assert_int_eq (e, 0);
}
END_TEST

START_TEST (invalid_arguments)
{
  load_api ();
  static gid_t some[2];
  ck_assert_int_eq (api.setfsuid ((uid_t) -1), EINVAL);
  ck_assert_int_eq (api.setfsgid ((gid_t) -1), EINVAL);
  ck_assert_int_eq (api.setgroups ((size_t) NGROUPS_MAX + 1, some), EINVAL);
  ck_assert_int_eq (api.setgroups (3, NULL), EINVAL);
  size_t count;
  ck_assert_int_eq (api.getgroups (2, NULL, &count), EINVAL);
  ck_assert_int_eq (api.getgroups (0, NULL, &count), 0);
}
END_TEST

START_TEST (not_permitted_when_unprivileged)
{
  load_api ();
  if (!need_root ("not_permitted_when_unprivileged"))
    return;
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      static const gid_t root_group[] = { 0 };
      int fails = 0;
      if (api.setresuid (65534, 65534, 65534) != 0)
        _exit (10);
      fails += api.setfsuid (0) != EPERM;
      fails += api.setresuid (0, 0, 0) != EPERM;
      fails += api.setgroups (1, root_group) != EPERM;
      fails += api.getfsuid () != 65534;
      _exit (fails);
    }
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFEXITED (status));
  ck_assert_int_eq (WEXITSTATUS (status), 0);
}
END_TEST

/* Process-wide calls from any thread reach every thread, those xpthread
   started and the main thread.  Runs in a child that gives up root.  */
static void *
idle (void *arg)
{
  /* glibc's set*id signal interrupts pause: keep waiting.  */
  for (;;)
    pause ();
  return arg;
}

static void
timer_noop (union sigval value)
{
}

static void *
drop_privileges (void *arg)
{
  static const gid_t group[] = { 1005 };
  int err = 0;
  if (setgroups (1, group) != 0 || setresgid (1005, 1005, 1005) != 0
      || setresuid (1005, 1005, 1005) != 0)
    err = errno;
  return (void *) (long) err;
}

static int
threads_with_uid_and_group (long uid, long group)
{
  DIR *d = opendir ("/proc/self/task");
  struct dirent *e;
  int wrong = 0, seen = 0;
  while ((e = readdir (d)) != NULL)
    {
      if (e->d_name[0] == '.')
        continue;
      pid_t tid = atoi (e->d_name);
      seen++;
      wrong += status_field (tid, "Uid:", 0) != uid
               || status_field (tid, "Uid:", 1) != uid
               || status_field (tid, "Uid:", 2) != uid
               || status_field (tid, "Gid:", 0) != group
               || status_field (tid, "Groups:", 0) != group;
    }
  closedir (d);
  /* The main thread, two idle ones and glibc's timer helper.  */
  return wrong == 0 && seen >= 4 ? 0 : 1;
}

START_TEST (process_wide_setid_reaches_every_thread)
{
  if (!need_root ("process_wide_setid_reaches_every_thread"))
    return;
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      pthread_t t[2], dropper;
      void *err;
      for (int i = 0; i < 2; i++)
        pthread_create (&t[i], NULL, idle, NULL);
      /* glibc starts a helper thread of its own for SIGEV_THREAD timers. */
      struct sigevent sev = { .sigev_notify = SIGEV_THREAD,
                              .sigev_notify_function = timer_noop };
      timer_t timer;
      if (timer_create (CLOCK_MONOTONIC, &sev, &timer) != 0)
        _exit (21);
      pthread_create (&dropper, NULL, drop_privileges, NULL);
      pthread_join (dropper, &err);
      if (err != NULL)
        _exit (20);
      _exit (threads_with_uid_and_group (1005, 1005));
    }
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFEXITED (status));
  ck_assert_int_eq (WEXITSTATUS (status), 0);
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("cred");
  TCase *tc = tcase_create ("per-thread");
  tcase_set_timeout (tc, 30);
  tcase_add_test (tc, fs_identity_per_thread);
  tcase_add_test (tc, res_ids_and_groups_per_thread);
  tcase_add_test (tc, invalid_arguments);
  tcase_add_test (tc, not_permitted_when_unprivileged);
  suite_add_tcase (s, tc);
  tc = tcase_create ("process-wide");
  tcase_set_timeout (tc, 30);
  tcase_add_test (tc, process_wide_setid_reaches_every_thread);
  suite_add_tcase (s, tc);
  return xp_test_run (s);
}
