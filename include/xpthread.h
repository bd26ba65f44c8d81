/* xpthread extensions.  Programs keep including <pthread.h> for the POSIX
   and glibc thread API, which libxpthread implements; this header adds
   what only xpthread offers.  Link with -lxpthread (pkg-config xpthread) or
   look the functions up with dlsym when running under LD_PRELOAD.  */
#ifndef XPTHREAD_H
#define XPTHREAD_H 1

#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How xpthread starts threads in this process: "raw" (clone(2) with a
   thread control block xpthread builds for glibc) or "hosted" (through
   glibc's pthread_create, chosen when glibc's layout could not be
   validated or when XPTHREAD_MODE=hosted).  The string is static.  */
const char *xpthread_mode_np (void);

#ifdef __cplusplus
}
#endif

#endif
