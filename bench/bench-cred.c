/* Per-request identity switches, as a file server makes them.

   cred_switch_fs_ns: switch the calling thread to another user's
   file-system ids and groups and back, nanoseconds per switch + restore.
   cred_switch_full_ns: the same with the effective ids.
   cred_noop_switch_ns: a switch to the identity the thread already has
   and back (a nested switch for the same user).

   With xpthread these are xpthread_identity_switch_np and
   xpthread_identity_restore_np.  glibc has no such call, and its set*id
   wrappers change every thread, so servers make the system calls
   themselves: with glibc the figures are the cost of those raw calls
   (setgroups, setfsgid, setfsuid or setresgid, setresuid, and the same
   back), which is also what a no-op switch costs without a record of the
   current identity.  Needs root; without it the program says so and
   reports nothing.

   usage: bench-cred [-n SWITCHES]  */
#include "bench.h"
#include <grp.h>
#include <sys/syscall.h>

/* For the types only: the functions are looked up with dlsym, so that
   the program also runs without xpthread.  The path works both for the
   build and for bench/run compiling the program on its own.  */
#include "../include/xpthread.h"

static __typeof (xpthread_identity_switch_np) *identity_switch;
static __typeof (xpthread_identity_restore_np) *identity_restore;

static long switches = 200000;
static const gid_t user_groups[] = { 100, 1001 };
static const struct xpthread_identity_np user = { 1001, 1001, 2, user_groups };
static gid_t root_groups[64];
static int root_ngroups;

static void
check (long rc, const char *what)
{
  if (rc != 0)
    bench_fail (what, rc < 0 ? errno : (int) rc);
}

/* What a server without xpthread does: raw system calls, since glibc's
   wrappers would change every thread.  */
static void
raw_switch (const struct xpthread_identity_np *id, int flags)
{
  check (syscall (SYS_setgroups, id->ngroups, id->groups), "setgroups");
  if (flags & XPTHREAD_IDENTITY_FS_ONLY)
    {
      syscall (SYS_setfsgid, id->gid);
      syscall (SYS_setfsuid, id->uid);
    }
  else
    {
      check (syscall (SYS_setresgid, -1, id->gid, -1), "setresgid");
      check (syscall (SYS_setresuid, -1, id->uid, -1), "setresuid");
    }
}

static void
raw_restore (int flags)
{
  if (flags & XPTHREAD_IDENTITY_FS_ONLY)
    syscall (SYS_setfsuid, 0);
  else
    check (syscall (SYS_setresuid, -1, 0, -1), "setresuid");
  check (syscall (SYS_setgroups, root_ngroups, root_groups), "setgroups");
  if (flags & XPTHREAD_IDENTITY_FS_ONLY)
    syscall (SYS_setfsgid, 0);
  else
    check (syscall (SYS_setresgid, -1, 0, -1), "setresgid");
}

static void
switch_to (const struct xpthread_identity_np *id, int flags,
           struct xpthread_identity_saved_np *saved)
{
  if (identity_switch != NULL)
    check (identity_switch (id, flags, saved), "identity switch");
  else
    raw_switch (id, flags);
}

static void
restore (int flags, struct xpthread_identity_saved_np *saved)
{
  if (identity_restore != NULL)
    check (identity_restore (saved), "identity restore");
  else
    raw_restore (flags);
}

/* Nanoseconds per switch to ID and back.  */
static double
time_switches (const struct xpthread_identity_np *id, int flags)
{
  struct xpthread_identity_saved_np saved;
  double t0 = bench_now ();
  for (long i = 0; i < switches; i++)
    {
      switch_to (id, flags, &saved);
      restore (flags, &saved);
    }
  return (bench_now () - t0) * 1e9 / (double) switches;
}

/* A switch to the identity the outer switch installed.  */
static double
time_noop_switches (void)
{
  struct xpthread_identity_saved_np outer;
  switch_to (&user, XPTHREAD_IDENTITY_FS_ONLY, &outer);
  double ns = time_switches (&user, XPTHREAD_IDENTITY_FS_ONLY);
  restore (XPTHREAD_IDENTITY_FS_ONLY, &outer);
  return ns;
}

int
main (int argc, char **argv)
{
  int opt;
  while ((opt = getopt (argc, argv, "n:")) != -1)
    switch (opt)
      {
      case 'n': switches = bench_count (argv[0], optarg); break;
      default:
        fprintf (stderr, "usage: %s [-n SWITCHES]\n", argv[0]);
        return 2;
      }
  bench_print_impl ();
  if (geteuid () != 0)
    {
      printf ("# skipped: switching to another user needs root\n");
      return 0;
    }
  root_ngroups = getgroups (64, root_groups);
  if (root_ngroups < 0)
    bench_fail ("getgroups", errno);
  *(void **) &identity_switch
    = dlsym (RTLD_DEFAULT, "xpthread_identity_switch_np");
  *(void **) &identity_restore
    = dlsym (RTLD_DEFAULT, "xpthread_identity_restore_np");

  bench_metric ("cred_switch_fs_ns",
                time_switches (&user, XPTHREAD_IDENTITY_FS_ONLY), "ns", 0);
  bench_metric ("cred_switch_full_ns", time_switches (&user, 0), "ns", 0);
  bench_metric ("cred_noop_switch_ns", time_noop_switches (), "ns", 0);
  /* Every switch was undone.  */
  printf ("# check identity %d %d %d\n", (int) geteuid (),
          (int) syscall (SYS_setfsuid, -1), getgroups (0, NULL));
  return 0;
}
