/* Threads glibc started: its own functions for them, and where their tid
   lies.  A pthread_t xpthread did not make is glibc's handle (a library
   called glibc's pthread_create, found with dlsym), and only glibc's
   functions know what it points to.  Resolved once, before any such
   thread can be asked about: look-ups may allocate, and the first question
   may come from inside the program's allocator.  */
#ifndef XP_NPTL_COMPAT_GLIBC_THREADS_H
#define XP_NPTL_COMPAT_GLIBC_THREADS_H

#include "common.h"
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/types.h>

struct xp_glibc_thread_functions
{
  pthread_t (*self) (void);
  int (*key_create) (pthread_key_t *, void (*) (void *));
  int (*setspecific) (pthread_key_t, const void *);
  int (*join) (pthread_t, void **);
  int (*tryjoin) (pthread_t, void **);
  int (*clockjoin) (pthread_t, void **, clockid_t, const struct timespec *);
  int (*detach) (pthread_t);
  int (*kill) (pthread_t, int);
  int (*sigqueue) (pthread_t, int, const union sigval);
  int (*getname) (pthread_t, char *, size_t);
  int (*setname) (pthread_t, const char *);
  int (*getschedparam) (pthread_t, int *, struct sched_param *);
  int (*setschedparam) (pthread_t, int, const struct sched_param *);
  int (*setschedprio) (pthread_t, int);
  int (*getaffinity) (pthread_t, size_t, cpu_set_t *);
  int (*setaffinity) (pthread_t, size_t, const cpu_set_t *);
  int (*getcpuclockid) (pthread_t, clockid_t *);
};

extern struct xp_glibc_thread_functions xp_glibc_threads XP_HIDDEN;

/* Fill xp_glibc_threads, once; callable from any thread, early.  */
void xp_glibc_threads_init (void) XP_HIDDEN;

/* glibc's pthread_gettid_np (2.42), NULL before.  Looked up on first
   use, not with the rest: a failed look-up allocates its error message,
   and the rest may be looked up from inside the program's allocator.  */
typedef pid_t (*xp_glibc_gettid_function) (pthread_t);
xp_glibc_gettid_function xp_glibc_thread_gettid (void) XP_HIDDEN;

/* The word of glibc's thread that holds its tid; NULL where glibc's
   layout is unknown.  */
int *xp_glibc_thread_tid_word (pthread_t thread) XP_HIDDEN;

/* The word of glibc's thread that the kernel clears, and wakes as a
   shared futex, once the thread is gone (nonzero until then); NULL where
   it cannot be found.  */
int *xp_glibc_thread_exit_word (pthread_t thread) XP_HIDDEN;
bool xp_glibc_thread_tid_known (void) XP_HIDDEN;

/* What glibc's pthread_getattr_np says of its thread.  */
struct xp_glibc_thread_attr
{
  void *stack_low;
  size_t stack_size;
  size_t guard_size;
  int detach_state;
  int inherit_sched;
  int scope;
  int policy;
  int priority;
};
int xp_glibc_thread_attr (pthread_t thread,
                          struct xp_glibc_thread_attr *out) XP_HIDDEN;

#endif
