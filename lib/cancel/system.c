/* system(3) as a cancellation point.

   glibc's system waits for the shell with its own cancellable waitpid,
   which never acts in xpthread's threads; POSIX requires system to be a
   cancellation point.  The shell runs as with glibc: /bin/sh -c LINE
   started by posix_spawn with the caller's signal mask; SIGINT and SIGQUIT
   are ignored in the process while any system call is running (a count
   under a lock, so that concurrent calls from several threads restore the
   dispositions only when the last one ends) and reset to their defaults in
   the child unless they were ignored before; SIGCHLD is blocked in the
   calling thread while it waits.  A cancel while waiting kills the shell
   and reaps it before the cancellation goes on, so no zombie and no
   stray shell are left behind.  */
#define _GNU_SOURCE
#include "cancel.h"
#include "export.h"
#include "fork-locks.h"
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char **environ;

static XP_FORK_LOCK (system, dispositions_lock);
static int running_calls;
static struct sigaction saved_sigint, saved_sigquit;

static void
ignore_interactive_signals (void)
{
  struct sigaction ignore = { .sa_handler = SIG_IGN };
  xp_lock (&dispositions_lock);
  if (running_calls++ == 0)
    {
      sigaction (SIGINT, &ignore, &saved_sigint);
      sigaction (SIGQUIT, &ignore, &saved_sigquit);
    }
  xp_unlock (&dispositions_lock);
}

static void
restore_interactive_signals (void)
{
  xp_lock (&dispositions_lock);
  if (--running_calls == 0)
    {
      sigaction (SIGINT, &saved_sigint, NULL);
      sigaction (SIGQUIT, &saved_sigquit, NULL);
    }
  xp_unlock (&dispositions_lock);
}

static int
spawn_shell (const char *line, const sigset_t *mask, pid_t *pid)
{
  sigset_t reset;
  sigemptyset (&reset);
  xp_lock (&dispositions_lock);
  if (saved_sigint.sa_handler != SIG_IGN)
    sigaddset (&reset, SIGINT);
  if (saved_sigquit.sa_handler != SIG_IGN)
    sigaddset (&reset, SIGQUIT);
  xp_unlock (&dispositions_lock);
  posix_spawnattr_t attr;
  posix_spawnattr_init (&attr);
  posix_spawnattr_setsigmask (&attr, mask);
  posix_spawnattr_setsigdefault (&attr, &reset);
  posix_spawnattr_setflags (&attr,
                            POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  char *argv[] = { (char *) "sh", (char *) "-c", (char *) line, NULL };
  int err = posix_spawn (pid, "/bin/sh", NULL, &attr, argv, environ);
  posix_spawnattr_destroy (&attr);
  return err;
}

struct shell_wait
{
  pid_t pid;
  sigset_t saved_mask;
};

static void
end_call (const sigset_t *saved_mask)
{
  restore_interactive_signals ();
  sigprocmask (SIG_SETMASK, saved_mask, NULL);
}

/* The cancelled caller leaves no shell running and no zombie.  */
static void
kill_shell (void *arg)
{
  struct shell_wait *w = arg;
  kill (w->pid, SIGKILL);
  long r;
  do
    r = xp_syscall4 (SYS_wait4, w->pid, NULL, 0, NULL);
  while (r == -EINTR);
  end_call (&w->saved_mask);
}

static int
wait_for_shell (struct shell_wait *w)
{
  int status = -1;
  long r;
  pthread_cleanup_push (kill_shell, w);
  do
    r = xp_syscall_cp4 (SYS_wait4, w->pid, &status, 0, NULL);
  while (r == -EINTR);
  pthread_cleanup_pop (0);
  return r == w->pid ? status : -1;
}

static int
run_shell (const char *line)
{
  struct shell_wait w;
  ignore_interactive_signals ();
  sigset_t chld;
  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  sigprocmask (SIG_BLOCK, &chld, &w.saved_mask);
  int err = spawn_shell (line, &w.saved_mask, &w.pid);
  /* A shell that cannot be started counts as one that did _exit(127).  */
  int status = err == 0 ? wait_for_shell (&w) : W_EXITCODE (127, 0);
  end_call (&w.saved_mask);
  if (err != 0)
    errno = err;
  return status;
}

int
system (const char *line)
{
  /* NULL asks whether a shell is available.  */
  if (line == NULL)
    return run_shell ("exit 0") == 0;
  return run_shell (line);
}
XP_EXPORT (system)
