/* What test-sem.c and sem-glibc-helper.c share in memory.  */
#ifndef XP_TESTS_SEM_PING_PONG_H
#define XP_TESTS_SEM_PING_PONG_H

#include <semaphore.h>

struct ping_pong
{
  sem_t ping;              /* posted by the xpthread side */
  sem_t pong;              /* posted by the glibc side */
  unsigned counter;        /* 2i before round i's ping, 2i + 1 after */
};

/* Each side dawdles every this many rounds, so that the other one
   really sleeps on the semaphore rather than catching the post while
   spinning.  */
#define PING_PONG_SLOW_EVERY 16
#define PING_PONG_ROUNDS 2000

#endif
