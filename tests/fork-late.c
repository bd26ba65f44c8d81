/* A thread holds the mutex that a late fork handler (fork-late-handler.c)
   takes, and while the fork waits for it, initialises, takes and
   releases a mutex it never saw: the lock debugging tools' hooks must
   not wait for their locks, which the fork holds.  Prints "forked" when
   the fork and the thread end.  */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t *late_mutex;
static atomic_int *preparing;
static atomic_int holding;

static void
pause_ms (long ms)
{
  struct timespec ts = { 0, ms * 1000000 };
  nanosleep (&ts, NULL);
}

static void *
holder (void *arg)
{
  /* A mutex initialised first: the tools know this thread from then on,
     so that their hooks below go further than their first lock.  */
  pthread_mutex_t first;
  pthread_mutex_init (&first, NULL);
  pthread_mutex_lock (&first);
  pthread_mutex_unlock (&first);
  pthread_mutex_destroy (&first);
  pthread_mutex_lock (late_mutex);
  atomic_store (&holding, 1);
  while (!atomic_load (preparing))
    pause_ms (1);
  pause_ms (50);   /* the forking thread now waits for late_mutex */
  pthread_mutex_t fresh;
  pthread_mutex_init (&fresh, NULL);
  pthread_mutex_lock (&fresh);
  pthread_mutex_unlock (&fresh);
  pthread_mutex_destroy (&fresh);
  pthread_mutex_unlock (late_mutex);
  return arg;
}

int
main (void)
{
  late_mutex = dlsym (RTLD_DEFAULT, "fork_late_mutex");
  preparing = dlsym (RTLD_DEFAULT, "fork_late_preparing");
  if (late_mutex == NULL || preparing == NULL)
    {
      fprintf (stderr, "fork-late: the handler library is not preloaded\n");
      return 2;
    }
  pthread_t t;
  if (pthread_create (&t, NULL, holder, NULL) != 0)
    return 1;
  while (!atomic_load (&holding))
    pause_ms (1);
  pid_t pid = fork ();
  if (pid == 0)
    _exit (0);
  int status;
  if (pid < 0 || waitpid (pid, &status, 0) != pid || status != 0)
    return 1;
  pthread_join (t, NULL);
  puts ("forked");
  return 0;
}
