/* A lock-order error for tests/valgrind.sh: one thread takes A then B,
   a later one B then A.  The threads never overlap (the first is joined
   before the second starts), so the program cannot deadlock, and helgrind
   must still report the inconsistent order.  */
#include <pthread.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;

static void *
take (void *arg)
{
  pthread_mutex_t **pair = arg;
  pthread_mutex_lock (pair[0]);
  pthread_mutex_lock (pair[1]);
  pthread_mutex_unlock (pair[1]);
  pthread_mutex_unlock (pair[0]);
  return NULL;
}

int
main (void)
{
  pthread_mutex_t *ab[] = { &a, &b }, *ba[] = { &b, &a };
  pthread_t t;
  pthread_create (&t, NULL, take, ab);
  pthread_join (t, NULL);
  pthread_create (&t, NULL, take, ba);
  pthread_join (t, NULL);
  return 0;
}
