/* glibc keeps working inside threads created by pthread_create: errno,
   stdio, malloc, locales, sched_getcpu, __thread in every kind of module,
   the stack protector, setjmp/longjmp, the resolver and dlopen.  Each of
   these depends on the thread control block xpthread builds for glibc, so
   each test runs the glibc facility in new threads and checks the result
   from the main thread.

   Worker threads never call ck_assert themselves: they return NULL on
   success or a static message naming what went wrong, and the main thread
   asserts on it, so a failure is reported the same way whatever the
   thread implementation does with exit() from a thread.  */
#define _GNU_SOURCE
#include "common.h"
#include <arpa/inet.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <resolv.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>
#include "tls-startup.h"

#ifndef XP_TEST_MODULE_DIR
# error "XP_TEST_MODULE_DIR must name the directory of the test modules"
#endif

#define MODULE_PATH(name) XP_TEST_MODULE_DIR "/" name

/* ---- small helpers -------------------------------------------------- */

static pthread_t
start_thread (void *(*fn) (void *), void *arg)
{
  pthread_t t;
  int err = pthread_create (&t, NULL, fn, arg);
  ck_assert_msg (err == 0, "pthread_create: %s", strerror (err));
  return t;
}

/* Join T and fail with the message the thread returned, if any.  */
static void
join_ok (pthread_t t)
{
  void *result = (void *) 1;
  int err = pthread_join (t, &result);
  ck_assert_msg (err == 0, "pthread_join: %s", strerror (err));
  ck_assert_msg (result == NULL, "thread failed: %s", (const char *) result);
}

/* A reusable rendezvous built on atomics only, so that these tests depend
   on thread creation and glibc, not on xpthread's own barriers.  */
struct rendezvous
{
  unsigned parties;
  unsigned arrived;
  unsigned generation;
};

static void
rendezvous (struct rendezvous *r)
{
  unsigned gen = __atomic_load_n (&r->generation, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch (&r->arrived, 1, __ATOMIC_ACQ_REL) == r->parties)
    {
      __atomic_store_n (&r->arrived, 0, __ATOMIC_RELAXED);
      __atomic_add_fetch (&r->generation, 1, __ATOMIC_RELEASE);
      return;
    }
  while (__atomic_load_n (&r->generation, __ATOMIC_ACQUIRE) == gen)
    sched_yield ();
}

/* A flag one thread raises and another waits for.  */
static void
flag_raise (int *flag)
{
  __atomic_store_n (flag, 1, __ATOMIC_RELEASE);
}

static void
flag_wait (int *flag)
{
  while (!__atomic_load_n (flag, __ATOMIC_ACQUIRE))
    sched_yield ();
}

/* ---- errno ---------------------------------------------------------- */

struct errno_arg
{
  struct rendezvous *meeting;
  int which;
  int *errno_address;
};

/* Two threads make different system calls fail, meet so that both
   values are set at once, then check that each still sees its own.  */
static void *
errno_worker (void *p)
{
  struct errno_arg *arg = p;
  int expected;
  if (arg->which == 0)
    {
      close (-1);
      expected = EBADF;
    }
  else
    {
      open ("/nonexistent/xpthread-test", O_RDONLY);
      expected = ENOENT;
    }
  arg->errno_address = &errno;
  rendezvous (arg->meeting);
  int seen = errno;
  rendezvous (arg->meeting);
  errno = 1000 + arg->which;
  rendezvous (arg->meeting);
  if (seen != expected)
    return "errno changed by the other thread";
  if (errno != 1000 + arg->which)
    return "errno assignment changed by the other thread";
  return NULL;
}

START_TEST (errno_per_thread)
{
  struct rendezvous meeting = { .parties = 2 };
  struct errno_arg args[2] = { { &meeting, 0, NULL }, { &meeting, 1, NULL } };
  errno = 4242;
  pthread_t t0 = start_thread (errno_worker, &args[0]);
  pthread_t t1 = start_thread (errno_worker, &args[1]);
  join_ok (t0);
  join_ok (t1);
  ck_assert_int_eq (errno, 4242);
  ck_assert_ptr_ne (args[0].errno_address, args[1].errno_address);
  ck_assert_ptr_ne (args[0].errno_address, &errno);
}
END_TEST

/* ---- stdio ---------------------------------------------------------- */

enum { STDIO_THREADS = 8, STDIO_LINES = 1500 };

struct stdio_arg
{
  FILE *out;
  int id;
  struct rendezvous *start;
};

/* The payload of a line depends on the writer and the line number, so
   that a reader can tell torn or mixed lines from good ones.  */
static void
stdio_line (char *buf, size_t size, int id, int seq)
{
  int len = snprintf (buf, size, "%d %d ", id, seq);
  int payload = 10 + (id * 7 + seq) % 50;
  for (int i = 0; i < payload; i++)
    buf[len++] = (char) ('a' + (id + seq + i) % 26);
  buf[len++] = '\n';
  buf[len] = '\0';
}

/* Even lines go out in one fputs (atomic under the stream lock), odd
   lines one putc at a time under flockfile, so that both glibc's stream
   lock and its recursive owner check run in this thread.  */
static void *
stdio_worker (void *p)
{
  struct stdio_arg *arg = p;
  char line[128];
  rendezvous (arg->start);
  for (int seq = 0; seq < STDIO_LINES; seq++)
    {
      stdio_line (line, sizeof line, arg->id, seq);
      if (seq % 2 == 0)
        {
          if (fputs (line, arg->out) == EOF)
            return "fputs failed";
          continue;
        }
      flockfile (arg->out);
      for (const char *c = line; *c != '\0'; c++)
        if (putc (*c, arg->out) == EOF)
          {
            funlockfile (arg->out);
            return "putc failed";
          }
      funlockfile (arg->out);
    }
  return NULL;
}

START_TEST (stdio_shared_stream)
{
  FILE *out = tmpfile ();
  ck_assert_ptr_nonnull (out);
  struct rendezvous start = { .parties = STDIO_THREADS };
  struct stdio_arg args[STDIO_THREADS];
  pthread_t threads[STDIO_THREADS];
  long expected_bytes = 0;
  char line[128];
  for (int id = 0; id < STDIO_THREADS; id++)
    {
      args[id] = (struct stdio_arg) { out, id, &start };
      for (int seq = 0; seq < STDIO_LINES; seq++)
        {
          stdio_line (line, sizeof line, id, seq);
          expected_bytes += (long) strlen (line);
        }
    }
  for (int id = 0; id < STDIO_THREADS; id++)
    threads[id] = start_thread (stdio_worker, &args[id]);
  for (int id = 0; id < STDIO_THREADS; id++)
    join_ok (threads[id]);

  ck_assert_int_eq (fflush (out), 0);
  ck_assert_int_eq (ftell (out), expected_bytes);
  rewind (out);

  /* Every line intact and each writer's lines in order.  */
  int next_seq[STDIO_THREADS] = { 0 };
  char got[256];
  while (fgets (got, sizeof got, out) != NULL)
    {
      int id, seq;
      ck_assert_msg (sscanf (got, "%d %d ", &id, &seq) == 2,
                     "malformed line: %s", got);
      ck_assert_msg (id >= 0 && id < STDIO_THREADS, "bad writer: %s", got);
      ck_assert_msg (seq == next_seq[id], "writer %d: line %d where %d was due",
                     id, seq, next_seq[id]);
      stdio_line (line, sizeof line, id, seq);
      ck_assert_msg (strcmp (got, line) == 0, "torn line: %s", got);
      next_seq[id]++;
    }
  for (int id = 0; id < STDIO_THREADS; id++)
    ck_assert_int_eq (next_seq[id], STDIO_LINES);
  fclose (out);
}
END_TEST

/* ---- malloc --------------------------------------------------------- */

/* Threads form a ring: each allocates blocks, fills them with a pattern
   and hands them to the next thread, which checks and frees them, so that
   every block is freed by a thread other than the one that allocated
   it.  */
enum { RING_THREADS = 4, RING_BLOCKS = 20000, QUEUE_SLOTS = 256 };

struct block
{
  unsigned char *data;
  size_t size;
  unsigned seed;
};

/* Single producer, single consumer.  */
struct queue
{
  struct block slots[QUEUE_SLOTS];
  unsigned head;  /* Written by the consumer.  */
  unsigned tail;  /* Written by the producer.  */
};

static int
queue_push (struct queue *q, struct block b)
{
  unsigned tail = __atomic_load_n (&q->tail, __ATOMIC_RELAXED);
  if (tail - __atomic_load_n (&q->head, __ATOMIC_ACQUIRE) == QUEUE_SLOTS)
    return 0;
  q->slots[tail % QUEUE_SLOTS] = b;
  __atomic_store_n (&q->tail, tail + 1, __ATOMIC_RELEASE);
  return 1;
}

static int
queue_pop (struct queue *q, struct block *b)
{
  unsigned head = __atomic_load_n (&q->head, __ATOMIC_RELAXED);
  if (head == __atomic_load_n (&q->tail, __ATOMIC_ACQUIRE))
    return 0;
  *b = q->slots[head % QUEUE_SLOTS];
  __atomic_store_n (&q->head, head + 1, __ATOMIC_RELEASE);
  return 1;
}

struct ring_arg
{
  int id;
  struct queue *inbox;
  struct queue *outbox;
};

static size_t
ring_size (int i)
{
  /* Mostly 1..4096 bytes; now and then one large enough to be mmapped.  */
  if (i % 2000 == 1999)
    return (size_t) (1 << 20) + (size_t) i;
  return (size_t) (i * 37 % 4096) + 1;
}

static unsigned char
pattern (unsigned seed, size_t i)
{
  return (unsigned char) (seed * 31 + i * 7);
}

static const char *
check_and_free (struct block b)
{
  for (size_t i = 0; i < b.size; i++)
    if (b.data[i] != pattern (b.seed, i))
      return "a block handed over between threads was corrupted";
  free (b.data);
  return NULL;
}

static void *
ring_worker (void *p)
{
  struct ring_arg *arg = p;
  int made = 0, freed = 0;
  while (made < RING_BLOCKS || freed < RING_BLOCKS)
    {
      if (made < RING_BLOCKS)
        {
          struct block b = { NULL, ring_size (made),
                             (unsigned) (arg->id * RING_BLOCKS + made) };
          b.data = malloc (b.size);
          if (b.data == NULL)
            return "malloc failed";
          for (size_t i = 0; i < b.size; i++)
            b.data[i] = pattern (b.seed, i);
          /* A full outbox is drained by its consumer, which never waits
             for us, so keep consuming our own inbox meanwhile.  */
          while (!queue_push (arg->outbox, b))
            {
              struct block in;
              if (queue_pop (arg->inbox, &in))
                {
                  const char *err = check_and_free (in);
                  if (err != NULL)
                    return (void *) err;
                  freed++;
                }
              else
                sched_yield ();
            }
          made++;
        }
      struct block in;
      if (queue_pop (arg->inbox, &in))
        {
          const char *err = check_and_free (in);
          if (err != NULL)
            return (void *) err;
          freed++;
        }
      else if (made == RING_BLOCKS)
        sched_yield ();
    }
  return NULL;
}

START_TEST (malloc_across_threads)
{
  static struct queue queues[RING_THREADS];
  struct ring_arg args[RING_THREADS];
  pthread_t threads[RING_THREADS];
  for (int i = 0; i < RING_THREADS; i++)
    args[i] = (struct ring_arg) { i, &queues[i],
                                  &queues[(i + 1) % RING_THREADS] };
  for (int i = 0; i < RING_THREADS; i++)
    threads[i] = start_thread (ring_worker, &args[i]);
  for (int i = 0; i < RING_THREADS; i++)
    join_ok (threads[i]);
  for (int i = 0; i < RING_THREADS; i++)
    ck_assert_uint_eq (queues[i].head, queues[i].tail);
}
END_TEST

/* ---- locales and ctype --------------------------------------------- */

struct locale_arg
{
  struct rendezvous *meeting;
  int utf8;
};

static const char *
check_c_numbers (void)
{
  char buf[64];
  char *end;
  if (strtod ("3.25", &end) != 3.25 || *end != '\0')
    return "strtod";
  snprintf (buf, sizeof buf, "%.3f|%d|%x|%e", 2.5, -17, 255u, 1e10);
  if (strcmp (buf, "2.500|-17|ff|1.000000e+10") != 0)
    return "snprintf of numbers";
  if (strtol ("  -42", NULL, 10) != -42)
    return "strtol";
  return NULL;
}

static const char *
check_ctype (void)
{
  if (!isalpha ('q') || isalpha ('1') || !isdigit ('7') || !isspace ('\t'))
    return "isalpha/isdigit/isspace";
  if (toupper ('a') != 'A' || tolower ('Z') != 'z' || toupper ('1') != '1')
    return "toupper/tolower";
  /* In the C locale a Latin-1 byte is no letter.  */
  if (isalpha (0xe9))
    return "isalpha of a non-ASCII byte";
  return NULL;
}

/* One thread switches to C.UTF-8 with uselocale, the other stays in the
   global C locale; both check their view while the other is live.  */
static void *
locale_worker (void *p)
{
  struct locale_arg *arg = p;
  locale_t loc = (locale_t) 0;
  if (arg->utf8)
    {
      loc = newlocale (LC_ALL_MASK, "C.UTF-8", (locale_t) 0);
      if (loc == (locale_t) 0)
        return "newlocale (C.UTF-8)";
      if (uselocale (loc) == (locale_t) 0)
        return "uselocale";
    }
  rendezvous (arg->meeting);

  const char *err = check_c_numbers ();
  if (err == NULL)
    err = check_ctype ();
  if (err == NULL)
    {
      wchar_t wc = 0;
      mbstate_t state;
      memset (&state, 0, sizeof state);
      size_t n = mbrtowc (&wc, "\xc3\xa9", 2, &state);
      if (arg->utf8)
        {
          if (MB_CUR_MAX != 6)
            err = "MB_CUR_MAX in C.UTF-8";
          else if (n != 2 || wc != 0xe9)
            err = "mbrtowc in C.UTF-8";
          else if (!iswalpha (wc))
            err = "iswalpha in C.UTF-8";
        }
      else if (MB_CUR_MAX != 1)
        err = "MB_CUR_MAX in C changed by the other thread";
      else if (n != (size_t) -1)
        err = "mbrtowc in C accepted UTF-8";
    }
  rendezvous (arg->meeting);

  if (arg->utf8)
    {
      uselocale (LC_GLOBAL_LOCALE);
      freelocale (loc);
    }
  return (void *) err;
}

START_TEST (locale_per_thread)
{
  struct rendezvous meeting = { .parties = 2 };
  struct locale_arg args[2] = { { &meeting, 1 }, { &meeting, 0 } };
  pthread_t t0 = start_thread (locale_worker, &args[0]);
  pthread_t t1 = start_thread (locale_worker, &args[1]);
  join_ok (t0);
  join_ok (t1);
  ck_assert_int_eq ((int) MB_CUR_MAX, 1);
}
END_TEST

/* ---- sched_getcpu --------------------------------------------------- */

struct cpu_arg
{
  int cpu;
};

/* Pin this thread to one CPU and check sched_getcpu agrees, several times
   so that a stale per-thread CPU number cannot pass by luck.  */
static void *
cpu_worker (void *p)
{
  struct cpu_arg *arg = p;
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (arg->cpu, &set);
  if (pthread_setaffinity_np (pthread_self (), sizeof set, &set) != 0)
    return "pthread_setaffinity_np";
  for (int i = 0; i < 100; i++)
    {
      if (sched_getcpu () != arg->cpu)
        return "sched_getcpu disagrees with the affinity";
      if (i % 10 == 0)
        sched_yield ();
    }
  return NULL;
}

START_TEST (sched_getcpu_pinned)
{
  cpu_set_t allowed;
  ck_assert_int_eq (sched_getaffinity (0, sizeof allowed, &allowed), 0);
  int tested = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET (cpu, &allowed))
      {
        struct cpu_arg arg = { cpu };
        pthread_t t = start_thread (cpu_worker, &arg);
        void *result = (void *) 1;
        ck_assert_int_eq (pthread_join (t, &result), 0);
        ck_assert_msg (result == NULL, "CPU %d: %s", cpu,
                       (const char *) result);
        tested++;
      }
  ck_assert_int_gt (tested, 0);
}
END_TEST

/* ---- rseq ------------------------------------------------------------ */

extern const ptrdiff_t __rseq_offset __attribute__ ((weak));
extern const unsigned int __rseq_size __attribute__ ((weak));

/* What the kernel answers to registering the calling thread's rseq area,
   where glibc's __rseq_offset says it is, a second time: EBUSY (or EPERM
   for a signature other than the one the thread registered with) when
   exactly that area, with glibc's length of 32 bytes, is registered;
   EINVAL when another area or none is.  */
static int
reregister_rseq (void)
{
  char *area = (char *) __builtin_thread_pointer () + __rseq_offset;
  long r = syscall (SYS_rseq, area, 32, 0, 0x53053053);
  return r == 0 ? 0 : errno;
}

static void *
rseq_worker (void *p)
{
  int want = *(int *) p;
  if (reregister_rseq () != want)
    return "the thread's rseq area is not registered where glibc says";
  const int *cpu_id = (const int *) ((char *) __builtin_thread_pointer ()
                                     + __rseq_offset + 4);
  if (*cpu_id < 0)
    return "the kernel does not update the thread's rseq cpu_id";
  if (*cpu_id != sched_getcpu () && *cpu_id != sched_getcpu ())
    return "rseq cpu_id and sched_getcpu disagree";
  return NULL;
}

/* glibc registers an rseq area for every thread (from 2.35; inside the
   descriptor up to 2.40, below it in the static TLS area from 2.41) and
   sched_getcpu reads it; a new thread must have it registered where
   glibc looks, in a fresh block and in a reused one alike.  */
START_TEST (rseq_registered)
{
  if (&__rseq_size == NULL || __rseq_size == 0)
    {
      printf ("rseq: glibc registers no rseq area here; nothing to check\n");
      return;
    }
  int main_answer = reregister_rseq ();
  ck_assert_msg (main_answer == EBUSY || main_answer == EPERM,
                 "glibc's own registration in the main thread: %s",
                 strerror (main_answer));
  for (int i = 0; i < 4; i++)
    {
      pthread_t t = start_thread (rseq_worker, &main_answer);
      join_ok (t);
    }
}
END_TEST

/* ---- __thread ------------------------------------------------------- */

/* In the executable: local-exec TLS.  */
static __thread int tls_exe = 0x5151;
static __thread char tls_exe_text[16] = "initialised";
static __thread long tls_exe_zero;

static void *
tls_exe_worker (void *p)
{
  (void) p;
  if (tls_exe != 0x5151 || strcmp (tls_exe_text, "initialised") != 0
      || tls_exe_zero != 0)
    return "executable __thread not initialised in a new thread";
  tls_exe = 1;
  strcpy (tls_exe_text, "changed");
  tls_exe_zero = 7;
  return NULL;
}

START_TEST (tls_executable)
{
  tls_exe = 2;
  join_ok (start_thread (tls_exe_worker, NULL));
  ck_assert_int_eq (tls_exe, 2);
  ck_assert_str_eq (tls_exe_text, "initialised");
  ck_assert_int_eq (tls_exe_zero, 0);
}
END_TEST

/* In a library the executable is linked with: static TLS, reached both
   directly (initial-exec from here) and through the library's code.  */
static void *
tls_startup_worker (void *p)
{
  (void) p;
  if (xp_tls_startup != 0x2222 || xp_tls_startup_get () != 0x2222)
    return "startup library __thread not initialised in a new thread";
  if (xp_tls_startup_address () != &xp_tls_startup)
    return "startup library __thread has two addresses";
  xp_tls_startup = 3;
  if (xp_tls_startup_get () != 3)
    return "startup library __thread not shared within a thread";
  return NULL;
}

START_TEST (tls_startup_library)
{
  xp_tls_startup = 4;
  join_ok (start_thread (tls_startup_worker, NULL));
  ck_assert_int_eq (xp_tls_startup_get (), 4);
}
END_TEST

struct tls_module_arg
{
  const char *path;
  const char *getter;
  int expected;
  int loaded;     /* Raised by the main thread once it has dlopen'ed.  */
  int started;    /* Raised by the thread before it waits.  */
  int observed;   /* What the thread read first.  */
};

/* Wait until the main thread has loaded the module, then read the
   module's __thread variable through its getter.  */
static void *
tls_module_worker (void *p)
{
  struct tls_module_arg *arg = p;
  flag_raise (&arg->started);
  flag_wait (&arg->loaded);
  void *handle = dlopen (arg->path, RTLD_NOW | RTLD_NOLOAD);
  if (handle == NULL)
    return "module not loaded";
  int (*get) (void) = (int (*) (void)) dlsym (handle, arg->getter);
  void (*set) (int) = (void (*) (int)) dlsym (handle, "xp_tls_module_set");
  const char *err = NULL;
  if (get == NULL || set == NULL)
    err = "getter missing";
  else if ((arg->observed = get ()) != arg->expected)
    err = "module __thread lacks its initialiser in a running thread";
  else
    {
      set (99);
      if (get () != 99)
        err = "module __thread cannot be written";
    }
  dlclose (handle);
  return (void *) err;
}

/* Start the thread, then dlopen the module while it runs (or before it
   starts), and have the thread check the module's initialiser.  */
static void
check_tls_module (const char *path, const char *getter, int expected,
                  int load_first)
{
  struct tls_module_arg arg = { path, getter, expected, 0, 0, 0 };
  void *handle = NULL;
  if (load_first)
    {
      handle = dlopen (path, RTLD_NOW);
      ck_assert_msg (handle != NULL, "dlopen: %s", dlerror ());
      flag_raise (&arg.loaded);
    }
  pthread_t t = start_thread (tls_module_worker, &arg);
  if (!load_first)
    {
      flag_wait (&arg.started);
      handle = dlopen (path, RTLD_NOW);
      ck_assert_msg (handle != NULL, "dlopen: %s", dlerror ());
      flag_raise (&arg.loaded);
    }
  void *result = (void *) 1;
  ck_assert_int_eq (pthread_join (t, &result), 0);
  ck_assert_msg (result == NULL, "%s: %s (read %#x, expected %#x)", path,
                 (const char *) result, (unsigned) arg.observed,
                 (unsigned) expected);
  int (*get) (void) = (int (*) (void)) dlsym (handle, getter);
  ck_assert_ptr_nonnull (get);
  ck_assert_int_eq (get (), expected);
  ck_assert_int_eq (dlclose (handle), 0);
}

START_TEST (tls_dynamic_loaded_before)
{
  check_tls_module (MODULE_PATH ("tls-dynamic.so"), "xp_tls_dynamic_get",
                    0x3333, 1);
}
END_TEST

START_TEST (tls_dynamic_loaded_after)
{
  check_tls_module (MODULE_PATH ("tls-dynamic.so"), "xp_tls_dynamic_get",
                    0x3333, 0);
}
END_TEST

/* The case glibc handles only for its own threads: a library with
   initial-exec TLS dlopen'ed after the thread has started must still
   have its static TLS image copied into that thread.  */
START_TEST (tls_initial_exec_loaded_after)
{
  check_tls_module (MODULE_PATH ("tls-ie.so"), "xp_tls_ie_get", 0x1234, 0);
}
END_TEST

START_TEST (tls_initial_exec_loaded_before)
{
  check_tls_module (MODULE_PATH ("tls-ie.so"), "xp_tls_ie_get", 0x1234, 1);
}
END_TEST

struct tls_reuse_arg
{
  int (*get) (void);
  void (*set) (int);
  void *stack;    /* an address on the thread's stack */
};

/* Find the module's and the executable's __thread variables as a new
   thread must, then write them, leaving its TLS dirty for the next
   thread in its block.  */
static void *
tls_reuse_worker (void *p)
{
  struct tls_reuse_arg *arg = p;
  int local;
  arg->stack = &local;
  const char *err = tls_exe_worker (NULL);
  if (err == NULL && arg->get () != 0x3333)
    err = "module __thread not fresh in a reused block";
  arg->set (99);
  return (void *) err;
}

#define TLS_REUSE_THREADS 64
/* The module's dynamic TLS block is over 8 KiB: were those of threads
   gone not given back, this many would have stayed allocated.  */
#define TLS_REUSE_LEAK_BOUND (TLS_REUSE_THREADS / 2 * 8192)

/* A thread whose block held an earlier thread (the block cache hands out
   the most recently released first) gets fresh TLS, static and dynamic,
   though what glibc allocated for the earlier thread's TLS stayed with
   the block until then; and that is given back, not kept.  */
START_TEST (tls_fresh_in_reused_block)
{
  void *handle = dlopen (MODULE_PATH ("tls-dynamic.so"), RTLD_NOW);
  ck_assert_msg (handle != NULL, "dlopen: %s", dlerror ());
  struct tls_reuse_arg arg = {
    (int (*) (void)) dlsym (handle, "xp_tls_dynamic_get"),
    (void (*) (int)) dlsym (handle, "xp_tls_module_set"), NULL
  };
  ck_assert (arg.get != NULL && arg.set != NULL);
  void *first = NULL;
  int reused = 0;
  size_t before = 0;
  for (int i = 0; i < TLS_REUSE_THREADS; i++)
    {
      join_ok (start_thread (tls_reuse_worker, &arg));
      reused += i > 0 && arg.stack == first;
      first = i == 0 ? arg.stack : first;
      if (i == 0)
        before = mallinfo2 ().uordblks;
    }
  ck_assert_msg (reused > 0, "no thread reused the first one's block");
  size_t after = mallinfo2 ().uordblks;
  ck_assert_msg (after < before + TLS_REUSE_LEAK_BOUND,
                 "%zu bytes more allocated after %d threads", after - before,
                 TLS_REUSE_THREADS);
  ck_assert_int_eq (arg.get (), 0x3333);
  ck_assert_int_eq (dlclose (handle), 0);
}
END_TEST

/* ---- stack protector ------------------------------------------------ */

/* This file is compiled with -fstack-protector-all, so every function
   here with a frame checks the canary glibc keeps in the thread control
   block.  */

#if defined __x86_64__
static uintptr_t
read_canary (void)
{
  uintptr_t canary;
  __asm__ volatile ("mov %%fs:0x28, %0" : "=r" (canary));
  return canary;
}
#endif

static int __attribute__ ((noinline))
deep_buffer_call (int depth)
{
  char buf[256];
  snprintf (buf, sizeof buf, "depth %d", depth);
  int sum = (int) strlen (buf);
  if (depth > 0)
    sum += deep_buffer_call (depth - 1);
  return sum;
}

static void *
canary_worker (void *p)
{
#if defined __x86_64__
  uintptr_t *canary = p;
  *canary = read_canary ();
#else
  (void) p;
#endif
  /* 200 frames each with a protected buffer.  */
  int expected = 0;
  char buf[32];
  for (int d = 0; d <= 200; d++)
    expected += snprintf (buf, sizeof buf, "depth %d", d);
  if (deep_buffer_call (200) != expected)
    return "deep calls with protected buffers";
  return NULL;
}

START_TEST (stack_protector_canary)
{
  uintptr_t thread_canary = 0;
  join_ok (start_thread (canary_worker, &thread_canary));
#if defined __x86_64__
  uintptr_t main_canary = read_canary ();
  ck_assert_msg (main_canary != 0, "no canary in the main thread");
  ck_assert_msg (thread_canary == main_canary,
                 "thread canary %#lx differs from main's %#lx",
                 (unsigned long) thread_canary, (unsigned long) main_canary);
#endif
}
END_TEST

/* Overrun a protected buffer.  The write goes through a pointer the
   compiler cannot see through, so only the canary can catch it.  */
static void __attribute__ ((noinline))
smash_stack (size_t n)
{
  char buf[16];
  char *volatile target = buf;
  memset (target, 'x', n);
  /* Keep the stores: the buffer is otherwise dead.  */
  __asm__ volatile ("" : : "r" (buf) : "memory");
}

static void *
smash_worker (void *p)
{
  smash_stack (*(size_t *) p);
  return NULL;
}

/* In a child process, so that the abort cannot disturb the runner.  */
START_TEST (stack_protector_detects_overflow_in_thread)
{
  fflush (NULL);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      int devnull = open ("/dev/null", O_WRONLY);
      dup2 (devnull, STDERR_FILENO);
      struct rlimit no_core = { 0, 0 };
      setrlimit (RLIMIT_CORE, &no_core);
      signal (SIGABRT, SIG_DFL);
      size_t n = 64;
      pthread_t t;
      if (pthread_create (&t, NULL, smash_worker, &n) != 0)
        _exit (2);
      pthread_join (t, NULL);
      _exit (3);
    }
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert_msg (WIFSIGNALED (status) && WTERMSIG (status) == SIGABRT,
                 "child status %#x: the overflow was not caught", status);
}
END_TEST

/* ---- setjmp/longjmp ------------------------------------------------- */

static void __attribute__ ((noinline))
jump_back (jmp_buf *env, int value)
{
  longjmp (*env, value);
}

static void __attribute__ ((noinline))
sigjump_back (sigjmp_buf *env, int value)
{
  siglongjmp (*env, value);
}

/* One setjmp per call, so that no variable live across the jump is
   modified after setjmp.  */
static int __attribute__ ((noinline))
jump_once (int value)
{
  jmp_buf env;
  volatile int passes = 0;
  int got = setjmp (env);
  passes++;
  if (got == 0)
    jump_back (&env, value);
  return got == value && passes == 2;
}

static void *
jump_worker (void *p)
{
  (void) p;
  for (int round = 1; round <= 100; round++)
    if (!jump_once (round))
      return "longjmp returned the wrong value";

  /* siglongjmp restores the signal mask saved by sigsetjmp.  */
  sigset_t block, mask;
  sigemptyset (&block);
  sigaddset (&block, SIGUSR1);
  sigjmp_buf senv;
  if (sigsetjmp (senv, 1) == 0)
    {
      pthread_sigmask (SIG_BLOCK, &block, NULL);
      sigjump_back (&senv, 1);
    }
  pthread_sigmask (SIG_SETMASK, NULL, &mask);
  if (sigismember (&mask, SIGUSR1))
    return "siglongjmp did not restore the signal mask";
  return NULL;
}

START_TEST (setjmp_longjmp_in_thread)
{
  pthread_t threads[4];
  for (int i = 0; i < 4; i++)
    threads[i] = start_thread (jump_worker, NULL);
  for (int i = 0; i < 4; i++)
    join_ok (threads[i]);
}
END_TEST

/* ---- the resolver --------------------------------------------------- */

enum { RESOLVER_THREADS = 4 };

struct resolver_arg
{
  struct rendezvous *meeting;
  struct __res_state *state;
};

static const char *
resolve_ipv4 (const char *name, int flags)
{
  struct addrinfo hints, *res;
  memset (&hints, 0, sizeof hints);
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = flags;
  int err = getaddrinfo (name, "80", &hints, &res);
  if (err != 0)
    return "getaddrinfo failed";
  const char *verdict = "no 127.0.0.1:80 in the answer";
  for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next)
    {
      struct sockaddr_in *sin = (struct sockaddr_in *) ai->ai_addr;
      if (ai->ai_family == AF_INET
          && sin->sin_addr.s_addr == htonl (INADDR_LOOPBACK)
          && sin->sin_port == htons (80))
        verdict = NULL;
    }
  freeaddrinfo (res);
  return verdict;
}

/* Numeric names need no lookup; "localhost" is found in /etc/hosts.
   Neither needs a network.  */
static void *
resolver_worker (void *p)
{
  struct resolver_arg *arg = p;
  arg->state = __res_state ();
  rendezvous (arg->meeting);
  for (int i = 0; i < 25; i++)
    {
      const char *err = resolve_ipv4 ("127.0.0.1", AI_NUMERICHOST);
      if (err == NULL)
        err = resolve_ipv4 ("localhost", 0);
      if (err != NULL)
        return (void *) err;
    }
  return NULL;
}

START_TEST (getaddrinfo_in_threads)
{
  struct rendezvous meeting = { .parties = RESOLVER_THREADS };
  struct resolver_arg args[RESOLVER_THREADS];
  pthread_t threads[RESOLVER_THREADS];
  for (int i = 0; i < RESOLVER_THREADS; i++)
    {
      args[i] = (struct resolver_arg) { &meeting, NULL };
      threads[i] = start_thread (resolver_worker, &args[i]);
    }
  for (int i = 0; i < RESOLVER_THREADS; i++)
    join_ok (threads[i]);
  /* Each thread had its own resolver state while all were alive.  */
  for (int i = 0; i < RESOLVER_THREADS; i++)
    {
      ck_assert_ptr_ne (args[i].state, __res_state ());
      for (int j = 0; j < i; j++)
        ck_assert_ptr_ne (args[i].state, args[j].state);
    }
}
END_TEST

/* ---- dlopen --------------------------------------------------------- */

struct dl_arg
{
  struct rendezvous *meeting;
  int fail_first;
};

/* Load, look up, call and unload a module repeatedly; one thread also
   provokes a dlerror message that the other must not see, as dlerror's
   state is per thread.  */
static void *
dl_worker (void *p)
{
  struct dl_arg *arg = p;
  if (arg->fail_first
      && dlopen (MODULE_PATH ("no-such-module.so"), RTLD_NOW) != NULL)
    return "a missing module was loaded";
  rendezvous (arg->meeting);
  char *message = dlerror ();
  if (arg->fail_first ? message == NULL : message != NULL)
    return "dlerror state is not per thread";
  rendezvous (arg->meeting);
  for (int i = 0; i < 50; i++)
    {
      void *handle = dlopen (MODULE_PATH ("tls-dynamic.so"), RTLD_NOW);
      if (handle == NULL)
        return "dlopen failed";
      int (*get) (void) = (int (*) (void)) dlsym (handle,
                                                  "xp_tls_dynamic_get");
      if (get == NULL)
        return "dlsym failed";
      if (get () != 0x3333)
        return "module __thread lacks its initialiser";
      if (dlclose (handle) != 0)
        return "dlclose failed";
    }
  return NULL;
}

START_TEST (dlopen_in_threads)
{
  struct rendezvous meeting = { .parties = 2 };
  struct dl_arg args[2] = { { &meeting, 1 }, { &meeting, 0 } };
  pthread_t t0 = start_thread (dl_worker, &args[0]);
  pthread_t t1 = start_thread (dl_worker, &args[1]);
  join_ok (t0);
  join_ok (t1);
}
END_TEST

/* ---- the first thread's memory ---------------------------------------- */

static long
vm_size_kib (void)
{
  FILE *f = fopen ("/proc/self/status", "r");
  ck_assert_ptr_nonnull (f);
  char line[256];
  long kib = -1;
  while (fgets (line, sizeof line, f) != NULL)
    if (strncmp (line, "VmSize:", 7) == 0)
      kib = strtol (line + 7, NULL, 10);
  fclose (f);
  ck_assert_int_gt (kib, 0);
  return kib;
}

static void *
return_null (void *arg)
{
  return arg;
}

/* The first thread of a process costs its own stack, and whatever the
   library needs to put glibc in multi-threaded mode stays small: not a
   second default-sized stack.  */
START_TEST (first_thread_memory)
{
  XP_TEST_SKIP_EMULATED ("the size of the process includes the emulator's own memory");
  pthread_attr_t attr;
  size_t stack;
  ck_assert_int_eq (pthread_attr_init (&attr), 0);
  ck_assert_int_eq (pthread_attr_getstacksize (&attr, &stack), 0);
  pthread_attr_destroy (&attr);
  long before = vm_size_kib ();
  join_ok (start_thread (return_null, NULL));
  long grown = vm_size_kib () - before;
  ck_assert_msg (grown < (long) (stack / 1024) * 3 / 2,
                 "one thread of %zu KiB of stack grew the process by %ld KiB",
                 stack / 1024, grown);
}
END_TEST

/* ---- the suite ------------------------------------------------------ */

static void
add_case (Suite *s, const char *name, const TTest *test)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, 20);
  tcase_add_test (tc, test);
  suite_add_tcase (s, tc);
}

int
main (void)
{
  Suite *s = suite_create ("glibc");
  add_case (s, "errno", errno_per_thread);
  add_case (s, "stdio", stdio_shared_stream);
  add_case (s, "malloc", malloc_across_threads);
  add_case (s, "locale", locale_per_thread);
  add_case (s, "sched_getcpu", sched_getcpu_pinned);
  add_case (s, "rseq", rseq_registered);
  add_case (s, "tls-executable", tls_executable);
  add_case (s, "tls-startup", tls_startup_library);
  add_case (s, "tls-dynamic-before", tls_dynamic_loaded_before);
  add_case (s, "tls-dynamic-after", tls_dynamic_loaded_after);
  add_case (s, "tls-ie-before", tls_initial_exec_loaded_before);
  add_case (s, "tls-ie-after", tls_initial_exec_loaded_after);
  add_case (s, "tls-reused-block", tls_fresh_in_reused_block);
  add_case (s, "stack-protector", stack_protector_canary);
  add_case (s, "stack-smash", stack_protector_detects_overflow_in_thread);
  add_case (s, "setjmp", setjmp_longjmp_in_thread);
  add_case (s, "getaddrinfo", getaddrinfo_in_threads);
  add_case (s, "dlopen", dlopen_in_threads);
  add_case (s, "first-thread-memory", first_thread_memory);
  return xp_test_run (s);
}
