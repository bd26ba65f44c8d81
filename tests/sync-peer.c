/* A plain glibc program that works on a process-shared mutex and
   condition variable together with a suite that runs on xpthread (see
   sync-peer.h).  It is built without libxpthread and the suite runs it
   with LD_PRELOAD removed, and it checks that, so the other side of every
   exchange really is glibc's implementation.

   Usage: sync-peer FD init TYPE [ROBUST] initialise the shared mutex (of
                                          TYPE, robust if ROBUST is 1) and
                                          condition variable
          sync-peer FD die-holding        lock the mutex and exit holding it
          sync-peer FD recover            lock the mutex, which must answer
                                          EOWNERDEAD, make it consistent,
                                          count once and unlock
          sync-peer FD count N THREADS    THREADS threads each increment
                                          the counter N times under the
                                          mutex
          sync-peer FD pong ROUNDS        play side 1 of the ping-pong
          sync-peer FD queue N THREADS    side 1 of the queue: one thread
                                          produces N items (signal, every
                                          fourth a broadcast; none if N is
                                          0), THREADS threads (maybe 0)
                                          consume until both sides
                                          consumed queue_total; production
                                          starts once queue_consumers
                                          consumers are ready  */
#define _GNU_SOURCE
#include "sync-peer.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static struct xp_peer_area *area;

static long
number (const char *s)
{
  char *end;
  long n = strtol (s, &end, 10);
  if (*s == '\0' || *end != '\0' || n < 0)
    exit (XP_PEER_USAGE);
  return n;
}

static int
init_shared (int type, int robust)
{
  pthread_mutexattr_t mattr;
  pthread_condattr_t cattr;
  if (pthread_mutexattr_init (&mattr) != 0
      || pthread_mutexattr_settype (&mattr, type) != 0
      || pthread_mutexattr_setrobust (&mattr, robust ? PTHREAD_MUTEX_ROBUST
                                                     : PTHREAD_MUTEX_STALLED)
         != 0
      || pthread_mutexattr_setpshared (&mattr, PTHREAD_PROCESS_SHARED) != 0
      || pthread_mutex_init (&area->mutex, &mattr) != 0)
    return XP_PEER_INIT;
  if (pthread_condattr_init (&cattr) != 0
      || pthread_condattr_setpshared (&cattr, PTHREAD_PROCESS_SHARED) != 0
      || pthread_cond_init (&area->cond, &cattr) != 0)
    return XP_PEER_INIT;
  return 0;
}

static long per_thread;

static void *
count_worker (void *unused)
{
  for (long i = 0; i < per_thread; i++)
    {
      if (pthread_mutex_lock (&area->mutex) != 0)
        return (void *) 1;
      area->counter++;
      if (pthread_mutex_unlock (&area->mutex) != 0)
        return (void *) 1;
    }
  return NULL;
}

static int
count (long n, long threads)
{
  pthread_t t[16];
  if (threads < 1 || threads > 16)
    return XP_PEER_USAGE;
  per_thread = n;
  for (long i = 0; i < threads; i++)
    if (pthread_create (&t[i], NULL, count_worker, NULL) != 0)
      return XP_PEER_THREAD;
  int status = 0;
  for (long i = 0; i < threads; i++)
    {
      void *result;
      if (pthread_join (t[i], &result) != 0)
        return XP_PEER_THREAD;
      if (result != NULL)
        status = XP_PEER_LOCK;
    }
  return status;
}

/* Side 1 of the ping-pong: wait for the turn, take it, hand it back.  */
static int
pong (long rounds)
{
  for (long r = 0; r < rounds; r++)
    {
      if (pthread_mutex_lock (&area->mutex) != 0)
        return XP_PEER_LOCK;
      struct timespec deadline;
      clock_gettime (CLOCK_REALTIME, &deadline);
      deadline.tv_sec += XP_PEER_WAIT_SECONDS;
      while (area->turn != 1)
        if (pthread_cond_timedwait (&area->cond, &area->mutex, &deadline)
            != 0)
          return XP_PEER_COND;
      area->moves[1]++;
      area->turn = 0;
      if (pthread_cond_signal (&area->cond) != 0
          || pthread_mutex_unlock (&area->mutex) != 0)
        return XP_PEER_LOCK;
    }
  return 0;
}

/* The process ends with the mutex held: the kernel, walking glibc's
   robust list, marks the owner dead.  */
static int
die_holding (void)
{
  return pthread_mutex_lock (&area->mutex) == 0 ? 0 : XP_PEER_LOCK;
}

static int
recover (void)
{
  if (pthread_mutex_lock (&area->mutex) != EOWNERDEAD
      || pthread_mutex_consistent (&area->mutex) != 0)
    return XP_PEER_LOCK;
  area->counter++;
  return pthread_mutex_unlock (&area->mutex) == 0 ? 0 : XP_PEER_LOCK;
}

static long queue_items;

static bool
queue_drained (void)
{
  return area->consumed[0] + area->consumed[1] == area->queue_total;
}

static void *
queue_consumer (void *unused)
{
  if (pthread_mutex_lock (&area->mutex) != 0)
    return (void *) XP_PEER_LOCK;
  area->consumers_ready++;
  struct timespec deadline;
  clock_gettime (CLOCK_REALTIME, &deadline);
  deadline.tv_sec += XP_PEER_WAIT_SECONDS;
  long status = 0;
  while (status == 0 && !queue_drained ())
    {
      if (area->items == 0)
        {
          if (pthread_cond_timedwait (&area->cond, &area->mutex, &deadline)
              != 0)
            status = XP_PEER_COND;
          continue;
        }
      area->items--;
      area->consumed[1]++;
      if (queue_drained () && pthread_cond_broadcast (&area->cond) != 0)
        status = XP_PEER_COND;
    }
  if (pthread_mutex_unlock (&area->mutex) != 0)
    status = XP_PEER_LOCK;
  return (void *) status;
}

/* Production starts once every consumer of both sides is in its loop,
   so that waiters of both implementations are there to be woken.  */
static bool
queue_consumers_ready (void)
{
  for (int ms = 0; ms < XP_PEER_WAIT_SECONDS * 1000; ms++)
    {
      if (pthread_mutex_lock (&area->mutex) != 0)
        return false;
      bool ready = area->consumers_ready == area->queue_consumers;
      if (pthread_mutex_unlock (&area->mutex) != 0)
        return false;
      if (ready)
        return true;
      usleep (1000);
    }
  return false;
}

static void *
queue_producer (void *unused)
{
  if (!queue_consumers_ready ())
    return (void *) XP_PEER_COND;
  for (long i = 0; i < queue_items; i++)
    {
      if (pthread_mutex_lock (&area->mutex) != 0)
        return (void *) XP_PEER_LOCK;
      area->items++;
      area->produced[1]++;
      int err = i % 4 == 0 ? pthread_cond_broadcast (&area->cond)
                           : pthread_cond_signal (&area->cond);
      if (pthread_mutex_unlock (&area->mutex) != 0 || err != 0)
        return (void *) XP_PEER_LOCK;
    }
  return NULL;
}

/* With n == 0 no producer, with consumers == 0 no consumer.  */
static int
queue (long n, long consumers)
{
  pthread_t t[17];
  bool started[17] = { false };
  if (consumers < 0 || consumers > 16)
    return XP_PEER_USAGE;
  queue_items = n;
  for (long i = n > 0 ? 0 : 1; i <= consumers; i++)
    {
      if (pthread_create (&t[i], NULL,
                          i == 0 ? queue_producer : queue_consumer, NULL)
          != 0)
        return XP_PEER_THREAD;
      started[i] = true;
    }
  int status = 0;
  for (long i = 0; i <= consumers; i++)
    {
      void *result;
      if (!started[i])
        continue;
      if (pthread_join (t[i], &result) != 0)
        return XP_PEER_THREAD;
      if (result != NULL)
        status = (int) (long) result;
    }
  return status;
}

int
main (int argc, char **argv)
{
  /* Never outlive a suite that failed and left us waiting.  */
  alarm (2 * XP_PEER_WAIT_SECONDS);
  if (argc < 3)
    return XP_PEER_USAGE;
  if (dlsym (RTLD_DEFAULT, "xpthread_mode_np") != NULL)
    return XP_PEER_NOT_GLIBC;
  int fd = (int) number (argv[1]);
  area = mmap (NULL, sizeof *area, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (area == MAP_FAILED)
    return XP_PEER_MAP;
  __atomic_store_n (&area->peer_started, 1, __ATOMIC_RELEASE);

  if ((argc == 4 || argc == 5) && strcmp (argv[2], "init") == 0)
    return init_shared ((int) number (argv[3]),
                        argc == 5 && number (argv[4]) == 1);
  if (argc == 3 && strcmp (argv[2], "die-holding") == 0)
    return die_holding ();
  if (argc == 3 && strcmp (argv[2], "recover") == 0)
    return recover ();
  if (argc == 5 && strcmp (argv[2], "count") == 0)
    return count (number (argv[3]), number (argv[4]));
  if (argc == 4 && strcmp (argv[2], "pong") == 0)
    return pong (number (argv[3]));
  if (argc == 5 && strcmp (argv[2], "queue") == 0)
    return queue (number (argv[3]), number (argv[4]));
  return XP_PEER_USAGE;
}
