/* Preloaded after libxpthread (LD_PRELOAD="libxpthread.so:this"), and
   so initialised before it: its fork handler, registered before
   xpthread's, runs after it in the forking thread (prepare handlers run
   last registered first), while xpthread holds its fork locks, and
   takes a mutex of the program's, as jemalloc's handler (registered at
   jemalloc's first allocation, before xpthread's constructor ends)
   takes its arenas' (tests/fork-late.sh).  */
#include <pthread.h>
#include <stdatomic.h>

pthread_mutex_t fork_late_mutex = PTHREAD_MUTEX_INITIALIZER;
atomic_int fork_late_preparing;

static void
prepare (void)
{
  atomic_store (&fork_late_preparing, 1);
  pthread_mutex_lock (&fork_late_mutex);
}

static void
after (void)
{
  pthread_mutex_unlock (&fork_late_mutex);
}

__attribute__ ((constructor)) static void
register_handler (void)
{
  pthread_atfork (prepare, after, after);
}
