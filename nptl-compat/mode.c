/* Choosing how threads start: raw (clone with our TCB) when glibc's layout
   validates, hosted (glibc's pthread_create) otherwise or on request.  */
#define _GNU_SOURCE
#include "compat.h"
#include "env.h"
#include "export.h"
#include "glibc-cond.h"
#include "glibc-threads.h"
#include "layout.h"
#include "fork-locks.h"
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdlib.h>
#include <string.h>
#include <xpthread.h>

enum xp_mode xp_mode = XP_MODE_HOSTED;
const char *xp_mode_reason = "not initialised";
ptrdiff_t xp_compat_cpu_id_offset;
ptrdiff_t xp_compat_tid_offset;

static enum xp_mode
requested_mode (bool under_valgrind, const char **why)
{
  /* valgrind follows threads that glibc starts, their stacks and TLS,
     and helgrind and DRD know glibc's thread creation; a raw thread's
     stack and TCB are foreign to them (memcheck reports its own frames
     as invalid), so under valgrind threads start hosted, whatever
     XPTHREAD_MODE asks.  */
  if (under_valgrind)
    {
      *why = "running under valgrind";
      return XP_MODE_HOSTED;
    }
  const char *env = xp_env_string ("XPTHREAD_MODE");
  if (env == NULL || strcmp (env, "auto") == 0)
    return XP_MODE_RAW;
  if (strcmp (env, "hosted") == 0)
    {
      *why = "XPTHREAD_MODE=hosted";
      return XP_MODE_HOSTED;
    }
  if (strcmp (env, "raw") != 0)
    xp_warn ("XPTHREAD_MODE=%s is not raw, hosted or auto; using auto", env);
  return XP_MODE_RAW;
}

void
xp_compat_init (void)
{
  xp_glibc_threads_init ();
  xp_compat_cpu_id_offset = xp_layout_cpu_id_offset ();
  xp_compat_tid_offset = xp_layout_tid_offset ();
  xp_layout_find_pointer_guard ();
  xp_glibc_cond_find ();
}

void
xp_compat_choose_mode (bool under_valgrind)
{
  const char *why = NULL;
  enum xp_mode mode = requested_mode (under_valgrind, &why);
  if (mode == XP_MODE_RAW)
    {
      why = xp_layout_discover ();
      if (why != NULL)
        {
          const char *env = xp_env_string ("XPTHREAD_MODE");
          if (env != NULL && strcmp (env, "raw") == 0)
            xp_fatal ("XPTHREAD_MODE=raw but glibc's layout is unusable: %s",
                      why);
          mode = XP_MODE_HOSTED;
        }
      else
        why = "glibc layout validated";
    }
  if (mode == XP_MODE_HOSTED)
    xp_layout_find_tls_dtors ();
  xp_mode = mode;
  xp_mode_reason = why;
  if (xp_env_flag ("XPTHREAD_SHOW_MODE"))
    {
      xp_warn ("mode %s (%s)", xpthread_mode_np (), why);
      xp_warn ("glibc %s, condition variable layout of glibc %s",
               gnu_get_libc_version (), xp_glibc_cond_release ());
    }
}

const char *
xpthread_mode_np (void)
{
  return xp_mode == XP_MODE_RAW ? "raw" : "hosted";
}
XP_EXPORT (xpthread_mode_np)

/* glibc's own entry points, for hosted mode, threads glibc started and
   the one thread that puts glibc in multi-threaded mode.  */
void *
xp_glibc_function_if_any (const char *name)
{
  return dlsym (RTLD_NEXT, name);
}

void *
xp_glibc_function (const char *name)
{
  void *f = xp_glibc_function_if_any (name);
  if (f == NULL)
    xp_fatal ("glibc's %s is missing", name);
  return f;
}

static XP_FORK_LOCK (mode, multithreaded_lock);

static void *
do_nothing (void *arg)
{
  return arg;
}

/* The thread does nothing: a small stack, which glibc keeps in its cache
   afterwards, rather than the default 8 MiB; glibc's default if glibc
   refuses the size (a large static TLS).  */
#define SMALL_STACK ((size_t) 64 << 10)

static int
create_small (int (*create) (pthread_t *, const pthread_attr_t *,
                             void *(*) (void *), void *), pthread_t *t)
{
  int (*attr_init) (pthread_attr_t *)
    = xp_glibc_function ("pthread_attr_init");
  int (*attr_setstacksize) (pthread_attr_t *, size_t)
    = xp_glibc_function ("pthread_attr_setstacksize");
  int (*attr_destroy) (pthread_attr_t *)
    = xp_glibc_function ("pthread_attr_destroy");
  pthread_attr_t attr;
  int err = attr_init (&attr);
  if (err != 0)
    return err;
  err = attr_setstacksize (&attr, SMALL_STACK);
  if (err == 0)
    err = create (t, &attr, do_nothing, NULL);
  attr_destroy (&attr);
  return err == EINVAL ? create (t, NULL, do_nothing, NULL) : err;
}

/* glibc switches to multi-threaded mode when it creates its first thread:
   both copies of __libc_single_threaded, stdio locking, its set*id signal
   handler.  Doing that by hand broke something every time, so have glibc
   create and join one thread of its own.  Returns 0, or glibc's error
   (EAGAIN when memory or threads run out), and is tried again next time.  */
int
xp_compat_go_multithreaded (void)
{
  static int done;
  if (xp_load_acquire (&done))
    return 0;
  int err = 0;
  xp_lock (&multithreaded_lock);
  if (!done)
    {
      int (*create) (pthread_t *, const pthread_attr_t *, void *(*) (void *),
                     void *)
        = xp_glibc_function ("pthread_create");
      int (*join) (pthread_t, void **)
        = xp_glibc_function ("pthread_join");
      pthread_t t;
      err = create_small (create, &t);
      if (err == 0 && join (t, NULL) == 0)
        xp_store_release (&done, 1);
    }
  xp_unlock (&multithreaded_lock);
  return err;
}
