/* Adoption of threads xpthread did not start: the main thread, and
   threads glibc's own pthread_create started behind xpthread's back
   (SIGEV_THREAD timers, libraries that find pthread_create with dlsym,
   such as jemalloc for its background thread).  They get a descriptor the
   first time they need one.

   Such a thread may first reach xpthread from inside its allocator, with
   the allocator's locks held (jemalloc calls pthread_mutex_trylock from
   malloc).  So adoption takes the descriptor's memory from the kernel and
   calls nothing that allocates or takes a lock outside xpthread: not
   malloc, not __cxa_thread_atexit_impl (which allocates), not dlsym.  The
   descriptor is released when glibc ends the thread, by the destructor of
   a key created with glibc's own pthread_key_create: glibc runs those for
   its threads, and keeps the first 32 keys' values inside the thread, so
   setting the value allocates nothing.  */
#define _GNU_SOURCE
#include "compat.h"
#include "lock-hooks.h"
#include "thread.h"
#include <sched.h>
#include <sys/mman.h>

__thread struct xp_thread *xp_self_ptr
  __attribute__ ((tls_model ("initial-exec")));

static struct xp_thread main_thread;

/* glibc's entry points adoption needs, resolved before any foreign
   thread can ask: lookups may allocate.  */
static struct
{
  pthread_t (*self) (void);
  int (*setspecific) (pthread_key_t, const void *);
  pthread_key_t release_key;
  bool have_key;
} glibc;

static size_t
descriptor_map_size (void)
{
  size_t page = 4096;
  return (sizeof (struct xp_thread) + page - 1) & ~(page - 1);
}

static void
release_foreign (void *arg)
{
  struct xp_thread *self = arg;
  xp_tsd_run_destructors (self);
  xp_hook_thread_exit (self, true);
  xp_thread_list_remove (self);
  xp_tsd_release (self);
  xp_self_ptr = NULL;
  munmap (self, descriptor_map_size ());
}

static void
resolve_glibc (void)
{
  glibc.self = xp_glibc_function ("pthread_self", "GLIBC_2.2.5");
  glibc.setspecific = xp_glibc_function ("pthread_setspecific",
                                         "GLIBC_2.34");
  int (*key_create) (pthread_key_t *, void (*) (void *))
    = xp_glibc_function ("pthread_key_create", "GLIBC_2.34");
  glibc.have_key = key_create (&glibc.release_key, release_foreign) == 0;
  if (!glibc.have_key)
    xp_warn ("no glibc key left: descriptors of threads glibc starts "
             "behind xpthread's back are not released at their exit");
}

/* From the constructor, or earlier from the first adoption when another
   library's constructor or allocator came first; 0 none, 1 under way,
   2 done.  */
void
xp_adopt_init (void)
{
  static int state;
  int expected = 0;
  if (xp_cas (&state, &expected, 1))
    {
      resolve_glibc ();
      xp_store_release (&state, 2);
    }
  while (xp_load_acquire (&state) != 2)
    xp_cpu_relax ();
}

bool
xp_is_main_thread (const struct xp_thread *t)
{
  return t == &main_thread;
}

static struct xp_thread *
new_foreign_descriptor (void)
{
  void *p = mmap (NULL, descriptor_map_size (), PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

struct xp_thread *
xp_try_adopt_current (void)
{
  int tid = xp_gettid ();
  bool main = tid == xp_getpid ();
  xp_adopt_init ();
  struct xp_thread *t = main ? &main_thread : new_foreign_descriptor ();
  if (t == NULL)
    return NULL;
  /* xpthread's own, like a hosted thread's descriptor (hosted.c).  */
  xp_hook_sync_words (t, sizeof *t);
  t->kind = XP_THREAD_ADOPTED;
  t->tid = tid;
  /* glibc's handle of the thread, for what glibc must hear about it.  */
  t->host = glibc.self ();
  long policy = xp_syscall1 (SYS_sched_getscheduler, 0);
  t->realtime = policy == SCHED_FIFO || policy == SCHED_RR;
  /* Published first: anything below that comes back into xpthread finds
     the descriptor instead of adopting again.  */
  xp_self_ptr = t;
  xp_thread_list_add (t);
  if (!main && glibc.have_key)
    glibc.setspecific (glibc.release_key, t);
  return t;
}

struct xp_thread *
xp_adopt_current (void)
{
  struct xp_thread *t = xp_try_adopt_current ();
  if (t == NULL)
    xp_fatal ("out of memory adopting thread %d", xp_gettid ());
  return t;
}
