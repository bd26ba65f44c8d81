/* The cost of the cancellation-point wrappers on uncontended calls.

   pipe_rw_ns: write one byte into a pipe and read it back, nanoseconds
   per write+read pair.
   open_close_ns: close (open ("/dev/null", O_RDONLY)), nanoseconds per
   pair.

   Both are cancellation points: with glibc they are glibc's wrappers,
   with xpthread its interposers (lib/cancel/points-*.c).  The loops run
   in a second thread while the first waits in pthread_join, so that the
   process is multithreaded and the calls take the path they take in a
   threaded program.  Each figure is the best of a few batches, to keep
   a stray interruption out of it.

   usage: bench-syscall [-n PAIRS]  */
#include "bench.h"
#include <fcntl.h>
#include <pthread.h>

#define BATCHES 5

static long pairs = 200000;

struct results
{
  double pipe_rw_ns;
  double open_close_ns;
  long bytes;
  long opened;
};

static double
time_pipe_rw (int p[2], long *bytes)
{
  char c = 'x';
  double t0 = bench_now ();
  for (long i = 0; i < pairs; i++)
    {
      if (write (p[1], &c, 1) != 1 || read (p[0], &c, 1) != 1)
        bench_fail ("pipe write/read", errno);
      ++*bytes;
    }
  return (bench_now () - t0) * 1e9 / (double) pairs;
}

static double
time_open_close (long *opened)
{
  double t0 = bench_now ();
  for (long i = 0; i < pairs; i++)
    {
      int fd = open ("/dev/null", O_RDONLY);
      if (fd < 0 || close (fd) != 0)
        bench_fail ("open/close /dev/null", errno);
      ++*opened;
    }
  return (bench_now () - t0) * 1e9 / (double) pairs;
}

static void *
measure (void *arg)
{
  struct results *r = arg;
  int p[2];
  if (pipe (p) != 0)
    bench_fail ("pipe", errno);
  r->pipe_rw_ns = r->open_close_ns = 1e300;
  for (int b = 0; b < BATCHES; b++)
    {
      double ns = time_pipe_rw (p, &r->bytes);
      if (ns < r->pipe_rw_ns)
        r->pipe_rw_ns = ns;
      ns = time_open_close (&r->opened);
      if (ns < r->open_close_ns)
        r->open_close_ns = ns;
    }
  close (p[0]);
  close (p[1]);
  return NULL;
}

int
main (int argc, char **argv)
{
  int opt;
  while ((opt = getopt (argc, argv, "n:")) != -1)
    switch (opt)
      {
      case 'n': pairs = bench_count (argv[0], optarg); break;
      default:
        fprintf (stderr, "usage: %s [-n PAIRS]\n", argv[0]);
        return 2;
      }
  bench_print_impl ();
  struct results r = { 0 };
  pthread_t t;
  int err = pthread_create (&t, NULL, measure, &r);
  if (err != 0)
    bench_fail ("pthread_create", err);
  pthread_join (t, NULL);
  printf ("# check bytes_moved %ld\n", r.bytes);
  printf ("# check files_opened %ld\n", r.opened);
  bench_metric ("pipe_rw_ns", r.pipe_rw_ns, "ns", 0);
  bench_metric ("open_close_ns", r.open_close_ns, "ns", 0);
  return 0;
}
