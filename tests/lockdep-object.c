/* A shared object that tests/lockdep-cases.c loads and unloads again and
   again: a lock in its data, and one initialised by its code, taken one
   inside the other.  The classes of both are the object's, and go with
   it when it is unloaded.  */
#include <pthread.h>

void xp_lockdep_object_use (void);

static pthread_mutex_t object_lock = PTHREAD_MUTEX_INITIALIZER;

void
xp_lockdep_object_use (void)
{
  pthread_mutex_t inner;
  pthread_mutex_init (&inner, NULL);
  pthread_mutex_lock (&object_lock);
  pthread_mutex_lock (&inner);
  pthread_mutex_unlock (&inner);
  pthread_mutex_unlock (&object_lock);
  pthread_mutex_destroy (&inner);
}
