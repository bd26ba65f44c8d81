/* Thread creation rates.

   create_join_rate: a loop of pthread_create + pthread_join of a thread
   that does nothing; threads per second.

   detached_rate: create detached threads that each decrement a shared
   atomic counter, then wait until the counter reaches zero; threads per
   second.  At most -w threads are in flight at once (created, not yet
   finished) so that the run measures creation, not the thread limit.

   clone_floor_rate: the same loop with no thread library at all: clone(2)
   a task that shares everything and exits at once, and wait on its tid
   word.  No TLS, no signal masks, no stack to find, no registrations: no
   pthread_create can beat it, so it bounds what any library's
   create_join_rate can reach on the machine.  It does not depend on the
   library preloaded; bench/run prints it for both.

   usage: bench-create [-n JOINED] [-d DETACHED] [-w WINDOW]  */
#include "bench.h"
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>

static void *
trivial (void *arg)
{
  return arg;
}

static atomic_long remaining;

static void *
detached_body (void *arg)
{
  (void) arg;
  atomic_fetch_sub_explicit (&remaining, 1, memory_order_release);
  return NULL;
}

static double
create_join (long n)
{
  double t0 = bench_now ();
  for (long i = 0; i < n; i++)
    {
      pthread_t t;
      void *ret;
      int err = pthread_create (&t, NULL, trivial, (void *) i);
      if (err != 0)
        bench_fail ("pthread_create", err);
      err = pthread_join (t, &ret);
      if (err != 0)
        bench_fail ("pthread_join", err);
      if (ret != (void *) i)
        {
          fprintf (stderr, "bench-create: join returned %p, expected %p\n",
                   ret, (void *) i);
          exit (1);
        }
    }
  return (double) n / (bench_now () - t0);
}

static int
exit_at_once (void *arg)
{
  (void) arg;
  syscall (SYS_exit, 0);
  return 0;
}

static double
clone_floor (long n)
{
  static char stack[64 * 1024] __attribute__ ((aligned (64)));
  /* The task runs on the thread's TLS, so it must not touch errno or any
     other per-thread state: exit_at_once makes one successful raw call.  */
  const int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND
                    | CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID
                    | CLONE_CHILD_CLEARTID;
  static volatile int tid;
  double t0 = bench_now ();
  for (long i = 0; i < n; i++)
    {
      /* The stack is free again once the kernel has cleared the tid.  */
      if (clone (exit_at_once, stack + sizeof stack, flags, NULL,
                 (int *) &tid, NULL, (int *) &tid) < 0)
        bench_fail ("clone", errno);
      int seen;
      while ((seen = tid) != 0)
        syscall (SYS_futex, &tid, FUTEX_WAIT, seen, NULL, NULL, 0);
    }
  return (double) n / (bench_now () - t0);
}

static double
create_detached (long n, long window)
{
  pthread_attr_t attr;
  int err = pthread_attr_init (&attr);
  if (err == 0)
    err = pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  if (err != 0)
    bench_fail ("pthread_attr_setdetachstate", err);

  atomic_store (&remaining, n);
  double t0 = bench_now ();
  for (long created = 0; created < n;)
    {
      long finished = n - atomic_load_explicit (&remaining,
                                                memory_order_acquire);
      if (created - finished >= window)
        {
          sched_yield ();
          continue;
        }
      pthread_t t;
      err = pthread_create (&t, &attr, detached_body, NULL);
      if (err == EAGAIN)
        {
          /* Out of threads or memory for the moment: let some finish.  */
          sched_yield ();
          continue;
        }
      if (err != 0)
        bench_fail ("pthread_create (detached)", err);
      created++;
    }
  while (atomic_load_explicit (&remaining, memory_order_acquire) > 0)
    sched_yield ();
  double rate = (double) n / (bench_now () - t0);
  pthread_attr_destroy (&attr);
  return rate;
}

int
main (int argc, char **argv)
{
  long joined = 20000, detached = 20000, window = 256;
  int opt;
  while ((opt = getopt (argc, argv, "n:d:w:")) != -1)
    switch (opt)
      {
      case 'n': joined = bench_count (argv[0], optarg); break;
      case 'd': detached = bench_count (argv[0], optarg); break;
      case 'w': window = bench_count (argv[0], optarg); break;
      default:
        fprintf (stderr, "usage: %s [-n JOINED] [-d DETACHED] [-w WINDOW]\n",
                 argv[0]);
        return 2;
      }

  bench_print_impl ();
  /* Warm up: the first threads pay for one-time set-up (stack cache,
     malloc arenas, the thread library's own initialisation).  */
  create_join (16);
  bench_metric ("create_join_rate", create_join (joined), "threads/s", 1);
  bench_metric ("detached_rate", create_detached (detached, window),
                "threads/s", 1);
  bench_metric ("clone_floor_rate", clone_floor (joined), "threads/s", 1);
  return 0;
}
