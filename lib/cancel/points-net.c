/* Cancellation points: sockets.

   Interposed because glibc's own cancellation never acts in xpthread's
   threads, and because glibc 2.36's asynchronous-cancel technique could
   act after a receive completed and lose the message (points.h).  As
   glibc does on x86_64, which has no recv or send system call: recv is
   recvfrom without an address and send is sendto without one.  recvmmsg
   hands the timeout to the kernel, which updates it.  */
#define _GNU_SOURCE
#include "points.h"
#include <sys/socket.h>

int
accept (int fd, __SOCKADDR_ARG addr, socklen_t *addrlen)
{
  return (int) XP_CP (SYS_accept, fd, addr.__sockaddr__, addrlen);
}
XP_EXPORT (accept)

int
accept4 (int fd, __SOCKADDR_ARG addr, socklen_t *addrlen, int flags)
{
  return (int) XP_CP (SYS_accept4, fd, addr.__sockaddr__, addrlen, flags);
}
XP_EXPORT (accept4)

int
connect (int fd, __CONST_SOCKADDR_ARG addr, socklen_t addrlen)
{
  return (int) XP_CP (SYS_connect, fd, addr.__sockaddr__, addrlen);
}
XP_EXPORT (connect)

ssize_t
recv (int fd, void *buf, size_t len, int flags)
{
  return XP_CP (SYS_recvfrom, fd, buf, len, flags, NULL, NULL);
}
XP_EXPORT (recv)

ssize_t
recvfrom (int fd, void *buf, size_t len, int flags, __SOCKADDR_ARG addr,
          socklen_t *addrlen)
{
  return XP_CP (SYS_recvfrom, fd, buf, len, flags, addr.__sockaddr__,
                addrlen);
}
XP_EXPORT (recvfrom)

ssize_t
recvmsg (int fd, struct msghdr *msg, int flags)
{
  return XP_CP (SYS_recvmsg, fd, msg, flags);
}
XP_EXPORT (recvmsg)

int
recvmmsg (int fd, struct mmsghdr *msgs, unsigned int vlen, int flags,
          struct timespec *timeout)
{
  return (int) XP_CP (SYS_recvmmsg, fd, msgs, vlen, flags, timeout);
}
XP_EXPORT (recvmmsg)

ssize_t
send (int fd, const void *buf, size_t len, int flags)
{
  return XP_CP (SYS_sendto, fd, buf, len, flags, NULL, 0);
}
XP_EXPORT (send)

ssize_t
sendto (int fd, const void *buf, size_t len, int flags,
        __CONST_SOCKADDR_ARG addr, socklen_t addrlen)
{
  return XP_CP (SYS_sendto, fd, buf, len, flags, addr.__sockaddr__, addrlen);
}
XP_EXPORT (sendto)

ssize_t
sendmsg (int fd, const struct msghdr *msg, int flags)
{
  return XP_CP (SYS_sendmsg, fd, msg, flags);
}
XP_EXPORT (sendmsg)

int
sendmmsg (int fd, struct mmsghdr *msgs, unsigned int vlen, int flags)
{
  return (int) XP_CP (SYS_sendmmsg, fd, msgs, vlen, flags);
}
XP_EXPORT (sendmmsg)
