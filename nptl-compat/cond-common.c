/* Helpers of the process-shared condition variable protocols; the words
   and why no wake-up is lost are described in cond-common.h.  */
#include "cond-common.h"
#include "futex.h"
#include <limits.h>

void
xp_cond_wake (unsigned *word, int count)
{
  xp_futex_wake ((int *) word, count, false);
}

void
xp_cond_sleep (unsigned *word, unsigned value)
{
  xp_futex_wait ((int *) word, (int) value, false);
}

void
xp_cond_lock (unsigned *word)
{
  unsigned s = xp_load_relaxed (word);
  while ((s & 3) == 0)
    if (__atomic_compare_exchange_n (word, &s, s | 1, true, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
      return;
  for (;;)
    {
      /* Mark the lock as having a sleeper; if it was free, it is ours.  */
      while ((s & 3) != 2)
        if (__atomic_compare_exchange_n (word, &s, (s & ~3u) | 2, true,
                                         __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
          {
            if ((s & 3) == 0)
              return;
            break;
          }
      xp_cond_sleep (word, (s & ~3u) | 2);
      s = xp_load_relaxed (word);
    }
}

void
xp_cond_unlock (unsigned *word)
{
  if ((__atomic_fetch_and (word, ~3u, __ATOMIC_RELEASE) & 3) == 2)
    xp_cond_wake (word, 1);
}

unsigned
xp_cond_orig_size (unsigned *word)
{
  return xp_load_relaxed (word) >> 2;
}

/* The lock bits may change from 1 to 2 under us, and must survive the
   store.  */
void
xp_cond_set_orig_size (unsigned *word, unsigned size)
{
  unsigned s = (xp_load_relaxed (word) & 3) | (size << 2);
  if ((__atomic_exchange_n (word, s, __ATOMIC_RELAXED) & 3) != (s & 3))
    xp_store_relaxed (word, (size << 2) | 2);
}

enum xp_cond_withdrawal
xp_cond_withdraw (uint64_t start, unsigned orig_size, uint64_t seq,
                  unsigned *size)
{
  if (start > seq)
    return XP_COND_TOOK_SIGNAL;
  if (start + orig_size <= seq)
    {
      /* Still in G2, whose size counts down from zero.  Past the bound, a
         broadcast gives everyone a clean start (and signals nobody in
         particular).  */
      if (*size + XP_COND_MAX_GROUP_SIZE == 0)
        return XP_COND_OVERFLOW;
      --*size;
      return XP_COND_SHRUNK;
    }
  /* In G1: if none of it is left unsignalled, the last signal was its.  */
  if (*size == 0)
    return XP_COND_TOOK_SIGNAL;
  --*size;
  return XP_COND_SHRUNK;
}

unsigned
xp_cond_unsignalled (uint64_t next, unsigned g2, uint64_t start,
                     unsigned orig_size, const unsigned size[2])
{
  unsigned in_g2 = (unsigned) (next - start - orig_size) + size[g2];
  return size[g2 ^ 1] + in_g2;
}

void
xp_cond_leave (unsigned *wrefs)
{
  /* The last waiter, and destroy sleeps: wake it.  */
  if ((__atomic_fetch_add (wrefs, -XP_COND_WREFS_WAITER, __ATOMIC_RELEASE)
       >> 2) == 3)
    xp_cond_wake (wrefs, INT_MAX);
}

void
xp_cond_await_leavers (unsigned *wrefs)
{
  unsigned w = __atomic_fetch_or (wrefs, XP_COND_WREFS_DESTROY_SLEEPS,
                                  __ATOMIC_ACQUIRE);
  while ((w >> 3) != 0)
    {
      xp_cond_sleep (wrefs, w);
      w = xp_load_acquire (wrefs);
    }
}
