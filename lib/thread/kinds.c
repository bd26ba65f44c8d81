/* The kinds of thread (thread.h): what a raw, a hosted, an adopted and
   the main thread each do at exit, once joined, once detached and in a
   fork child.  */
#include "compat.h"
#include "stack.h"
#include "thread.h"

static void
nothing_to_release (struct xp_thread *t)
{
  (void) t;
}

static int
nothing_to_detach (struct xp_thread *t, pthread_t host, unsigned old)
{
  (void) t, (void) host, (void) old;
  return 0;
}

static void
nothing_after_fork (struct xp_thread *self)
{
  (void) self;
}

/* A raw thread that has exited already: its block goes to the cache once
   the kernel has cleared its tid.  */
static int
raw_detached (struct xp_thread *t, pthread_t host, unsigned old)
{
  (void) host;
  if (old & XP_JOIN_EXITED)
    xp_block_release_when_gone (t);
  return 0;
}

/* glibc's child kept the forking thread on its rebuilt list.  */
static void
raw_after_fork_child (struct xp_thread *self)
{
  self->tcb_generation = xp_fork_generation;
}

const struct xp_thread_kind xp_raw_kind = {
  .exit = xp_exit_raw,
  .release = xp_block_release,
  .detached = raw_detached,
  .after_fork_child = raw_after_fork_child,
};

/* glibc's thread ends after ours: wait for it, then retire the
   descriptor.  */
static void
hosted_release (struct xp_thread *t)
{
  xp_hosted_join (t);
  xp_descriptor_retire (t);
}

/* glibc detaches its thread; the detacher of an exited thread joins it
   and retires the descriptor instead.  */
static int
hosted_detached (struct xp_thread *t, pthread_t host, unsigned old)
{
  return xp_hosted_detach (host, (old & XP_JOIN_EXITED) ? t : NULL);
}

const struct xp_thread_kind xp_hosted_kind = {
  .exit = xp_exit_hosted,
  .release = hosted_release,
  .detached = hosted_detached,
  .after_fork_child = nothing_after_fork,
};

/* Its ID is glibc's handle, so glibc joins and detaches it; its
   descriptor goes at its end (adopt.c).  */
const struct xp_thread_kind xp_adopted_kind = {
  .id_is_host = true,
  .exit = xp_exit_adopted,
  .release = nothing_to_release,
  .detached = nothing_to_detach,
  .after_fork_child = nothing_after_fork,
};

/* The main thread's descriptor is static.  */
const struct xp_thread_kind xp_main_kind = {
  .exit = xp_exit_main,
  .release = nothing_to_release,
  .detached = nothing_to_detach,
  .after_fork_child = nothing_after_fork,
};
