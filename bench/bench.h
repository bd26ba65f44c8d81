/* Helpers shared by the benchmark programs in bench/.

   The benchmarks are plain POSIX threads programs: they are built without
   libxpthread and run twice by bench/run, once with glibc's threads and
   once with libxpthread preloaded.  Each program prints its results on
   standard output as one line per metric:

       METRIC VALUE UNIT higher|lower [estimated]

   (the fourth field says which direction is better; "estimated" marks a
   value that was extrapolated rather than measured).  Lines starting with
   '#' are notes; bench/run shows them but does not aggregate them.  */
#ifndef XP_BENCH_H
#define XP_BENCH_H 1

#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Monotonic time in seconds.  */
static inline double
bench_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* CPU time the whole process has used, user and system, in seconds.  */
static inline double
bench_cpu_seconds (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* Print one result line.  */
static inline void
bench_metric (const char *name, double value, const char *unit, int higher)
{
  printf ("%s %.6g %s %s\n", name, value, unit, higher ? "higher" : "lower");
  fflush (stdout);
}

/* Say which thread implementation this process runs on: xpthread exports
   xpthread_mode_np, glibc does not.  bench/run checks this line so that a
   preload that silently failed is not reported as an xpthread result.
   Built against another C library (which can only be musl: bench/run
   builds the synchronisation benchmarks statically with musl-gcc, as a
   third reference; musl defines no macro of its own, and nothing can be
   preloaded into a static binary), the program runs on that library's
   threads.  Built with Abseil's mutex in place of the C library's
   (BENCH_ABSL), it says so.  */
static inline void
bench_print_impl (void)
{
#if defined BENCH_ABSL
  printf ("# impl absl\n");
#elif defined __GLIBC__
  const char *(*mode) (void);
  *(void **) &mode = dlsym (RTLD_DEFAULT, "xpthread_mode_np");
  if (mode != NULL)
    printf ("# impl xpthread %s\n", mode ());
  else
    printf ("# impl glibc\n");
#else
  printf ("# impl musl\n");
#endif
  fflush (stdout);
}

/* Resident set size of this process in KiB, from /proc/self/statm.  */
static inline long
bench_rss_kib (void)
{
  long size = 0, resident = 0;
  FILE *f = fopen ("/proc/self/statm", "r");
  if (f == NULL)
    return -1;
  if (fscanf (f, "%ld %ld", &size, &resident) != 2)
    resident = -1;
  fclose (f);
  if (resident < 0)
    return -1;
  return resident * (sysconf (_SC_PAGESIZE) / 1024);
}

/* Parse a positive count given on the command line.  */
static inline long
bench_count (const char *prog, const char *arg)
{
  char *end;
  errno = 0;
  long n = strtol (arg, &end, 10);
  if (errno != 0 || end == arg || *end != '\0' || n <= 0)
    {
      fprintf (stderr, "%s: invalid count '%s'\n", prog, arg);
      exit (2);
    }
  return n;
}

/* Report a failed pthread call and exit.  */
static inline void
bench_fail (const char *what, int err)
{
  fprintf (stderr, "bench: %s: %s\n", what, strerror (err));
  exit (1);
}

#endif
