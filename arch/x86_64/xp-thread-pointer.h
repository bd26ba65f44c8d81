/* The thread pointer on x86_64 is the %fs base.  glibc's TCB header keeps a
   copy of it in its first word, so reading %fs:0 is a plain load.  */
#ifndef XP_ARCH_THREAD_POINTER_H
#define XP_ARCH_THREAD_POINTER_H

static inline void *
xp_thread_pointer (void)
{
  void *tp;
  __asm__ ("mov %%fs:0, %0" : "=r" (tp));
  return tp;
}

/* The int at byte offset OFF from the thread pointer, in one load; read
   afresh at every call, as a volatile load would be (fork changes the
   tid that glibc's descriptor holds).  */
static inline int
xp_thread_int_at (ptrdiff_t off)
{
  int v;
  __asm__ volatile ("movl %%fs:(%1), %0" : "=r" (v) : "r" (off));
  return v;
}

/* The word at byte offset OFF from the thread pointer, in one load.  */
static inline uintptr_t
xp_thread_word_at (ptrdiff_t off)
{
  uintptr_t v;
  __asm__ volatile ("movq %%fs:(%1), %0" : "=r" (v) : "r" (off));
  return v;
}

#endif
