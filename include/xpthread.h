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

#ifdef __cplusplus
}
#endif

#endif
