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
   setting the value allocates nothing.

   Such a thread's ID stays glibc's handle (pthread_self answers it), and
   the entry points that take an ID hand glibc's handles to glibc's own
   functions (xp_thread_of).  */
#define _GNU_SOURCE
#include "attr.h"
#include "compat.h"
#include "lock-hooks.h"
#include "sched-util.h"
#include "glibc-threads.h"
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

__thread struct xp_thread *xp_self_ptr
  __attribute__ ((tls_model ("initial-exec")));

static struct xp_thread main_thread;

/* The key whose destructor releases the descriptor of a thread glibc
   started; created with glibc's own function (glibc-threads.h).  */
static pthread_key_t release_key;
static bool have_release_key;

static size_t
descriptor_map_size (void)
{
  size_t page = xp_page_size ();
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
create_release_key (void)
{
  xp_glibc_threads_init ();
  have_release_key = xp_glibc_threads.key_create (&release_key,
                                                  release_foreign) == 0;
  if (!have_release_key)
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
  xp_once_spinning (&state, create_release_key);
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

static struct xp_thread *
adopt (int tid, bool main)
{
  struct xp_thread *t = main ? &main_thread : new_foreign_descriptor ();
  if (t == NULL)
    return NULL;
  /* xpthread's own, like a hosted thread's descriptor (hosted.c).  */
  xp_hook_sync_words (t, sizeof *t);
  xp_thread_set_kind (t, main ? &xp_main_kind : &xp_adopted_kind);
  t->tid = tid;
  /* glibc's handle of the thread: its ID, and what glibc must hear.  */
  t->host = xp_glibc_threads.self ();
  long policy = xp_syscall1 (SYS_sched_getscheduler, 0);
  t->realtime = policy == SCHED_FIFO || policy == SCHED_RR;
  /* Published first: anything below that comes back into xpthread finds
     the descriptor instead of adopting again.  */
  xp_self_ptr = t;
  xp_thread_list_add (t);
  if (!main && have_release_key)
    xp_glibc_threads.setspecific (release_key, t);
  return t;
}

/* Signals stay blocked meanwhile: a handler that calls into xpthread (the
   cancel signal's does, for a request to a thread glibc started) would
   adopt the thread a second time.  */
struct xp_thread *
xp_try_adopt_current (void)
{
  int tid = xp_gettid ();
  bool main = tid == xp_getpid ();
  xp_adopt_init ();
  sigset_t saved;
  xp_signals_block_all (&saved);
  struct xp_thread *t = xp_self_ptr != NULL ? xp_self_ptr : adopt (tid, main);
  xp_signals_restore (&saved);
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
