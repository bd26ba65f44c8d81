/* Process-wide credential changes, counted for the identity switch.

   setuid, setgid, seteuid, setegid, setreuid, setregid, setresuid,
   setresgid, setgroups and initgroups change every thread of the process.
   glibc makes the change in the calling thread, then signals every other
   thread on its list (xpthread's raw threads are on it), has each make the
   same system call in its signal handler, and returns only when all have
   (it aborts the process if one cannot).  The interposers below leave all
   of that to glibc's own function, and return its result with its errno;
   around the call they count: xp_cred_changes_started before it,
   xp_cred_changes_finished after it, both atomic increments.

   Why.  xpthread_identity_switch_np remembers, per thread, the identity
   its last switch installed, and a switch to that identity again makes no
   system call (identity.c).  A process-wide change that reaches a switched
   thread replaces part of that identity; a record that still claimed the
   old one would keep the thread on the fast path with a mix of two
   identities for as long as it serves that user.  So a switch reads the
   two counts before its first system call (FINISHED first, then STARTED)
   and remembers what it installed only if they are equal, with that
   count G; the fast path is taken only while STARTED still equals G.

   Why the fast path never keeps a mixed identity.  A process-wide call P
   can touch a thread only between P's increment of STARTED and its
   increment of FINISHED: glibc signals the thread after the first and
   returns only after the thread has made the change.  Take a switch S
   that remembered count G and a later fast-path check C that read
   STARTED == G.  Either
   - P had finished when S read FINISHED: P's change was made in this
     thread before S read the identity it compares with its target, so S
     started from the changed identity and installed the whole target
     over it; or
   - P had started when S read STARTED but not finished when S read
     FINISHED: P counts in one and not the other, the counts differ, and
     S remembered nothing; or
   - P started after S read STARTED: from then on STARTED exceeds G (the
     counts only grow; 64 bits do not wrap), so C, which read G, came
     before P started and hence before P touched the thread.  At C the
     thread still had what S installed; P's change lands after C, as it
     may after any switch.
   In every case C trusts only an identity the thread really has.

   A process-wide change is still a change of every thread: one that lands
   while a thread is switched (or in the middle of a switch, in the
   thread's signal handler between two of the switch's system calls)
   leaves the thread with the parts it sets, as POSIX asks, until the
   thread's next switch, which then makes its system calls and installs
   the whole identity again, or its restore, which puts back what the
   switch saved.  The guarantee is that no stale record survives it.

   Ordering.  The increment of STARTED is a locked read-modify-write made
   before glibc's function runs, so before glibc sends its first signal;
   a thread runs its handler only after the signal was sent, and its loads
   after that see the increment.  The increment of FINISHED comes after
   glibc's function returned, so after every thread reported its change.
   A switch loads with acquire semantics, FINISHED before STARTED, and
   both before its first system call.

   Not seen: raw system calls made by the program (syscall (SYS_setuid,
   ...)), and glibc's setfsuid and setfsgid, which change the calling
   thread only; they are the program's own per-thread changes.

   Fork: in the child only the forking thread exists, so no process-wide
   change can be under way there; the child makes the counts equal, or a
   change that another thread of the parent had under way at the fork
   would keep them apart and disable the fast path in the child for
   good.  */
#define _GNU_SOURCE
#include "cred.h"
#include "compat.h"
#include "export.h"
#include <errno.h>
#include <grp.h>
#include <unistd.h>

uint64_t xp_cred_changes_started;
uint64_t xp_cred_changes_finished;

/* glibc's own function NAME, looked up once; errno is kept, so that the
   caller sees only glibc's.  */
static void *
glibc_own (void **cache, const char *name)
{
  void *f = xp_load_acquire (cache);
  if (xp_unlikely (f == NULL))
    {
      int saved = errno;
      f = xp_glibc_function (name);
      errno = saved;
      xp_store_release (cache, f);
    }
  return f;
}

/* Define NAME, with parameters PARAMS and arguments ARGS, as a call of
   glibc's NAME between the two counts.  */
#define PROCESS_WIDE(name, params, args) \
  int \
  name params \
  { \
    static void *own; \
    int (*f) params = (int (*) params) glibc_own (&own, #name); \
    xp_fetch_add (&xp_cred_changes_started, 1); \
    int rc = f args; \
    xp_fetch_add (&xp_cred_changes_finished, 1); \
    return rc; \
  } \
  XP_EXPORT (name)

PROCESS_WIDE (setuid, (uid_t uid), (uid))
PROCESS_WIDE (setgid, (gid_t gid), (gid))
PROCESS_WIDE (seteuid, (uid_t euid), (euid))
PROCESS_WIDE (setegid, (gid_t egid), (egid))
PROCESS_WIDE (setreuid, (uid_t ruid, uid_t euid), (ruid, euid))
PROCESS_WIDE (setregid, (gid_t rgid, gid_t egid), (rgid, egid))
PROCESS_WIDE (setresuid, (uid_t ruid, uid_t euid, uid_t suid),
              (ruid, euid, suid))
PROCESS_WIDE (setresgid, (gid_t rgid, gid_t egid, gid_t sgid),
              (rgid, egid, sgid))
PROCESS_WIDE (setgroups, (size_t count, const gid_t *groups),
              (count, groups))
/* glibc's initgroups sets the groups with its internal setgroups, which
   the interposer above does not see.  */
PROCESS_WIDE (initgroups, (const char *user, gid_t group), (user, group))

extern void *__dso_handle;

static void
settle_in_child (void)
{
  xp_store_relaxed (&xp_cred_changes_finished,
                    xp_load_relaxed (&xp_cred_changes_started));
}

static void __attribute__ ((constructor))
xp_cred_process_wide_init (void)
{
  xp_glibc_register_atfork (NULL, NULL, settle_in_child, &__dso_handle);
}
