/* Threads xpthread did not start.  Like redis-server with jemalloc: the
   program's allocator takes a pthread mutex (trylock first) and asks
   pthread_self inside malloc, and a library starts threads with the
   pthread_create it finds through dlsym (RTLD_NEXT), which is glibc's.
   Such a thread's first call into xpthread comes from inside malloc; if
   xpthread allocated on that path, malloc would recurse until the stack
   overflows, or deadlock on its own lock.  */
#define _GNU_SOURCE
#include "common.h"
#include "foreign-start.h"
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TIMEOUT 60
#define THREADS 8
#define ROUNDS 2000

/* --- the program's allocator: a bump arena under a pthread mutex -------- */

#define ARENA_SIZE ((size_t) 1 << 34)
#define ALIGN 16

struct block_header
{
  size_t size;
  size_t unused;   /* keeps user memory 16-aligned */
};

static char *arena;
static size_t arena_used;
static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;

static void
arena_enter (void)
{
  if (pthread_mutex_trylock (&arena_lock) != 0)
    pthread_mutex_lock (&arena_lock);
  /* Allocators key per-thread state on the caller.  */
  (void) pthread_self ();
}

static void *
arena_take (size_t size, size_t align)
{
  if (align < ALIGN)
    align = ALIGN;
  if (arena == NULL)   /* first call: the process is single-threaded */
    {
      void *p = mmap (NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED)
        abort ();
      arena = p;
    }
  arena_enter ();
  uintptr_t user = (uintptr_t) arena + arena_used + sizeof (struct block_header);
  user = (user + align - 1) & ~(uintptr_t) (align - 1);
  size_t end = user + size - (uintptr_t) arena;
  void *result = NULL;
  if (size < ARENA_SIZE && end <= ARENA_SIZE)
    {
      arena_used = (end + ALIGN - 1) & ~(size_t) (ALIGN - 1);
      ((struct block_header *) user - 1)->size = size;
      result = (void *) user;
    }
  pthread_mutex_unlock (&arena_lock);
  if (result == NULL)
    errno = ENOMEM;
  return result;
}

static bool
in_arena (const void *p)
{
  return arena != NULL && (const char *) p >= arena
         && (const char *) p < arena + ARENA_SIZE;
}

void *
malloc (size_t size)
{
  return arena_take (size, ALIGN);
}

void
free (void *p)
{
  /* A bump arena never reuses memory; taking the lock is what matters.  */
  if (p != NULL)
    {
      arena_enter ();
      pthread_mutex_unlock (&arena_lock);
    }
}

void *
calloc (size_t n, size_t size)
{
  if (size != 0 && n > SIZE_MAX / size)
    {
      errno = ENOMEM;
      return NULL;
    }
  return arena_take (n * size, ALIGN);   /* fresh arena memory is zero */
}

size_t
malloc_usable_size (void *p)
{
  return p == NULL ? 0 : ((struct block_header *) p - 1)->size;
}

void *
realloc (void *p, size_t size)
{
  if (p != NULL && !in_arena (p))
    abort ();
  void *q = arena_take (size, ALIGN);
  if (q != NULL && p != NULL)
    {
      size_t old = malloc_usable_size (p);
      memcpy (q, p, old < size ? old : size);
    }
  return q;
}

void *
memalign (size_t align, size_t size)
{
  return arena_take (size, align);
}

void *
aligned_alloc (size_t align, size_t size)
{
  return arena_take (size, align);
}

int
posix_memalign (void **out, size_t align, size_t size)
{
  void *p = arena_take (size, align);
  if (p == NULL)
    return ENOMEM;
  *out = p;
  return 0;
}

void *
valloc (size_t size)
{
  return arena_take (size, 4096);
}

void *
pvalloc (size_t size)
{
  return arena_take ((size + 4095) & ~(size_t) 4095, 4096);
}

/* --- helpers ------------------------------------------------------------ */

static pthread_t
start_foreign (void *(*start) (void *), void *arg)
{
  pthread_t t;
  ck_assert_int_eq (xp_foreign_start (&t, start, arg), 0);
  return t;
}

static void *
join_foreign (pthread_t t)
{
  void *result;
  ck_assert_int_eq (xp_foreign_join (t, &result), 0);
  return result;
}

/* --- tests -------------------------------------------------------------- */

START_TEST (threads_come_from_glibc)
{
  const char *lib = xp_foreign_library ();
  ck_assert_msg (lib != NULL && strstr (lib, "libc.so") != NULL,
                 "pthread_create after the starter library is %s's",
                 lib != NULL ? lib : "nobody");
}
END_TEST

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static long counter, table_writes;

/* First call: malloc, which enters xpthread from inside the allocator.  */
static void *
allocate_and_count (void *arg)
{
  sem_t *sem = arg;
  for (int i = 0; i < ROUNDS; i++)
    {
      char *p = malloc (16 + (size_t) i % 200);
      if (p == NULL)
        return "malloc failed";
      memset (p, i, 16);
      pthread_mutex_lock (&counter_lock);
      counter++;
      pthread_mutex_unlock (&counter_lock);
      if (i % 8 == 0)
        {
          pthread_rwlock_wrlock (&table_lock);
          table_writes++;
          pthread_rwlock_unlock (&table_lock);
        }
      else
        {
          pthread_rwlock_rdlock (&table_lock);
          pthread_rwlock_unlock (&table_lock);
        }
      free (p);
    }
  sem_post (sem);
  return NULL;
}

START_TEST (foreign_threads_lock_inside_malloc)
{
  sem_t done;
  ck_assert_int_eq (sem_init (&done, 0, 0), 0);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++)
    t[i] = start_foreign (allocate_and_count, &done);
  for (int i = 0; i < THREADS; i++)
    {
      ck_assert_int_eq (sem_wait (&done), 0);
      const char *failure = join_foreign (t[i]);
      ck_assert_msg (failure == NULL, "%s", failure);
    }
  ck_assert_int_eq (counter, (long) THREADS * ROUNDS);
  ck_assert_int_eq (table_writes, (long) THREADS * (ROUNDS / 8));
}
END_TEST

static pthread_key_t value_key;
static int destructor_runs;
static int values[512];

static void
count_destructor (void *value)
{
  ck_assert ((int *) value >= &values[0]
             && (int *) value < &values[sizeof values / sizeof values[0]]);
  __atomic_fetch_add (&destructor_runs, 1, __ATOMIC_RELAXED);
}

static void *
return_arg (void *arg)
{
  return arg;
}

/* The calls that need the thread's descriptor.  */
static void *
use_descriptor (void *arg)
{
  free (malloc (32));
  if (pthread_setspecific (value_key, arg) != 0
      || pthread_getspecific (value_key) != arg)
    return "thread-specific value lost";
  if (!pthread_equal (pthread_self (), pthread_self ()))
    return "pthread_self changed";
  int old;
  if (pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, &old) != 0
      || old != PTHREAD_CANCEL_ENABLE
      || pthread_setcancelstate (old, NULL) != 0)
    return "cancel state wrong";
  pthread_t child;
  void *result;
  if (pthread_create (&child, NULL, return_arg, arg) != 0
      || pthread_join (child, &result) != 0 || result != arg)
    return "create and join from a foreign thread failed";
  return NULL;
}

START_TEST (foreign_thread_gets_a_descriptor)
{
  ck_assert_int_eq (pthread_key_create (&value_key, count_destructor), 0);
  const char *failure = join_foreign (start_foreign (use_descriptor,
                                                     &values[0]));
  ck_assert_msg (failure == NULL, "%s", failure);
  /* Its descriptor went with it, thread-specific values first.  */
  ck_assert_int_eq (destructor_runs, 1);
}
END_TEST

START_TEST (foreign_descriptors_released_at_exit)
{
  ck_assert_int_eq (pthread_key_create (&value_key, count_destructor), 0);
  int n = (int) (sizeof values / sizeof values[0]);
  for (int i = 0; i < n; i++)
    {
      const char *failure = join_foreign (start_foreign (use_descriptor,
                                                         &values[i]));
      ck_assert_msg (failure == NULL, "thread %d: %s", i, failure);
    }
  ck_assert_int_eq (destructor_runs, n);
}
END_TEST

int
main (void)
{
  Suite *suite = suite_create ("foreign");
  TCase *tc = tcase_create ("foreign");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, threads_come_from_glibc);
  tcase_add_test (tc, foreign_threads_lock_inside_malloc);
  tcase_add_test (tc, foreign_thread_gets_a_descriptor);
  tcase_add_test (tc, foreign_descriptors_released_at_exit);
  suite_add_tcase (suite, tc);
  return xp_test_run (suite);
}
