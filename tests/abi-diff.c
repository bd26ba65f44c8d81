/* The differential harness (tests/abi-diff.sh): every exported name of
   the thread ABI called with good, bad and borderline arguments, each call
   in a child of its own, printing one line per call with what it answered
   or how it ended.  The same program runs with glibc's threads, with
   libxpthread preloaded and linked (abi-diff-linked); the script compares.

   The calls come from tests/abi-diff.sig (abi-diff-cases.h); each
   argument kind is a function below whose value 0 is good.  A case varies
   one argument at a time, the others good.  Functions are found with
   dlsym, so that one program calls glibc's or xpthread's, whichever the
   process binds to.  */
#define _GNU_SOURCE
#include <aio.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <mqueue.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>
#include <xpthread.h>

/* Names glibc's headers declare only under _FORTIFY_SOURCE, or not.  */
int __open_2 (const char *, int);
int __open64_2 (const char *, int);
int __openat_2 (int, const char *, int);
int __openat64_2 (int, const char *, int);
int __poll_chk (struct pollfd *, nfds_t, int, size_t);
int __ppoll_chk (struct pollfd *, nfds_t, const struct timespec *,
                 const sigset_t *, size_t);
ssize_t __pread_chk (int, void *, size_t, off_t, size_t);
ssize_t __pread64_chk (int, void *, size_t, off64_t, size_t);
ssize_t __read_chk (int, void *, size_t, size_t);
ssize_t __recv_chk (int, void *, size_t, size_t, int);
ssize_t __recvfrom_chk (int, void *, size_t, size_t, int, struct sockaddr *,
                        socklen_t *);
size_t __pthread_get_minstack (const pthread_attr_t *);
void pthread_kill_other_threads_np (void);
int pthread_mutexattr_getkind_np (const pthread_mutexattr_t *, int *);
int pthread_mutexattr_setkind_np (pthread_mutexattr_t *, int);

typedef void *(*start_routine) (void *);
typedef void (*destructor_function) (void *);
typedef void (*plain_function) (void);
pid_t pthread_gettid_np (pthread_t);

struct xp_diff_case
{
  const char *name;
  bool xpthread_only;
  int nargs;
  const char *kinds[8];
  void (*call) (const int *values);
};

/* --- results: one line on the descriptor the parent reads ---------------- */

static int result_fd = -1;

static void
say (const char *text)
{
  if (write (result_fd, text, strlen (text)) < 0)
    _exit (98);
}

static void *
xp_diff_lookup (const char *name)
{
  return dlsym (RTLD_DEFAULT, name);
}

static void
xp_diff_absent (void)
{
  say ("absent");
}

static void
xp_diff_void (void)
{
  say ("returned");
}

static void
xp_diff_pointer (const void *p)
{
  say (p == NULL ? "NULL" : "a pointer");
}

static void
xp_diff_int_result (long r)
{
  char text[64];
  const char *name = r > 0 && r < 4096 ? strerrorname_np ((int) r) : NULL;
  snprintf (text, sizeof text, "%ld%s%s", r, name ? " " : "", name ? name : "");
  say (text);
}

/* A number that differs from run to run (a tid): its sign.  */
static void
xp_diff_number_result (long r)
{
  say (r > 0 ? "positive" : r == 0 ? "0" : "negative");
}

static void
xp_diff_errno_result (long r)
{
  char text[64];
  if (r == -1)
    {
      const char *name = strerrorname_np (errno);
      snprintf (text, sizeof text, "-1 %s", name ? name : "errno?");
    }
  else
    snprintf (text, sizeof text, "%s", r >= 0 ? "success" : "negative");
  say (text);
}

/* --- argument kinds ------------------------------------------------------ */

struct kind
{
  const char *name;
  const char *const *values;
  int count;
  struct kind *next;
};

static struct kind *kinds;

#define KIND(id, type, ...)                                               \
  static const char *const id##_values[] = { __VA_ARGS__ };               \
  static struct kind id##_kind                                            \
    = { #id, id##_values, sizeof id##_values / sizeof id##_values[0],     \
        NULL };                                                           \
  __attribute__ ((constructor)) static void id##_register (void)          \
  {                                                                       \
    id##_kind.next = kinds;                                               \
    kinds = &id##_kind;                                                   \
  }                                                                       \
  static type xp_diff_##id (int v)

static const struct kind *
find_kind (const char *name)
{
  for (const struct kind *k = kinds; k != NULL; k = k->next)
    if (strcmp (k->name, name) == 0)
      return k;
  fprintf (stderr, "abi-diff: no kind %s\n", name);
  exit (99);
}

/* An object of the API: 0 initialised, 1 NULL, 2 zero-filled, 3 destroyed
   after initialisation, 4 every byte 0xff.  */
#define OBJECT_VALUES "initialised", "NULL", "zero-filled", "destroyed", \
                      "garbage"

static void *
object (void *storage, size_t size, int v, void (*init) (void *),
        void (*destroy) (void *))
{
  switch (v)
    {
    case 0:
      init (storage);
      return storage;
    case 1:
      return NULL;
    case 2:
      memset (storage, 0, size);
      return storage;
    case 3:
      init (storage);
      destroy (storage);
      return storage;
    default:
      memset (storage, 0xff, size);
      return storage;
    }
}

#define OBJECT_KIND(id, type, init_call, destroy_call)                    \
  static void make_##id (void *p) { type *o = p; init_call; }           \
  static void unmake_##id (void *p) { type *o = p; destroy_call; }       \
  KIND (id, type *, OBJECT_VALUES)                                        \
  {                                                                       \
    static type storage;                                                  \
    return object ((void *) &storage, sizeof storage, v, make_##id,       \
                   unmake_##id);                                          \
  }

OBJECT_KIND (mutex, pthread_mutex_t, pthread_mutex_init (o, NULL),
             pthread_mutex_destroy (o))
OBJECT_KIND (mutexattr, pthread_mutexattr_t, pthread_mutexattr_init (o),
             pthread_mutexattr_destroy (o))
OBJECT_KIND (cond, pthread_cond_t, pthread_cond_init (o, NULL),
             pthread_cond_destroy (o))
OBJECT_KIND (condattr, pthread_condattr_t, pthread_condattr_init (o),
             pthread_condattr_destroy (o))
OBJECT_KIND (rwlock, pthread_rwlock_t, pthread_rwlock_init (o, NULL),
             pthread_rwlock_destroy (o))
OBJECT_KIND (rwlockattr, pthread_rwlockattr_t, pthread_rwlockattr_init (o),
             pthread_rwlockattr_destroy (o))
OBJECT_KIND (barrier, pthread_barrier_t, pthread_barrier_init (o, NULL, 1),
             pthread_barrier_destroy (o))
OBJECT_KIND (barrierattr, pthread_barrierattr_t,
             pthread_barrierattr_init (o), pthread_barrierattr_destroy (o))
OBJECT_KIND (attr, pthread_attr_t, pthread_attr_init (o),
             pthread_attr_destroy (o))
OBJECT_KIND (spin, pthread_spinlock_t, pthread_spin_init (o, 0),
             pthread_spin_destroy (o))
OBJECT_KIND (sem, sem_t, sem_init (o, 0, 1), sem_destroy (o))
OBJECT_KIND (mtx, mtx_t, mtx_init (o, mtx_plain), mtx_destroy (o))
OBJECT_KIND (cnd, cnd_t, cnd_init (o), cnd_destroy (o))

/* The same, locked by the caller (for condition waits).  */
KIND (heldmutex, pthread_mutex_t *, "held", "NULL", "not held")
{
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  if (v == 0)
    pthread_mutex_lock (&m);
  return v == 1 ? NULL : &m;
}

KIND (heldmtx, mtx_t *, "held", "NULL", "not held")
{
  static mtx_t m;
  mtx_init (&m, mtx_plain);
  if (v == 0)
    mtx_lock (&m);
  return v == 1 ? NULL : &m;
}

/* Threads: the caller, one running (waiting for ever), one joined, one
   detached that has exited.  */
static void *
wait_for_ever (void *arg)
{
  for (;;)
    pause ();
  return arg;
}

static void *
return_at_once (void *arg)
{
  return arg;
}

KIND (thread, pthread_t, "self", "running", "joined", "detached and exited")
{
  pthread_t t = pthread_self ();
  if (v == 1)
    pthread_create (&t, NULL, wait_for_ever, NULL);
  else if (v == 2)
    {
      pthread_create (&t, NULL, return_at_once, NULL);
      pthread_join (t, NULL);
    }
  else if (v == 3)
    {
      pthread_attr_t a;
      pthread_attr_init (&a);
      pthread_attr_setdetachstate (&a, PTHREAD_CREATE_DETACHED);
      pthread_create (&t, &a, return_at_once, NULL);
      pthread_attr_destroy (&a);
      usleep (20000);
    }
  return t;
}

KIND (thrd, thrd_t, "self", "running", "joined")
{
  return (thrd_t) xp_diff_thread (v);
}

static int
c11_return (void *arg)
{
  (void) arg;
  return 7;
}

KIND (thrdfn, thrd_start_t, "returns")
{
  (void) v;
  return c11_return;
}

KIND (startfn, start_routine, "returns")
{
  (void) v;
  return return_at_once;
}

static pthread_t thread_out;
KIND (outthread, pthread_t *, "storage", "NULL")
{
  return v == 0 ? &thread_out : NULL;
}

static thrd_t thrd_out;
KIND (outthrd, thrd_t *, "storage", "NULL")
{
  return v == 0 ? &thrd_out : NULL;
}

/* Keys: one created, one deleted, numbers never handed out, and beyond
   the limit.  */
KIND (key, pthread_key_t, "created", "deleted", "never created", "1024",
      "UINT_MAX")
{
  pthread_key_t k;
  switch (v)
    {
    case 0:
      pthread_key_create (&k, NULL);
      return k;
    case 1:
      pthread_key_create (&k, NULL);
      pthread_key_delete (k);
      return k;
    case 2:
      return 1000;
    case 3:
      return 1024;
    default:
      return UINT_MAX;
    }
}

KIND (tss, tss_t, "created", "deleted", "never created")
{
  return (tss_t) xp_diff_key (v);
}

static pthread_key_t key_out;
KIND (outkey, pthread_key_t *, "storage", "NULL")
{
  return v == 0 ? &key_out : NULL;
}

static tss_t tss_out;
KIND (outtss, tss_t *, "storage", "NULL")
{
  return v == 0 ? &tss_out : NULL;
}

static void
no_op (void *arg)
{
  (void) arg;
}

KIND (destructor, destructor_function, "none", "a function")
{
  return v == 0 ? NULL : no_op;
}

static void
once_routine (void)
{
}

KIND (oncefn, plain_function, "a function")
{
  (void) v;
  return once_routine;
}

KIND (c11oncefn, plain_function, "a function")
{
  (void) v;
  return once_routine;
}

KIND (once, pthread_once_t *, "fresh", "NULL", "done", "garbage")
{
  static pthread_once_t once;
  once = PTHREAD_ONCE_INIT;
  if (v == 2)
    pthread_once (&once, once_routine);
  if (v == 3)
    memset (&once, 0xff, sizeof once);
  return v == 1 ? NULL : &once;
}

KIND (c11once, once_flag *, "fresh", "NULL")
{
  static once_flag flag = ONCE_FLAG_INIT;
  return v == 1 ? NULL : &flag;
}

KIND (forkfn, plain_function, "none", "a function")
{
  return v == 0 ? NULL : once_routine;
}

/* Plain values.  */
KIND (int, int, "0", "1", "2", "3", "-1", "4", "100", "INT_MAX", "INT_MIN")
{
  static const int values[] = { 0, 1, 2, 3, -1, 4, 100, INT_MAX, INT_MIN };
  return values[v];
}

KIND (uint, unsigned, "0", "1", "UINT_MAX")
{
  static const unsigned values[] = { 0, 1, UINT_MAX };
  return values[v];
}

KIND (long, long, "0", "-1", "LONG_MAX")
{
  static const long values[] = { 0, -1, LONG_MAX };
  return values[v];
}

KIND (count, unsigned, "1", "0", "2", "INT_MAX", "UINT_MAX")
{
  static const unsigned values[] = { 1, 0, 2, INT_MAX, UINT_MAX };
  return values[v];
}

KIND (prio, int, "0", "1", "99", "-1", "100")
{
  static const int values[] = { 0, 1, 99, -1, 100 };
  return values[v];
}

KIND (policy, int, "SCHED_OTHER", "SCHED_FIFO", "SCHED_BATCH", "-1", "100")
{
  static const int values[] = { SCHED_OTHER, SCHED_FIFO, SCHED_BATCH, -1,
                                100 };
  return values[v];
}

KIND (sched, const struct sched_param *, "priority 0", "NULL",
      "priority 1", "priority -1", "priority 100")
{
  static struct sched_param p;
  static const int values[] = { 0, 0, 1, -1, 100 };
  p.sched_priority = values[v];
  return v == 1 ? NULL : &p;
}

static struct sched_param sched_out;
KIND (outsched, struct sched_param *, "storage", "NULL")
{
  return v == 0 ? &sched_out : NULL;
}

KIND (clock, clockid_t, "CLOCK_MONOTONIC", "CLOCK_REALTIME",
      "CLOCK_PROCESS_CPUTIME_ID", "CLOCK_MONOTONIC_RAW", "-1", "1000")
{
  static const clockid_t values[] = { CLOCK_MONOTONIC, CLOCK_REALTIME,
                                      CLOCK_PROCESS_CPUTIME_ID,
                                      CLOCK_MONOTONIC_RAW, -1, 1000 };
  return values[v];
}

/* Deadlines: one passed, none, bad nanoseconds, before the epoch.  */
KIND (abstime, const struct timespec *, "passed", "NULL", "nsec -1",
      "nsec 1e9", "sec -1", "epoch")
{
  static struct timespec ts;
  static const struct timespec values[] = {
    { 1, 0 }, { 0, 0 }, { 0, -1 }, { 0, 1000000000 }, { -1, 0 }, { 0, 0 }
  };
  ts = values[v];
  return v == 1 ? NULL : &ts;
}

KIND (reltime, const struct timespec *, "1 us", "NULL", "nsec -1",
      "nsec 1e9", "sec -1", "zero")
{
  static struct timespec ts;
  static const struct timespec values[] = {
    { 0, 1000 }, { 0, 0 }, { 0, -1 }, { 0, 1000000000 }, { -1, 0 }, { 0, 0 }
  };
  ts = values[v];
  return v == 1 ? NULL : &ts;
}

KIND (reltimem, struct timespec *, "1 us", "NULL", "nsec -1")
{
  return (struct timespec *) xp_diff_reltime (v);
}

KIND (timeval, struct timeval *, "1 us", "NULL", "usec -1")
{
  static struct timeval tv;
  tv.tv_sec = 0;
  tv.tv_usec = v == 2 ? -1 : 1;
  return v == 1 ? NULL : &tv;
}

KIND (timeout_ms, int, "0", "-2")
{
  return v == 0 ? 0 : -2;
}

KIND (seconds, unsigned, "0")
{
  (void) v;
  return 0;
}

KIND (useconds, useconds_t, "1", "0")
{
  return v == 0 ? 1 : 0;
}

/* Signals: signal 0, one ignored by default, the reserved two, out of
   range.  */
KIND (sig, int, "0", "SIGWINCH", "32", "33", "-1", "65")
{
  static const int values[] = { 0, SIGWINCH, 32, 33, -1, 65 };
  return values[v];
}

KIND (sigval, union sigval, "0")
{
  (void) v;
  return (union sigval) { .sival_int = 0 };
}

KIND (sigset, const sigset_t *, "SIGWINCH", "NULL", "full")
{
  static sigset_t set;
  sigemptyset (&set);
  if (v == 2)
    sigfillset (&set);
  else
    sigaddset (&set, SIGWINCH);
  /* Pending, so that sigwait and sigtimedwait take it at once.  */
  if (v == 0)
    {
      sigprocmask (SIG_BLOCK, &set, NULL);
      raise (SIGWINCH);
    }
  return v == 1 ? NULL : &set;
}

KIND (sighow, int, "SIG_BLOCK", "SIG_SETMASK", "-1", "3")
{
  static const int values[] = { SIG_BLOCK, SIG_SETMASK, -1, 3 };
  return values[v];
}

static siginfo_t siginfo_out;
KIND (siginfo, siginfo_t *, "storage", "NULL")
{
  return v == 0 ? &siginfo_out : NULL;
}

/* Memory the callee writes.  */
static char out_buffer[65536] __attribute__ ((aligned (64)));

KIND (out, void *, "storage", "NULL")
{
  return v == 0 ? out_buffer : NULL;
}

KIND (outptr, void **, "storage", "NULL")
{
  return v == 0 ? (void **) out_buffer : NULL;
}

KIND (outattr, pthread_attr_t *, "storage", "NULL")
{
  return v == 0 ? (pthread_attr_t *) out_buffer : NULL;
}

KIND (ptr, void *, "a pointer", "NULL")
{
  return v == 0 ? out_buffer : NULL;
}

KIND (buf, void *, "buffer", "NULL")
{
  return v == 0 ? out_buffer : NULL;
}

KIND (len, size_t, "16", "0", "SIZE_MAX")
{
  static const size_t values[] = { 16, 0, SIZE_MAX };
  return values[v];
}

KIND (bufsize, size_t, "65536", "0", "8")
{
  static const size_t values[] = { 65536, 0, 8 };
  return values[v];
}

KIND (namelen, size_t, "16", "0", "15")
{
  static const size_t values[] = { 16, 0, 15 };
  return values[v];
}

KIND (cstr, const char *, "short", "NULL", "empty", "16 characters")
{
  static const char *const values[] = { "xp", NULL, "", "sixteen-letters!" };
  return values[v];
}

KIND (command, const char *, "true", "NULL")
{
  return v == 0 ? "true" : NULL;
}

KIND (stacksize, size_t, "65536", "0", "16383", "16384", "SIZE_MAX")
{
  static const size_t values[] = { 65536, 0, 16383, 16384, SIZE_MAX };
  return values[v];
}

KIND (stackaddr, void *, "a buffer", "NULL", "misaligned")
{
  return v == 0 ? out_buffer : v == 1 ? NULL : out_buffer + 1;
}

KIND (cpusize, size_t, "sizeof cpu_set_t", "0", "1", "1 MiB")
{
  static const size_t values[] = { sizeof (cpu_set_t), 0, 1, 1 << 20 };
  return values[v];
}

KIND (cpuset, cpu_set_t *, "CPU 0", "NULL", "empty")
{
  static char storage[1 << 20];
  memset (storage, 0, sizeof storage);
  if (v == 0)
    CPU_SET (0, (cpu_set_t *) storage);
  return v == 1 ? NULL : (cpu_set_t *) storage;
}

KIND (mtxtype, int, "mtx_plain", "mtx_timed", "mtx_recursive", "-1", "100")
{
  static const int values[] = { mtx_plain, mtx_timed,
                                mtx_plain | mtx_recursive, -1, 100 };
  return values[v];
}

/* Credentials: each case is a child of its own.  */
KIND (uid, uid_t, "0", "1", "-1")
{
  static const uid_t values[] = { 0, 1, (uid_t) -1 };
  return values[v];
}

KIND (gid, gid_t, "0", "1", "-1")
{
  return (gid_t) xp_diff_uid (v);
}

KIND (ngroups, size_t, "1", "0", "SIZE_MAX")
{
  static const size_t values[] = { 1, 0, SIZE_MAX };
  return values[v];
}

KIND (groups, const gid_t *, "group 0", "NULL")
{
  static const gid_t group = 0;
  return v == 0 ? &group : NULL;
}

KIND (outgroups, gid_t *, "storage", "NULL")
{
  return v == 0 ? (gid_t *) out_buffer : NULL;
}

KIND (identity, const struct xpthread_identity_np *, "root", "NULL")
{
  static struct xpthread_identity_np id;
  return v == 0 ? &id : NULL;
}

KIND (outsaved, struct xpthread_identity_saved_np *, "storage", "NULL")
{
  return v == 0 ? (struct xpthread_identity_saved_np *) out_buffer : NULL;
}

/* Descriptors: a good one (/dev/zero to read, /dev/null to write, a
   non-blocking socket), -1, one not open.  */
static int
open_fd (const char *path, int flags)
{
  return open (path, flags | O_CLOEXEC);
}

KIND (rfd, int, "/dev/zero", "-1", "not open")
{
  return v == 0 ? open_fd ("/dev/zero", O_RDONLY) : v == 1 ? -1 : 900;
}

KIND (wfd, int, "/dev/null", "-1", "not open")
{
  return v == 0 ? open_fd ("/dev/null", O_WRONLY) : v == 1 ? -1 : 900;
}

KIND (closefd, int, "/dev/null", "-1", "not open")
{
  return xp_diff_wfd (v);
}

KIND (dirfd, int, "AT_FDCWD", "-1", "not open")
{
  return v == 0 ? AT_FDCWD : v == 1 ? -1 : 900;
}

KIND (sockfd, int, "socket", "-1", "not open", "not a socket")
{
  int pair[2];
  if (v == 0 && socketpair (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pair) == 0)
    return pair[0];
  return v == 3 ? xp_diff_wfd (0) : v == 1 ? -1 : 900;
}

KIND (epfd, int, "epoll", "-1", "not epoll")
{
  return v == 0 ? epoll_create1 (EPOLL_CLOEXEC) : v == 1 ? -1
                                                        : xp_diff_wfd (0);
}

KIND (events, struct epoll_event *, "storage", "NULL")
{
  return v == 0 ? (struct epoll_event *) out_buffer : NULL;
}

KIND (maxevents, int, "1", "0", "-1")
{
  static const int values[] = { 1, 0, -1 };
  return values[v];
}

KIND (mqd, mqd_t, "-1", "not open")
{
  return v == 0 ? -1 : 900;
}

KIND (msqid, int, "-1")
{
  (void) v;
  return -1;
}

KIND (msgbuf, const void *, "message", "NULL")
{
  static long message[4] = { 1 };
  return v == 0 ? message : NULL;
}

KIND (msgflags, int, "0", "-1")
{
  return v == 0 ? 0 : -1;
}

KIND (rwflags, int, "0", "-1")
{
  return v == 0 ? 0 : -1;
}

KIND (msyncflags, int, "MS_SYNC", "-1")
{
  return v == 0 ? MS_SYNC : -1;
}

KIND (mapping, void *, "a page", "misaligned")
{
  static void *page;
  if (page == NULL)
    page = mmap (NULL, 4096, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return v == 0 ? page : (char *) page + 1;
}

KIND (offset, off_t, "0", "-1")
{
  return v == 0 ? 0 : -1;
}

KIND (iov, const struct iovec *, "one buffer", "NULL")
{
  static struct iovec one = { out_buffer, 16 };
  return v == 0 ? &one : NULL;
}

KIND (iovcnt, int, "1", "0", "-1", "1025")
{
  static const int values[] = { 1, 0, -1, 1025 };
  return values[v];
}

KIND (pollfds, struct pollfd *, "/dev/null", "NULL")
{
  static struct pollfd fds[1];
  fds[0].fd = xp_diff_wfd (0);
  fds[0].events = POLLOUT;
  return v == 0 ? fds : NULL;
}

KIND (nfds, nfds_t, "1", "0", "huge")
{
  static const nfds_t values[] = { 1, 0, (nfds_t) 1 << 30 };
  return values[v];
}

KIND (pollsize, size_t, "8", "0")
{
  return v == 0 ? 8 : 0;
}

KIND (fdset, fd_set *, "empty", "NULL")
{
  static fd_set set;
  FD_ZERO (&set);
  return v == 0 ? &set : NULL;
}

KIND (path, const char *, "/dev/null", "NULL", "empty", "missing")
{
  static const char *const values[] = { "/dev/null", NULL, "",
                                        "/nonexistent/xp" };
  return values[v];
}

KIND (flags, int, "O_RDONLY", "-1")
{
  return v == 0 ? O_RDONLY | O_CLOEXEC : -1;
}

KIND (mode, mode_t, "0600")
{
  (void) v;
  return 0600;
}

KIND (fcntlcmd, int, "F_GETFL", "-1")
{
  return v == 0 ? F_GETFL : -1;
}

KIND (lockfcmd, int, "F_TEST", "-1")
{
  return v == 0 ? F_TEST : -1;
}

KIND (sockaddr, struct sockaddr *, "storage", "NULL")
{
  return v == 0 ? (struct sockaddr *) out_buffer : NULL;
}

KIND (socklen, socklen_t, "16", "0")
{
  return v == 0 ? 16 : 0;
}

KIND (socklenp, socklen_t *, "16", "NULL")
{
  static socklen_t n;
  n = 16;
  return v == 0 ? &n : NULL;
}

KIND (msghdr, struct msghdr *, "one buffer", "NULL")
{
  static struct msghdr m;
  memset (&m, 0, sizeof m);
  m.msg_iov = (struct iovec *) xp_diff_iov (0);
  m.msg_iovlen = 1;
  return v == 0 ? &m : NULL;
}

KIND (mmsg, struct mmsghdr *, "one message", "NULL")
{
  static struct mmsghdr m;
  memset (&m, 0, sizeof m);
  m.msg_hdr = *xp_diff_msghdr (0);
  return v == 0 ? &m : NULL;
}

KIND (vlen, unsigned, "1", "0")
{
  return v == 0 ? 1 : 0;
}

KIND (aiolist, const struct aiocb *const *, "one request", "NULL")
{
  static struct aiocb cb;
  static const struct aiocb *list[1] = { &cb };
  return v == 0 ? list : NULL;
}

KIND (aiolist64, const struct aiocb64 *const *, "one request", "NULL")
{
  static struct aiocb64 cb;
  static const struct aiocb64 *list[1] = { &cb };
  return v == 0 ? list : NULL;
}

KIND (pid, pid_t, "-1", "0", "not a child")
{
  static const pid_t values[] = { -1, 0, 1 };
  return values[v];
}

KIND (idtype, idtype_t, "P_ALL", "-1")
{
  return v == 0 ? P_ALL : (idtype_t) -1;
}

KIND (waitoptions, int, "WNOHANG", "-1")
{
  return v == 0 ? WNOHANG : -1;
}

KIND (semname, const char *, "/xp-abi-diff", "NULL", "no slash", "empty")
{
  static const char *const values[] = { "/xp-abi-diff", NULL, "xp-abi-diff",
                                        "" };
  return values[v];
}

KIND (oflags, int, "O_CREAT", "0", "-1")
{
  static const int values[] = { O_CREAT, 0, -1 };
  return values[v];
}

KIND (namedsem, sem_t *, "open", "NULL")
{
  if (v == 1)
    return NULL;
  sem_t *s = sem_open ("/xp-abi-diff-close", O_CREAT, 0600, 0);
  sem_unlink ("/xp-abi-diff-close");
  return s;
}

/* --- running the cases ---------------------------------------------------- */

#include "abi-diff-cases.h"

/* A call that has not answered by then hangs; every good or bad value
   above answers at once where it answers at all, so this is only a
   margin for a loaded machine.  */
enum { CASE_SECONDS = 2 };

/* One call in a child; its line on stdout.  */
static void
run (const struct xp_diff_case *c, int arg, int value)
{
  int values[8] = { 0 };
  if (arg >= 0)
    values[arg] = value;
  printf ("%s", c->name);
  if (arg >= 0)
    {
      const struct kind *k = find_kind (c->kinds[arg]);
      printf (" %d:%s=%s", arg + 1, k->name, k->values[value]);
    }
  printf (": ");
  fflush (stdout);

  int pipe_fds[2];
  if (pipe2 (pipe_fds, O_CLOEXEC) != 0)
    exit (99);
  pid_t pid = fork ();
  if (pid == 0)
    {
      /* Out of the way of the descriptors the cases use; glibc's own
         complaints (before an abort) are not part of the answer.  */
      result_fd = dup3 (pipe_fds[1], 1000, O_CLOEXEC);
      int null = open ("/dev/null", O_WRONLY | O_CLOEXEC);
      dup2 (null, STDERR_FILENO);
      close (pipe_fds[0]);
      close (pipe_fds[1]);
      c->call (values);
      _exit (0);
    }
  close (pipe_fds[1]);
  char text[128];
  size_t got = 0;
  struct pollfd p = { pipe_fds[0], POLLIN, 0 };
  bool hung = false;
  for (;;)
    {
      int ready = poll (&p, 1, CASE_SECONDS * 1000);
      if (ready == 0)
        {
          hung = true;
          kill (pid, SIGKILL);
          break;
        }
      ssize_t n = read (pipe_fds[0], text + got, sizeof text - 1 - got);
      if (n <= 0)
        break;
      got += (size_t) n;
    }
  text[got] = '\0';
  close (pipe_fds[0]);
  int status;
  waitpid (pid, &status, 0);
  if (hung)
    printf ("hangs\n");
  else if (WIFSIGNALED (status))
    printf ("%skilled by %s\n", got ? text : "", sigabbrev_np (WTERMSIG (status)));
  else
    printf ("%s\n", got ? text : "nothing");
}

int
main (int argc, char **argv)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  for (size_t i = 0; i < sizeof xp_diff_cases / sizeof xp_diff_cases[0]; i++)
    {
      const struct xp_diff_case *c = &xp_diff_cases[i];
      if (argc > 1 && strcmp (argv[1], c->name) != 0)
        continue;
      run (c, -1, 0);
      for (int arg = 0; arg < c->nargs; arg++)
        {
          const struct kind *k = find_kind (c->kinds[arg]);
          for (int value = 1; value < k->count; value++)
            run (c, arg, value);
        }
    }
  return 0;
}
