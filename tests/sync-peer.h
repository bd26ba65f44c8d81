/* The memory a suite shares with tests/sync-peer, a plain glibc program
   (not linked with libxpthread and run without LD_PRELOAD), to show that
   process-shared mutexes and condition variables work between a process
   using xpthread and one using glibc.  The area is a memfd the suite
   creates and the peer inherits across exec; its descriptor number is the
   peer's first argument.  */
#ifndef XP_TESTS_SYNC_PEER_H
#define XP_TESTS_SYNC_PEER_H

#include <pthread.h>

struct xp_peer_area
{
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  long counter;          /* incremented under mutex by both sides */
  int turn;              /* ping-pong: 0 the suite's move, 1 the peer's */
  int moves[2];          /* moves made by each side, under mutex */
  int peer_started;      /* set once the peer has mapped the area */
  /* queue: both sides produce items and consume them, waiting on cond */
  int items;             /* produced and not yet consumed, under mutex */
  int queue_total;       /* items both sides produce together */
  int queue_consumers;   /* consumer threads of both sides together */
  int consumers_ready;   /* consumers in their loop, under mutex */
  int produced[2];       /* by each side, under mutex */
  int consumed[2];       /* by each side, under mutex */
};

/* The peer's exit statuses besides 0.  */
enum
{
  XP_PEER_USAGE = 10,        /* bad arguments */
  XP_PEER_MAP = 11,          /* could not map the area */
  XP_PEER_NOT_GLIBC = 12,    /* libxpthread is loaded after all */
  XP_PEER_LOCK = 13,         /* a mutex call failed */
  XP_PEER_COND = 14,         /* a condition wait failed or timed out */
  XP_PEER_THREAD = 15,       /* could not start or join a thread */
  XP_PEER_INIT = 16          /* initialising the mutex failed */
};

/* How long the peer waits for the suite in one condition wait before it
   gives up: a watchdog only, never reached when both sides work.  */
#define XP_PEER_WAIT_SECONDS 15

#endif
