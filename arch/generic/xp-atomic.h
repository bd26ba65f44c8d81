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
/* Sequentially consistent forms, for the store-then-load handshakes
   (Dekker's pattern) where each side writes one word and must then see
   the other side's word: an acquire-release pair does not order a store
   before a later load of another word.  On x86_64 they cost nothing
   more; on weaker architectures no separate fence is needed.  */
#define xp_load_seq_cst(p) __atomic_load_n ((p), __ATOMIC_SEQ_CST)
#define xp_fetch_or_seq_cst(p, v) \
  __atomic_fetch_or ((p), (v), __ATOMIC_SEQ_CST)
#define xp_cas_seq_cst(p, expected, desired) \
  __atomic_compare_exchange_n ((p), (expected), (desired), 0, \
                               __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)

#endif
