/* glibc's own thread functions, for hosted mode (glibc-create.c).  */
#ifndef XP_NPTL_COMPAT_GLIBC_CREATE_H
#define XP_NPTL_COMPAT_GLIBC_CREATE_H

#include "common.h"
#include <pthread.h>

struct xp_attr;

/* Start START (ARG) with glibc's pthread_create, A's attributes and every
   signal blocked; *HOST gets glibc's handle before the thread can end.  */
int xp_glibc_create (pthread_t *host, const struct xp_attr *a,
                     void *(*start) (void *), void *arg) XP_HIDDEN;
/* Wait for glibc's thread to end, without a deadline, and free it.  */
int xp_glibc_join (pthread_t host) XP_HIDDEN;
int xp_glibc_detach (pthread_t host) XP_HIDDEN;
/* End the calling thread through glibc's pthread_exit.  */
void xp_glibc_exit (void *result) XP_HIDDEN __attribute__ ((noreturn));

#endif
