/* xpthread extensions.  Programs keep including <pthread.h> for the POSIX
   and glibc thread API, which libxpthread implements; this header adds
   what only xpthread offers.  Link with -lxpthread (pkg-config xpthread) or
   look the functions up with dlsym when running under LD_PRELOAD.  */
#ifndef XPTHREAD_H
#define XPTHREAD_H 1

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How xpthread starts threads in this process: "raw" (clone(2) with a
   thread control block xpthread builds for glibc) or "hosted" (through
   glibc's pthread_create, chosen when glibc's layout could not be
   validated or when XPTHREAD_MODE=hosted).  The string is static.  */
const char *xpthread_mode_np (void);

/* Per-thread credentials.  Each call changes the calling thread only,
   unlike setuid(2) and friends, which POSIX applies to the whole process;
   threads created afterwards inherit the caller's credentials.  They
   return 0 or an errno value.  */

/* File-system uid / gid, used for file access checks and the owner of new
   files.  EINVAL for -1, EPERM when the change is not permitted (the
   kernel's setfsuid cannot say so; xpthread reads the id back).  */
int xpthread_setfsuid_np (uid_t uid);
int xpthread_setfsgid_np (gid_t gid);
uid_t xpthread_getfsuid_np (void);
gid_t xpthread_getfsgid_np (void);

/* Real, effective and saved ids; -1 leaves one unchanged.  */
int xpthread_setresuid_np (uid_t ruid, uid_t euid, uid_t suid);
int xpthread_setresgid_np (gid_t rgid, gid_t egid, gid_t sgid);
int xpthread_getresuid_np (uid_t *ruid, uid_t *euid, uid_t *suid);
int xpthread_getresgid_np (gid_t *rgid, gid_t *egid, gid_t *sgid);

/* Supplementary groups: EINVAL for more than NGROUPS_MAX entries or NULL
   with a non-zero count.  getgroups stores the number of groups in
   *count; with size 0 it only counts them.  */
int xpthread_setgroups_np (size_t count, const gid_t *groups);
int xpthread_getgroups_np (size_t size, gid_t *groups, size_t *count);

/* Switching the calling thread to a user's identity for the length of a
   request, and back.  */
struct xpthread_identity_np
{
  uid_t uid;
  gid_t gid;
  size_t ngroups;               /* supplementary groups */
  const gid_t *groups;
};

/* Flag: change only the file-system uid and gid and the groups.  Without
   it the effective ids change (and the file-system ids with them) while
   the real and saved ids stay, so that the thread can return and the
   user cannot signal or trace the process.  */
#define XPTHREAD_IDENTITY_FS_ONLY 1

/* The identity a switch left, for xpthread_identity_restore_np.  Groups
   are kept inline: per-request switching must not allocate, and a copy
   for the kernel's limit (65536 groups, 256 KiB) is no object for the
   stack.  A thread with more groups than fit costs one malloc per switch,
   released by the restore.  The fields are private.  */
#define XPTHREAD_IDENTITY_INLINE_GROUPS 32
struct xpthread_identity_saved_np
{
  int __state;
  int __changed;
  const void *__owner;
  uid_t __uid[4];               /* real, effective, saved, file-system */
  gid_t __gid[4];
  size_t __ngroups;
  gid_t *__groups;
  gid_t __inline_groups[XPTHREAD_IDENTITY_INLINE_GROUPS];
};

/* Switch to *ID, saving the current identity in *SAVED.  Groups, then
   gid, then uid, so that the thread is privileged for every step.  0, or
   EINVAL (bad flags, an id of -1, a bad group list), EPERM, ENOMEM; on an
   error the thread keeps its identity.  A switch to the identity the
   thread already has from the previous switch makes no system call,
   unless a process-wide set*id call (setuid, setgroups...) was made in
   between.  */
int xpthread_identity_switch_np (const struct xpthread_identity_np *id,
                                 int flags,
                                 struct xpthread_identity_saved_np *saved);

/* Return to the identity saved by a switch on the same thread: 0, or
   EINVAL if *SAVED holds nothing to restore or belongs to another thread.
   Aborts the process if the identity cannot be restored.  */
int xpthread_identity_restore_np (struct xpthread_identity_saved_np *saved);

#ifdef __cplusplus
}
#endif

#endif
