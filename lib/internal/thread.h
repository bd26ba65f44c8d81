/* The thread descriptor.  A pthread_t is a pointer to one of these.

   Raw threads (started by clone) keep their descriptor inside their own
   mmap block, between the stack and the static TLS area:

     low  [guard][stack ............][descriptor][static TLS][glibc TCB] high
                                                             ^ thread pointer

   Threads xpthread did not start (the main thread, threads glibc creates
   for SIGEV_THREAD timers) are adopted on first use and get a descriptor of
   their own outside any block.  */
#ifndef XP_INTERNAL_THREAD_H
#define XP_INTERNAL_THREAD_H

#include "common.h"
#include "compat.h"
#include "lock.h"
#include <pthread.h>
#include <resolv.h>
#include <signal.h>
#include <unwind.h>

/* Thread-specific data: glibc's limits, two levels so that a thread using
   few keys touches one small block.  */
#define XP_KEYS_MAX 1024
#define XP_KEYS_PER_BLOCK 32
#define XP_KEY_BLOCKS (XP_KEYS_MAX / XP_KEYS_PER_BLOCK)
#define XP_DESTRUCTOR_ITERATIONS 4

/* Realtime priorities the kernel knows (0 to 99), ceilings included.  */
#define XP_PP_PRIORITIES 100

struct xp_tsd_slot
{
  uintptr_t seq;   /* the key's generation when value was stored */
  void *value;
};

struct xp_thread;

/* What differs between the kinds of thread, one instance per kind
   (kinds.c); each descriptor points at its kind:
     xp_raw_kind      started by xp_arch_clone, block owned by xpthread
     xp_hosted_kind   started through glibc's pthread_create
     xp_adopted_kind  started by someone else (glibc), descriptor made on
                      use, ID glibc's handle
     xp_main_kind     the main thread, adopted, its descriptor static  */
struct xp_thread_kind
{
  /* The thread's ID is glibc's handle, not its descriptor.  */
  bool id_is_host;
  /* End the calling thread, with RESULT (exit.c).  */
  void (*exit) (struct xp_thread *self, void *result)
    __attribute__ ((noreturn));
  /* Free what a joined thread held.  */
  void (*release) (struct xp_thread *t);
  /* The thread was just detached: OLD is its join state before, HOST
     glibc's handle read before (the thread may be gone since).  */
  int (*detached) (struct xp_thread *t, pthread_t host, unsigned old);
  /* In a fork child, for the forking thread.  */
  void (*after_fork_child) (struct xp_thread *self);
};

extern const struct xp_thread_kind xp_raw_kind XP_HIDDEN;
extern const struct xp_thread_kind xp_hosted_kind XP_HIDDEN;
extern const struct xp_thread_kind xp_adopted_kind XP_HIDDEN;
extern const struct xp_thread_kind xp_main_kind XP_HIDDEN;

#define XP_TID_STARTING (-1)

/* Bits of join_state.  Exactly one party releases an exited thread's
   resources: the joiner; or, for a detached thread, whichever of the thread
   (at exit) and pthread_detach (after exit) comes second.  */
#define XP_JOIN_DETACHED 1u
#define XP_JOIN_JOINING 2u
#define XP_JOIN_EXITED 4u
/* Joined and released: the ID outlived the thread (ESRCH).  */
#define XP_JOIN_RELEASED 8u

struct xp_thread
{
  /* The descriptor's address mixed with XP_THREAD_MARK: what tells a
     pthread_t of ours from glibc's handle of a thread glibc started
     (xp_thread_of).  First, because glibc's descriptor is at least that
     long and its first word is no such value (x86_64: its own address).  */
  uintptr_t mark;
  /* The kernel writes the tid here at clone (CLONE_PARENT_SETTID) and
     clears it, with a futex wake, when the thread is gone
     (CLONE_CHILD_CLEARTID).  Zero means the stack is free to reuse.
     Hosted threads: XP_TID_STARTING until the thread runs (hosted.c).  */
  int tid;
  unsigned join_state;
  /* Held across the transition to exited, so that pthread_kill never
     signals a tid the kernel may already have handed to another thread.  */
  xp_lock_t exit_lock;
  const struct xp_thread_kind *kind;

  void *(*start_routine) (void *);
  void *arg;
  void *result;

  /* Raw threads: the glibc thread control block (the thread pointer) and
     the memory around it.  */
  void *tp;
  void *map_base;
  size_t map_size;
  void *stack_base;        /* lowest usable stack byte */
  size_t stack_size;
  size_t guard_size;
  bool user_stack;
  /* xp_fork_generation when the TCB joined glibc's thread list: a fork
     child's glibc rebuilds that list with the forking thread alone.  */
  unsigned tcb_generation;

  /* Set by the creator, consumed by the new thread before user code.  */
  sigset_t start_sigmask;
  int start_gate;          /* futex: 0 wait, 1 run, 2 give up */
  bool gated;

  struct xp_tsd_slot tsd_first[XP_KEYS_PER_BLOCK];
  struct xp_tsd_slot *tsd_blocks[XP_KEY_BLOCKS];
  bool tsd_used;

  /* Runs SCHED_FIFO or SCHED_RR: locks must not spin for it.  */
  bool realtime;

  /* The library's own thread (the profiler's reporter): not one of the
     program's, whose last one ends the process.  */
  bool internal;

  /* When the thread took a mutex by a turn (spin-policy.h).  */
  long turn_taken_ns;

  /* Read-write locks the thread holds for reading and for writing, as
     counted by rwlock.c: while it holds some for reading and none for
     writing, its unlock is a reader's, one atomic operation.  */
  unsigned rwlock_reads;
  unsigned rwlock_writes;

  /* The robust list head the kernel knows for this thread (robust-list.c):
     set when a raw thread starts, asked of the kernel on first need in
     other threads; robust_own only when nobody registered one.  */
  struct robust_list_head *robust_head;
  struct robust_list_head robust_own;

  /* Priority protection (mutex-pp.c): how many priority-protection
     mutexes the thread holds at each ceiling, the highest such ceiling
     (0: none held), and while one is held the policy and priority the
     thread has without them, which pthread_setschedparam updates.
     sched_lock orders changes to these between the thread and others
     changing its scheduling.  */
  unsigned pp_held[XP_PP_PRIORITIES];
  int pp_ceiling;
  int pp_policy;
  int pp_base;
  xp_lock_t sched_lock;

  /* The thread this one is waiting to join, to refuse a join cycle.  */
  struct xp_thread *joining;

  /* Every live thread is on one list (fork, set*id, debugging).  */
  struct xp_thread *next;
  struct xp_thread *prev;
  /* Stack cache and reclaim lists (the cache links both ways).  */
  struct xp_thread *cache_next;
  struct xp_thread *cache_prev;

  /* Per-thread resolver state; glibc's __resp points here.  */
  struct __res_state resolver;

  /* Hosted threads: glibc's handle.  */
  pthread_t host;

  /* Cancellation (cancel.h): the state word; whether the thread is inside
     one of xpthread's own waits, where a due cancel is reported instead of
     acted on (only the thread itself and its signal handler look at it).  */
  unsigned cancel;
  volatile bool cancel_masked;
  /* Inside glibc's aio_suspend, which waits on a futex of its own and
     handles EINTR: a due cancel turns that wait into EINTR (cancel.c,
     lib/cancel/points-aio.c).  */
  volatile bool cancel_interrupts_waits;
  /* Cleanup handlers registered by <pthread.h>'s macros, newest first:
     setjmp-based buffers, and the old-style buffers of binaries built
     against glibc before 2.3.3.  */
  void *cleanup_jmp_buf;
  struct _pthread_cleanup_buffer *cleanup_old;
  /* The forced unwinding of pthread_exit and cancellation.  */
  struct _Unwind_Exception unwind_exc;
};

#define XP_THREAD_MARK ((uintptr_t) 0x78707468726561ddULL)

/* Every descriptor gets its kind here, and with it the mark.  */
static inline void
xp_thread_set_kind (struct xp_thread *t, const struct xp_thread_kind *kind)
{
  t->kind = kind;
  t->mark = (uintptr_t) t ^ XP_THREAD_MARK;
}

/* The descriptor a pthread_t names, or NULL when the thread is one glibc
   started and the ID glibc's handle (glibc-threads.h): a thread adopted
   by xpthread keeps glibc's handle as its ID, so that pthread_equal
   agrees with the creator's copy.  */
static inline struct xp_thread *
xp_thread_of (pthread_t thread)
{
  struct xp_thread *t = (struct xp_thread *) thread;
  return t->mark == ((uintptr_t) t ^ XP_THREAD_MARK) ? t : NULL;
}

/* The calling thread's descriptor; NULL until the thread is started or
   adopted.  Initial-exec so that the lookup is one %fs-relative load.  */
extern __thread struct xp_thread *xp_self_ptr
  __attribute__ ((tls_model ("initial-exec"))) XP_HIDDEN;

/* Give the calling thread a descriptor (adopt.c): the try form answers
   NULL when memory is out, the other ends the process then.  */
struct xp_thread *xp_try_adopt_current (void) XP_HIDDEN;
struct xp_thread *xp_adopt_current (void) XP_HIDDEN;
void xp_adopt_init (void) XP_HIDDEN;
bool xp_is_main_thread (const struct xp_thread *t) XP_HIDDEN;

static inline struct xp_thread *
xp_self (void)
{
  struct xp_thread *self = xp_self_ptr;
  if (xp_unlikely (self == NULL))
    self = xp_adopt_current ();
  return self;
}

/* The calling thread's tid, for lock words that name their owner.  A
   thread without a descriptor (one glibc started behind xpthread's back,
   maybe calling from inside its allocator) is not adopted for it.  */
static inline int
xp_self_tid (void)
{
  struct xp_thread *self = xp_self_ptr;
  return xp_likely (self != NULL) ? self->tid : xp_compat_current_tid ();
}

/* Hosted mode (hosted.c): threads started by glibc's pthread_create,
   wrapped in a descriptor of ours.  user_attr is what the program passed, for the
   pthread_create probe.  */
struct xp_attr;
int xp_hosted_start (pthread_t *thread, const struct xp_attr *attr,
                     const pthread_attr_t *user_attr,
                     void *(*start) (void *), void *arg) XP_HIDDEN;
/* The tid the kernel wrote into glibc's descriptor of t's thread, for a
   thread started but not yet running (XP_TID_STARTING); 0 when unknown.
   Only while t is pinned or is the caller: glibc may free its descriptor
   once the thread has ended.  */
int xp_hosted_tid (const struct xp_thread *t) XP_HIDDEN;
/* Wait for glibc's thread to end (after our descriptor says exited).  */
int xp_hosted_join (struct xp_thread *t) XP_HIDDEN;
/* Detach glibc's thread host; exited is its descriptor when the thread
   has already exited (the detacher then releases it), else NULL.  */
int xp_hosted_detach (pthread_t host, struct xp_thread *exited) XP_HIDDEN;
/* Leave a hosted or adopted thread through glibc's pthread_exit.  */
void xp_hosted_exit (void *result) XP_HIDDEN __attribute__ ((noreturn));

/* Another thread's tid, while it is pinned (sched-util.h).  */
static inline int
xp_thread_tid (const struct xp_thread *t)
{
  int tid = xp_load_relaxed (&t->tid);
  return tid == XP_TID_STARTING ? xp_hosted_tid (t) : tid;
}

/* Thread list.  */
void xp_thread_list_add (struct xp_thread *t) XP_HIDDEN;
void xp_thread_list_remove (struct xp_thread *t) XP_HIDDEN;
/* Whether t is the one thread on the list.  */
bool xp_thread_list_only (const struct xp_thread *t) XP_HIDDEN;
extern xp_lock_t xp_thread_list_lock XP_HIDDEN;
extern struct xp_thread *xp_thread_list_head XP_HIDDEN;

/* Number of threads that count for process exit: the main thread plus
   every live thread xpthread started for the program (not its own).  The
   last one out calls exit(0).  */
extern int xp_live_threads XP_HIDDEN;

/* Start a thread of the library's own (raw mode: it does not keep the
   process alive; no probe, no profiler hook), all signals blocked, so
   that no handler of the program runs in it.  */
int xp_thread_create_internal (pthread_t *thread, pthread_attr_t *attr,
                               void *(*start) (void *), void *arg)
  XP_HIDDEN;

/* How many forks separate this process from the first one: each fork
   child adds one (pthread_once uses it to recognise a runner that stayed
   in the parent).  */
extern unsigned xp_fork_generation XP_HIDDEN;

/* True once the thread has passed the point of no return in its exit.  */
static inline bool
xp_thread_exited (struct xp_thread *t)
{
  return (xp_load_acquire (&t->join_state) & XP_JOIN_EXITED) != 0;
}

/* Run the thread-specific data destructors of the calling thread.  */
void xp_tsd_run_destructors (struct xp_thread *self) XP_HIDDEN;
/* Free second-level TSD blocks (the thread is gone).  */
void xp_tsd_release (struct xp_thread *t) XP_HIDDEN;

/* A hosted thread's descriptor, and its retirement for reuse
   (descriptors.c); retiring releases its thread-specific data.  */
struct xp_thread *xp_descriptor_new (void) XP_HIDDEN;
void xp_descriptor_retire (struct xp_thread *t) XP_HIDDEN;

/* End the calling thread with result; never returns.  */
void xp_thread_exit (void *result) XP_HIDDEN __attribute__ ((noreturn));
/* The same for a hosted thread whose start routine returned, except that
   it returns, for glibc's thread to end by returning too.  */
void xp_hosted_return (void *result) XP_HIDDEN;
/* Each kind's end (exit.c).  */
void xp_exit_raw (struct xp_thread *self, void *result)
  XP_HIDDEN __attribute__ ((noreturn));
void xp_exit_hosted (struct xp_thread *self, void *result)
  XP_HIDDEN __attribute__ ((noreturn));
void xp_exit_adopted (struct xp_thread *self, void *result)
  XP_HIDDEN __attribute__ ((noreturn));
void xp_exit_main (struct xp_thread *self, void *result)
  XP_HIDDEN __attribute__ ((noreturn));

/* Default attributes (pthread_setattr_default_np) and process limits.  */
struct xp_attr;
void xp_default_attr_get (struct xp_attr *out) XP_HIDDEN;

#endif
