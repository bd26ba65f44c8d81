/* Threads started behind xpthread's back (tests/foreign-start.c).  */
#ifndef XP_TESTS_FOREIGN_START_H
#define XP_TESTS_FOREIGN_START_H

#include <pthread.h>

/* The object that defines the pthread_create used, NULL if none.  */
const char *xp_foreign_library (void);
int xp_foreign_start (pthread_t *thread, void *(*start) (void *), void *arg);
int xp_foreign_join (pthread_t thread, void **result);

#endif
