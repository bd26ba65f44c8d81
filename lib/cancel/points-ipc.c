/* Cancellation points: System V and POSIX message queues.

   Interposed because glibc's own cancellation never acts in xpthread's
   threads, and because glibc 2.36's asynchronous-cancel technique could
   act after a receive completed and lose the message (points.h).  As
   glibc 2.36 does on x86_64: each is its own system call (no ipc
   multiplexer), mq_receive and mq_send are the timed calls without a
   timeout, and the mq_ functions, which moved from librt into libc in
   glibc 2.34, also answer to librt's old version.  */
#define _GNU_SOURCE
#include "points.h"
#include <mqueue.h>
#include <sys/msg.h>

ssize_t
msgrcv (int msqid, void *msgp, size_t msgsz, long msgtyp, int msgflg)
{
  return XP_CP (SYS_msgrcv, msqid, msgp, msgsz, msgtyp, msgflg);
}
XP_EXPORT (msgrcv)

int
msgsnd (int msqid, const void *msgp, size_t msgsz, int msgflg)
{
  return (int) XP_CP (SYS_msgsnd, msqid, msgp, msgsz, msgflg);
}
XP_EXPORT (msgsnd)

ssize_t
mq_timedreceive (mqd_t mqdes, char *msg, size_t len, unsigned int *prio,
                 const struct timespec *abs_timeout)
{
  return XP_CP (SYS_mq_timedreceive, mqdes, msg, len, prio, abs_timeout);
}
XP_EXPORT (mq_timedreceive)

ssize_t
mq_receive (mqd_t mqdes, char *msg, size_t len, unsigned int *prio)
{
  return XP_CP (SYS_mq_timedreceive, mqdes, msg, len, prio, NULL);
}
XP_EXPORT (mq_receive)

int
mq_timedsend (mqd_t mqdes, const char *msg, size_t len, unsigned int prio,
              const struct timespec *abs_timeout)
{
  return (int) XP_CP (SYS_mq_timedsend, mqdes, msg, len, prio, abs_timeout);
}
XP_EXPORT (mq_timedsend)

int
mq_send (mqd_t mqdes, const char *msg, size_t len, unsigned int prio)
{
  return (int) XP_CP (SYS_mq_timedsend, mqdes, msg, len, prio, NULL);
}
XP_EXPORT (mq_send)
