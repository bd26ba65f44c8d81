/* Semaphore ping-pong.

   sem_pingpong_rate: two threads hand a token back and forth through two
   semaphores (post one, wait on the other); round trips per second.

   usage: bench-sem [-n ROUNDS]  */
#include "bench.h"
#include <pthread.h>
#include <semaphore.h>

static sem_t ping, pong;
static long rounds = 200000;

static void *
ponger (void *arg)
{
  for (long i = 0; i < rounds; i++)
    {
      sem_wait (&ping);
      sem_post (&pong);
    }
  return arg;
}

static double
ping_pong (void)
{
  pthread_t t;
  if (sem_init (&ping, 0, 0) != 0 || sem_init (&pong, 0, 0) != 0)
    bench_fail ("sem_init", errno);
  double t0 = bench_now ();
  int err = pthread_create (&t, NULL, ponger, NULL);
  if (err != 0)
    bench_fail ("pthread_create", err);
  for (long i = 0; i < rounds; i++)
    {
      sem_post (&ping);
      sem_wait (&pong);
    }
  pthread_join (t, NULL);
  double rate = (double) rounds / (bench_now () - t0);
  int ping_left, pong_left;
  sem_getvalue (&ping, &ping_left);
  sem_getvalue (&pong, &pong_left);
  printf ("# check tokens_left %d\n", ping_left + pong_left);
  return rate;
}

int
main (int argc, char **argv)
{
  int opt;
  while ((opt = getopt (argc, argv, "n:")) != -1)
    switch (opt)
      {
      case 'n': rounds = bench_count (argv[0], optarg); break;
      default:
        fprintf (stderr, "usage: %s [-n ROUNDS]\n", argv[0]);
        return 2;
      }
  bench_print_impl ();
  bench_metric ("sem_pingpong_rate", ping_pong (), "roundtrips/s", 1);
  return 0;
}
