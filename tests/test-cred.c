/* Per-thread credentials (<xpthread.h>), process-wide set*id reaching
   every thread, and a switch seeing a process-wide change.  Most tests need root: without it they are not run at all
   (so that they cannot count as passed) and the suite prints how many it
   skipped.  The functions are looked up with dlsym so that the suite also
   runs as a plain program under LD_PRELOAD.  Tests that change the
   process's ids rely on Check running each test in a child process.  */
#define _GNU_SOURCE
#include "common.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xpthread.h>

struct cred_api
{
  int (*setfsuid) (uid_t);
  int (*setfsgid) (gid_t);
  uid_t (*getfsuid) (void);
  gid_t (*getfsgid) (void);
  int (*setresuid) (uid_t, uid_t, uid_t);
  int (*setresgid) (gid_t, gid_t, gid_t);
  int (*getresuid) (uid_t *, uid_t *, uid_t *);
  int (*getresgid) (gid_t *, gid_t *, gid_t *);
  int (*setgroups) (size_t, const gid_t *);
  int (*getgroups) (size_t, gid_t *, size_t *);
  int (*identity_switch) (const struct xpthread_identity_np *, int,
                          struct xpthread_identity_saved_np *);
  int (*identity_restore) (struct xpthread_identity_saved_np *);
};

static struct cred_api api;

static void *
lookup (const char *name)
{
  void *f = dlsym (RTLD_DEFAULT, name);
  ck_assert_msg (f != NULL, "%s is not exported", name);
  return f;
}

/* A fixture: every test starts with the API at hand.  */
static void
load_api (void)
{
  *(void **) &api.setfsuid = lookup ("xpthread_setfsuid_np");
  *(void **) &api.setfsgid = lookup ("xpthread_setfsgid_np");
  *(void **) &api.getfsuid = lookup ("xpthread_getfsuid_np");
  *(void **) &api.getfsgid = lookup ("xpthread_getfsgid_np");
  *(void **) &api.setresuid = lookup ("xpthread_setresuid_np");
  *(void **) &api.setresgid = lookup ("xpthread_setresgid_np");
  *(void **) &api.getresuid = lookup ("xpthread_getresuid_np");
  *(void **) &api.getresgid = lookup ("xpthread_getresgid_np");
  *(void **) &api.setgroups = lookup ("xpthread_setgroups_np");
  *(void **) &api.getgroups = lookup ("xpthread_getgroups_np");
  *(void **) &api.identity_switch = lookup ("xpthread_identity_switch_np");
  *(void **) &api.identity_restore = lookup ("xpthread_identity_restore_np");
}

/* The numbers of one line ("Uid:", "Gid:", "Groups:") of a thread's
   /proc status, at most MAX of them; how many there were.  */
static int
status_numbers (pid_t tid, const char *field, long *out, int max)
{
  char path[64], line[4096];
  snprintf (path, sizeof path, "/proc/self/task/%d/status", (int) tid);
  FILE *f = fopen (path, "r");
  ck_assert_msg (f != NULL, "cannot open %s", path);
  size_t len = strlen (field);
  int n = -1;
  while (n < 0 && fgets (line, sizeof line, f) != NULL)
    if (strncmp (line, field, len) == 0)
      {
        char *p = line + len, *end;
        for (n = 0; n < max; n++, p = end)
          {
            out[n] = strtol (p, &end, 10);
            if (end == p)
              break;
          }
      }
  fclose (f);
  ck_assert_msg (n >= 0, "%s has no %s line", path, field);
  return n;
}

/* Compare a thread's real, effective, saved and file-system ids.  */
static void
assert_ids (pid_t tid, const char *field, long r, long e, long s, long fs)
{
  long v[4];
  ck_assert_int_eq (status_numbers (tid, field, v, 4), 4);
  ck_assert_msg (v[0] == r && v[1] == e && v[2] == s && v[3] == fs,
                 "thread %d: %s %ld %ld %ld %ld, expected %ld %ld %ld %ld",
                 (int) tid, field, v[0], v[1], v[2], v[3], r, e, s, fs);
}

static void
assert_groups (pid_t tid, int n, const long *expected)
{
  long v[64];
  int got = status_numbers (tid, "Groups:", v, 64);
  ck_assert_msg (got == n, "thread %d has %d groups, expected %d",
                 (int) tid, got, n);
  for (int i = 0; i < n; i++)
    ck_assert_msg (v[i] == expected[i], "thread %d: group %d is %ld, not %ld",
                   (int) tid, i, v[i], expected[i]);
}

/* Create PATH and return its owner and group.  */
static void
create_file (const char *path, uid_t *uid, gid_t *gid)
{
  int fd = open (path, O_CREAT | O_WRONLY | O_EXCL, 0644);
  ck_assert_msg (fd >= 0, "cannot create %s: %s", path, strerror (errno));
  struct stat st;
  ck_assert_int_eq (fstat (fd, &st), 0);
  close (fd);
  *uid = st.st_uid;
  *gid = st.st_gid;
}

/* A directory anyone may create files in, removed at exit.  */
static char scratch[] = "/tmp/xpthread-cred-XXXXXX";

static void
remove_scratch (void)
{
  char command[sizeof scratch + 16];
  snprintf (command, sizeof command, "rm -rf %s", scratch);
  if (system (command) != 0)
    fprintf (stderr, "cannot remove %s\n", scratch);
}

static void
make_scratch (void)
{
  ck_assert_ptr_nonnull (mkdtemp (scratch));
  ck_assert_int_eq (chmod (scratch, 0777), 0);
  atexit (remove_scratch);
}

/* Make system call NR fail with EPERM in the calling thread (and threads
   it creates later) when argument ARG holds VALUE in its low 32 bits (ids
   are 32 bits), or always when ARG is -1.  Stacked filters all apply.  */
static void
deny_syscall (int nr, int arg, uint32_t value)
{
  uint32_t offset = offsetof (struct seccomp_data, args)
                    + 8 * (arg < 0 ? 0 : arg);
  struct sock_filter code[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 3),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offset),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, value, 0, arg < 0 ? 0 : 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { sizeof code / sizeof code[0], code };
  ck_assert_int_eq (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
  ck_assert_int_eq (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
}

/* Threads that wait until the process ends; glibc's set*id signal
   interrupts pause, so keep waiting.  */
static void *
idle (void *arg)
{
  for (;;)
    pause ();
  return arg;
}

/* ---- per-thread ids ------------------------------------------------- */

/* Two workers with different file-system identities create files at the
   same time; a third thread and the main thread keep theirs; the workers
   return to root.  */
struct fs_worker
{
  uid_t uid;
  pthread_barrier_t *barrier;
  int error;
  uid_t owner;
  gid_t group;
  int back_error;
  uid_t fsuid_after_return;
};

static void *
create_as (void *arg)
{
  struct fs_worker *w = arg;
  char path[PATH_MAX];
  w->error = api.setfsgid (w->uid);
  if (w->error == 0)
    w->error = api.setfsuid (w->uid);
  pthread_barrier_wait (w->barrier);
  snprintf (path, sizeof path, "%s/file-%u", scratch, (unsigned) w->uid);
  if (w->error == 0)
    create_file (path, &w->owner, &w->group);
  /* The third thread is checked while both workers are switched.  */
  pthread_barrier_wait (w->barrier);
  pthread_barrier_wait (w->barrier);
  w->back_error = api.setfsuid (0);
  w->fsuid_after_return = api.getfsuid ();
  return NULL;
}

static void *
report_tid (void *arg)
{
  *(pid_t *) arg = gettid ();
  for (;;)
    pause ();
  return NULL;
}

START_TEST (fs_identity_per_thread)
{
  make_scratch ();
  pthread_barrier_t barrier;
  pthread_barrier_init (&barrier, NULL, 3);
  struct fs_worker w[2] = { { .uid = 1001, .barrier = &barrier },
                            { .uid = 1002, .barrier = &barrier } };
  pthread_t t[2], third;
  volatile pid_t third_tid = 0;
  ck_assert_int_eq (pthread_create (&third, NULL, report_tid,
                                    (void *) &third_tid), 0);
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq (pthread_create (&t[i], NULL, create_as, &w[i]), 0);
  pthread_barrier_wait (&barrier);
  pthread_barrier_wait (&barrier);
  while (third_tid == 0)
    sched_yield ();
  assert_ids (third_tid, "Uid:", 0, 0, 0, 0);
  assert_ids (third_tid, "Gid:", 0, 0, 0, 0);
  assert_ids (gettid (), "Uid:", 0, 0, 0, 0);
  pthread_barrier_wait (&barrier);
  for (int i = 0; i < 2; i++)
    {
      pthread_join (t[i], NULL);
      ck_assert_int_eq (w[i].error, 0);
      ck_assert_int_eq (w[i].owner, w[i].uid);
      ck_assert_int_eq (w[i].group, w[i].uid);
      ck_assert_int_eq (w[i].back_error, 0);
      ck_assert_int_eq (w[i].fsuid_after_return, 0);
    }
  char path[PATH_MAX];
  uid_t owner;
  gid_t group;
  snprintf (path, sizeof path, "%s/file-main", scratch);
  create_file (path, &owner, &group);
  ck_assert_int_eq (owner, 0);
  ck_assert_int_eq (api.getfsuid (), 0);
  pthread_barrier_destroy (&barrier);
}
END_TEST

struct res_worker
{
  pid_t main_tid;
  int set_error, back_error;
  long own_euid, main_euid;
  size_t ngroups;
  gid_t groups[4];
  long main_ngroups;
};

static void *
switch_res (void *arg)
{
  struct res_worker *w = arg;
  static const gid_t mine[] = { 1001, 1002 };
  long ids[4];
  w->set_error = api.setresuid (-1, 1001, -1);
  status_numbers (gettid (), "Uid:", ids, 4);
  w->own_euid = ids[1];
  status_numbers (w->main_tid, "Uid:", ids, 4);
  w->main_euid = ids[1];
  w->back_error = api.setresuid (-1, 0, -1);
  if (api.setgroups (2, mine) == 0)
    api.getgroups (4, w->groups, &w->ngroups);
  w->main_ngroups = status_numbers (w->main_tid, "Groups:", ids, 4);
  return NULL;
}

START_TEST (res_ids_and_groups_per_thread)
{
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
  ck_assert_int_eq (w.main_ngroups, 0);
  uid_t r, e, s;
  ck_assert_int_eq (api.getresuid (&r, &e, &s), 0);
  ck_assert_int_eq (e, 0);
  gid_t rg, eg, sg;
  ck_assert_int_eq (api.setresgid (-1, 1003, -1), 0);
  ck_assert_int_eq (api.getresgid (&rg, &eg, &sg), 0);
  ck_assert_int_eq (eg, 1003);
  ck_assert_int_eq (api.getfsgid (), 1003);
}
END_TEST

/* The current identity of the calling thread as a switch target, so that
   a switch needs no privilege.  */
static gid_t own_groups[NGROUPS_MAX];

static struct xpthread_identity_np
own_identity (void)
{
  size_t n;
  ck_assert_int_eq (api.getgroups (NGROUPS_MAX, own_groups, &n), 0);
  return (struct xpthread_identity_np) { geteuid (), getegid (), n,
                                         own_groups };
}

static void *
restore_here (void *saved)
{
  return (void *) (long) api.identity_restore (saved);
}

START_TEST (invalid_arguments)
{
  static gid_t some[2];
  ck_assert_int_eq (api.setfsuid ((uid_t) -1), EINVAL);
  ck_assert_int_eq (api.setfsgid ((gid_t) -1), EINVAL);
  ck_assert_int_eq (api.setgroups ((size_t) NGROUPS_MAX + 1, some), EINVAL);
  ck_assert_int_eq (api.setgroups (3, NULL), EINVAL);
  size_t count;
  ck_assert_int_eq (api.getgroups (2, NULL, &count), EINVAL);
  ck_assert_int_eq (api.getgroups (0, NULL, &count), 0);
  ck_assert_int_eq (api.getgroups (0, NULL, NULL), EINVAL);

  struct xpthread_identity_saved_np saved;
  struct xpthread_identity_np id = own_identity ();
  struct xpthread_identity_np bad = id;
  bad.uid = (uid_t) -1;
  ck_assert_int_eq (api.identity_switch (&bad, 0, &saved), EINVAL);
  bad = id;
  bad.gid = (gid_t) -1;
  ck_assert_int_eq (api.identity_switch (&bad, 0, &saved), EINVAL);
  bad = id;
  bad.ngroups = (size_t) NGROUPS_MAX + 1;
  ck_assert_int_eq (api.identity_switch (&bad, 0, &saved), EINVAL);
  bad = id;
  bad.ngroups = 2;
  bad.groups = NULL;
  ck_assert_int_eq (api.identity_switch (&bad, 0, &saved), EINVAL);
  ck_assert_int_eq (api.identity_switch (&id, 2, &saved), EINVAL);
  ck_assert_int_eq (api.identity_switch (NULL, 0, &saved), EINVAL);
  ck_assert_int_eq (api.identity_switch (&id, 0, NULL), EINVAL);
  ck_assert_int_eq (api.identity_restore (NULL), EINVAL);

  /* A switch to the thread's own identity needs no privilege; its saved
     identity can be restored once, and only by the same thread.  */
  ck_assert_int_eq (api.identity_switch (&id, 0, &saved), 0);
  pthread_t t;
  void *err;
  ck_assert_int_eq (pthread_create (&t, NULL, restore_here, &saved), 0);
  pthread_join (t, &err);
  ck_assert_int_eq ((long) err, EINVAL);
  ck_assert_int_eq (api.identity_restore (&saved), 0);
  ck_assert_int_eq (api.identity_restore (&saved), EINVAL);
}
END_TEST

START_TEST (not_permitted_when_unprivileged)
{
  static const gid_t root_group[] = { 0 };
  ck_assert_int_eq (api.setgroups (0, NULL), 0);
  ck_assert_int_eq (api.setresgid (65534, 65534, 65534), 0);
  ck_assert_int_eq (api.setresuid (65534, 65534, 65534), 0);
  ck_assert_int_eq (api.setfsuid (0), EPERM);
  ck_assert_int_eq (api.setfsgid (0), EPERM);
  ck_assert_int_eq (api.setresuid (0, 0, 0), EPERM);
  ck_assert_int_eq (api.setresgid (0, 0, 0), EPERM);
  ck_assert_int_eq (api.setgroups (1, root_group), EPERM);
  ck_assert_int_eq (api.getfsuid (), 65534);
  ck_assert_int_eq (api.getfsgid (), 65534);

  struct xpthread_identity_saved_np saved;
  struct xpthread_identity_np root = { 0, 0, 1, root_group };
  ck_assert_int_eq (api.identity_switch (&root, 0, &saved), EPERM);
  ck_assert_int_eq (api.identity_switch (&root, XPTHREAD_IDENTITY_FS_ONLY,
                                         &saved), EPERM);
  assert_ids (gettid (), "Uid:", 65534, 65534, 65534, 65534);
  assert_ids (gettid (), "Gid:", 65534, 65534, 65534, 65534);
  assert_groups (gettid (), 0, NULL);
}
END_TEST

/* ---- identity switch ------------------------------------------------ */

static const gid_t user_groups[] = { 1001, 2000 };
static const long user_groups_l[] = { 1001, 2000 };
static const struct xpthread_identity_np user = { 1001, 1001, 2,
                                                  user_groups };

struct switch_worker
{
  int flags;
  pid_t main_tid;
};

static void *
switch_and_return (void *arg)
{
  struct switch_worker *w = arg;
  struct xpthread_identity_saved_np saved, nested;
  bool fs = w->flags & XPTHREAD_IDENTITY_FS_ONLY;
  pid_t self = gettid ();
  static const long root_group[] = { 0 };
  char path[PATH_MAX];
  uid_t owner;
  gid_t group;

  ck_assert_int_eq (api.identity_switch (&user, w->flags, &saved), 0);
  assert_ids (self, "Uid:", 0, fs ? 0 : 1001, 0, 1001);
  assert_ids (self, "Gid:", 0, fs ? 0 : 1001, 0, 1001);
  assert_groups (self, 2, user_groups_l);
  assert_ids (w->main_tid, "Uid:", 0, 0, 0, 0);
  assert_groups (w->main_tid, 1, root_group);
  snprintf (path, sizeof path, "%s/as-user-%d", scratch, w->flags);
  create_file (path, &owner, &group);
  ck_assert_int_eq (owner, 1001);
  ck_assert_int_eq (group, 1001);

  /* Already that identity: nothing to do either way.  */
  ck_assert_int_eq (api.identity_switch (&user, w->flags, &nested), 0);
  ck_assert_int_eq (api.identity_restore (&nested), 0);
  assert_ids (self, "Uid:", 0, fs ? 0 : 1001, 0, 1001);

  ck_assert_int_eq (api.identity_restore (&saved), 0);
  assert_ids (self, "Uid:", 0, 0, 0, 0);
  assert_ids (self, "Gid:", 0, 0, 0, 0);
  assert_groups (self, 1, root_group);
  snprintf (path, sizeof path, "%s/as-root-%d", scratch, w->flags);
  create_file (path, &owner, &group);
  ck_assert_int_eq (owner, 0);
  return NULL;
}

static void
switch_in_worker (int flags)
{
  static const gid_t root_group[] = { 0 };
  ck_assert_int_eq (setgroups (1, root_group), 0);
  make_scratch ();
  struct switch_worker w = { flags, gettid () };
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, switch_and_return, &w), 0);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
}

START_TEST (identity_full_switch_and_restore)
{
  switch_in_worker (0);
}
END_TEST

START_TEST (identity_fs_only_switch_and_restore)
{
  switch_in_worker (XPTHREAD_IDENTITY_FS_ONLY);
}
END_TEST

/* The previous identity may hold more groups than the saved area has
   inline room for.  */
START_TEST (identity_many_groups)
{
  enum { MANY = XPTHREAD_IDENTITY_INLINE_GROUPS + 8 };
  gid_t many[MANY], back[MANY + 1];
  long many_l[MANY];
  for (int i = 0; i < MANY; i++)
    many_l[i] = many[i] = 3000 + i;
  ck_assert_int_eq (api.setgroups (MANY, many), 0);
  for (int flags = 0; flags <= XPTHREAD_IDENTITY_FS_ONLY; flags++)
    {
      struct xpthread_identity_saved_np saved;
      ck_assert_int_eq (api.identity_switch (&user, flags, &saved), 0);
      assert_groups (gettid (), 2, user_groups_l);
      ck_assert_int_eq (api.identity_restore (&saved), 0);
      size_t n;
      ck_assert_int_eq (api.getgroups (MANY + 1, back, &n), 0);
      ck_assert_uint_eq (n, MANY);
      assert_groups (gettid (), MANY, many_l);
    }
}
END_TEST

/* A switch to the identity the thread has from its previous switch makes
   no system call (a denied getgroups would fail it); any other change of
   the thread's credentials through the library ends that.  */
START_TEST (identity_noop_switch)
{
  struct xpthread_identity_saved_np saved, nested;
  ck_assert_int_eq (api.identity_switch (&user, XPTHREAD_IDENTITY_FS_ONLY,
                                         &saved), 0);
  deny_syscall (SYS_getgroups, -1, 0);
  ck_assert_int_eq (api.identity_switch (&user, XPTHREAD_IDENTITY_FS_ONLY,
                                         &nested), 0);
  ck_assert_int_eq (api.identity_restore (&nested), 0);
  /* The same ids in the other mode are another identity.  */
  ck_assert_int_eq (api.identity_switch (&user, 0, &nested), EPERM);
  ck_assert_int_eq (api.setfsuid (1001), 0);
  ck_assert_int_eq (api.identity_switch (&user, XPTHREAD_IDENTITY_FS_ONLY,
                                         &nested), EPERM);
  ck_assert_int_eq (api.identity_restore (&saved), 0);
  assert_ids (gettid (), "Uid:", 0, 0, 0, 0);
}
END_TEST

/* A full switch whose last step is refused leaves the thread exactly as
   it was: groups and gid are put back.  */
START_TEST (identity_failure_part_way_rolls_back)
{
  static const gid_t root_group[] = { 0 };
  static const long root_group_l[] = { 0 };
  ck_assert_int_eq (api.setgroups (1, root_group), 0);
  deny_syscall (SYS_setresuid, 1, 1001);
  deny_syscall (SYS_setfsuid, 0, 1001);
  struct xpthread_identity_saved_np saved;
  for (int flags = 0; flags <= XPTHREAD_IDENTITY_FS_ONLY; flags++)
    {
      ck_assert_int_eq (api.identity_switch (&user, flags, &saved), EPERM);
      assert_ids (gettid (), "Uid:", 0, 0, 0, 0);
      assert_ids (gettid (), "Gid:", 0, 0, 0, 0);
      assert_groups (gettid (), 1, root_group_l);
      ck_assert_int_eq (api.identity_restore (&saved), EINVAL);
    }
}
END_TEST

/* If the previous identity cannot be put back, the process stops.  */
START_TEST (identity_restore_failure_aborts)
{
  struct xpthread_identity_saved_np saved;
  ck_assert_int_eq (api.identity_switch (&user, 0, &saved), 0);
  deny_syscall (SYS_setresuid, 0, 0);
  api.identity_restore (&saved);
}
END_TEST

START_TEST (identity_rollback_failure_aborts)
{
  ck_assert_int_eq (api.setgroups (0, NULL), 0);
  deny_syscall (SYS_setresuid, 1, 1001);
  deny_syscall (SYS_setgroups, 0, 0);
  struct xpthread_identity_saved_np saved;
  api.identity_switch (&user, 0, &saved);
}
END_TEST

/* ---- process-wide set*id -------------------------------------------- */

static const gid_t new_groups[] = { 1005, 1006 };

static int
call_setgroups (void)
{
  return setgroups (2, new_groups);
}

static int
call_initgroups (void)
{
  /* A user in no group: the list becomes just the given group.  */
  return initgroups ("xpthread-test-no-such-user", 1005);
}

#define CALL(name, ...) \
  static int call_##name (void) { return name (__VA_ARGS__); }
CALL (setuid, 1005)
CALL (setgid, 1005)
CALL (seteuid, 1005)
CALL (setegid, 1005)
CALL (setreuid, 1005, 1006)
CALL (setregid, 1005, 1006)
CALL (setresuid, 1005, 1006, 1007)
CALL (setresgid, 1005, 1006, 1007)
#undef CALL

/* Each call from root, and the ids every thread must have afterwards:
   real, effective, saved, file-system uid, the same for gid, groups.  */
static const struct setid_case
{
  const char *name;
  int (*call) (void);
  long uid[4], gid[4];
  int ngroups;
  long groups[2];
} setid_cases[] = {
  { "setuid", call_setuid, { 1005, 1005, 1005, 1005 }, { 0, 0, 0, 0 }, 0,
    { 0 } },
  { "setgid", call_setgid, { 0, 0, 0, 0 }, { 1005, 1005, 1005, 1005 }, 0,
    { 0 } },
  { "seteuid", call_seteuid, { 0, 1005, 0, 1005 }, { 0, 0, 0, 0 }, 0,
    { 0 } },
  { "setegid", call_setegid, { 0, 0, 0, 0 }, { 0, 1005, 0, 1005 }, 0,
    { 0 } },
  { "setreuid", call_setreuid, { 1005, 1006, 1006, 1006 }, { 0, 0, 0, 0 },
    0, { 0 } },
  { "setregid", call_setregid, { 0, 0, 0, 0 }, { 1005, 1006, 1006, 1006 },
    0, { 0 } },
  { "setresuid", call_setresuid, { 1005, 1006, 1007, 1006 }, { 0, 0, 0, 0 },
    0, { 0 } },
  { "setresgid", call_setresgid, { 0, 0, 0, 0 }, { 1005, 1006, 1007, 1006 },
    0, { 0 } },
  { "setgroups", call_setgroups, { 0, 0, 0, 0 }, { 0, 0, 0, 0 }, 2,
    { 1005, 1006 } },
  { "initgroups", call_initgroups, { 0, 0, 0, 0 }, { 0, 0, 0, 0 }, 1,
    { 1005 } },
};
#define N_SETID_CASES (int) (sizeof setid_cases / sizeof setid_cases[0])

static void
timer_noop (union sigval value)
{
}

static int
count_threads (void)
{
  DIR *d = opendir ("/proc/self/task");
  ck_assert_ptr_nonnull (d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    n += e->d_name[0] != '.';
  closedir (d);
  return n;
}

/* Fail unless the process has WANT threads.  A thread stays in
   /proc/self/task until the kernel reaps it, a moment after it cleared
   its tid and woke its joiner: one just joined (a worker, or the thread
   glibc creates and joins for xpthread's first pthread_create in raw
   mode, nptl-compat/mode.c) may still be listed.  So more threads than
   WANT are waited for, 10 s at most; fewer fail at once.  */
static void
assert_threads (int want)
{
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  const struct timespec nap = { 0, 1000 * 1000 };
  int n;
  while ((n = count_threads ()) > want && xp_test_seconds_since (&start) < 10)
    nanosleep (&nap, NULL);
  ck_assert_msg (n == want, "%d threads, %d expected", n, want);
}

/* Two threads started with pthread_create and glibc's own helper thread
   for SIGEV_THREAD timers, next to the main thread.  */
static void
start_bystanders (void)
{
  pthread_t t;
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq (pthread_create (&t, NULL, idle, NULL), 0);
  assert_threads (3);
  struct sigevent sev = { .sigev_notify = SIGEV_THREAD,
                          .sigev_notify_function = timer_noop };
  timer_t timer;
  ck_assert_int_eq (timer_create (CLOCK_MONOTONIC, &sev, &timer), 0);
  assert_threads (4);
}

static void *
call_in_worker (void *arg)
{
  const struct setid_case *c = arg;
  return (void *) (long) (c->call () == 0 ? 0 : errno);
}

/* Iteration i: case i / 2, called from the main thread (even) or from a
   worker (odd).  */
START_TEST (process_wide_setid_reaches_every_thread)
{
  const struct setid_case *c = &setid_cases[_i / 2];
  bool from_worker = _i % 2;
  ck_assert_int_eq (setgroups (0, NULL), 0);
  start_bystanders ();
  if (from_worker)
    {
      pthread_t t;
      void *err;
      ck_assert_int_eq (pthread_create (&t, NULL, call_in_worker,
                                        (void *) c), 0);
      ck_assert_int_eq (pthread_join (t, &err), 0);
      ck_assert_msg (err == NULL, "%s: %s", c->name,
                     strerror ((int) (long) err));
    }
  else
    ck_assert_msg (c->call () == 0, "%s: %s", c->name, strerror (errno));

  assert_threads (4);
  DIR *d = opendir ("/proc/self/task");
  ck_assert_ptr_nonnull (d);
  int seen = 0;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (e->d_name[0] == '.')
        continue;
      pid_t tid = atoi (e->d_name);
      assert_ids (tid, "Uid:", c->uid[0], c->uid[1], c->uid[2], c->uid[3]);
      assert_ids (tid, "Gid:", c->gid[0], c->gid[1], c->gid[2], c->gid[3]);
      assert_groups (tid, c->ngroups, c->groups);
      seen++;
    }
  closedir (d);
  ck_assert_int_eq (seen, 4);
}
END_TEST

/* A thread that cannot apply the change stops the process (glibc's
   broadcast aborts), so no thread keeps root.  */
static void *
refuse_setuid (void *arg)
{
  deny_syscall (SYS_setuid, -1, 0);
  pthread_barrier_wait (arg);
  for (;;)
    pause ();
  return NULL;
}

START_TEST (process_wide_setid_failure_aborts)
{
  pthread_barrier_t ready;
  pthread_barrier_init (&ready, NULL, 2);
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, refuse_setuid, &ready), 0);
  pthread_barrier_wait (&ready);
  setuid (1005);
}
END_TEST

/* ---- process-wide changes while a thread is switched ------------------ */

/* Changes made from the main thread while a worker is switched to USER,
   each altering the worker's identity.  With a file-system switch the
   worker keeps its capabilities, so any change reaches it and it can
   switch back.  With a full switch it has lost them: it can only take an
   id it still has as real or saved id, so a change must give it back
   root (then it can switch again), or it can take nothing back and the
   switch must fail (ERROR) rather than claim the identity.  */
static const gid_t changed_groups[] = { 1005, 1006 };
static int change_groups (void) { return setgroups (2, changed_groups); }
static int change_initgroups (void) { return call_initgroups (); }
static int change_egid (void) { return setegid (1005); }
static int change_euid_to_root (void) { return seteuid (0); }
static int change_egid_to_root (void) { return setegid (0); }
static int change_resuid_to_root (void) { return setresuid (-1, 0, -1); }

static const struct switched_case
{
  const char *name;
  int flags;
  int (*change) (void);
  int error;            /* of the switch after the change */
} switched_cases[] = {
  { "setgroups", XPTHREAD_IDENTITY_FS_ONLY, change_groups, 0 },
  { "initgroups", XPTHREAD_IDENTITY_FS_ONLY, change_initgroups, 0 },
  { "setegid", XPTHREAD_IDENTITY_FS_ONLY, change_egid, 0 },
  { "seteuid", 0, change_euid_to_root, 0 },
  { "setresuid", 0, change_resuid_to_root, 0 },
  { "setegid", 0, change_egid_to_root, EPERM },
};
#define N_SWITCHED_CASES \
  (int) (sizeof switched_cases / sizeof switched_cases[0])

/* Whether thread TID has USER's identity as a switch with FLAGS installs
   it: file-system ids, effective ids unless FS_ONLY, groups.  */
static bool
has_user_identity (pid_t tid, int flags)
{
  long u[4], g[4], groups[64];
  ck_assert_int_eq (status_numbers (tid, "Uid:", u, 4), 4);
  ck_assert_int_eq (status_numbers (tid, "Gid:", g, 4), 4);
  int n = status_numbers (tid, "Groups:", groups, 64);
  bool full = !(flags & XPTHREAD_IDENTITY_FS_ONLY);
  return u[3] == user.uid && g[3] == user.gid
         && (!full || (u[1] == user.uid && g[1] == user.gid))
         && n == 2 && groups[0] == user_groups[0]
         && groups[1] == user_groups[1];
}

/* The Uid, Gid and Groups lines of thread TID, for messages.  */
static const char *
describe_identity (pid_t tid, char *buf, size_t size)
{
  long u[4], g[4], groups[64];
  status_numbers (tid, "Uid:", u, 4);
  status_numbers (tid, "Gid:", g, 4);
  int n = status_numbers (tid, "Groups:", groups, 64);
  int len = snprintf (buf, size, "uid %ld %ld %ld %ld, gid %ld %ld %ld %ld,"
                      " groups", u[0], u[1], u[2], u[3], g[0], g[1], g[2],
                      g[3]);
  for (int i = 0; i < n && len > 0 && (size_t) len < size; i++)
    len += snprintf (buf + len, size - (size_t) len, " %ld", groups[i]);
  return buf;
}

struct switched_worker
{
  const struct switched_case *c;
  pthread_barrier_t *barrier;
};

static void *
switch_across_change (void *arg)
{
  struct switched_worker *w = arg;
  const struct switched_case *c = w->c;
  struct xpthread_identity_saved_np saved, again;
  pid_t self = gettid ();
  char now[512];

  ck_assert_int_eq (api.identity_switch (&user, c->flags, &saved), 0);
  ck_assert_msg (has_user_identity (self, c->flags), "switched: %s",
                 describe_identity (self, now, sizeof now));
  pthread_barrier_wait (w->barrier);
  /* The main thread changes the process's identity.  */
  pthread_barrier_wait (w->barrier);
  ck_assert_msg (!has_user_identity (self, c->flags),
                 "%s did not reach the switched thread: %s", c->name,
                 describe_identity (self, now, sizeof now));
  /* The record of the first switch is stale: this one must make its
     system calls, and either install the whole identity or fail.  */
  int err = api.identity_switch (&user, c->flags, &again);
  ck_assert_msg (err == c->error, "switch after %s (flags %d): %s, "
                 "expected %s; thread has %s", c->name, c->flags,
                 strerror (err), strerror (c->error),
                 describe_identity (self, now, sizeof now));
  if (err == 0)
    {
      ck_assert_msg (has_user_identity (self, c->flags),
                     "switch after %s (flags %d) left %s", c->name,
                     c->flags, describe_identity (self, now, sizeof now));
      /* That one is remembered again: a third switch changes nothing.  */
      struct xpthread_identity_saved_np third;
      ck_assert_int_eq (api.identity_switch (&user, c->flags, &third), 0);
      ck_assert_int_eq (api.identity_restore (&third), 0);
      ck_assert (has_user_identity (self, c->flags));
      ck_assert_int_eq (api.identity_restore (&again), 0);
    }
  ck_assert_int_eq (api.identity_restore (&saved), 0);
  return NULL;
}

/* A process-wide change made while a thread is switched replaces part of
   its identity; the next switch to the same identity must install it
   whole again (or fail) instead of trusting the record of the previous
   switch.  */
START_TEST (process_wide_change_while_switched)
{
  static const gid_t root_group[] = { 0 };
  ck_assert_int_eq (setgroups (1, root_group), 0);
  pthread_barrier_t barrier;
  pthread_barrier_init (&barrier, NULL, 2);
  struct switched_worker w = { &switched_cases[_i], &barrier };
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, switch_across_change, &w), 0);
  pthread_barrier_wait (&barrier);
  ck_assert_msg (w.c->change () == 0, "%s: %s", w.c->name,
                 strerror (errno));
  pthread_barrier_wait (&barrier);
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  pthread_barrier_destroy (&barrier);
}
END_TEST

/* A process-wide change under way, held open: glibc's set*id signal
   (SIGSETXID, 33) is blocked with the raw system call in the worker until
   its switch is made, and in a bystander until the end, so that glibc's
   setgroups, called from a third thread, has started but cannot finish.
   The worker switches while the change is under way, lets it in, and
   switches again: the record of the first switch must not be trusted,
   although no process-wide call has started or finished in between.  */
enum { SIGSETXID_NR = 33 };

/* Whether the calling thread has USER's groups.  */
static bool
groups_are_user (void)
{
  gid_t g[4];
  size_t n;
  ck_assert_int_eq (api.getgroups (4, g, &n), 0);
  return n == 2 && g[0] == user_groups[0] && g[1] == user_groups[1];
}

static void
setxid_signal (int how)
{
  unsigned long set = 1UL << (SIGSETXID_NR - 1);
  ck_assert_int_eq (syscall (SYS_rt_sigprocmask, how, &set, NULL,
                             sizeof set), 0);
}

static bool
setxid_pending (void)
{
  unsigned long set = 0;
  ck_assert_int_eq (syscall (SYS_rt_sigpending, &set, sizeof set), 0);
  return set & (1UL << (SIGSETXID_NR - 1));
}

struct held_change
{
  int bystander_ready, worker_ready, worker_done, release, changed;
  int error;            /* the changer's errno, or 0 */
  bool reached, stale;
};

static void
await (int *flag)
{
  while (!__atomic_load_n (flag, __ATOMIC_ACQUIRE))
    sched_yield ();
}

static void
raise_flag (int *flag)
{
  __atomic_store_n (flag, 1, __ATOMIC_RELEASE);
}

static void *
hold_change_open (void *arg)
{
  struct held_change *h = arg;
  setxid_signal (SIG_BLOCK);
  raise_flag (&h->bystander_ready);
  await (&h->release);
  setxid_signal (SIG_UNBLOCK);
  return NULL;
}

static void *
change_groups_thread (void *arg)
{
  struct held_change *h = arg;
  h->error = setgroups (2, changed_groups) == 0 ? 0 : errno;
  raise_flag (&h->changed);
  return NULL;
}

static void *
switch_while_held (void *arg)
{
  struct held_change *h = arg;
  struct xpthread_identity_saved_np outer, nested;
  setxid_signal (SIG_BLOCK);
  raise_flag (&h->worker_ready);
  while (!setxid_pending ())
    sched_yield ();
  ck_assert_int_eq (api.identity_switch (&user, XPTHREAD_IDENTITY_FS_ONLY,
                                         &outer), 0);
  ck_assert (groups_are_user ());
  setxid_signal (SIG_UNBLOCK);
  h->reached = !groups_are_user ();
  ck_assert_int_eq (api.identity_switch (&user, XPTHREAD_IDENTITY_FS_ONLY,
                                         &nested), 0);
  h->stale = !groups_are_user ();
  ck_assert_int_eq (api.identity_restore (&nested), 0);
  ck_assert_int_eq (api.identity_restore (&outer), 0);
  raise_flag (&h->worker_done);
  return NULL;
}

START_TEST (process_wide_change_held_open)
{
  static const gid_t root_group[] = { 0 };
  ck_assert_int_eq (setgroups (1, root_group), 0);
  struct held_change h = { 0 };
  pthread_t bystander, worker, changer;
  ck_assert_int_eq (pthread_create (&bystander, NULL, hold_change_open, &h),
                    0);
  await (&h.bystander_ready);
  ck_assert_int_eq (pthread_create (&worker, NULL, switch_while_held, &h),
                    0);
  await (&h.worker_ready);
  /* No thread may start or end until the change is complete: glibc holds
     its thread list meanwhile.  */
  ck_assert_int_eq (pthread_create (&changer, NULL, change_groups_thread,
                                    &h), 0);
  await (&h.worker_done);
  bool changed_early = __atomic_load_n (&h.changed, __ATOMIC_ACQUIRE);
  raise_flag (&h.release);
  ck_assert_int_eq (pthread_join (changer, NULL), 0);
  ck_assert_int_eq (pthread_join (worker, NULL), 0);
  ck_assert_int_eq (pthread_join (bystander, NULL), 0);
  ck_assert_msg (h.error == 0, "setgroups: %s", strerror (h.error));
  ck_assert_msg (!changed_early, "the change was not held open");
  ck_assert_msg (h.reached, "the change did not reach the switched thread");
  ck_assert_msg (!h.stale, "a switch trusted the identity recorded while "
                 "a process-wide change was under way");
}
END_TEST

/* A process-wide change under way while a thread switches: the worker's
   switch runs at the same time as the main thread's setgroups, at
   varying offsets, so that the change often reaches the worker after the
   switch read the process's credential generation and made its system
   calls.  Once the change has reached the worker, a switch to the same
   identity must install the user's groups again.  A record trusted
   because the generation was read while the change was under way fails
   here in about one trial in a hundred.  */
enum { RACE_TRIALS = 2000, RACE_DELAY = 4000 };

struct race
{
  int ready, go, done;  /* trial numbers */
  int reached;          /* trials in which the change reached the switched
                           worker */
  int stale;            /* trials in which the second switch left it */
};

/* Both threads spin, so that they start each trial together; on a busy
   machine they eventually let others run.  */
static void
wait_for (int *word, int value)
{
  for (int spins = 0; __atomic_load_n (word, __ATOMIC_ACQUIRE) != value;
       spins++)
    if (spins > 100000)
      sched_yield ();
}

static void
delay (unsigned *seed)
{
  for (volatile int i = (int) (rand_r (seed) % RACE_DELAY); i > 0; i--)
    ;
}

static void *
switch_during_change (void *arg)
{
  struct race *r = arg;
  unsigned seed = 1;
  for (int t = 1; t <= RACE_TRIALS; t++)
    {
      struct xpthread_identity_saved_np outer, nested;
      __atomic_store_n (&r->ready, t, __ATOMIC_RELEASE);
      wait_for (&r->go, t);
      delay (&seed);
      ck_assert_int_eq (api.identity_switch (&user,
                                             XPTHREAD_IDENTITY_FS_ONLY,
                                             &outer), 0);
      /* Until the change has reached this thread, or had before.  */
      while (groups_are_user () && __atomic_load_n (&r->done,
                                                    __ATOMIC_ACQUIRE) != t)
        ;
      r->reached += !groups_are_user ();
      ck_assert_int_eq (api.identity_switch (&user,
                                             XPTHREAD_IDENTITY_FS_ONLY,
                                             &nested), 0);
      r->stale += !groups_are_user ();
      ck_assert_int_eq (api.identity_restore (&nested), 0);
      ck_assert_int_eq (api.identity_restore (&outer), 0);
    }
  return NULL;
}

START_TEST (process_wide_change_during_switch)
{
  static const gid_t one[] = { 1005 }, two[] = { 1006, 1007 };
  struct race r = { 0 };
  unsigned seed = 2;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, switch_during_change, &r), 0);
  for (int trial = 1; trial <= RACE_TRIALS; trial++)
    {
      wait_for (&r.ready, trial);
      __atomic_store_n (&r.go, trial, __ATOMIC_RELEASE);
      delay (&seed);
      ck_assert_int_eq (trial % 2 ? setgroups (1, one) : setgroups (2, two),
                        0);
      __atomic_store_n (&r.done, trial, __ATOMIC_RELEASE);
    }
  ck_assert_int_eq (pthread_join (t, NULL), 0);
  ck_assert_msg (r.stale == 0, "%d of %d switches (%d reached by the change)"
                 " kept the changed groups", r.stale, RACE_TRIALS,
                 r.reached);
}
END_TEST

/* ---- the interposed set*id functions are glibc's --------------------- */

/* glibc's own definition of NAME, past xpthread's interposer.  */
static void *
glibc_own (const char *name)
{
  void *libc = dlopen ("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  ck_assert_ptr_nonnull (libc);
  void *f = dlsym (libc, name);
  ck_assert_msg (f != NULL, "glibc has no %s", name);
  dlclose (libc);
  return f;
}

/* A call through the program's binding (xpthread) and the same call of
   glibc's own function.  */
#define SETID_CALL(tag, name, type, ...) \
  static int ours_##tag (void) { return name (__VA_ARGS__); } \
  static int glibcs_##tag (void) \
  { \
    return ((type) glibc_own (#name)) (__VA_ARGS__); \
  }
typedef int (*id_fn) (uid_t);
typedef int (*id2_fn) (uid_t, uid_t);
typedef int (*id3_fn) (uid_t, uid_t, uid_t);
typedef int (*groups_fn) (size_t, const gid_t *);
typedef int (*init_fn) (const char *, gid_t);
static const gid_t root_only[] = { 0 };
/* As root: successful no-ops, and ids the kernel or glibc refuse.  */
SETID_CALL (setuid_root, setuid, id_fn, 0)
SETID_CALL (setuid_bad, setuid, id_fn, (uid_t) -1)
SETID_CALL (setgid_bad, setgid, id_fn, (gid_t) -1)
SETID_CALL (seteuid_bad, seteuid, id_fn, (uid_t) -1)
SETID_CALL (setegid_bad, setegid, id_fn, (gid_t) -1)
SETID_CALL (setreuid_same, setreuid, id2_fn, -1, -1)
SETID_CALL (setresgid_same, setresgid, id3_fn, -1, -1, -1)
SETID_CALL (setgroups_many, setgroups, groups_fn, (size_t) NGROUPS_MAX + 1,
            NULL)
SETID_CALL (initgroups_bad, initgroups, init_fn, "root", (gid_t) -1)
/* Unprivileged: back to root is refused.  */
SETID_CALL (setuid_0, setuid, id_fn, 0)
SETID_CALL (setgid_0, setgid, id_fn, 0)
SETID_CALL (seteuid_0, seteuid, id_fn, 0)
SETID_CALL (setegid_0, setegid, id_fn, 0)
SETID_CALL (setreuid_0, setreuid, id2_fn, 0, 0)
SETID_CALL (setregid_0, setregid, id2_fn, 0, 0)
SETID_CALL (setresuid_0, setresuid, id3_fn, 0, 0, 0)
SETID_CALL (setresgid_0, setresgid, id3_fn, 0, 0, 0)
SETID_CALL (setgroups_0, setgroups, groups_fn, 1, root_only)
SETID_CALL (initgroups_0, initgroups, init_fn, "root", 0)
SETID_CALL (setuid_self, setuid, id_fn, 65534)
#undef SETID_CALL

struct setid_result_case
{
  const char *what;
  int (*ours) (void);
  int (*glibcs) (void);
  int error;            /* expected errno, 0 for success */
};
#define RESULT(tag, error) { #tag, ours_##tag, glibcs_##tag, error }
static const struct setid_result_case as_root[] = {
  RESULT (setuid_root, 0), RESULT (setuid_bad, EINVAL),
  RESULT (setgid_bad, EINVAL), RESULT (seteuid_bad, EINVAL),
  RESULT (setegid_bad, EINVAL), RESULT (setreuid_same, 0),
  RESULT (setresgid_same, 0), RESULT (setgroups_many, EINVAL),
  RESULT (initgroups_bad, EINVAL),
};
static const struct setid_result_case unprivileged[] = {
  RESULT (setuid_0, EPERM), RESULT (setgid_0, EPERM),
  RESULT (seteuid_0, EPERM), RESULT (setegid_0, EPERM),
  RESULT (setreuid_0, EPERM), RESULT (setregid_0, EPERM),
  RESULT (setresuid_0, EPERM), RESULT (setresgid_0, EPERM),
  RESULT (setgroups_0, EPERM), RESULT (initgroups_0, EPERM),
  RESULT (setuid_self, 0),
};
#undef RESULT

/* Same return value and errno as glibc's own function, and the expected
   ones; errno untouched on success.  */
static void
check_results (const struct setid_result_case *cases, int n)
{
  enum { UNTOUCHED = ESTALE };
  for (int i = 0; i < n; i++)
    {
      const struct setid_result_case *c = &cases[i];
      errno = UNTOUCHED;
      int rc = c->ours ();
      int err = errno;
      errno = UNTOUCHED;
      int glibc_rc = c->glibcs ();
      int glibc_err = errno;
      ck_assert_msg (rc == glibc_rc && err == glibc_err,
                     "%s: %d, errno %s; glibc's: %d, errno %s", c->what, rc,
                     strerror (err), glibc_rc, strerror (glibc_err));
      ck_assert_msg (rc == (c->error != 0 ? -1 : 0)
                     && err == (c->error != 0 ? c->error : UNTOUCHED),
                     "%s: %d, errno %s; expected errno %s", c->what, rc,
                     strerror (err), strerror (c->error));
    }
}

/* Runs in Check's child process: it drops root for good.  A bystander
   thread is there so that glibc broadcasts.  */
START_TEST (process_wide_results_are_glibcs)
{
  Dl_info info;
  ck_assert (dladdr ((void *) setuid, &info) != 0);
  ck_assert_msg (strstr (info.dli_fname, "libxpthread") != NULL,
                 "setuid is %s's, not xpthread's", info.dli_fname);
  ck_assert_ptr_ne ((void *) setgroups, glibc_own ("setgroups"));
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, idle, NULL), 0);
  check_results (as_root, (int) (sizeof as_root / sizeof as_root[0]));
  ck_assert_int_eq (setgroups (0, NULL), 0);
  ck_assert_int_eq (setresgid (65534, 65534, 65534), 0);
  ck_assert_int_eq (setresuid (65534, 65534, 65534), 0);
  check_results (unprivileged,
                 (int) (sizeof unprivileged / sizeof unprivileged[0]));
  assert_ids (gettid (), "Uid:", 65534, 65534, 65534, 65534);
}
END_TEST

/* Register a test that needs root, or count it as skipped.  */
static int skipped;

static void
add_root_test (TCase *tc, const TTest *test, int signal, int iterations)
{
  if (geteuid () == 0)
    tcase_add_loop_test_raise_signal (tc, test, signal, 0, iterations);
  else
    skipped += iterations;
}

/* The same for a test that needs what an emulator does not do (WHY).  */
static void
add_kernel_root_test (TCase *tc, const TTest *test, int signal,
                      int iterations, const char *why)
{
  if (xp_test_emulated (why))
    skipped += iterations;
  else
    add_root_test (tc, test, signal, iterations);
}

#define NO_SECCOMP "seccomp filters cannot be installed"

static TCase *
root_tcase (Suite *s, const char *name)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, 30);
  tcase_add_checked_fixture (tc, load_api, NULL);
  suite_add_tcase (s, tc);
  return tc;
}

int
main (void)
{
  Suite *s = suite_create ("cred");
  TCase *tc = tcase_create ("unprivileged");
  tcase_add_checked_fixture (tc, load_api, NULL);
  tcase_add_test (tc, invalid_arguments);
  suite_add_tcase (s, tc);

  tc = root_tcase (s, "per-thread");
  add_root_test (tc, fs_identity_per_thread, 0, 1);
  add_root_test (tc, res_ids_and_groups_per_thread, 0, 1);
  add_root_test (tc, not_permitted_when_unprivileged, 0, 1);

  tc = root_tcase (s, "identity");
  add_root_test (tc, identity_full_switch_and_restore, 0, 1);
  add_root_test (tc, identity_fs_only_switch_and_restore, 0, 1);
  add_root_test (tc, identity_many_groups, 0, 1);
  add_kernel_root_test (tc, identity_noop_switch, 0, 1, NO_SECCOMP);
  add_kernel_root_test (tc, identity_failure_part_way_rolls_back, 0, 1, NO_SECCOMP);
  add_kernel_root_test (tc, identity_restore_failure_aborts, SIGABRT, 1, NO_SECCOMP);
  add_kernel_root_test (tc, identity_rollback_failure_aborts, SIGABRT, 1, NO_SECCOMP);

  tc = root_tcase (s, "process-wide");
  add_kernel_root_test (tc, process_wide_setid_reaches_every_thread, 0,
                        2 * N_SETID_CASES,
                        "the emulator's own threads are the process's");
  add_kernel_root_test (tc, process_wide_setid_failure_aborts, SIGABRT, 1, NO_SECCOMP);
  add_root_test (tc, process_wide_change_while_switched, 0,
                 N_SWITCHED_CASES);
  add_root_test (tc, process_wide_change_held_open, 0, 1);
  add_root_test (tc, process_wide_change_during_switch, 0, 1);
  add_root_test (tc, process_wide_results_are_glibcs, 0, 1);

  int status = xp_test_run (s);
  if (skipped != 0)
    printf ("cred: SKIPPED %d tests: they need root, or a kernel rather "
            "than an emulator\n", skipped);
  return status;
}
