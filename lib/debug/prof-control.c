/* When the profiler reports: at exit, on XPTHREAD_PROF_SIGNAL, every
   XPTHREAD_PROF_INTERVAL seconds.  A signal handler cannot write a
   report (naming allocates), so the last two are written by a reporter
   thread of the profiler's, started with the process's first thread:
   the handler only wakes it.  */
#define _GNU_SOURCE
#include "prof-int.h"
#include "env.h"
#include "fork-locks.h"
#include "futex.h"
#include "thread.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int report_signal;
static long report_interval;
static int reports_asked;          /* a futex word, bumped by the handler */
static bool reporter_started;
static bool threads_started;
/* The reporter thread's report may meet the one at exit.  Each is
   rendered without a lock of the profiler's held (naming allocates and
   waits for the dynamic linker), and written, under the lock, only if
   no report of a later snapshot was written before it: the last one
   written is always the newest.  */
static XP_FORK_LOCK (prof_report, report_lock);
static unsigned long snapshots_taken, snapshot_written;

/* A process that never started a thread and saw no contention (a
   shell, a helper program under the preload) writes none at exit.  */
static void
report_now (enum xp_prof_reason reason)
{
  struct xp_prof_snapshot s;
  xp_lock (&report_lock);
  bool taken = xp_prof_snapshot_take (&s);
  unsigned long number = ++snapshots_taken;
  xp_unlock (&report_lock);
  if (!taken)
    return;
  char *text = NULL;
  size_t n;
  if ((reason != XP_PROF_AT_EXIT || threads_started || s.entries_n != 0)
      && xp_prof_report_render (&s, reason, &text, &n))
    {
      xp_lock (&report_lock);
      if (number > snapshot_written)
        {
          xp_prof_report_deliver (text, n);
          snapshot_written = number;
        }
      xp_unlock (&report_lock);
    }
  free (text);
  xp_prof_snapshot_free (&s);
}

static void
ask_for_report (int sig)
{
  (void) sig;
  int saved = errno;
  xp_fetch_add (&reports_asked, 1);
  xp_futex_wake (&reports_asked, 1, true);
  errno = saved;
}

/* In hosted mode the reporter is one of glibc's threads, and glibc ends
   the process when its last thread ends (the main thread may have called
   pthread_exit): once the reporter is the only thread xpthread knows, it
   ends, so that the process ends as it would have without it (a thread
   glibc started behind xpthread's back keeps it going, as it would).  It
   looks once a second.  In raw mode it does not count at all
   (xp_thread_create_internal).  */
#define ALONE_CHECK_SECONDS 1

/* When the next wait of the reporter ends: at the next interval report,
   and in hosted mode within ALONE_CHECK_SECONDS; false: no deadline.  */
static bool
next_wake (bool hosted, const struct timespec *next_report,
           struct timespec *deadline)
{
  if (!hosted)
    {
      *deadline = *next_report;
      return report_interval > 0;
    }
  clock_gettime (CLOCK_MONOTONIC, deadline);
  deadline->tv_sec += ALONE_CHECK_SECONDS;
  if (report_interval > 0 && next_report->tv_sec < deadline->tv_sec)
    *deadline = *next_report;
  return true;
}

static void *
reporter (void *arg)
{
  (void) arg;
  bool hosted = xp_mode == XP_MODE_HOSTED;
  struct timespec next_report;
  clock_gettime (CLOCK_MONOTONIC, &next_report);
  next_report.tv_sec += report_interval;
  for (;;)
    {
      int seen = xp_load_acquire (&reports_asked);
      struct timespec deadline, now;
      bool timed = next_wake (hosted, &next_report, &deadline);
      xp_futex_wait_abs (&reports_asked, seen, CLOCK_MONOTONIC,
                         timed ? &deadline : NULL, true);
      clock_gettime (CLOCK_MONOTONIC, &now);
      if (xp_load_acquire (&reports_asked) != seen)
        report_now (XP_PROF_ON_SIGNAL);
      else if (report_interval > 0 && now.tv_sec >= next_report.tv_sec
               && (now.tv_sec > next_report.tv_sec
                   || now.tv_nsec >= next_report.tv_nsec))
        {
          report_now (XP_PROF_ON_INTERVAL);
          next_report = now;
          next_report.tv_sec += report_interval;
        }
      if (hosted && xp_thread_list_only (xp_self ()))
        return NULL;
    }
}

void
xp_prof_thread_creating (void)
{
  threads_started = true;
  if (!xp_prof_active () || reporter_started
      || (report_signal == 0 && report_interval == 0))
    return;
  reporter_started = true;
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize (&attr, 1 << 20);
  pthread_t thread;
  if (xp_thread_create_internal (&thread, &attr, reporter, NULL) != 0)
    xp_warn ("XPTHREAD_PROF: no reporter thread; reports at exit only");
  pthread_attr_destroy (&attr);
}

/* The child of a fork has no reporter: it starts with its first thread,
   as in the parent.  */
static void
after_fork_child (void)
{
  reporter_started = false;
  xp_prof_after_fork_child ();
}

static int
signal_number (const char *name)
{
  if (name == NULL)
    return 0;
  if (strncmp (name, "SIG", 3) == 0)
    name += 3;
  char *end;
  long n = strtol (name, &end, 10);
  if (*end == '\0' && n > 0 && n < NSIG)
    return (int) n;
  static const struct { const char *name; int number; } names[] = {
    { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP },
    { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "TERM", SIGTERM },
    { "PROF", SIGPROF }, { "WINCH", SIGWINCH }, { "URG", SIGURG },
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp (name, names[i].name) == 0)
      return names[i].number;
  if (strncmp (name, "RTMIN+", 6) == 0)
    {
      n = strtol (name + 6, &end, 10);
      if (*end == '\0' && n >= 0 && SIGRTMIN + n <= SIGRTMAX)
        return SIGRTMIN + (int) n;
    }
  xp_warn ("XPTHREAD_PROF_SIGNAL=%s is no signal; none is used", name);
  return 0;
}

static unsigned
hold_setting (void)
{
  const char *hold = xp_env_string ("XPTHREAD_PROF_HOLD");
  if (hold != NULL && strcmp (hold, "all") == 0)
    return 1;
  return (unsigned) xp_env_number ("XPTHREAD_PROF_HOLD", 64, 1, 1 << 20);
}

bool
xp_prof_init (void)
{
  if (!xp_env_flag ("XPTHREAD_PROF"))
    return false;
  xp_prof_clock_init ();
  long max_locks = xp_env_number ("XPTHREAD_PROF_LOCKS", 1 << 21, 1024,
                                  1 << 26);
  if (!xp_prof_tables_init (hold_setting (), max_locks))
    {
      xp_warn ("XPTHREAD_PROF: no memory for the profiler's tables");
      return false;
    }
  xp_prof_report_init ();
  report_interval = xp_env_number ("XPTHREAD_PROF_INTERVAL", 0, 0, 86400);
  report_signal = signal_number (xp_env_string ("XPTHREAD_PROF_SIGNAL"));
  if (report_signal != 0)
    {
      struct sigaction sa = { .sa_handler = ask_for_report,
                              .sa_flags = SA_RESTART };
      sigemptyset (&sa.sa_mask);
      sigaction (report_signal, &sa, NULL);
    }
  pthread_atfork (NULL, NULL, after_fork_child);
  xp_prof_on = 1;
  return true;
}

static void __attribute__ ((destructor))
report_at_exit (void)
{
  if (xp_prof_active ())
    report_now (XP_PROF_AT_EXIT);
}
