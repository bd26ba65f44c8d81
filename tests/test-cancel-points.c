/* Cancellation points: the blocking libc functions xpthread interposes
   (lib/cancel/points-*.c).

   - Each interposed name, at each of its versions, is xpthread's.
   - Each cancellation point acts on a cancel: a thread blocked in it (a
     pipe nobody writes, a socket nobody connects, a lock a child process
     holds, an empty message queue, a child that does not exit, a fifo
     nobody opens, a long sleep, a signal nobody sends...) is cancelled by
     the main thread; and a thread with a cancel already pending when it
     calls it is cancelled before the call has any effect (the byte stays
     in the pipe, the file is not created, the child is not reaped...).
     Either way the join returns PTHREAD_CANCELED and a cleanup handler
     ran.  pread & co. on files, close, fsync, fdatasync, msync and tcdrain
     cannot be made to block reliably, so only the pending case is tested
     for them.
   - With cancellation disabled a blocked call is not interrupted, and the
     cancel acts at the next cancellation point after enabling again.
   - A read that completed keeps its data, even when a cancel races with
     it: what was written is either read and counted or still in the pipe.
   - Outside cancellation the interposers behave as glibc's: a sample of
     calls is made with xpthread's function and with glibc's (looked up in
     libc.so.6) and must give the same results and errno; EINTR without
     SA_RESTART, restart with it, sleep's unslept seconds, select's
     updated timeout, sigwait's retry on EINTR, the _FORTIFY_SOURCE checks.

   Worker threads never assert: they record what happened and the main
   thread checks it.  The only waits with a deadline are watchdogs.  */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE
#include "sync-helpers.h"
#include <aio.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>

#define TIMEOUT 60
/* A thread that has not ended this long after its cancel was not
   cancelled: a watchdog, not a timing assumption.  */
#define JOIN_SECONDS 20
#define LONG_SLEEP 1000

/* The _FORTIFY_SOURCE entry points, which no header declares here.  */
ssize_t __read_chk (int fd, void *buf, size_t nbytes, size_t buflen);
ssize_t __pread_chk (int fd, void *buf, size_t nbytes, off_t offset,
                     size_t buflen);
ssize_t __pread64_chk (int fd, void *buf, size_t nbytes, off64_t offset,
                       size_t buflen);
ssize_t __recv_chk (int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk (int fd, void *buf, size_t n, size_t buflen,
                        int flags, __SOCKADDR_ARG addr, socklen_t *addrlen);
int __poll_chk (struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen);
int __ppoll_chk (struct pollfd *fds, nfds_t nfds,
                 const struct timespec *timeout, const sigset_t *sigmask,
                 size_t fdslen);
int __open_2 (const char *file, int flags);
int __open64_2 (const char *file, int flags);
int __openat_2 (int dirfd, const char *file, int flags);
int __openat64_2 (int dirfd, const char *file, int flags);

static const char file_data[] = "0123456789abcdef";

/* --- binding ------------------------------------------------------------- */

/* Every name xpthread interposes as a cancellation point; each version
   of it this architecture's abilist gives must bind to libxpthread.  */
static const char *const interposed[] = {
  "__open64_2", "__open_2", "__openat64_2", "__openat_2", "__poll_chk",
  "__ppoll_chk", "__pread64_chk", "__pread_chk", "__read_chk", "__recv_chk",
  "__recvfrom_chk", "accept", "accept4", "clock_nanosleep", "close",
  "connect", "creat", "creat64", "epoll_pwait", "epoll_pwait2", "epoll_wait",
  "fcntl", "fcntl64", "fdatasync", "fsync", "lockf", "lockf64", "mq_receive",
  "mq_send", "mq_timedreceive", "mq_timedsend", "msgrcv", "msgsnd", "msync",
  "nanosleep", "open", "open64", "openat", "openat64", "pause", "poll",
  "ppoll", "pread", "pread64", "preadv", "preadv2", "preadv64", "preadv64v2",
  "pselect", "pwrite", "pwrite64", "pwritev", "pwritev2", "pwritev64",
  "pwritev64v2", "read", "readv", "recv", "recvfrom", "recvmmsg", "recvmsg",
  "select", "send", "sendmmsg", "sendmsg", "sendto", "sigsuspend",
  "sigtimedwait", "sigwait", "sigwaitinfo", "sleep", "tcdrain", "usleep",
  "wait", "wait3", "wait4", "waitid", "waitpid", "write", "writev", "system",
  "sigpause", "__sigpause", "__xpg_sigpause", "aio_suspend", "aio_suspend64",
};

static void
require_in_xpthread (const char *what, void *address)
{
  Dl_info info;
  ck_assert_msg (address != NULL, "%s: not found", what);
  ck_assert_msg (dladdr (address, &info) != 0 && info.dli_fname != NULL,
                 "%s: no object contains it", what);
  ck_assert_msg (strstr (info.dli_fname, "libxpthread") != NULL,
                 "%s is bound to %s, not libxpthread", what, info.dli_fname);
}

START_TEST (test_interposers_are_xpthread)
{
  for (size_t i = 0; i < sizeof interposed / sizeof interposed[0]; i++)
    {
      const char *versions[8];
      int n = xp_test_abi_versions (interposed[i], versions, 8);
      ck_assert_msg (n > 0, "%s is not in the abilist", interposed[i]);
      for (int v = 0; v < n; v++)
        {
          if (strcmp (versions[v], "-") == 0)
            continue;
          char what[64];
          snprintf (what, sizeof what, "%s@%s", interposed[i], versions[v]);
          require_in_xpthread (what, dlvsym (RTLD_DEFAULT, interposed[i],
                                             versions[v]));
        }
    }
  /* And what this program itself calls.  */
  require_in_xpthread ("read", (void *) &read);
  require_in_xpthread ("__open_2", (void *) &__open_2);
  require_in_xpthread ("mq_receive", (void *) &mq_receive);
}
END_TEST

/* --- fixtures ------------------------------------------------------------ */

/* Made by the parent of the forked tests, removed by it whatever happens
   to them: a directory and two System V message queues, one of 8 bytes.  */
static char tmpdir[64];
static int msq_in = -1, msq_out = -1;

static void
path_in_tmpdir (char *buf, size_t size, const char *name)
{
  snprintf (buf, size, "%s/%s", tmpdir, name);
}

static void
remove_tmp_files (void)
{
  static const char *const names[] = { "fifo", "file", "new" };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    {
      char path[128];
      path_in_tmpdir (path, sizeof path, names[i]);
      unlink (path);
    }
}

static void
make_resources (void)
{
  strcpy (tmpdir, "/tmp/xp-cancel-points.XXXXXX");
  ck_assert (mkdtemp (tmpdir) != NULL);
  msq_in = msgget (IPC_PRIVATE, 0600);
  msq_out = msgget (IPC_PRIVATE, 0600);
  ck_assert (msq_in >= 0 && msq_out >= 0);
  struct msqid_ds ds;
  ck_assert_int_eq (msgctl (msq_out, IPC_STAT, &ds), 0);
  ds.msg_qbytes = 8;
  ck_assert_int_eq (msgctl (msq_out, IPC_SET, &ds), 0);
}

static void
remove_resources (void)
{
  remove_tmp_files ();
  rmdir (tmpdir);
  msgctl (msq_in, IPC_RMID, NULL);
  msgctl (msq_out, IPC_RMID, NULL);
}

/* What each kind of cancellation point blocks on, or, when ready, what
   lets it complete at once.  */
enum setup
{
  S_PIPE_IN,    /* a pipe: empty, or one byte in it */
  S_PIPE_OUT,   /* a pipe: full, or empty */
  S_FILE,       /* a regular file of 16 bytes, mapped */
  S_SOCK_IN,    /* a stream socket pair: nothing sent, or one byte */
  S_SOCK_OUT,   /* the same: send buffer full, or empty */
  S_LISTEN,     /* a listening socket: no connection, or one waiting */
  S_CONNECT,    /* a listening socket with a backlog of 0: full, or not */
  S_POLL,       /* a pipe in an epoll set: empty, or one byte in it */
  S_SLEEP,      /* long sleeps, or sleeps of 0 */
  S_SIGNAL,     /* SIGUSR1 blocked (and handled): none, or one pending */
  S_CHILD,      /* a child process: alive, or exited */
  S_OPEN,       /* a fifo nobody opens, or a new file to create */
  S_OPEN2,      /* a fifo nobody opens, opened with O_NONBLOCK or not */
  S_LOCK,       /* the file, with a child holding a lock on it or not */
  S_MSQ_IN,     /* the 8-byte queue: empty, or one message */
  S_MSQ_OUT,    /* the 8-byte queue: full, or empty */
  S_MQ_IN,      /* a POSIX message queue: empty, or one message */
  S_MQ_OUT,     /* a POSIX message queue of one: full, or empty */
};

struct msg8
{
  long type;
  char text[8];
};

struct fx
{
  enum setup setup;
  bool ready;
  int pipe[2];
  int sock[2];
  int listener, client, extra;
  struct sockaddr_un addr;
  socklen_t addrlen;
  int epfd;
  int file;
  char *map;
  int dirfd;
  char name[16];          /* what the open calls open, in tmpdir */
  char path[128];         /* and its full path */
  int flags;              /* and how */
  pid_t child;
  int msq;
  mqd_t mq;
  sigset_t usr1;
};

static _Atomic int usr1_handled;

static void
count_usr1 (int sig)
{
  (void) sig;
  atomic_fetch_add (&usr1_handled, 1);
}

static void
set_handler (int sig, void (*handler) (int), int flags)
{
  struct sigaction sa = { .sa_handler = handler, .sa_flags = flags };
  sigemptyset (&sa.sa_mask);
  ck_assert_int_eq (sigaction (sig, &sa, NULL), 0);
}

static void
set_nonblocking (int fd, bool on)
{
  int fl = fcntl (fd, F_GETFL);
  ck_assert_int_ne (fl, -1);
  ck_assert_int_eq (fcntl (fd, F_SETFL, on ? fl | O_NONBLOCK
                                            : fl & ~O_NONBLOCK), 0);
}

static int
bytes_queued (int fd)
{
  int n = -1;
  ck_assert_int_eq (ioctl (fd, FIONREAD, &n), 0);
  return n;
}

/* Fill fd's pipe or socket buffer, so that a blocking write of one byte
   blocks.  */
static void
fill (int fd, bool socket)
{
  static char chunk[4096];
  set_nonblocking (fd, true);
  for (size_t size = sizeof chunk; size > 0; size = size > 1 ? 1 : 0)
    while ((socket ? send (fd, chunk, size, MSG_DONTWAIT)
                   : write (fd, chunk, size)) > 0)
      ;
  ck_assert (errno == EAGAIN || errno == EWOULDBLOCK);
  set_nonblocking (fd, false);
}

static void
listen_on_abstract (struct fx *f, int backlog)
{
  f->listener = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge (f->listener, 0);
  struct sockaddr_un autobind = { .sun_family = AF_UNIX };
  ck_assert_int_eq (bind (f->listener, (struct sockaddr *) &autobind,
                          sizeof (sa_family_t)), 0);
  ck_assert_int_eq (listen (f->listener, backlog), 0);
  f->addrlen = sizeof f->addr;
  ck_assert_int_eq (getsockname (f->listener, (struct sockaddr *) &f->addr,
                                 &f->addrlen), 0);
}

static int
connected_client (struct fx *f)
{
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge (s, 0);
  ck_assert_int_eq (connect (s, (struct sockaddr *) &f->addr, f->addrlen),
                    0);
  return s;
}

static void
make_file (struct fx *f)
{
  char path[128];
  path_in_tmpdir (path, sizeof path, "file");
  f->file = open (path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ck_assert_int_ge (f->file, 0);
  ck_assert_int_eq (write (f->file, file_data, sizeof file_data),
                    sizeof file_data);
  ck_assert_int_eq (lseek (f->file, 0, SEEK_SET), 0);
  f->map = mmap (NULL, sizeof file_data, PROT_READ | PROT_WRITE, MAP_SHARED,
                 f->file, 0);
  ck_assert (f->map != MAP_FAILED);
}

/* A child process that holds a write lock on the whole file until it is
   killed, and dies with this process.  */
static pid_t
lock_holder (int fd)
{
  int ready[2];
  ck_assert_int_eq (pipe (ready), 0);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
      char ok = fcntl (fd, F_SETLK, &fl) == 0;
      if (write (ready[1], &ok, 1) != 1)
        _exit (1);
      for (;;)
        pause ();
    }
  char ok = 0;
  ck_assert_int_eq (read (ready[0], &ok, 1), 1);
  ck_assert_msg (ok, "the child could not lock the file");
  close (ready[0]);
  close (ready[1]);
  return pid;
}

/* Whether another process can lock the whole file (through an open file
   description of its own).  */
static bool
lock_free_for_others (void)
{
  char path[128];
  path_in_tmpdir (path, sizeof path, "file");
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      int fd = open (path, O_RDWR);
      struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
      _exit (fd >= 0 && fcntl (fd, F_SETLK, &fl) == 0 ? 0 : 1);
    }
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

static void
make_child (struct fx *f)
{
  f->child = fork ();
  ck_assert_int_ge (f->child, 0);
  if (f->child == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (f->ready)
        _exit (7);
      for (;;)
        pause ();
    }
  if (f->ready)
    {
      /* Until it is a zombie, without reaping it.  */
      siginfo_t si;
      ck_assert_int_eq (waitid (P_PID, (id_t) f->child, &si,
                                WEXITED | WNOWAIT), 0);
    }
}

static void
make_mq (struct fx *f, long maxmsg)
{
  char name[64];
  snprintf (name, sizeof name, "/xp-cancel-points-%d", (int) getpid ());
  struct mq_attr attr = { .mq_maxmsg = maxmsg, .mq_msgsize = 16 };
  mq_unlink (name);
  f->mq = mq_open (name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &attr);
  ck_assert_msg (f->mq != (mqd_t) -1, "mq_open: %s", strerror (errno));
  mq_unlink (name);
}

static long
mq_messages (mqd_t mq)
{
  struct mq_attr attr;
  ck_assert_int_eq (mq_getattr (mq, &attr), 0);
  return attr.mq_curmsgs;
}

static unsigned long
msq_messages (int msq)
{
  struct msqid_ds ds;
  ck_assert_int_eq (msgctl (msq, IPC_STAT, &ds), 0);
  return ds.msg_qnum;
}

static void
drain_msq (int msq)
{
  struct msg8 m;
  while (msgrcv (msq, &m, sizeof m.text, 0, IPC_NOWAIT | MSG_NOERROR) >= 0)
    ;
}

static void
setup_open (struct fx *f, bool nonblocking_when_ready)
{
  char fifo[128];
  path_in_tmpdir (fifo, sizeof fifo, "fifo");
  ck_assert_int_eq (mkfifo (fifo, 0600), 0);
  f->dirfd = open (tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (f->dirfd, 0);
  bool create = f->ready && !nonblocking_when_ready;
  strcpy (f->name, create ? "new" : "fifo");
  path_in_tmpdir (f->path, sizeof f->path, f->name);
  f->flags = create ? O_WRONLY | O_CREAT | O_CLOEXEC
             : f->ready ? O_RDONLY | O_NONBLOCK | O_CLOEXEC
             : O_RDONLY | O_CLOEXEC;
}

static void
setup (struct fx *f, enum setup kind, bool ready)
{
  memset (f, 0, sizeof *f);
  f->setup = kind;
  f->ready = ready;
  f->child = -1;
  f->mq = (mqd_t) -1;
  remove_tmp_files ();
  switch (kind)
    {
    case S_PIPE_IN:
    case S_POLL:
      {
        ck_assert_int_eq (pipe2 (f->pipe, O_CLOEXEC), 0);
        if (ready)
          ck_assert_int_eq (write (f->pipe[1], "x", 1), 1);
        f->epfd = epoll_create1 (EPOLL_CLOEXEC);
        ck_assert_int_ge (f->epfd, 0);
        struct epoll_event ev = { .events = EPOLLIN };
        ck_assert_int_eq (epoll_ctl (f->epfd, EPOLL_CTL_ADD, f->pipe[0],
                                     &ev), 0);
      }
      break;
    case S_PIPE_OUT:
      ck_assert_int_eq (pipe2 (f->pipe, O_CLOEXEC), 0);
      if (!ready)
        fill (f->pipe[1], false);
      break;
    case S_FILE:
      make_file (f);
      break;
    case S_SOCK_IN:
    case S_SOCK_OUT:
      ck_assert_int_eq (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
                                    f->sock), 0);
      if (kind == S_SOCK_IN && ready)
        ck_assert_int_eq (send (f->sock[1], "x", 1, 0), 1);
      if (kind == S_SOCK_OUT && !ready)
        fill (f->sock[0], true);
      break;
    case S_LISTEN:
      listen_on_abstract (f, 5);
      if (ready)
        f->extra = connected_client (f);
      break;
    case S_CONNECT:
      listen_on_abstract (f, 0);
      if (!ready)
        f->extra = connected_client (f);
      f->client = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      ck_assert_int_ge (f->client, 0);
      break;
    case S_SLEEP:
      break;
    case S_SIGNAL:
      sigemptyset (&f->usr1);
      sigaddset (&f->usr1, SIGUSR1);
      set_handler (SIGUSR1, count_usr1, 0);
      ck_assert_int_eq (pthread_sigmask (SIG_BLOCK, &f->usr1, NULL), 0);
      if (ready)
        ck_assert_int_eq (kill (getpid (), SIGUSR1), 0);
      break;
    case S_CHILD:
      make_child (f);
      break;
    case S_OPEN:
    case S_OPEN2:
      setup_open (f, kind == S_OPEN2);
      break;
    case S_LOCK:
      make_file (f);
      if (!ready)
        f->child = lock_holder (f->file);
      break;
    case S_MSQ_IN:
    case S_MSQ_OUT:
      f->msq = kind == S_MSQ_IN ? msq_in : msq_out;
      drain_msq (f->msq);
      if (ready == (kind == S_MSQ_IN))
        {
          struct msg8 m = { .type = 1, .text = "1234567" };
          ck_assert_int_eq (msgsnd (f->msq, &m, sizeof m.text, IPC_NOWAIT),
                            0);
        }
      break;
    case S_MQ_IN:
      make_mq (f, 4);
      if (ready)
        ck_assert_int_eq (mq_send (f->mq, "x", 1, 0), 0);
      break;
    case S_MQ_OUT:
      make_mq (f, 1);
      if (!ready)
        ck_assert_int_eq (mq_send (f->mq, "x", 1, 0), 0);
      break;
    }
}

/* After a cancel that was pending when the call was made: the call had
   no effect.  */
static void
check_untouched (struct fx *f, const char *name)
{
  char buf[sizeof file_data];
  switch (f->setup)
    {
    case S_PIPE_IN:
    case S_POLL:
      ck_assert_msg (bytes_queued (f->pipe[0]) == 1, "%s: byte consumed",
                     name);
      break;
    case S_PIPE_OUT:
      ck_assert_msg (bytes_queued (f->pipe[0]) == 0, "%s: wrote", name);
      break;
    case S_FILE:
    case S_LOCK:
      ck_assert_msg (fcntl (f->file, F_GETFD) != -1, "%s: closed", name);
      ck_assert_int_eq (pread (f->file, buf, sizeof buf, 0), sizeof buf);
      ck_assert_msg (memcmp (buf, file_data, sizeof buf) == 0,
                     "%s: wrote to the file", name);
      ck_assert_msg (lock_free_for_others (), "%s: took a lock", name);
      break;
    case S_SOCK_IN:
      ck_assert_msg (bytes_queued (f->sock[0]) == 1, "%s: received", name);
      break;
    case S_SOCK_OUT:
      ck_assert_msg (bytes_queued (f->sock[1]) == 0, "%s: sent", name);
      break;
    case S_LISTEN:
      set_nonblocking (f->listener, true);
      ck_assert_msg (accept (f->listener, NULL, NULL) >= 0, "%s: accepted",
                     name);
      break;
    case S_CONNECT:
      set_nonblocking (f->listener, true);
      ck_assert_msg (accept (f->listener, NULL, NULL) == -1
                     && errno == EAGAIN, "%s: connected", name);
      break;
    case S_SLEEP:
    case S_OPEN2:
      break;
    case S_SIGNAL:
      {
        sigset_t pending;
        ck_assert_int_eq (sigpending (&pending), 0);
        ck_assert_msg (sigismember (&pending, SIGUSR1)
                       && atomic_load (&usr1_handled) == 0,
                       "%s: took the signal", name);
      }
      break;
    case S_CHILD:
      {
        siginfo_t si = { 0 };
        ck_assert_int_eq (waitid (P_PID, (id_t) f->child, &si,
                                  WEXITED | WNOHANG | WNOWAIT), 0);
        ck_assert_msg (si.si_pid == f->child, "%s: reaped the child", name);
      }
      break;
    case S_OPEN:
      ck_assert_msg (faccessat (f->dirfd, "new", F_OK, 0) == -1
                     && errno == ENOENT, "%s: created the file", name);
      break;
    case S_MSQ_IN:
      ck_assert_msg (msq_messages (f->msq) == 1, "%s: received", name);
      break;
    case S_MSQ_OUT:
      ck_assert_msg (msq_messages (f->msq) == 0, "%s: sent", name);
      break;
    case S_MQ_IN:
      ck_assert_msg (mq_messages (f->mq) == 1, "%s: received", name);
      break;
    case S_MQ_OUT:
      ck_assert_msg (mq_messages (f->mq) == 0, "%s: sent", name);
      break;
    }
}

static void
teardown (struct fx *f)
{
  if (f->child > 0)
    {
      kill (f->child, SIGKILL);
      waitpid (f->child, NULL, 0);
    }
  if (f->setup == S_MSQ_IN || f->setup == S_MSQ_OUT)
    drain_msq (f->msq);
  remove_tmp_files ();
}

/* --- the cancellation points --------------------------------------------- */

/* Each makes one call, which blocks unless the fixture is ready.  */
#define CALL(fn) static long call_##fn (struct fx *f)

static struct timespec
long_timeout (void)
{
  return (struct timespec) { .tv_sec = LONG_SLEEP };
}

static struct timespec
far_deadline (void)
{
  struct timespec t;
  clock_gettime (CLOCK_REALTIME, &t);
  t.tv_sec += LONG_SLEEP;
  return t;
}

CALL (read) { char c; return read (f->pipe[0], &c, 1); }
CALL (readv)
{
  char c;
  struct iovec iov = { &c, 1 };
  return readv (f->pipe[0], &iov, 1);
}
CALL (__read_chk) { char c; return __read_chk (f->pipe[0], &c, 1, 1); }
CALL (preadv2)
{
  char c;
  struct iovec iov = { &c, 1 };
  return preadv2 (f->pipe[0], &iov, 1, -1, 0);
}
CALL (preadv64v2)
{
  char c;
  struct iovec iov = { &c, 1 };
  return preadv64v2 (f->pipe[0], &iov, 1, -1, 0);
}
CALL (pread) { char c; return pread (f->file, &c, 1, 0); }
CALL (pread64) { char c; return pread64 (f->file, &c, 1, 0); }
CALL (preadv)
{
  char c;
  struct iovec iov = { &c, 1 };
  return preadv (f->file, &iov, 1, 0);
}
CALL (preadv64)
{
  char c;
  struct iovec iov = { &c, 1 };
  return preadv64 (f->file, &iov, 1, 0);
}
CALL (__pread_chk) { char c; return __pread_chk (f->file, &c, 1, 0, 1); }
CALL (__pread64_chk) { char c; return __pread64_chk (f->file, &c, 1, 0, 1); }
CALL (write) { return write (f->pipe[1], "x", 1); }
CALL (writev)
{
  struct iovec iov = { (void *) "x", 1 };
  return writev (f->pipe[1], &iov, 1);
}
CALL (pwritev2)
{
  struct iovec iov = { (void *) "x", 1 };
  return pwritev2 (f->pipe[1], &iov, 1, -1, 0);
}
CALL (pwritev64v2)
{
  struct iovec iov = { (void *) "x", 1 };
  return pwritev64v2 (f->pipe[1], &iov, 1, -1, 0);
}
CALL (pwrite) { return pwrite (f->file, "X", 1, 0); }
CALL (pwrite64) { return pwrite64 (f->file, "X", 1, 0); }
CALL (pwritev)
{
  struct iovec iov = { (void *) "X", 1 };
  return pwritev (f->file, &iov, 1, 0);
}
CALL (pwritev64)
{
  struct iovec iov = { (void *) "X", 1 };
  return pwritev64 (f->file, &iov, 1, 0);
}
CALL (close) { return close (f->file); }
CALL (fsync) { return fsync (f->file); }
CALL (fdatasync) { return fdatasync (f->file); }
CALL (msync) { return msync (f->map, sizeof file_data, MS_SYNC); }
CALL (tcdrain) { return tcdrain (f->file); }
CALL (recv) { char c; return recv (f->sock[0], &c, 1, 0); }
CALL (recvfrom) { char c; return recvfrom (f->sock[0], &c, 1, 0, NULL, 0); }
CALL (recvmsg)
{
  char c;
  struct iovec iov = { &c, 1 };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
  return recvmsg (f->sock[0], &m, 0);
}
CALL (recvmmsg)
{
  char c;
  struct iovec iov = { &c, 1 };
  struct mmsghdr m = { .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };
  return recvmmsg (f->sock[0], &m, 1, 0, NULL);
}
CALL (__recv_chk) { char c; return __recv_chk (f->sock[0], &c, 1, 1, 0); }
CALL (__recvfrom_chk)
{
  char c;
  return __recvfrom_chk (f->sock[0], &c, 1, 1, 0, NULL, NULL);
}
CALL (send) { return send (f->sock[0], "x", 1, 0); }
CALL (sendto) { return sendto (f->sock[0], "x", 1, 0, NULL, 0); }
CALL (sendmsg)
{
  struct iovec iov = { (void *) "x", 1 };
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
  return sendmsg (f->sock[0], &m, 0);
}
CALL (sendmmsg)
{
  struct iovec iov = { (void *) "x", 1 };
  struct mmsghdr m = { .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };
  return sendmmsg (f->sock[0], &m, 1, 0);
}
CALL (accept) { return accept (f->listener, NULL, NULL); }
CALL (accept4) { return accept4 (f->listener, NULL, NULL, SOCK_CLOEXEC); }
CALL (connect)
{
  return connect (f->client, (struct sockaddr *) &f->addr, f->addrlen);
}
CALL (poll)
{
  struct pollfd p = { .fd = f->pipe[0], .events = POLLIN };
  return poll (&p, 1, -1);
}
CALL (ppoll)
{
  struct pollfd p = { .fd = f->pipe[0], .events = POLLIN };
  return ppoll (&p, 1, NULL, NULL);
}
CALL (__poll_chk)
{
  struct pollfd p = { .fd = f->pipe[0], .events = POLLIN };
  return __poll_chk (&p, 1, -1, sizeof p);
}
CALL (__ppoll_chk)
{
  struct pollfd p = { .fd = f->pipe[0], .events = POLLIN };
  return __ppoll_chk (&p, 1, NULL, NULL, sizeof p);
}
CALL (select)
{
  fd_set in;
  FD_ZERO (&in);
  FD_SET (f->pipe[0], &in);
  return select (f->pipe[0] + 1, &in, NULL, NULL, NULL);
}
CALL (pselect)
{
  fd_set in;
  FD_ZERO (&in);
  FD_SET (f->pipe[0], &in);
  return pselect (f->pipe[0] + 1, &in, NULL, NULL, NULL, NULL);
}
CALL (epoll_wait)
{
  struct epoll_event ev;
  return epoll_wait (f->epfd, &ev, 1, -1);
}
CALL (epoll_pwait)
{
  struct epoll_event ev;
  return epoll_pwait (f->epfd, &ev, 1, -1, NULL);
}
CALL (epoll_pwait2)
{
  struct epoll_event ev;
  return epoll_pwait2 (f->epfd, &ev, 1, NULL, NULL);
}
CALL (nanosleep)
{
  struct timespec t = { .tv_sec = f->ready ? 0 : LONG_SLEEP };
  return nanosleep (&t, NULL);
}
CALL (clock_nanosleep)
{
  struct timespec t = { .tv_sec = f->ready ? 0 : LONG_SLEEP };
  return clock_nanosleep (CLOCK_MONOTONIC, 0, &t, NULL);
}
CALL (sleep) { return sleep (f->ready ? 0 : LONG_SLEEP); }
CALL (usleep) { return usleep (f->ready ? 0 : LONG_SLEEP * 1000000u); }
CALL (pause) { (void) f; return pause (); }
CALL (sigsuspend)
{
  sigset_t none;
  sigemptyset (&none);
  (void) f;
  return sigsuspend (&none);
}
/* <signal.h> makes sigpause the X/Open form (one signal out of the mask),
   deprecated but still a cancellation point; __sigpause (mask, 0) is the
   BSD form old binaries call.  */
extern int __sigpause (int sig_or_mask, int is_sig);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
CALL (sigpause) { (void) f; return sigpause (SIGUSR2); }
#pragma GCC diagnostic pop
CALL (__sigpause) { (void) f; return __sigpause (0, 0); }
/* A pending cancel may let the shell start (as with glibc, whose waitpid
   is the cancellation point) but never leaves it running.  */
CALL (system) { return system (f->ready ? "true" : "sleep 30"); }
CALL (sigwait)
{
  int sig = 0;
  int err = sigwait (&f->usr1, &sig);
  return err != 0 ? -err : sig;
}
CALL (sigwaitinfo)
{
  siginfo_t si;
  return sigwaitinfo (&f->usr1, &si);
}
CALL (sigtimedwait)
{
  siginfo_t si;
  struct timespec t = long_timeout ();
  return sigtimedwait (&f->usr1, &si, &t);
}
CALL (wait) { int status; return wait (&status); }
CALL (waitpid) { int status; return waitpid (f->child, &status, 0); }
CALL (waitid)
{
  siginfo_t si;
  return waitid (P_PID, (id_t) f->child, &si, WEXITED);
}
CALL (wait3) { int status; return wait3 (&status, 0, NULL); }
CALL (wait4) { int status; return wait4 (f->child, &status, 0, NULL); }
CALL (open) { return open (f->path, f->flags, 0600); }
CALL (open64) { return open64 (f->path, f->flags, 0600); }
CALL (openat) { return openat (f->dirfd, f->name, f->flags, 0600); }
CALL (openat64) { return openat64 (f->dirfd, f->name, f->flags, 0600); }
CALL (creat) { return creat (f->path, 0600); }
CALL (creat64) { return creat64 (f->path, 0600); }
CALL (__open_2) { return __open_2 (f->path, f->flags); }
CALL (__open64_2) { return __open64_2 (f->path, f->flags); }
CALL (__openat_2) { return __openat_2 (f->dirfd, f->name, f->flags); }
CALL (__openat64_2) { return __openat64_2 (f->dirfd, f->name, f->flags); }
CALL (fcntl)
{
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  return fcntl (f->file, F_SETLKW, &fl);
}
CALL (fcntl64)
{
  struct flock64 fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  return fcntl64 (f->file, F_SETLKW64, &fl);
}
CALL (fcntl_ofd)
{
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  return fcntl (f->file, F_OFD_SETLKW, &fl);
}
CALL (lockf) { return lockf (f->file, F_LOCK, 0); }
CALL (lockf64) { return lockf64 (f->file, F_LOCK, 0); }
CALL (msgrcv)
{
  struct msg8 m;
  return msgrcv (f->msq, &m, sizeof m.text, 0, 0);
}
CALL (msgsnd)
{
  struct msg8 m = { .type = 1, .text = "7654321" };
  return msgsnd (f->msq, &m, sizeof m.text, 0);
}
CALL (mq_receive)
{
  char buf[16];
  return mq_receive (f->mq, buf, sizeof buf, NULL);
}
CALL (mq_timedreceive)
{
  char buf[16];
  struct timespec t = far_deadline ();
  return mq_timedreceive (f->mq, buf, sizeof buf, NULL, &t);
}
CALL (mq_send) { return mq_send (f->mq, "y", 1, 0); }
CALL (mq_timedsend)
{
  struct timespec t = far_deadline ();
  return mq_timedsend (f->mq, "y", 1, 0, &t);
}

struct point
{
  const char *name;
  enum setup setup;
  long (*call) (struct fx *);
};

#define POINT(fn, setup) { #fn, setup, call_##fn }

static const struct point points[] = {
  POINT (read, S_PIPE_IN), POINT (readv, S_PIPE_IN),
  POINT (__read_chk, S_PIPE_IN), POINT (preadv2, S_PIPE_IN),
  POINT (preadv64v2, S_PIPE_IN),
  POINT (write, S_PIPE_OUT), POINT (writev, S_PIPE_OUT),
  POINT (pwritev2, S_PIPE_OUT), POINT (pwritev64v2, S_PIPE_OUT),
  POINT (recv, S_SOCK_IN), POINT (recvfrom, S_SOCK_IN),
  POINT (recvmsg, S_SOCK_IN), POINT (recvmmsg, S_SOCK_IN),
  POINT (__recv_chk, S_SOCK_IN), POINT (__recvfrom_chk, S_SOCK_IN),
  POINT (send, S_SOCK_OUT), POINT (sendto, S_SOCK_OUT),
  POINT (sendmsg, S_SOCK_OUT), POINT (sendmmsg, S_SOCK_OUT),
  POINT (accept, S_LISTEN), POINT (accept4, S_LISTEN),
  POINT (connect, S_CONNECT),
  POINT (poll, S_POLL), POINT (ppoll, S_POLL), POINT (__poll_chk, S_POLL),
  POINT (__ppoll_chk, S_POLL), POINT (select, S_POLL),
  POINT (pselect, S_POLL), POINT (epoll_wait, S_POLL),
  POINT (epoll_pwait, S_POLL), POINT (epoll_pwait2, S_POLL),
  POINT (nanosleep, S_SLEEP), POINT (clock_nanosleep, S_SLEEP),
  POINT (sleep, S_SLEEP), POINT (usleep, S_SLEEP), POINT (pause, S_SLEEP),
  POINT (sigsuspend, S_SIGNAL), POINT (sigwait, S_SIGNAL),
  POINT (sigpause, S_SIGNAL), POINT (__sigpause, S_SIGNAL),
  POINT (system, S_SLEEP),
  POINT (sigwaitinfo, S_SIGNAL), POINT (sigtimedwait, S_SIGNAL),
  POINT (wait, S_CHILD), POINT (waitpid, S_CHILD), POINT (waitid, S_CHILD),
  POINT (wait3, S_CHILD), POINT (wait4, S_CHILD),
  POINT (open, S_OPEN), POINT (open64, S_OPEN), POINT (openat, S_OPEN),
  POINT (openat64, S_OPEN), POINT (creat, S_OPEN), POINT (creat64, S_OPEN),
  POINT (__open_2, S_OPEN2), POINT (__open64_2, S_OPEN2),
  POINT (__openat_2, S_OPEN2), POINT (__openat64_2, S_OPEN2),
  POINT (fcntl, S_LOCK), POINT (fcntl64, S_LOCK), POINT (fcntl_ofd, S_LOCK),
  POINT (lockf, S_LOCK), POINT (lockf64, S_LOCK),
  POINT (msgrcv, S_MSQ_IN), POINT (msgsnd, S_MSQ_OUT),
  POINT (mq_receive, S_MQ_IN), POINT (mq_timedreceive, S_MQ_IN),
  POINT (mq_send, S_MQ_OUT), POINT (mq_timedsend, S_MQ_OUT),
  /* Nothing to block on: tested with a pending cancel only.  */
  POINT (pread, S_FILE), POINT (pread64, S_FILE), POINT (preadv, S_FILE),
  POINT (preadv64, S_FILE), POINT (__pread_chk, S_FILE),
  POINT (__pread64_chk, S_FILE), POINT (pwrite, S_FILE),
  POINT (pwrite64, S_FILE), POINT (pwritev, S_FILE),
  POINT (pwritev64, S_FILE), POINT (close, S_FILE), POINT (fsync, S_FILE),
  POINT (fdatasync, S_FILE), POINT (msync, S_FILE), POINT (tcdrain, S_FILE),
};
#define N_POINTS ((int) (sizeof points / sizeof points[0]))

static int
n_blocking (void)
{
  int n = 0;
  while (n < N_POINTS && points[n].setup != S_FILE)
    n++;
  return n;
}

/* --- a thread in a cancellation point ------------------------------------ */

struct run
{
  const struct point *point;
  struct fx *fx;
  bool pending;           /* cancel itself before the call */
  _Atomic int tid;
  _Atomic bool returned;
  long result;
  int error;
  _Atomic bool cleaned;
};

static void
note_cleanup (void *arg)
{
  struct run *r = arg;
  atomic_store (&r->cleaned, true);
}

static void *
call_point (void *arg)
{
  struct run *r = arg;
  pthread_cleanup_push (note_cleanup, r);
  if (r->pending)
    {
      /* Requested while disabled; enabling again in deferred mode does
         not act: the call must.  */
      pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, NULL);
      pthread_cancel (pthread_self ());
      pthread_setcancelstate (PTHREAD_CANCEL_ENABLE, NULL);
    }
  atomic_store (&r->tid, current_tid ());
  r->result = r->point->call (r->fx);
  r->error = errno;
  atomic_store (&r->returned, true);
  pthread_cleanup_pop (0);
  return NULL;
}

/* The thread's result, failing if it does not end in time.  */
static void *
join_within (pthread_t th, int seconds, const char *name)
{
  struct timespec deadline = in_ms (CLOCK_REALTIME, seconds * 1000L);
  void *result = NULL;
  int err = pthread_timedjoin_np (th, &result, &deadline);
  ck_assert_msg (err == 0, "%s: the thread did not end within %d s "
                 "(join: %s)", name, seconds, strerror (err));
  return result;
}

/* Wait until the thread sleeps in the kernel, failing if its call
   returned instead of blocking.  */
static void
wait_blocked (struct run *r)
{
  while (atomic_load (&r->tid) == 0)
    usleep (100);
  char path[64];
  snprintf (path, sizeof path, "/proc/self/task/%d/stat",
            atomic_load (&r->tid));
  for (;;)
    {
      ck_assert_msg (!atomic_load (&r->returned), "%s returned %ld (%s) "
                     "instead of blocking", r->point->name, r->result,
                     strerror (r->error));
      char buf[512];
      FILE *f = fopen (path, "r");
      ck_assert_msg (f != NULL, "no %s", path);
      size_t n = fread (buf, 1, sizeof buf - 1, f);
      fclose (f);
      buf[n] = '\0';
      char *state = strrchr (buf, ')');
      if (state != NULL && state[1] == ' ' && state[2] == 'S')
        return;
      usleep (1000);
    }
}

static void
check_cancelled (struct run *r, void *result)
{
  const char *name = r->point->name;
  ck_assert_msg (!atomic_load (&r->returned), "%s returned %ld (%s)", name,
                 r->result, strerror (r->error));
  ck_assert_msg (result == PTHREAD_CANCELED, "%s: joined %p, not "
                 "PTHREAD_CANCELED", name, result);
  ck_assert_msg (atomic_load (&r->cleaned), "%s: no cleanup handler ran",
                 name);
}

/* Whether the kernel has the call: epoll_pwait2 came with Linux 5.11, and
   qemu-user 7.2 lacks it.  */
static bool
kernel_has (const struct point *p)
{
  if (strcmp (p->name, "epoll_pwait2") != 0
      || syscall (SYS_epoll_pwait2, -1, NULL, 1, NULL, NULL, 0) != -1
      || errno != ENOSYS)
    return true;
  fprintf (stderr, "skipped: the kernel has no %s\n", p->name);
  return false;
}

/* A thread blocked in the call is cancelled by the main thread.  */
START_TEST (test_blocked_call_cancelled)
{
  const struct point *p = &points[_i];
  if (!kernel_has (p))
    return;
  struct fx fx;
  setup (&fx, p->setup, false);
  struct run r = { .point = p, .fx = &fx };
  pthread_t th;
  ck_assert_int_eq (pthread_create (&th, NULL, call_point, &r), 0);
  wait_blocked (&r);
  ck_assert_int_eq (pthread_cancel (th), 0);
  check_cancelled (&r, join_within (th, JOIN_SECONDS, p->name));
  teardown (&fx);
}
END_TEST

/* A cancel pending at the call acts before the call has any effect.  */
START_TEST (test_pending_cancel_acts_first)
{
  const struct point *p = &points[_i];
  struct fx fx;
  setup (&fx, p->setup, true);
  struct run r = { .point = p, .fx = &fx, .pending = true };
  pthread_t th;
  ck_assert_int_eq (pthread_create (&th, NULL, call_point, &r), 0);
  check_cancelled (&r, join_within (th, JOIN_SECONDS, p->name));
  check_untouched (&fx, p->name);
  teardown (&fx);
}
END_TEST

/* --- disabled cancellation, completed reads ------------------------------ */

struct reader
{
  int fd;
  _Atomic int tid;
  _Atomic int got;        /* bytes read */
  char first;
  ssize_t first_result;
  _Atomic bool enabled_again;
  _Atomic bool returned;
  _Atomic bool cleaned;
};

static void
reader_cleanup (void *arg)
{
  struct reader *r = arg;
  atomic_store (&r->cleaned, true);
}

/* Blocks in read with cancellation disabled, enables it again, then
   blocks in read again.  */
static void *
read_disabled_then_enabled (void *arg)
{
  struct reader *r = arg;
  pthread_cleanup_push (reader_cleanup, r);
  pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, NULL);
  atomic_store (&r->tid, current_tid ());
  r->first_result = read (r->fd, &r->first, 1);
  if (r->first_result == 1)
    atomic_fetch_add (&r->got, 1);
  pthread_setcancelstate (PTHREAD_CANCEL_ENABLE, NULL);
  atomic_store (&r->enabled_again, true);
  char c;
  if (read (r->fd, &c, 1) == 1)
    atomic_fetch_add (&r->got, 1);
  atomic_store (&r->returned, true);
  pthread_cleanup_pop (0);
  return NULL;
}

START_TEST (test_disabled_not_interrupted)
{
  int p[2];
  ck_assert_int_eq (pipe (p), 0);
  struct reader r = { .fd = p[0] };
  pthread_t th;
  ck_assert_int_eq (pthread_create (&th, NULL, read_disabled_then_enabled,
                                    &r), 0);
  while (atomic_load (&r.tid) == 0)
    usleep (100);
  wait_until_sleeping (atomic_load (&r.tid));
  ck_assert_int_eq (pthread_cancel (th), 0);
  /* A generous pause: the read must still be blocked.  */
  usleep (200000);
  wait_until_sleeping (atomic_load (&r.tid));
  ck_assert (!atomic_load (&r.enabled_again));
  ck_assert_int_eq (write (p[1], "z", 1), 1);
  void *result = join_within (th, JOIN_SECONDS, "read");
  ck_assert_ptr_eq (result, PTHREAD_CANCELED);
  ck_assert_int_eq (r.first_result, 1);
  ck_assert_int_eq (r.first, 'z');
  ck_assert (atomic_load (&r.enabled_again));
  ck_assert (!atomic_load (&r.returned));
  ck_assert (atomic_load (&r.cleaned));
  ck_assert_int_eq (atomic_load (&r.got), 1);
}
END_TEST

/* Reads and counts bytes until cancelled: only read is a cancellation
   point.  */
static void *
read_and_count (void *arg)
{
  struct reader *r = arg;
  pthread_cleanup_push (reader_cleanup, r);
  atomic_store (&r->tid, current_tid ());
  for (;;)
    {
      char c;
      if (read (r->fd, &c, 1) == 1)
        atomic_fetch_add (&r->got, 1);
    }
  pthread_cleanup_pop (0);
  return NULL;
}

/* The data is read, the thread reaches its next read and is cancelled
   there: nothing lost.  */
START_TEST (test_read_then_cancel_keeps_data)
{
  int p[2];
  ck_assert_int_eq (pipe (p), 0);
  struct reader r = { .fd = p[0] };
  pthread_t th;
  ck_assert_int_eq (pthread_create (&th, NULL, read_and_count, &r), 0);
  while (atomic_load (&r.tid) == 0)
    usleep (100);
  wait_until_sleeping (atomic_load (&r.tid));
  ck_assert_int_eq (write (p[1], "ab", 2), 2);
  while (atomic_load (&r.got) < 2)
    usleep (100);
  wait_until_sleeping (atomic_load (&r.tid));
  ck_assert_int_eq (pthread_cancel (th), 0);
  ck_assert_ptr_eq (join_within (th, JOIN_SECONDS, "read"), PTHREAD_CANCELED);
  ck_assert (atomic_load (&r.cleaned));
  ck_assert_int_eq (atomic_load (&r.got), 2);
  ck_assert_int_eq (bytes_queued (p[0]), 0);
  close (p[0]);
  close (p[1]);
}
END_TEST

#define RACE_ROUNDS 300

/* A write and a cancel race with a blocked (or about to block) read:
   the byte is either read and counted, or still in the pipe.  glibc 2.36
   can lose it: its cancel may act after the read returned the byte.  */
START_TEST (test_cancel_racing_read_loses_nothing)
{
  int completed = 0, before = 0;
  for (int i = 0; i < RACE_ROUNDS; i++)
    {
      int p[2];
      ck_assert_int_eq (pipe (p), 0);
      struct reader r = { .fd = p[0] };
      pthread_t th;
      ck_assert_int_eq (pthread_create (&th, NULL, read_and_count, &r), 0);
      while (atomic_load (&r.tid) == 0)
        sched_yield ();
      if (i % 2 == 0)
        wait_until_sleeping (atomic_load (&r.tid));
      /* Half the rounds write first, half cancel first: then the signal
         and the data reach the blocked read together.  */
      bool write_first = i % 4 < 2;
      if (write_first)
        ck_assert_int_eq (write (p[1], "x", 1), 1);
      for (volatile int spin = 0; spin < (i / 4 % 16) * 200; spin++)
        ;
      ck_assert_int_eq (pthread_cancel (th), 0);
      if (!write_first)
        ck_assert_int_eq (write (p[1], "x", 1), 1);
      ck_assert_ptr_eq (join_within (th, JOIN_SECONDS, "read"),
                        PTHREAD_CANCELED);
      int got = atomic_load (&r.got), left = bytes_queued (p[0]);
      ck_assert_msg (got + left == 1, "round %d: read %d, %d left: a byte "
                     "was lost", i, got, left);
      completed += got;
      before += left;
      close (p[0]);
      close (p[1]);
    }
  fprintf (stderr, "cancel-points: %d reads completed before the cancel, "
           "%d cancelled before reading\n", completed, before);
}
END_TEST

/* sem_open is no cancellation point (as in glibc), although it opens,
   writes and closes files.  */
static void *
sem_open_with_cancel_pending (void *arg)
{
  struct run *r = arg;
  pthread_cleanup_push (note_cleanup, r);
  pthread_cancel (pthread_self ());
  char name[64];
  snprintf (name, sizeof name, "/xp-cancel-points-%d", (int) getpid ());
  sem_t *sem = sem_open (name, O_CREAT | O_EXCL, 0600, 1);
  r->result = sem != SEM_FAILED;
  r->error = errno;
  atomic_store (&r->returned, true);
  if (sem != SEM_FAILED)
    sem_close (sem);
  pthread_testcancel ();
  pthread_cleanup_pop (0);
  return NULL;
}

START_TEST (test_sem_open_not_a_point)
{
  char name[64];
  snprintf (name, sizeof name, "/xp-cancel-points-%d", (int) getpid ());
  sem_unlink (name);
  struct run r = { 0 };
  pthread_t th;
  ck_assert_int_eq (pthread_create (&th, NULL, sem_open_with_cancel_pending,
                                    &r), 0);
  ck_assert_ptr_eq (join_within (th, JOIN_SECONDS, "sem_open"),
                    PTHREAD_CANCELED);
  ck_assert (atomic_load (&r.returned));
  ck_assert_msg (r.result == 1, "sem_open failed: %s", strerror (r.error));
  ck_assert (atomic_load (&r.cleaned));
  ck_assert_int_eq (sem_unlink (name), 0);
}
END_TEST

/* --- aio_suspend ---------------------------------------------------------- */

/* A read of an empty pipe submitted with aio_read: glibc's helper thread
   blocks in it until a byte comes, so aio_suspend on it blocks.  */
struct aio_fx
{
  int pipe[2];
  char byte;
  struct aiocb cb;
};

static void
aio_start (struct aio_fx *a)
{
  memset (a, 0, sizeof *a);
  ck_assert_int_eq (pipe2 (a->pipe, O_CLOEXEC), 0);
  a->cb.aio_fildes = a->pipe[0];
  a->cb.aio_buf = &a->byte;
  a->cb.aio_nbytes = 1;
  a->cb.aio_sigevent.sigev_notify = SIGEV_NONE;
  ck_assert_int_eq (aio_read (&a->cb), 0);
}

/* The request was untouched by the cancelled waiters, and glibc's request
   list still works: the byte written now completes it, and aio_suspend
   here sees that.  */
static void
aio_finish (struct aio_fx *a)
{
  ck_assert_int_eq (aio_error (&a->cb), EINPROGRESS);
  ck_assert_int_eq (write (a->pipe[1], "z", 1), 1);
  const struct aiocb *list[] = { &a->cb };
  struct timespec watchdog = { JOIN_SECONDS, 0 };
  while (aio_error (&a->cb) == EINPROGRESS)
    ck_assert_int_eq (aio_suspend (list, 1, &watchdog), 0);
  ck_assert_int_eq (aio_return (&a->cb), 1);
  ck_assert_int_eq (a->byte, 'z');
  close (a->pipe[0]);
  close (a->pipe[1]);
}

struct aio_waiter
{
  struct aio_fx *fx;
  bool pending;
  _Atomic int tid;
  _Atomic bool returned;
  _Atomic bool cleaned;
};

static void
aio_waiter_cleanup (void *arg)
{
  struct aio_waiter *w = arg;
  atomic_store (&w->cleaned, true);
}

static void *
aio_wait (void *arg)
{
  struct aio_waiter *w = arg;
  pthread_cleanup_push (aio_waiter_cleanup, w);
  if (w->pending)
    {
      pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, NULL);
      pthread_cancel (pthread_self ());
      pthread_setcancelstate (PTHREAD_CANCEL_ENABLE, NULL);
    }
  atomic_store (&w->tid, current_tid ());
  const struct aiocb *list[] = { &w->fx->cb };
  aio_suspend (list, 1, NULL);
  atomic_store (&w->returned, true);
  pthread_cleanup_pop (0);
  return NULL;
}

static void
check_aio_cancelled (struct aio_waiter *w, pthread_t th)
{
  ck_assert_ptr_eq (join_within (th, JOIN_SECONDS, "aio_suspend"),
                    PTHREAD_CANCELED);
  ck_assert (!atomic_load (&w->returned));
  ck_assert (atomic_load (&w->cleaned));
}

/* Blocked in aio_suspend, then cancelled; or with a cancel pending at the
   call (looped).  */
START_TEST (test_aio_suspend_cancelled)
{
  struct aio_fx fx;
  aio_start (&fx);
  struct aio_waiter w = { .fx = &fx, .pending = _i == 1 };
  pthread_t th;
  ck_assert_int_eq (pthread_create (&th, NULL, aio_wait, &w), 0);
  if (!w.pending)
    {
      while (atomic_load (&w.tid) == 0)
        usleep (100);
      wait_until_sleeping (atomic_load (&w.tid));
      ck_assert_int_eq (pthread_cancel (th), 0);
    }
  check_aio_cancelled (&w, th);
  aio_finish (&fx);
}
END_TEST

/* Cancels at random moments of the call, before and after glibc reaches
   its wait: each must act, and glibc's request list stays sound.  */
START_TEST (test_aio_suspend_cancel_races)
{
  struct aio_fx fx;
  aio_start (&fx);
  unsigned seed = (unsigned) getpid ();
  for (int round = 0; round < 300; round++)
    {
      struct aio_waiter w = { .fx = &fx };
      pthread_t th;
      ck_assert_int_eq (pthread_create (&th, NULL, aio_wait, &w), 0);
      while (atomic_load (&w.tid) == 0)
        ;
      int delay = rand_r (&seed) % 200;
      if (delay > 0)
        usleep ((unsigned) delay);
      ck_assert_int_eq (pthread_cancel (th), 0);
      check_aio_cancelled (&w, th);
    }
  aio_finish (&fx);
}
END_TEST

/* --- plain behaviour: signals -------------------------------------------- */

struct blocked_call
{
  long (*call) (struct blocked_call *);
  int fd;
  _Atomic int tid;
  long result;
  int error;
  double elapsed;
  struct timeval tv;
  _Atomic bool returned;
};

static double
now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static void *
run_blocked_call (void *arg)
{
  struct blocked_call *b = arg;
  atomic_store (&b->tid, current_tid ());
  double start = now ();
  b->result = b->call (b);
  b->error = errno;
  b->elapsed = now () - start;
  atomic_store (&b->returned, true);
  return NULL;
}

static void
start_blocked (pthread_t *th, struct blocked_call *b)
{
  ck_assert_int_eq (pthread_create (th, NULL, run_blocked_call, b), 0);
  while (atomic_load (&b->tid) == 0)
    usleep (100);
  wait_until_sleeping (atomic_load (&b->tid));
}

static long
bc_read (struct blocked_call *b)
{
  char c = 0;
  long r = read (b->fd, &c, 1);
  return r == 1 ? c : r;
}

static long
bc_recv (struct blocked_call *b)
{
  char c = 0;
  long r = recv (b->fd, &c, 1, 0);
  return r == 1 ? c : r;
}

static long
bc_poll (struct blocked_call *b)
{
  struct pollfd p = { .fd = b->fd, .events = POLLIN };
  return poll (&p, 1, -1);
}

static long
bc_pause (struct blocked_call *b)
{
  (void) b;
  return pause ();
}

static long
bc_sleep (struct blocked_call *b)
{
  (void) b;
  return sleep (100);
}

static long
bc_select (struct blocked_call *b)
{
  b->tv = (struct timeval) { .tv_sec = 100 };
  return select (0, NULL, NULL, NULL, &b->tv);
}

static long
bc_sigwait (struct blocked_call *b)
{
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGUSR2);
  int sig = 0;
  int err = sigwait (&set, &sig);
  return err != 0 ? -err : sig;
}

static const struct
{
  const char *name;
  long (*call) (struct blocked_call *);
  bool socket;
} eintr_calls[] = {
  { "read", bc_read, false }, { "recv", bc_recv, true },
  { "poll", bc_poll, false }, { "pause", bc_pause, false },
};

/* A handler without SA_RESTART: the call fails with EINTR.  */
START_TEST (test_eintr_without_sa_restart)
{
  set_handler (SIGUSR1, count_usr1, 0);
  int fds[2];
  if (eintr_calls[_i].socket)
    ck_assert_int_eq (socketpair (AF_UNIX, SOCK_STREAM, 0, fds), 0);
  else
    ck_assert_int_eq (pipe (fds), 0);
  struct blocked_call b = { .call = eintr_calls[_i].call, .fd = fds[0] };
  pthread_t th;
  start_blocked (&th, &b);
  ck_assert_int_eq (pthread_kill (th, SIGUSR1), 0);
  ck_assert_ptr_eq (join_within (th, JOIN_SECONDS, eintr_calls[_i].name),
                    NULL);
  ck_assert_msg (b.result == -1 && b.error == EINTR, "%s: %ld (%s)",
                 eintr_calls[_i].name, b.result, strerror (b.error));
  ck_assert_int_eq (atomic_load (&usr1_handled), 1);
}
END_TEST

/* A handler with SA_RESTART: read and recv go on waiting and return the
   data that comes later; poll and pause fail with EINTR all the same, as
   Linux does.  */
START_TEST (test_sa_restart)
{
  set_handler (SIGUSR1, count_usr1, SA_RESTART);
  int fds[2];
  bool socket = eintr_calls[_i].socket;
  if (socket)
    ck_assert_int_eq (socketpair (AF_UNIX, SOCK_STREAM, 0, fds), 0);
  else
    ck_assert_int_eq (pipe (fds), 0);
  struct blocked_call b = { .call = eintr_calls[_i].call, .fd = fds[0] };
  bool restarts = eintr_calls[_i].call == bc_read
                  || eintr_calls[_i].call == bc_recv;
  pthread_t th;
  start_blocked (&th, &b);
  ck_assert_int_eq (pthread_kill (th, SIGUSR1), 0);
  while (atomic_load (&usr1_handled) == 0)
    usleep (100);
  if (restarts)
    {
      wait_until_sleeping (atomic_load (&b.tid));
      ck_assert (!atomic_load (&b.returned));
      ck_assert_int_eq (write (fds[1], "r", 1), 1);
    }
  ck_assert_ptr_eq (join_within (th, JOIN_SECONDS, eintr_calls[_i].name),
                    NULL);
  if (restarts)
    ck_assert_int_eq (b.result, 'r');
  else
    ck_assert_msg (b.result == -1 && b.error == EINTR, "%s: %ld (%s)",
                   eintr_calls[_i].name, b.result, strerror (b.error));
}
END_TEST

/* sleep interrupted by a handler returns the whole seconds not slept.  */
START_TEST (test_sleep_returns_unslept_seconds)
{
  set_handler (SIGUSR1, count_usr1, SA_RESTART);
  struct blocked_call b = { .call = bc_sleep };
  pthread_t th;
  start_blocked (&th, &b);
  ck_assert_int_eq (pthread_kill (th, SIGUSR1), 0);
  join_within (th, JOIN_SECONDS, "sleep");
  ck_assert_msg (b.result <= 100 && b.result >= 100 - (long) b.elapsed - 1,
                 "sleep (100) interrupted after %.3f s returned %ld",
                 b.elapsed, b.result);
  ck_assert_int_eq (b.error, EINTR);
}
END_TEST

/* select gives the time not slept back in its timeout.  */
START_TEST (test_select_updates_timeout)
{
  XP_TEST_SKIP_EMULATED ("an interrupted pselect6 does not give back the time left");
  struct timeval tv = { .tv_sec = 0, .tv_usec = 20000 };
  ck_assert_int_eq (select (0, NULL, NULL, NULL, &tv), 0);
  ck_assert_int_eq (tv.tv_sec, 0);
  ck_assert_int_eq (tv.tv_usec, 0);

  set_handler (SIGUSR1, count_usr1, SA_RESTART);
  struct blocked_call b = { .call = bc_select };
  pthread_t th;
  start_blocked (&th, &b);
  ck_assert_int_eq (pthread_kill (th, SIGUSR1), 0);
  join_within (th, JOIN_SECONDS, "select");
  ck_assert_int_eq (b.result, -1);
  ck_assert_int_eq (b.error, EINTR);
  double left = (double) b.tv.tv_sec + (double) b.tv.tv_usec * 1e-6;
  ck_assert_msg (left < 100 && left >= 100 - b.elapsed - 1
                 && b.tv.tv_usec < 1000000,
                 "select interrupted after %.3f s left %ld.%06ld s",
                 b.elapsed, (long) b.tv.tv_sec, (long) b.tv.tv_usec);
}
END_TEST

/* sigwait waits on through a handled signal, and returns the signal.  */
START_TEST (test_sigwait_retries_after_eintr)
{
  set_handler (SIGUSR1, count_usr1, 0);
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGUSR2);
  ck_assert_int_eq (pthread_sigmask (SIG_BLOCK, &set, NULL), 0);
  struct blocked_call b = { .call = bc_sigwait };
  pthread_t th;
  start_blocked (&th, &b);
  ck_assert_int_eq (pthread_kill (th, SIGUSR1), 0);
  while (atomic_load (&usr1_handled) == 0)
    usleep (100);
  wait_until_sleeping (atomic_load (&b.tid));
  ck_assert (!atomic_load (&b.returned));
  ck_assert_int_eq (pthread_kill (th, SIGUSR2), 0);
  join_within (th, JOIN_SECONDS, "sigwait");
  ck_assert_int_eq (b.result, SIGUSR2);
}
END_TEST

/* --- plain behaviour: the same as glibc ---------------------------------- */

/* The functions compared; glibc's is the default version, the one a
   program built against it binds to.  */
#define COMPARED(X) \
  X (read) X (write) X (close) X (fsync) X (fcntl) X (accept) X (accept4) \
  X (connect) X (recv) X (recvfrom) X (send) X (sendmmsg) X (recvmmsg) \
  X (poll) X (ppoll) X (select) X (pselect) X (epoll_wait) \
  X (clock_nanosleep) X (nanosleep) X (sleep) X (usleep) X (wait) \
  X (waitpid) X (waitid) X (wait3) X (wait4) X (open) X (openat) \
  X (creat) X (lockf) X (sigtimedwait) X (sigwaitinfo) X (sigwait) \
  X (msgrcv) X (msgsnd) X (mq_receive) X (mq_timedreceive) X (tcdrain) \
  X (preadv2) X (pwritev2) X (__read_chk) X (__recvfrom_chk) \
  X (__poll_chk)

struct fns
{
#define MEMBER(name) __typeof (name) *name;
  COMPARED (MEMBER)
#undef MEMBER
};

static const struct fns xpthread_fns = {
#define OURS(name) .name = name,
  COMPARED (OURS)
#undef OURS
};

static struct fns
glibc_fns (void)
{
  void *libc = dlopen ("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ck_assert (libc != NULL);
  struct fns f;
#define THEIRS(name) \
  f.name = (__typeof (f.name)) dlsym (libc, #name); \
  ck_assert_msg (f.name != NULL, "glibc has no %s", #name); \
  ck_assert_msg ((void *) f.name != (void *) xpthread_fns.name, \
                 "%s: glibc's is xpthread's", #name);
  COMPARED (THEIRS)
#undef THEIRS
  return f;
}

/* What a scenario observed, to compare between the implementations.  */
struct outcome
{
  int n;
  const char *what[96];
  long value[96];
};

static void
note (struct outcome *o, const char *what, long value)
{
  ck_assert_int_lt (o->n, 96);
  o->what[o->n] = what;
  o->value[o->n++] = value;
}

#define NOTE(o, expr) note ((o), #expr, (long) (expr))
/* A call's result and errno (errno first set to a canary).  */
#define NOTE_CALL(o, call) \
  do { errno = 12345; note ((o), #call, (long) (call)); \
       note ((o), "errno after " #call, errno); } while (0)

static void
compare (void (*scenario) (const struct fns *, struct outcome *),
         const char *name)
{
  struct fns glibc = glibc_fns ();
  static struct outcome ours, theirs;
  memset (&ours, 0, sizeof ours);
  memset (&theirs, 0, sizeof theirs);
  scenario (&xpthread_fns, &ours);
  scenario (&glibc, &theirs);
  ck_assert_int_eq (ours.n, theirs.n);
  for (int i = 0; i < ours.n; i++)
    ck_assert_msg (ours.value[i] == theirs.value[i],
                   "%s: %s: xpthread %ld, glibc %ld", name, ours.what[i],
                   ours.value[i], theirs.value[i]);
}

static void
scenario_bad_descriptors (const struct fns *f, struct outcome *o)
{
  char buf[4];
  struct epoll_event ev;
  NOTE_CALL (o, f->read (-1, buf, 1));
  NOTE_CALL (o, f->write (-1, buf, 1));
  NOTE_CALL (o, f->close (-1));
  NOTE_CALL (o, f->fsync (-1));
  NOTE_CALL (o, f->fcntl (-1, F_GETFD));
  NOTE_CALL (o, f->fcntl (-1, F_GETOWN));
  NOTE_CALL (o, f->accept (-1, NULL, NULL));
  NOTE_CALL (o, f->recv (-1, buf, 1, 0));
  NOTE_CALL (o, f->send (-1, buf, 1, 0));
  NOTE_CALL (o, f->epoll_wait (-1, &ev, 1, 0));
  NOTE_CALL (o, f->tcdrain (-1));
  NOTE_CALL (o, f->lockf (-1, F_TLOCK, 0));
  NOTE_CALL (o, f->__read_chk (-1, buf, 1, sizeof buf));
  struct pollfd p = { .fd = 1000, .events = POLLIN };
  NOTE_CALL (o, f->poll (&p, 1, 0));
  NOTE (o, p.revents);
  fd_set in;
  FD_ZERO (&in);
  FD_SET (1000, &in);
  struct timeval tv = { 0, 0 };
  NOTE_CALL (o, f->select (1001, &in, NULL, NULL, &tv));
  int pipefd[2];
  ck_assert_int_eq (pipe (pipefd), 0);
  NOTE_CALL (o, f->tcdrain (pipefd[0]));
  NOTE_CALL (o, f->accept (pipefd[0], NULL, NULL));
  close (pipefd[0]);
  close (pipefd[1]);
}

START_TEST (test_same_as_glibc_bad_descriptors)
{
  compare (scenario_bad_descriptors, "bad descriptors");
}
END_TEST

static void
scenario_fcntl (const struct fns *f, struct outcome *o)
{
  int s = socket (AF_UNIX, SOCK_STREAM, 0);
  ck_assert_int_ge (s, 0);
  NOTE_CALL (o, f->fcntl (s, F_SETOWN, -getpgrp ()));
  NOTE_CALL (o, f->fcntl (s, F_GETOWN) == -getpgrp ());
  NOTE_CALL (o, f->fcntl (s, F_SETOWN, getpid ()));
  NOTE_CALL (o, f->fcntl (s, F_GETOWN) == getpid ());
  NOTE_CALL (o, f->fcntl (s, F_GETFL));
  NOTE_CALL (o, f->fcntl (s, F_SETFL, O_NONBLOCK));
  NOTE_CALL (o, f->fcntl (s, F_GETFL));
  int copy = f->fcntl (s, F_DUPFD_CLOEXEC, 100);
  NOTE (o, copy >= 100);
  NOTE_CALL (o, f->fcntl (copy, F_GETFD));
  NOTE_CALL (o, f->fcntl (s, 12345));
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  NOTE_CALL (o, f->fcntl (s, F_SETLKW, &fl));
  close (copy);
  close (s);
}

START_TEST (test_same_as_glibc_fcntl)
{
  compare (scenario_fcntl, "fcntl");
}
END_TEST

static void
scenario_sleeps (const struct fns *f, struct outcome *o)
{
  struct timespec zero = { 0, 0 }, bad = { 0, 1000000000 }, rem;
  NOTE_CALL (o, f->clock_nanosleep (CLOCK_THREAD_CPUTIME_ID, 0, &zero,
                                    NULL));
  NOTE_CALL (o, f->clock_nanosleep (CLOCK_PROCESS_CPUTIME_ID, TIMER_ABSTIME,
                                    &zero, NULL));
  NOTE_CALL (o, f->clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &zero,
                                    NULL));
  NOTE_CALL (o, f->clock_nanosleep (CLOCK_MONOTONIC, 0, &bad, NULL));
  NOTE_CALL (o, f->clock_nanosleep (12345, 0, &zero, NULL));
  NOTE_CALL (o, f->clock_nanosleep (CLOCK_REALTIME, 0, &zero, &rem));
  NOTE_CALL (o, f->nanosleep (&bad, NULL));
  NOTE_CALL (o, f->nanosleep (&zero, &rem));
  struct timespec negative = { -1, 0 };
  NOTE_CALL (o, f->nanosleep (&negative, NULL));
  NOTE_CALL (o, f->sleep (0));
  NOTE_CALL (o, f->usleep (0));
  NOTE_CALL (o, f->usleep (1));
}

START_TEST (test_same_as_glibc_sleeps)
{
  compare (scenario_sleeps, "sleeps");
}
END_TEST

static void
scenario_poll_select (const struct fns *f, struct outcome *o)
{
  int p[2];
  ck_assert_int_eq (pipe (p), 0);
  fd_set in;
  struct timeval tv = { 0, -1 };
  NOTE_CALL (o, f->select (0, NULL, NULL, NULL, &tv));
  NOTE (o, tv.tv_usec);
  tv = (struct timeval) { -1, 0 };
  NOTE_CALL (o, f->select (0, NULL, NULL, NULL, &tv));
  tv = (struct timeval) { 0, 0 };
  FD_ZERO (&in);
  FD_SET (p[0], &in);
  NOTE_CALL (o, f->select (p[0] + 1, &in, NULL, NULL, &tv));
  NOTE (o, FD_ISSET (p[0], &in) != 0);
  ck_assert_int_eq (write (p[1], "x", 1), 1);
  /* Readable: the timeout comes back normalised, less what passed.  */
  tv = (struct timeval) { 0, 1500000 };
  FD_ZERO (&in);
  FD_SET (p[0], &in);
  NOTE_CALL (o, f->select (p[0] + 1, &in, NULL, NULL, &tv));
  NOTE (o, tv.tv_sec);
  NOTE (o, tv.tv_usec > 400000 && tv.tv_usec <= 500000);
  /* glibc takes tv_usec as 32 bits.  */
  tv = (struct timeval) { 0, (suseconds_t) 0x100000000 + 5 };
  FD_ZERO (&in);
  FD_SET (p[0], &in);
  NOTE_CALL (o, f->select (p[0] + 1, &in, NULL, NULL, &tv));
  NOTE (o, tv.tv_sec);
  struct timespec ts = { 5, 0 };
  FD_ZERO (&in);
  FD_SET (p[0], &in);
  NOTE_CALL (o, f->pselect (p[0] + 1, &in, NULL, NULL, &ts, NULL));
  NOTE (o, ts.tv_sec);
  NOTE (o, ts.tv_nsec);
  struct pollfd pfd = { .fd = p[0], .events = POLLIN };
  NOTE_CALL (o, f->ppoll (&pfd, 1, &ts, NULL));
  NOTE (o, ts.tv_sec);
  NOTE (o, pfd.revents);
  NOTE_CALL (o, f->poll (&pfd, 1, 0));
  NOTE_CALL (o, f->__poll_chk (&pfd, 1, 0, sizeof pfd));
  NOTE_CALL (o, f->poll (NULL, 0, 0));
  char c;
  NOTE_CALL (o, f->__read_chk (p[0], &c, 1, 1));
  NOTE (o, c);
  pfd.revents = 0;
  ts = (struct timespec) { 0, 0 };
  NOTE_CALL (o, f->ppoll (&pfd, 1, &ts, NULL));
  close (p[0]);
  close (p[1]);
}

START_TEST (test_same_as_glibc_poll_select)
{
  compare (scenario_poll_select, "poll and select");
}
END_TEST

static void
scenario_waits (const struct fns *f, struct outcome *o)
{
  int status = -1;
  siginfo_t si;
  struct rusage ru;
  NOTE_CALL (o, f->wait (&status));
  NOTE_CALL (o, f->waitpid (-1, &status, WNOHANG));
  NOTE_CALL (o, f->wait3 (&status, WNOHANG, &ru));
  NOTE_CALL (o, f->wait4 (-1, &status, 0, &ru));
  NOTE_CALL (o, f->waitid (P_ALL, 0, &si, WEXITED));
  NOTE_CALL (o, f->waitid (P_ALL, 0, &si, 0));
  NOTE_CALL (o, f->waitpid (-1, &status, 0x1000));
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (3);
  NOTE_CALL (o, f->waitpid (pid, &status, 0) == pid);
  NOTE (o, status);
  pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (4);
  memset (&si, 0, sizeof si);
  NOTE_CALL (o, f->waitid (P_PID, (id_t) pid, &si, WEXITED));
  NOTE (o, si.si_pid == pid);
  NOTE (o, si.si_code);
  NOTE (o, si.si_status);
  pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (5);
  NOTE_CALL (o, f->wait4 (pid, &status, 0, &ru) == pid);
  NOTE (o, status);
  pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (6);
  NOTE_CALL (o, f->wait3 (&status, 0, NULL) == pid);
  NOTE (o, status);
  pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (7);
  NOTE_CALL (o, f->wait (&status) == pid);
  NOTE (o, status);
}

START_TEST (test_same_as_glibc_waits)
{
  compare (scenario_waits, "waits");
}
END_TEST

static long
mode_of (int fd)
{
  struct stat st;
  if (fd < 0)
    return -1;
  ck_assert_int_eq (fstat (fd, &st), 0);
  close (fd);
  return st.st_mode & 07777;
}

static void
scenario_open (const struct fns *f, struct outcome *o)
{
  char missing[128], new[128];
  path_in_tmpdir (missing, sizeof missing, "missing");
  path_in_tmpdir (new, sizeof new, "new");
  umask (022);
  NOTE_CALL (o, f->open (missing, O_RDONLY));
  NOTE_CALL (o, mode_of (f->open (new, O_WRONLY | O_CREAT | O_EXCL, 0666)));
  NOTE_CALL (o, f->open (new, O_WRONLY | O_CREAT | O_EXCL, 0666));
  int fd = f->open (new, O_RDONLY, 0777);
  NOTE (o, fd >= 0);
  NOTE_CALL (o, f->fcntl (fd, F_GETFL));
  close (fd);
  unlink (new);
  NOTE_CALL (o, mode_of (f->open (tmpdir, O_TMPFILE | O_RDWR, 0640)));
  NOTE_CALL (o, mode_of (f->creat (new, 0604)));
  unlink (new);
  int dir = open (tmpdir, O_RDONLY | O_DIRECTORY);
  NOTE_CALL (o, mode_of (f->openat (dir, "new", O_RDWR | O_CREAT, 0660)));
  NOTE_CALL (o, f->openat (dir, "missing", O_RDONLY));
  NOTE_CALL (o, f->openat (-1, "missing", O_RDONLY));
  unlink (new);
  close (dir);
}

START_TEST (test_same_as_glibc_open)
{
  compare (scenario_open, "open");
}
END_TEST

static void
scenario_lockf (const struct fns *f, struct outcome *o)
{
  struct fx fx;
  setup (&fx, S_FILE, true);
  NOTE_CALL (o, f->lockf (fx.file, 99, 0));
  NOTE_CALL (o, f->lockf (fx.file, F_TEST, 0));
  NOTE_CALL (o, f->lockf (fx.file, F_TLOCK, 4));
  NOTE_CALL (o, f->lockf (fx.file, F_TEST, 0));
  NOTE_CALL (o, f->lockf (fx.file, F_ULOCK, 4));
  NOTE_CALL (o, f->lockf (fx.file, F_LOCK, 0));
  NOTE_CALL (o, f->lockf (fx.file, F_ULOCK, 0));
  fx.child = lock_holder (fx.file);
  NOTE_CALL (o, f->lockf (fx.file, F_TEST, 0));
  NOTE_CALL (o, f->lockf (fx.file, F_TLOCK, 0));
  teardown (&fx);
  close (fx.file);
}

START_TEST (test_same_as_glibc_lockf)
{
  compare (scenario_lockf, "lockf");
}
END_TEST

static void
scenario_signals (const struct fns *f, struct outcome *o)
{
  sigset_t usr1;
  sigemptyset (&usr1);
  sigaddset (&usr1, SIGUSR1);
  ck_assert_int_eq (pthread_sigmask (SIG_BLOCK, &usr1, NULL), 0);
  struct timespec zero = { 0, 0 };
  siginfo_t si;
  NOTE_CALL (o, f->sigtimedwait (&usr1, &si, &zero));
  /* raise is tgkill: SI_TKILL, which glibc reports as SI_USER.  */
  raise (SIGUSR1);
  memset (&si, 0, sizeof si);
  NOTE_CALL (o, f->sigtimedwait (&usr1, &si, &zero));
  NOTE (o, si.si_code);
  NOTE (o, si.si_pid == getpid ());
  raise (SIGUSR1);
  memset (&si, 0, sizeof si);
  NOTE_CALL (o, f->sigwaitinfo (&usr1, &si));
  NOTE (o, si.si_code);
  sigqueue (getpid (), SIGUSR1, (union sigval) { .sival_int = 42 });
  memset (&si, 0, sizeof si);
  NOTE_CALL (o, f->sigwaitinfo (&usr1, &si));
  NOTE (o, si.si_code);
  NOTE (o, si.si_value.sival_int);
  kill (getpid (), SIGUSR1);
  int sig = 0;
  NOTE_CALL (o, f->sigwait (&usr1, &sig));
  NOTE (o, sig);
  /* An error number, not -1 and errno.  */
  NOTE_CALL (o, f->sigwait ((const sigset_t *) 8, &sig));
  NOTE_CALL (o, f->sigtimedwait (&usr1, &si, &(struct timespec) { 0, -1 }));
  ck_assert_int_eq (pthread_sigmask (SIG_UNBLOCK, &usr1, NULL), 0);
}

START_TEST (test_same_as_glibc_signals)
{
  compare (scenario_signals, "signals");
}
END_TEST

static void
scenario_ipc (const struct fns *f, struct outcome *o)
{
  int q = msgget (IPC_PRIVATE, 0600);
  ck_assert_int_ge (q, 0);
  struct msg8 m = { .type = 3, .text = "abcdefg" };
  NOTE_CALL (o, f->msgrcv (q, &m, sizeof m.text, 0, IPC_NOWAIT));
  NOTE_CALL (o, f->msgsnd (q, &m, 5, 0));
  NOTE_CALL (o, f->msgrcv (q, &m, 2, 0, IPC_NOWAIT));
  NOTE_CALL (o, f->msgrcv (q, &m, 2, 0, IPC_NOWAIT | MSG_NOERROR));
  NOTE (o, m.type);
  NOTE_CALL (o, f->msgsnd (q, &m, 5, 0));
  NOTE_CALL (o, f->msgrcv (q, &m, sizeof m.text, 4, IPC_NOWAIT));
  NOTE_CALL (o, f->msgsnd (q, &m, 1, 0));
  m.type = 0;
  NOTE_CALL (o, f->msgsnd (q, &m, 1, 0));
  msgctl (q, IPC_RMID, NULL);
  NOTE_CALL (o, f->msgrcv (q, &m, sizeof m.text, 0, IPC_NOWAIT));

  struct fx fx;
  setup (&fx, S_MQ_IN, false);
  char buf[16];
  unsigned prio = 0;
  struct timespec past = { 1, 0 }, bad = { 1, -1 };
  NOTE_CALL (o, f->mq_timedreceive (fx.mq, buf, sizeof buf, &prio, &past));
  NOTE_CALL (o, f->mq_timedreceive (fx.mq, buf, sizeof buf, &prio, &bad));
  ck_assert_int_eq (mq_send (fx.mq, "0123456789", 10, 3), 0);
  NOTE_CALL (o, f->mq_receive (fx.mq, buf, 8, &prio));
  NOTE_CALL (o, f->mq_receive (fx.mq, buf, sizeof buf, &prio));
  NOTE (o, prio);
  NOTE_CALL (o, f->mq_receive ((mqd_t) -1, buf, sizeof buf, &prio));
  mq_close (fx.mq);
}

START_TEST (test_same_as_glibc_ipc)
{
  compare (scenario_ipc, "message queues");
}
END_TEST

static void
scenario_sockets (const struct fns *f, struct outcome *o)
{
  int s[2];
  ck_assert_int_eq (socketpair (AF_UNIX, SOCK_DGRAM, 0, s), 0);
  char buf[8];
  NOTE_CALL (o, f->send (s[0], "abc", 3, 0));
  NOTE_CALL (o, f->recv (s[1], buf, sizeof buf, MSG_PEEK));
  struct sockaddr_un from;
  socklen_t fromlen = sizeof from;
  NOTE_CALL (o, f->recvfrom (s[1], buf, 2, 0, (struct sockaddr *) &from,
                             &fromlen));
  NOTE (o, fromlen);
  NOTE_CALL (o, f->recv (s[1], buf, sizeof buf, MSG_DONTWAIT));
  struct iovec iov[2] = { { (void *) "xy", 2 }, { (void *) "z", 1 } };
  struct mmsghdr mm[2] = {
    { .msg_hdr = { .msg_iov = &iov[0], .msg_iovlen = 1 } },
    { .msg_hdr = { .msg_iov = &iov[1], .msg_iovlen = 1 } },
  };
  NOTE_CALL (o, f->sendmmsg (s[0], mm, 2, 0));
  NOTE (o, mm[0].msg_len);
  char in0[4], in1[4];
  struct iovec riov[2] = { { in0, sizeof in0 }, { in1, sizeof in1 } };
  struct mmsghdr rm[2] = {
    { .msg_hdr = { .msg_iov = &riov[0], .msg_iovlen = 1 } },
    { .msg_hdr = { .msg_iov = &riov[1], .msg_iovlen = 1 } },
  };
  struct timespec tmo = { 5, 0 };
  NOTE_CALL (o, f->recvmmsg (s[1], rm, 2, 0, &tmo));
  NOTE (o, rm[1].msg_len);
  NOTE (o, tmo.tv_sec <= 5);
  NOTE_CALL (o, f->__recvfrom_chk (s[1], buf, 2, sizeof buf, MSG_DONTWAIT,
                                   NULL, NULL));
  NOTE_CALL (o, f->accept4 (s[0], NULL, NULL, 0x1234));
  struct sockaddr_un nowhere = { .sun_family = AF_UNIX };
  path_in_tmpdir (nowhere.sun_path, sizeof nowhere.sun_path, "missing");
  int c = socket (AF_UNIX, SOCK_STREAM, 0);
  NOTE_CALL (o, f->connect (c, (struct sockaddr *) &nowhere, sizeof nowhere));
  close (c);
  close (s[0]);
  close (s[1]);
}

START_TEST (test_same_as_glibc_sockets)
{
  compare (scenario_sockets, "sockets");
}
END_TEST

static void
scenario_vectors (const struct fns *f, struct outcome *o)
{
  struct fx fx;
  setup (&fx, S_FILE, true);
  char c;
  struct iovec iov = { &c, 1 };
  NOTE_CALL (o, f->preadv2 (fx.file, &iov, 1, 3, 0));
  NOTE (o, c);
  NOTE_CALL (o, f->preadv2 (fx.file, &iov, 1, -1, 0));
  NOTE (o, c);
  NOTE_CALL (o, f->preadv2 (fx.file, &iov, 1, 0, 0x7fffffff));
  NOTE_CALL (o, f->preadv2 (fx.file, &iov, 1, -2, 0));
  NOTE_CALL (o, f->pwritev2 (fx.file, &iov, 1, 0, 0x7fffffff));
  NOTE_CALL (o, f->pwritev2 (fx.file, &iov, 1, 20, 0));
  teardown (&fx);
  close (fx.file);
}

START_TEST (test_same_as_glibc_vectors)
{
  compare (scenario_vectors, "preadv2 and pwritev2");
}
END_TEST

/* --- _FORTIFY_SOURCE checks ---------------------------------------------- */

START_TEST (test_read_chk_overflow_aborts)
{
  char buf[1];
  __read_chk (0, buf, 2, sizeof buf);
}
END_TEST

START_TEST (test_recv_chk_overflow_aborts)
{
  char buf[1];
  __recv_chk (0, buf, 2, sizeof buf, 0);
}
END_TEST

START_TEST (test_poll_chk_overflow_aborts)
{
  struct pollfd p[1] = { { .fd = -1 } };
  __poll_chk (p, 2, 0, sizeof p);
}
END_TEST

START_TEST (test_open_2_with_o_creat_aborts)
{
  char path[128];
  path_in_tmpdir (path, sizeof path, "new");
  __open_2 (path, O_WRONLY | O_CREAT);
}
END_TEST

START_TEST (test_openat_2_with_o_tmpfile_aborts)
{
  __openat_2 (AT_FDCWD, tmpdir, O_RDWR | O_TMPFILE);
}
END_TEST

/* --- the suite ----------------------------------------------------------- */

static TCase *
tcase_with_resources (Suite *s, const char *name)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_unchecked_fixture (tc, make_resources, remove_resources);
  suite_add_tcase (s, tc);
  return tc;
}

int
main (void)
{
  Suite *s = suite_create ("cancel-points");
  TCase *tc = tcase_with_resources (s, "binding");
  tcase_add_test (tc, test_interposers_are_xpthread);

  tc = tcase_with_resources (s, "blocked");
  tcase_add_loop_test (tc, test_blocked_call_cancelled, 0, n_blocking ());

  tc = tcase_with_resources (s, "pending");
  tcase_add_loop_test (tc, test_pending_cancel_acts_first, 0, N_POINTS);

  tc = tcase_with_resources (s, "data");
  tcase_add_test (tc, test_disabled_not_interrupted);
  tcase_add_test (tc, test_read_then_cancel_keeps_data);
  tcase_add_test (tc, test_cancel_racing_read_loses_nothing);
  tcase_add_test (tc, test_sem_open_not_a_point);
  tcase_add_loop_test (tc, test_aio_suspend_cancelled, 0, 2);
  tcase_add_test (tc, test_aio_suspend_cancel_races);

  tc = tcase_with_resources (s, "signals");
  int n_eintr = (int) (sizeof eintr_calls / sizeof eintr_calls[0]);
  tcase_add_loop_test (tc, test_eintr_without_sa_restart, 0, n_eintr);
  tcase_add_loop_test (tc, test_sa_restart, 0, n_eintr);
  tcase_add_test (tc, test_sleep_returns_unslept_seconds);
  tcase_add_test (tc, test_select_updates_timeout);
  tcase_add_test (tc, test_sigwait_retries_after_eintr);

  tc = tcase_with_resources (s, "glibc");
  tcase_add_test (tc, test_same_as_glibc_bad_descriptors);
  tcase_add_test (tc, test_same_as_glibc_fcntl);
  tcase_add_test (tc, test_same_as_glibc_sleeps);
  tcase_add_test (tc, test_same_as_glibc_poll_select);
  tcase_add_test (tc, test_same_as_glibc_waits);
  tcase_add_test (tc, test_same_as_glibc_open);
  tcase_add_test (tc, test_same_as_glibc_lockf);
  tcase_add_test (tc, test_same_as_glibc_signals);
  tcase_add_test (tc, test_same_as_glibc_ipc);
  tcase_add_test (tc, test_same_as_glibc_sockets);
  tcase_add_test (tc, test_same_as_glibc_vectors);

  tc = tcase_with_resources (s, "fortify");
  tcase_add_test_raise_signal (tc, test_read_chk_overflow_aborts, SIGABRT);
  tcase_add_test_raise_signal (tc, test_recv_chk_overflow_aborts, SIGABRT);
  tcase_add_test_raise_signal (tc, test_poll_chk_overflow_aborts, SIGABRT);
  tcase_add_test_raise_signal (tc, test_open_2_with_o_creat_aborts, SIGABRT);
  tcase_add_test_raise_signal (tc, test_openat_2_with_o_tmpfile_aborts,
                               SIGABRT);
  return xp_test_run (s);
}
