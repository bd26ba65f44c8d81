/* Switching the calling thread to a whole identity and back.

   A switch reads the thread's identity from the kernel into the caller's
   saved area, then changes only what differs: groups first and the gid
   next, while the thread still has the privilege to change them, and the
   uid last.  The restore goes the other way, uid first, to regain that
   privilege.  A switch that fails part-way undoes the steps it made; if
   undoing fails, or a restore fails, the process aborts rather than run a
   thread with a mix of two identities.

   The identity a switch installed is remembered per thread, so that a
   switch to the identity the thread already has (a nested switch for the
   same user) makes no system call.  Every per-thread credential call of
   the library forgets it.  A process-wide change (glibc's setuid and the
   rest of its family, from any thread) ends it too: the record carries the
   generation of the process's credentials read before the switch's first
   system call, is made only if no process-wide change was under way then,
   and is trusted only while none has started since; process-wide.c
   explains why that leaves no window.  Raw system calls made by the
   program are not seen (see xpthread_identity_switch_np(3)).  */
#include "cred.h"
#include "export.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <xpthread.h>

__thread struct xp_cred_current xp_cred_current
  __attribute__ ((tls_model ("initial-exec")));

/* saved->__state: what a restore has to do.  Values unlikely in an
   uninitialised area, so that a wrong pointer is refused.  */
enum
{
  SAVED_NONE = 0,               /* restored already, or never switched */
  SAVED_NOTHING = 0x58500001,   /* the switch changed nothing */
  SAVED_FULL = 0x58500002,
  SAVED_FS = 0x58500003
};

/* saved->__changed: the steps a switch made.  */
enum
{
  CHANGED_GROUPS = 1,
  CHANGED_GID = 2,
  CHANGED_UID = 4
};

enum { REAL, EFFECTIVE, SAVED, FS };

static bool
groups_equal (size_t n1, const gid_t *g1, size_t n2, const gid_t *g2)
{
  return n1 == n2 && (n1 == 0 || memcmp (g1, g2, n1 * sizeof *g1) == 0);
}

static bool
is_current (const struct xpthread_identity_np *id, int flags)
{
  const struct xp_cred_current *c = &xp_cred_current;
  return c->valid
         && c->generation == xp_load_acquire (&xp_cred_changes_started)
         && c->flags == flags && c->uid == id->uid
         && c->gid == id->gid
         && groups_equal (c->ngroups, c->groups, id->ngroups, id->groups);
}

/* GENERATION: xp_cred_settled_generation () read before the switch's
   first system call.  */
static void
remember (const struct xpthread_identity_np *id, int flags,
          uint64_t generation)
{
  struct xp_cred_current *c = &xp_cred_current;
  c->valid = id->ngroups <= XP_CRED_REMEMBERED_GROUPS
             && generation != XP_CRED_UNSETTLED;
  if (!c->valid)
    return;
  c->generation = generation;
  c->flags = flags;
  c->uid = id->uid;
  c->gid = id->gid;
  c->ngroups = id->ngroups;
  if (id->ngroups != 0)
    memcpy (c->groups, id->groups, id->ngroups * sizeof *id->groups);
}

static void
release_groups (struct xpthread_identity_saved_np *s)
{
  if (s->__groups != s->__inline_groups)
    free (s->__groups);
  s->__groups = s->__inline_groups;
}

/* The thread's groups into S, inline when they fit.  */
static int
save_groups (struct xpthread_identity_saved_np *s)
{
  size_t size = XPTHREAD_IDENTITY_INLINE_GROUPS;
  gid_t *buf = s->__inline_groups;
  for (;;)
    {
      long n = xp_syscall2 (SYS_getgroups, size, buf);
      if (n >= 0)
        {
          s->__groups = buf;
          s->__ngroups = (size_t) n;
          return 0;
        }
      if (buf != s->__inline_groups)
        free (buf);
      if (n != -EINVAL)
        return (int) -n;
      /* More groups than SIZE, maybe more than a moment ago if another
         thread called setgroups for the process: size again.  */
      size = (size_t) xp_syscall2 (SYS_getgroups, 0, NULL);
      buf = s->__inline_groups;
      if (size <= XPTHREAD_IDENTITY_INLINE_GROUPS)
        size = XPTHREAD_IDENTITY_INLINE_GROUPS;
      else if ((buf = malloc (size * sizeof *buf)) == NULL)
        return ENOMEM;
    }
}

/* Undo the steps recorded in S->__changed, uid first.  */
static void
undo_full (const struct xpthread_identity_saved_np *s)
{
  const uid_t *u = s->__uid;
  const gid_t *g = s->__gid;
  int err;
  if ((s->__changed & CHANGED_UID)
      && (err = xp_cred_result (xp_syscall3 (SYS_setresuid, u[REAL],
                                             u[EFFECTIVE], u[SAVED]))) != 0)
    xp_fatal ("cannot restore the thread's uid %u: setresuid: %s",
              (unsigned) u[EFFECTIVE], strerror (err));
  if ((s->__changed & CHANGED_GROUPS)
      && (err = xp_cred_result (xp_syscall2 (SYS_setgroups, s->__ngroups,
                                             s->__groups))) != 0)
    xp_fatal ("cannot restore the thread's groups: setgroups: %s",
              strerror (err));
  if ((s->__changed & CHANGED_GID)
      && (err = xp_cred_result (xp_syscall3 (SYS_setresgid, g[REAL],
                                             g[EFFECTIVE], g[SAVED]))) != 0)
    xp_fatal ("cannot restore the thread's gid %u: setresgid: %s",
              (unsigned) g[EFFECTIVE], strerror (err));
  /* The set*id calls made the file-system ids follow the effective ones;
     they may have differed before.  */
  if ((s->__changed & CHANGED_GID) && g[FS] != g[EFFECTIVE]
      && (err = xp_cred_set_fs_id (SYS_setfsgid, g[FS], NULL)) != 0)
    xp_fatal ("cannot restore the thread's fsgid %u: setfsgid: %s",
              (unsigned) g[FS], strerror (err));
  if ((s->__changed & CHANGED_UID) && u[FS] != u[EFFECTIVE]
      && (err = xp_cred_set_fs_id (SYS_setfsuid, u[FS], NULL)) != 0)
    xp_fatal ("cannot restore the thread's fsuid %u: setfsuid: %s",
              (unsigned) u[FS], strerror (err));
}

/* First step of either switch: save the groups, and change them if they
   differ.  */
static int
switch_groups (const struct xpthread_identity_np *id,
               struct xpthread_identity_saved_np *s)
{
  int err = save_groups (s);
  if (err != 0
      || groups_equal (s->__ngroups, s->__groups, id->ngroups, id->groups))
    return err;
  err = xp_cred_result (xp_syscall2 (SYS_setgroups, id->ngroups, id->groups));
  if (err == 0)
    s->__changed |= CHANGED_GROUPS;
  return err;
}

/* The effective ids change, and the file-system ids follow them; the
   real and saved ids stay, so that the thread may return.  */
static int
switch_full (const struct xpthread_identity_np *id,
             struct xpthread_identity_saved_np *s)
{
  uid_t *u = s->__uid;
  gid_t *g = s->__gid;
  xp_syscall3 (SYS_getresuid, &u[REAL], &u[EFFECTIVE], &u[SAVED]);
  xp_syscall3 (SYS_getresgid, &g[REAL], &g[EFFECTIVE], &g[SAVED]);
  u[FS] = (uid_t) xp_syscall1 (SYS_setfsuid, -1);
  g[FS] = (gid_t) xp_syscall1 (SYS_setfsgid, -1);
  int err = switch_groups (id, s);
  if (err != 0)
    return err;
  if (g[EFFECTIVE] != id->gid || g[FS] != id->gid)
    {
      err = xp_cred_result (xp_syscall3 (SYS_setresgid, -1, id->gid, -1));
      if (err != 0)
        return err;
      s->__changed |= CHANGED_GID;
    }
  if (u[EFFECTIVE] != id->uid || u[FS] != id->uid)
    {
      err = xp_cred_result (xp_syscall3 (SYS_setresuid, -1, id->uid, -1));
      if (err != 0)
        return err;
      s->__changed |= CHANGED_UID;
    }
  return 0;
}

static void
undo_fs (const struct xpthread_identity_saved_np *s)
{
  int err;
  if ((s->__changed & CHANGED_UID)
      && (err = xp_cred_set_fs_id (SYS_setfsuid, s->__uid[FS], NULL)) != 0)
    xp_fatal ("cannot restore the thread's fsuid %u: setfsuid: %s",
              (unsigned) s->__uid[FS], strerror (err));
  if ((s->__changed & CHANGED_GROUPS)
      && (err = xp_cred_result (xp_syscall2 (SYS_setgroups, s->__ngroups,
                                             s->__groups))) != 0)
    xp_fatal ("cannot restore the thread's groups: setgroups: %s",
              strerror (err));
  if ((s->__changed & CHANGED_GID)
      && (err = xp_cred_set_fs_id (SYS_setfsgid, s->__gid[FS], NULL)) != 0)
    xp_fatal ("cannot restore the thread's fsgid %u: setfsgid: %s",
              (unsigned) s->__gid[FS], strerror (err));
}

/* Only the file-system ids and the groups change.  setfsuid and
   setfsgid return the previous id, so the switch need not read it.  */
static int
switch_fs (const struct xpthread_identity_np *id,
           struct xpthread_identity_saved_np *s)
{
  unsigned old;
  int err = switch_groups (id, s);
  if (err != 0)
    return err;
  err = xp_cred_set_fs_id (SYS_setfsgid, id->gid, &old);
  s->__gid[FS] = old;
  if (err != 0)
    return err;
  if (old != id->gid)
    s->__changed |= CHANGED_GID;
  err = xp_cred_set_fs_id (SYS_setfsuid, id->uid, &old);
  s->__uid[FS] = old;
  if (err != 0)
    return err;
  if (old != id->uid)
    s->__changed |= CHANGED_UID;
  return 0;
}

static bool
valid_identity (const struct xpthread_identity_np *id, int flags)
{
  return id != NULL && (flags & ~XPTHREAD_IDENTITY_FS_ONLY) == 0
         && id->uid != (uid_t) -1 && id->gid != (gid_t) -1
         && id->ngroups <= NGROUPS_MAX
         && (id->groups != NULL || id->ngroups == 0);
}

int
xpthread_identity_switch_np (const struct xpthread_identity_np *id,
                             int flags,
                             struct xpthread_identity_saved_np *saved)
{
  if (saved == NULL || !valid_identity (id, flags))
    return EINVAL;
  saved->__owner = &xp_cred_current;
  saved->__changed = 0;
  saved->__groups = saved->__inline_groups;
  if (is_current (id, flags))
    {
      saved->__state = SAVED_NOTHING;
      return 0;
    }
  /* Before the first system call, including the reads of the identity
     the switch compares with its target.  */
  uint64_t generation = xp_cred_settled_generation ();
  bool fs_only = flags & XPTHREAD_IDENTITY_FS_ONLY;
  int err = fs_only ? switch_fs (id, saved) : switch_full (id, saved);
  if (err != 0)
    {
      xp_cred_forget ();
      if (fs_only)
        undo_fs (saved);
      else
        undo_full (saved);
      release_groups (saved);
      saved->__state = SAVED_NONE;
      return err;
    }
  saved->__state = fs_only ? SAVED_FS : SAVED_FULL;
  remember (id, flags, generation);
  return 0;
}
XP_EXPORT (xpthread_identity_switch_np)

int
xpthread_identity_restore_np (struct xpthread_identity_saved_np *saved)
{
  if (saved == NULL || saved->__owner != &xp_cred_current)
    return EINVAL;
  switch (saved->__state)
    {
    case SAVED_NOTHING:
      break;
    case SAVED_FULL:
      xp_cred_forget ();
      undo_full (saved);
      release_groups (saved);
      break;
    case SAVED_FS:
      xp_cred_forget ();
      undo_fs (saved);
      release_groups (saved);
      break;
    default:
      return EINVAL;
    }
  saved->__state = SAVED_NONE;
  return 0;
}
XP_EXPORT (xpthread_identity_restore_np)
