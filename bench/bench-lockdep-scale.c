/* Lockdep at scale: many live locks, many classes, many orders.

   Run under XPTHREAD_LOCKDEP=1 (with XPTHREAD_LOCKDEP_CLASSES=instance,
   so that each of the -c locks is a class of its own):

   -l LOCKS   initialise LOCKS mutexes at one site, take each once, and
              keep them all alive to the end (default 0);
   -c LOCKS   initialise LOCKS more mutexes, one class each (default 0);
   -e ORDERS  take ORDERS distinct pairs of those, the lower-numbered one
              first, in a random order: each pair a new order, none of
              them closing a cycle (default 0);
   -t         time each taking of a pair's second lock (the check of the
              new order) and print the median, 99th percentile and worst.

   At the end two locks of their own are taken in both orders: that cycle
   must still be reported (the validator is still on), whatever came
   before.  tests/lockdep-scale.sh checks that and the memory lockdep's
   summary gives; bench/RESULTS.md has the times.

   usage: bench-lockdep-scale [-l LOCKS] [-c LOCKS] [-e ORDERS] [-t]  */
#include "bench.h"
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

static pthread_mutex_t planted_first = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t planted_second = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t *
new_locks (long n)
{
  pthread_mutex_t *locks = malloc ((size_t) (n > 0 ? n : 1) * sizeof *locks);
  if (locks == NULL)
    {
      perror ("bench-lockdep-scale: malloc");
      exit (2);
    }
  for (long i = 0; i < n; i++)
    pthread_mutex_init (&locks[i], NULL);
  return locks;
}

static uint64_t
next_random (uint64_t *state)
{
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

/* A set of pairs, to draw each one once.  */
struct pair_set
{
  uint64_t *slots;
  size_t mask;
};

static bool
first_time (struct pair_set *set, uint64_t pair)
{
  for (size_t i = (size_t) (pair * 0x9e3779b97f4a7c15u >> 20) & set->mask;;
       i = (i + 1) & set->mask)
    {
      if (set->slots[i] == pair)
        return false;
      if (set->slots[i] == 0)
        {
          set->slots[i] = pair;
          return true;
        }
    }
}

static int
by_value (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Take N distinct pairs of LOCKS (COUNT of them) in order; into TIMES,
   when given, how long taking each second lock took.  */
static void
take_pairs (pthread_mutex_t *locks, long count, long n, double *times)
{
  size_t size = 1;
  while (size < 4 * (size_t) n)
    size *= 2;
  struct pair_set set = { calloc (size, sizeof (uint64_t)), size - 1 };
  uint64_t state = 0x2545f4914f6cdd1dull;
  if (set.slots == NULL)
    exit (2);
  for (long k = 0; k < n;)
    {
      uint64_t i = next_random (&state) % (uint64_t) count;
      uint64_t j = next_random (&state) % (uint64_t) count;
      if (i == j)
        continue;
      if (i > j)
        {
          uint64_t swap = i;
          i = j;
          j = swap;
        }
      if (!first_time (&set, i << 32 | j))
        continue;
      pthread_mutex_lock (&locks[i]);
      double start = times != NULL ? bench_now () : 0;
      pthread_mutex_lock (&locks[j]);
      if (times != NULL)
        times[k] = bench_now () - start;
      pthread_mutex_unlock (&locks[j]);
      pthread_mutex_unlock (&locks[i]);
      k++;
    }
  free (set.slots);
}

static void
print_times (double *times, long n)
{
  qsort (times, (size_t) n, sizeof *times, by_value);
  bench_metric ("lockdep_new_order_p50", times[n / 2] * 1e6, "us", 0);
  bench_metric ("lockdep_new_order_p99", times[n * 99 / 100] * 1e6, "us", 0);
  bench_metric ("lockdep_new_order_max", times[n - 1] * 1e6, "us", 0);
}

int
main (int argc, char **argv)
{
  long live = 0, classes = 0, orders = 0;
  bool timed = false;
  for (int opt; (opt = getopt (argc, argv, "l:c:e:t")) != -1;)
    switch (opt)
      {
      case 'l':
        live = atol (optarg);
        break;
      case 'c':
        classes = atol (optarg);
        break;
      case 'e':
        orders = atol (optarg);
        break;
      case 't':
        timed = true;
        break;
      default:
        fprintf (stderr, "usage: %s [-l LOCKS] [-c LOCKS] [-e ORDERS] [-t]\n",
                 argv[0]);
        return 2;
      }
  if (orders > 0 && orders > classes * (classes - 1) / 4)
    {
      fprintf (stderr, "bench-lockdep-scale: too many orders for -c\n");
      return 2;
    }
  bench_print_impl ();
  pthread_mutex_t *many = new_locks (live);
  for (long i = 0; i < live; i++)
    {
      pthread_mutex_lock (&many[i]);
      pthread_mutex_unlock (&many[i]);
    }
  pthread_mutex_t *ranked = new_locks (classes);
  double *times = timed && orders > 0 ? malloc ((size_t) orders
                                                * sizeof *times)
                                      : NULL;
  take_pairs (ranked, classes, orders, times);
  if (times != NULL)
    print_times (times, orders);
  pthread_mutex_lock (&planted_first);
  pthread_mutex_lock (&planted_second);
  pthread_mutex_unlock (&planted_second);
  pthread_mutex_unlock (&planted_first);
  pthread_mutex_lock (&planted_second);
  pthread_mutex_lock (&planted_first);
  pthread_mutex_unlock (&planted_first);
  pthread_mutex_unlock (&planted_second);
  printf ("# %ld live locks, %ld ranked locks, %ld orders\n", live, classes,
          orders);
  free (times);
  free (ranked);
  free (many);
  return 0;
}
