/* The contention profiler's clock: nanoseconds, for differences only.

   Where the kernel keeps time with the CPU's time stamp counter (its
   clocksource is "tsc", which it picks only for a counter that runs at a
   constant rate, does not stop in idle states and agrees across CPUs),
   the profiler reads the counter itself and scales it: a wait or a hold
   is then timed by two reads of a register instead of two calls into
   the vDSO.  The scale is measured at start-up against CLOCK_MONOTONIC.
   Elsewhere, and on CPUs without such a counter, CLOCK_MONOTONIC.  */
#include "prof-int.h"
#include "report-fd.h"
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How long the scale is measured for, at the start of every profiled
   process: its error is how far apart the two clocks were read, at each
   end, over this.  */
#define CALIBRATION_NS 200000
/* Readings of both clocks with the counter read this many cycles apart
   or less around the monotonic clock (a call into the vDSO takes about a
   hundred) were not interrupted: 0.1% of CALIBRATION_NS at 2.5 GHz at
   worst.  */
#define CLOSE_CYCLES 1000
#define READING_TRIES 16

static uint64_t
monotonic_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

#ifdef XP_CPU_HAS_CYCLES
static uint64_t cycles_base, ns_base;
/* Nanoseconds per cycle, times 2^32; 0: read CLOCK_MONOTONIC.  */
static uint64_t ns_per_cycle_32;

/* Both clocks at one moment: the monotonic clock, and the counter half
   way between a read before it and one after, from the try where the
   two reads were closest (the thread may lose its CPU in between).  */
static void
read_both (uint64_t *ns, uint64_t *cycles)
{
  uint64_t closest = UINT64_MAX;
  for (int try = 0; try < READING_TRIES && closest > CLOSE_CYCLES; try++)
    {
      uint64_t before = xp_cpu_cycles ();
      uint64_t t = monotonic_ns ();
      uint64_t apart = xp_cpu_cycles () - before;
      if (apart < closest)
        {
          closest = apart;
          *ns = t;
          *cycles = before + apart / 2;
        }
    }
}

/* Whether the kernel's clocksource is the time stamp counter.  */
static bool
kernel_trusts_cycles (void)
{
  static const char path[]
    = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
  char name[16] = "";
  int fd = xp_report_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    return false;
  ssize_t len = xp_report_read (fd, name, sizeof name - 1);
  xp_report_close (fd);
  return len >= 3 && strncmp (name, "tsc", 3) == 0
         && (len == 3 || name[3] == '\n');
}
#endif

void
xp_prof_clock_init (void)
{
#ifdef XP_CPU_HAS_CYCLES
  if (!kernel_trusts_cycles ())
    return;
  uint64_t t0, c0, t1, c1;
  read_both (&t0, &c0);
  while (monotonic_ns () - t0 < CALIBRATION_NS)
    ;
  read_both (&t1, &c1);
  if (c1 <= c0 || t1 <= t0)
    return;
  cycles_base = c1;
  ns_base = t1;
  ns_per_cycle_32 = (uint64_t) (((unsigned __int128) (t1 - t0) << 32)
                                / (c1 - c0));
#endif
}

uint64_t
xp_prof_now (void)
{
#ifdef XP_CPU_HAS_CYCLES
  if (xp_likely (ns_per_cycle_32 != 0))
    return ns_base + (uint64_t) (((unsigned __int128) (xp_cpu_cycles ()
                                                       - cycles_base)
                                  * ns_per_cycle_32) >> 32);
#endif
  return monotonic_ns ();
}
