/* Atomic operations for the portable core.  Every architecture gcc and
   clang support lowers these builtins well; an architecture needing
   hand-written sequences overrides them in arch/<arch>/.  */
#ifndef XP_GENERIC_ATOMIC_H
#define XP_GENERIC_ATOMIC_H

#define xp_load_relaxed(p) __atomic_load_n ((p), __ATOMIC_RELAXED)
#define xp_load_acquire(p) __atomic_load_n ((p), __ATOMIC_ACQUIRE)
#define xp_store_relaxed(p, v) __atomic_store_n ((p), (v), __ATOMIC_RELAXED)
#define xp_store_release(p, v) __atomic_store_n ((p), (v), __ATOMIC_RELEASE)
#define xp_exchange_acquire(p, v) \
  __atomic_exchange_n ((p), (v), __ATOMIC_ACQUIRE)
#define xp_exchange_release(p, v) \
  __atomic_exchange_n ((p), (v), __ATOMIC_RELEASE)
#define xp_fetch_add(p, v) __atomic_fetch_add ((p), (v), __ATOMIC_ACQ_REL)
#define xp_fetch_or(p, v) __atomic_fetch_or ((p), (v), __ATOMIC_ACQ_REL)
#define xp_fetch_and(p, v) __atomic_fetch_and ((p), (v), __ATOMIC_ACQ_REL)
/* Strong compare-and-swap; *expected is updated on failure.  */
#define xp_cas(p, expected, desired) \
  __atomic_compare_exchange_n ((p), (expected), (desired), 0, \
                               __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
#define xp_fence() __atomic_thread_fence (__ATOMIC_SEQ_CST)

#endif
