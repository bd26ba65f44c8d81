/* Unwinding for pthread_exit and cancellation, and the cleanup ABI that
   <pthread.h>'s macros compile to.

   The stack is unwound with the unwinder's forced unwinding, so C++
   destructors run and `catch (...)` sees abi::__forced_unwind (rethrowing
   continues the unwind), and so do C cleanups compiled with -fexceptions
   (__pthread_cleanup_routine).  Two kinds of cleanup handler live outside
   the unwind tables and are run from the stop function, each when the
   unwinding leaves the frame that holds it, so that all of them run in
   stack order:
   - setjmp-based buffers (C without -fexceptions): the stop function jumps
     back into the frame, whose macro runs the handler and calls
     __pthread_unwind_next, which starts unwinding again from there;
   - old-style buffers (_pthread_cleanup_push, binaries built before glibc
     2.3.3): called directly.
   When no frame is left, the thread ends: thread_local and thread-specific
   data destructors run after every cleanup handler, as in glibc.  */
#define _GNU_SOURCE
/* <pthread.h> declares __pthread_unwind_next weak unless SHARED is
   defined, as it is when glibc builds its shared library; this file is
   that definition and must be strong.  */
#define SHARED 1
#include "cancel.h"
#include "export.h"
#include "glibc-arch.h"
#include "thread.h"
#include <pthread.h>
#include <string.h>
#include <unwind.h>
#include <xp-cancel-arch.h>

/* __pthread_unwind_buf_t with xpthread's meaning for its private words.  */
struct cleanup_jmp_buf
{
  struct
  {
    __jmp_buf jmp;
    int mask_was_saved;
  } env[1];
  union
  {
    void *pad[4];
    struct
    {
      struct cleanup_jmp_buf *prev;
      /* The newest old-style buffer when this one was registered: those
         pushed later belong inside its region and run before it.  */
      struct _pthread_cleanup_buffer *old_mark;
      int saved_async;
    } data;
  } priv;
};
_Static_assert (sizeof (struct cleanup_jmp_buf)
                == sizeof (__pthread_unwind_buf_t),
                "cleanup buffer layout");

/* libc's longjmp, declared for the cleanup buffer, which is smaller than a
   jmp_buf: the signal mask part is never used (the macros save no mask).  */
extern void xp_longjmp_to_cleanup (void *env, int value) __asm__ ("longjmp")
  __attribute__ ((noreturn));

/* "XPTHCANC": the exception class of xpthread's forced unwinding.  */
#define XP_UNWIND_CLASS 0x5850544843414e43ULL

static void
run_old_handler (struct xp_thread *self)
{
  struct _pthread_cleanup_buffer *b = self->cleanup_old;
  self->cleanup_old = b->__prev;
  b->__routine (b->__arg);
}

static void
jump_to_handler (struct xp_thread *self, struct cleanup_jmp_buf *b)
{
  self->cleanup_jmp_buf = b->priv.data.prev;
  xp_longjmp_to_cleanup (b->env, 1);
}

/* Run every handler whose frame lies below limit (the unwinding has left
   it), innermost first; a setjmp-based one does not come back here.  Old
   buffers pushed after a setjmp-based one run before it, whatever their
   addresses (in one frame the compiler places them as it likes).  */
static void
run_handlers_below (struct xp_thread *self, uintptr_t limit)
{
  for (;;)
    {
      struct cleanup_jmp_buf *jb = self->cleanup_jmp_buf;
      if (jb != NULL && xp_glibc_jmpbuf_sp (jb->env[0].jmp) <= limit)
        {
          while (self->cleanup_old != NULL
                 && self->cleanup_old != jb->priv.data.old_mark)
            run_old_handler (self);
          jump_to_handler (self, jb);
        }
      uintptr_t old = (uintptr_t) self->cleanup_old;
      bool older_than_jb = jb != NULL
                           && self->cleanup_old == jb->priv.data.old_mark;
      if (old == 0 || old >= limit || older_than_jb)
        return;
      run_old_handler (self);
    }
}

static _Unwind_Reason_Code
unwind_stop (int version, _Unwind_Action actions,
             _Unwind_Exception_Class exception_class,
             struct _Unwind_Exception *exception,
             struct _Unwind_Context *context, void *param)
{
  (void) version;
  (void) exception_class;
  (void) exception;
  struct xp_thread *self = param;
  if (actions & _UA_END_OF_STACK)
    {
      run_handlers_below (self, UINTPTR_MAX);
      xp_thread_exit (self->result);
    }
  /* The CFA of the frame about to be unwound is the stack pointer of its
     caller: everything below it is being left.  */
  run_handlers_below (self, (uintptr_t) _Unwind_GetCFA (context));
  return _URC_NO_REASON;
}

static void
unwind_abandoned (_Unwind_Reason_Code reason, struct _Unwind_Exception *exc)
{
  (void) reason;
  (void) exc;
  xp_fatal ("thread %p: the unwinding of an exiting or cancelled thread "
            "was caught and not rethrown", (void *) xp_self_ptr);
}

static __attribute__ ((noreturn)) void
unwind_from_here (struct xp_thread *self)
{
  struct _Unwind_Exception *exc = &self->unwind_exc;
  memset (exc, 0, sizeof *exc);
  exc->exception_class = XP_UNWIND_CLASS;
  exc->exception_cleanup = unwind_abandoned;
  _Unwind_ForcedUnwind (exc, unwind_stop, self);
  /* Only unusable unwind tables get here: the handlers xpthread knows of
     still run, the destructors in the unwind tables cannot.  */
  run_handlers_below (self, UINTPTR_MAX);
  xp_thread_exit (self->result);
}

void
xp_unwind_and_exit (void *result)
{
  struct xp_thread *self = xp_self ();
  xp_cancel_set_exiting (self, result);
  unwind_from_here (self);
}

/* The cleanup ABI of <pthread.h> (glibc 2.3.3 and later).  */

void
__pthread_register_cancel (__pthread_unwind_buf_t *buf)
{
  struct xp_thread *self = xp_self ();
  struct cleanup_jmp_buf *b = (struct cleanup_jmp_buf *) buf;
  b->priv.data.prev = self->cleanup_jmp_buf;
  b->priv.data.old_mark = self->cleanup_old;
  self->cleanup_jmp_buf = b;
}
XP_EXPORT (__pthread_register_cancel)

void
__pthread_unregister_cancel (__pthread_unwind_buf_t *buf)
{
  struct cleanup_jmp_buf *b = (struct cleanup_jmp_buf *) buf;
  xp_self ()->cleanup_jmp_buf = b->priv.data.prev;
}
XP_EXPORT (__pthread_unregister_cancel)

/* The _defer forms run their region with deferred cancellation and restore
   the type afterwards; back in asynchronous mode a pending cancel acts.  */
static bool
enter_deferred (struct xp_thread *self)
{
  return xp_fetch_and (&self->cancel, ~XP_CANCEL_ASYNC) & XP_CANCEL_ASYNC;
}

static void
leave_deferred (struct xp_thread *self, bool was_async)
{
  if (!was_async)
    return;
  unsigned word = xp_fetch_or (&self->cancel, XP_CANCEL_ASYNC);
  if (xp_cancel_due (word))
    xp_cancel_act ();
}

void
__pthread_register_cancel_defer (__pthread_unwind_buf_t *buf)
{
  struct xp_thread *self = xp_self ();
  struct cleanup_jmp_buf *b = (struct cleanup_jmp_buf *) buf;
  __pthread_register_cancel (buf);
  b->priv.data.saved_async = enter_deferred (self);
}
XP_EXPORT (__pthread_register_cancel_defer)

void
__pthread_unregister_cancel_restore (__pthread_unwind_buf_t *buf)
{
  struct cleanup_jmp_buf *b = (struct cleanup_jmp_buf *) buf;
  __pthread_unregister_cancel (buf);
  leave_deferred (xp_self (), b->priv.data.saved_async);
}
XP_EXPORT (__pthread_unregister_cancel_restore)

/* The macro has run the handler of buf; unwinding goes on to the next.  */
void
__pthread_unwind_next (__pthread_unwind_buf_t *buf)
{
  struct xp_thread *self = xp_self ();
  self->cleanup_jmp_buf = ((struct cleanup_jmp_buf *) buf)->priv.data.prev;
  unwind_from_here (self);
}
XP_EXPORT (__pthread_unwind_next)

/* Out-of-line copy of <pthread.h>'s inline function for C compiled with
   -fexceptions, for compilers that do not inline it.  */
void
__pthread_cleanup_routine (struct __pthread_cleanup_frame *frame)
{
  if (frame->__do_it)
    frame->__cancel_routine (frame->__cancel_arg);
}
XP_EXPORT (__pthread_cleanup_routine)

/* The old cleanup ABI.  */

void _pthread_cleanup_push (struct _pthread_cleanup_buffer *, void (*) (void *),
                            void *);
void _pthread_cleanup_pop (struct _pthread_cleanup_buffer *, int);
void _pthread_cleanup_push_defer (struct _pthread_cleanup_buffer *,
                                  void (*) (void *), void *);
void _pthread_cleanup_pop_restore (struct _pthread_cleanup_buffer *, int);

void
_pthread_cleanup_push (struct _pthread_cleanup_buffer *buf,
                       void (*routine) (void *), void *arg)
{
  struct xp_thread *self = xp_self ();
  buf->__routine = routine;
  buf->__arg = arg;
  buf->__prev = self->cleanup_old;
  self->cleanup_old = buf;
}
XP_EXPORT (_pthread_cleanup_push)

void
_pthread_cleanup_pop (struct _pthread_cleanup_buffer *buf, int execute)
{
  xp_self ()->cleanup_old = buf->__prev;
  if (execute)
    buf->__routine (buf->__arg);
}
XP_EXPORT (_pthread_cleanup_pop)

void
_pthread_cleanup_push_defer (struct _pthread_cleanup_buffer *buf,
                             void (*routine) (void *), void *arg)
{
  _pthread_cleanup_push (buf, routine, arg);
  buf->__canceltype = enter_deferred (xp_self ());
}
XP_EXPORT (_pthread_cleanup_push_defer)

void
_pthread_cleanup_pop_restore (struct _pthread_cleanup_buffer *buf,
                              int execute)
{
  _pthread_cleanup_pop (buf, execute);
  leave_deferred (xp_self (), buf->__canceltype);
}
XP_EXPORT (_pthread_cleanup_pop_restore)
