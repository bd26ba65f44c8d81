/* A shared object whose constructor takes locks for a while, which
   tests/lockdep-cases.c loads and unloads again and again while another
   thread writes lockdep reports: dlopen holds the dynamic linker's lock
   while a constructor runs, and the lock calls of this one go through
   lockdep.  */
#include <pthread.h>
#include <time.h>

#define CONSTRUCTOR_NS 5000000L

static long
since (const struct timespec *start)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (now.tv_sec - start->tv_sec) * 1000000000L
         + (now.tv_nsec - start->tv_nsec);
}

/* Each lock is new: initialising it enters lockdep every time.  */
static void __attribute__ ((constructor))
lock_while_loaded (void)
{
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  do
    {
      pthread_mutex_t m;
      pthread_mutex_init (&m, NULL);
      pthread_mutex_lock (&m);
      pthread_mutex_unlock (&m);
      pthread_mutex_destroy (&m);
    }
  while (since (&start) < CONSTRUCTOR_NS);
}
