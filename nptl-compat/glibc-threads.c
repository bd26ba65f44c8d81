/* glibc's functions for the threads glibc started (glibc-threads.h).
   Each is the default version, the one a program linked today gets.  */
#define _GNU_SOURCE
#include "glibc-threads.h"
#include "compat.h"
#include "layout.h"
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <sys/prctl.h>

struct xp_glibc_thread_functions xp_glibc_threads;

/* From a handle to the thread's tid: the handle addresses glibc's
   descriptor, which lies at a fixed distance from the thread pointer
   (none on x86_64), and the tid at a fixed offset from that.  0 when
   unknown.  */
static ptrdiff_t tid_word_offset;

/* From a handle to the word the kernel clears when the thread is gone:
   the tid up to glibc 2.42, joinstate from 2.43.  Whichever it is, glibc
   gave its address to the kernel for the calling thread too, which the
   kernel tells (PR_GET_TID_ADDRESS, with CONFIG_CHECKPOINT_RESTORE; not
   under qemu-user).  Where it does not, the release says which.  0 when
   unknown.  */
static ptrdiff_t exit_word_offset;

#define RESOLVE(field, name) \
  (xp_glibc_threads.field = xp_glibc_function (name))

static void
resolve_all (void)
{
  RESOLVE (self, "pthread_self");
  RESOLVE (key_create, "pthread_key_create");
  RESOLVE (setspecific, "pthread_setspecific");
  RESOLVE (join, "pthread_join");
  RESOLVE (tryjoin, "pthread_tryjoin_np");
  RESOLVE (clockjoin, "pthread_clockjoin_np");
  RESOLVE (detach, "pthread_detach");
  RESOLVE (kill, "pthread_kill");
  RESOLVE (sigqueue, "pthread_sigqueue");
  RESOLVE (getname, "pthread_getname_np");
  RESOLVE (setname, "pthread_setname_np");
  RESOLVE (getschedparam, "pthread_getschedparam");
  RESOLVE (setschedparam, "pthread_setschedparam");
  RESOLVE (setschedprio, "pthread_setschedprio");
  RESOLVE (getaffinity, "pthread_getaffinity_np");
  RESOLVE (setaffinity, "pthread_setaffinity_np");
  RESOLVE (getcpuclockid, "pthread_getcpuclockid");
}

xp_glibc_gettid_function
xp_glibc_thread_gettid (void)
{
  /* 0 unknown, 1 missing, else the function; a race looks up twice.  */
  static uintptr_t found;
  uintptr_t f = xp_load_acquire (&found);
  if (f == 0)
    {
      void *g = xp_glibc_function_if_any ("pthread_gettid_np");
      f = g != NULL ? (uintptr_t) g : 1;
      xp_store_release (&found, f);
    }
  return f != 1 ? (xp_glibc_gettid_function) f : NULL;
}

static void
find_tid_word (void)
{
  ptrdiff_t tid = xp_layout_tid_offset ();
  if (tid == 0)
    return;
  const char *handle = (const char *) xp_glibc_threads.self ();
  const char *tp = xp_thread_pointer ();
  tid_word_offset = tp - handle + tid;
}

/* The first glibc release whose kernel-cleared word is not the tid.  */
#define JOINSTATE_MAJOR 2
#define JOINSTATE_MINOR 43

static bool
release_clears_tid (void)
{
  unsigned major = 0, minor = 0;
  if (sscanf (gnu_get_libc_version (), "%u.%u", &major, &minor) != 2)
    return false;
  return major < JOINSTATE_MAJOR
         || (major == JOINSTATE_MAJOR && minor < JOINSTATE_MINOR);
}

static void
find_exit_word (void)
{
  int *word = NULL;
  if (xp_syscall2 (SYS_prctl, PR_GET_TID_ADDRESS, &word) != 0 || word == NULL)
    {
      if (release_clears_tid ())
        exit_word_offset = tid_word_offset;
      return;
    }
  ptrdiff_t off = (const char *) word
                  - (const char *) xp_glibc_threads.self ();
  /* Inside the descriptor, and nonzero while the thread runs.  */
  if (off > 0 && off < 65536 && *word != 0)
    exit_word_offset = off;
}

static void
find_all (void)
{
  resolve_all ();
  find_tid_word ();
  find_exit_word ();
}

void
xp_glibc_threads_init (void)
{
  static int state;
  xp_once_spinning (&state, find_all);
}

int *
xp_glibc_thread_exit_word (pthread_t thread)
{
  if (exit_word_offset == 0)
    return NULL;
  return (int *) ((char *) thread + exit_word_offset);
}

bool
xp_glibc_thread_tid_known (void)
{
  return tid_word_offset != 0;
}

int *
xp_glibc_thread_tid_word (pthread_t thread)
{
  if (!xp_glibc_thread_tid_known ())
    return NULL;
  return (int *) ((char *) thread + tid_word_offset);
}

/* glibc's attribute object is glibc's layout, read with glibc's getters.  */
struct attr_readers
{
  int (*getattr) (pthread_t, pthread_attr_t *);
  int (*getstack) (const pthread_attr_t *, void **, size_t *);
  int (*getguardsize) (const pthread_attr_t *, size_t *);
  int (*getdetachstate) (const pthread_attr_t *, int *);
  int (*getinheritsched) (const pthread_attr_t *, int *);
  int (*getscope) (const pthread_attr_t *, int *);
  int (*getschedpolicy) (const pthread_attr_t *, int *);
  int (*getschedparam) (const pthread_attr_t *, struct sched_param *);
  int (*destroy) (pthread_attr_t *);
};

static void
resolve_attr_readers (struct attr_readers *r)
{
  r->getattr = xp_glibc_function ("pthread_getattr_np");
  r->getstack = xp_glibc_function ("pthread_attr_getstack");
  r->getguardsize = xp_glibc_function ("pthread_attr_getguardsize");
  r->getdetachstate = xp_glibc_function ("pthread_attr_getdetachstate");
  r->getinheritsched = xp_glibc_function ("pthread_attr_getinheritsched");
  r->getscope = xp_glibc_function ("pthread_attr_getscope");
  r->getschedpolicy = xp_glibc_function ("pthread_attr_getschedpolicy");
  r->getschedparam = xp_glibc_function ("pthread_attr_getschedparam");
  r->destroy = xp_glibc_function ("pthread_attr_destroy");
}

int
xp_glibc_thread_attr (pthread_t thread, struct xp_glibc_thread_attr *out)
{
  /* Looked up here, not with the rest: pthread_getattr_np allocates
     anyway, and nobody asks it from inside an allocator.  */
  struct attr_readers r;
  resolve_attr_readers (&r);
  pthread_attr_t attr;
  int err = r.getattr (thread, &attr);
  if (err != 0)
    return err;
  struct sched_param param;
  r.getstack (&attr, &out->stack_low, &out->stack_size);
  r.getguardsize (&attr, &out->guard_size);
  r.getdetachstate (&attr, &out->detach_state);
  r.getinheritsched (&attr, &out->inherit_sched);
  r.getscope (&attr, &out->scope);
  r.getschedpolicy (&attr, &out->policy);
  r.getschedparam (&attr, &param);
  out->priority = param.sched_priority;
  r.destroy (&attr);
  return 0;
}
