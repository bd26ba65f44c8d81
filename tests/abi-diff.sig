# Arguments of every name in nptl-compat/<arch>/abilist, for the
# differential harness (tests/abi-diff.sh): tests/gen-abi-diff.awk makes a
# call per line, and refuses an abilist name without a line here.
#
#   NAME RESULT KIND...    RESULT: i (int), n (a number whose sign is
#                          all that stays the same, such as a tid), p
#                          (pointer), v (void), e (-1 and errno), x
#                          (xpthread's own: glibc has no such name)
#   NAME skip REASON...    no call can be made in a case of its own
#
# Each KIND is a function xp_diff_KIND (int) in tests/abi-diff.c, whose
# value 0 is a good argument and the others bad or borderline ones.

# --- fortified and cancellation-point wrappers of system calls ---------------
__open64_2 e path flags
__open_2 e path flags
__openat64_2 e dirfd path flags
__openat_2 e dirfd path flags
__poll_chk e pollfds nfds timeout_ms pollsize
__ppoll_chk e pollfds nfds reltime sigset pollsize
__pread64_chk e rfd buf len offset bufsize
__pread_chk e rfd buf len offset bufsize
__read_chk e rfd buf len bufsize
__recv_chk e sockfd buf len bufsize msgflags
__recvfrom_chk e sockfd buf len bufsize msgflags sockaddr socklenp
accept e sockfd sockaddr socklenp
accept4 e sockfd sockaddr socklenp msgflags
aio_suspend e aiolist int reltime
aio_suspend64 e aiolist64 int reltime
clock_nanosleep i clock int reltime out
close e closefd
connect e sockfd sockaddr socklen
creat e path mode
creat64 e path mode
epoll_pwait e epfd events maxevents timeout_ms sigset
epoll_pwait2 e epfd events maxevents reltime sigset
epoll_wait e epfd events maxevents timeout_ms
fcntl e rfd fcntlcmd int
fcntl64 e rfd fcntlcmd int
fdatasync e wfd
fsync e wfd
lockf e wfd lockfcmd offset
lockf64 e wfd lockfcmd offset
mq_receive e mqd buf len out
mq_send e mqd buf len uint
mq_timedreceive e mqd buf len out abstime
mq_timedsend e mqd buf len uint abstime
msgrcv e msqid buf len long msgflags
msgsnd e msqid msgbuf len msgflags
msync e mapping len msyncflags
nanosleep e reltime out
open e path flags
open64 e path flags
openat e dirfd path flags
openat64 e dirfd path flags
pause skip waits for a signal nobody sends
poll e pollfds nfds timeout_ms
ppoll e pollfds nfds reltime sigset
pread e rfd buf len offset
pread64 e rfd buf len offset
preadv e rfd iov iovcnt offset
preadv2 e rfd iov iovcnt offset rwflags
preadv64 e rfd iov iovcnt offset
preadv64v2 e rfd iov iovcnt offset rwflags
pselect e nfds fdset fdset fdset reltime sigset
pwrite e wfd buf len offset
pwrite64 e wfd buf len offset
pwritev e wfd iov iovcnt offset
pwritev2 e wfd iov iovcnt offset rwflags
pwritev64 e wfd iov iovcnt offset
pwritev64v2 e wfd iov iovcnt offset rwflags
read e rfd buf len
readv e rfd iov iovcnt
recv e sockfd buf len msgflags
recvfrom e sockfd buf len msgflags sockaddr socklenp
recvmmsg e sockfd mmsg vlen msgflags reltimem
recvmsg e sockfd msghdr msgflags
select e nfds fdset fdset fdset timeval
send e sockfd buf len msgflags
sendmmsg e sockfd mmsg vlen msgflags
sendmsg e sockfd msghdr msgflags
sendto e sockfd buf len msgflags sockaddr socklen
sigsuspend skip waits for a signal nobody sends
sigtimedwait e sigset siginfo reltime
sigwait i sigset out
sigwaitinfo skip waits for a signal nobody sends
__sigpause skip waits for a signal nobody sends
__xpg_sigpause skip waits for a signal nobody sends
sigpause skip waits for a signal nobody sends
sleep i seconds
system i command
tcdrain e wfd
usleep e useconds
wait e out
wait3 e out waitoptions out
wait4 e pid out waitoptions out
waitid e idtype pid siginfo waitoptions
waitpid e pid out waitoptions
write e wfd buf len
writev e wfd iov iovcnt

# --- credentials (each case is a child of its own) -------------------------
initgroups e cstr gid
setegid e gid
seteuid e uid
setgid e gid
setgroups e ngroups groups
setregid e gid gid
setresgid e gid gid gid
setresuid e uid uid uid
setreuid e uid uid
setuid e uid

# --- threads ---------------------------------------------------------------
pthread_create i outthread attr startfn ptr
pthread_detach i thread
pthread_equal i thread thread
pthread_exit skip ends the thread that calls it
pthread_join i thread outptr
pthread_tryjoin_np i thread outptr
pthread_timedjoin_np i thread outptr abstime
pthread_clockjoin_np i thread outptr clock abstime
pthread_self p
pthread_cancel i thread
pthread_kill i thread sig
pthread_sigqueue i thread sig sigval
pthread_kill_other_threads_np v
pthread_getattr_np i thread outattr
pthread_getname_np i thread out namelen
pthread_setname_np i thread cstr
pthread_getschedparam i thread out outsched
pthread_setschedparam i thread policy sched
pthread_setschedprio i thread prio
pthread_getaffinity_np i thread cpusize cpuset
pthread_setaffinity_np i thread cpusize cpuset
pthread_getcpuclockid i thread out
pthread_gettid_np n thread
pthread_getconcurrency i
pthread_setconcurrency i int
pthread_yield i
sched_yield i
pthread_sigmask i sighow sigset out
pthread_atfork i forkfn forkfn forkfn
__pthread_get_minstack i attr

# --- cancellation ----------------------------------------------------------
pthread_setcancelstate i int out
pthread_setcanceltype i int out
pthread_testcancel v
__pthread_cleanup_routine skip takes the frame pthread_cleanup_push builds
__pthread_register_cancel skip takes the frame pthread_cleanup_push builds
__pthread_register_cancel_defer skip takes the frame pthread_cleanup_push builds
__pthread_unregister_cancel skip takes the frame pthread_cleanup_push builds
__pthread_unregister_cancel_restore skip takes the frame pthread_cleanup_push builds
__pthread_unwind_next skip unwinds the calling thread
_pthread_cleanup_pop skip takes the frame of the old cleanup macros
_pthread_cleanup_pop_restore skip takes the frame of the old cleanup macros
_pthread_cleanup_push skip takes the frame of the old cleanup macros
_pthread_cleanup_push_defer skip takes the frame of the old cleanup macros

# --- thread attributes -----------------------------------------------------
pthread_attr_init i attr
pthread_attr_destroy i attr
pthread_attr_getaffinity_np i attr cpusize cpuset
pthread_attr_setaffinity_np i attr cpusize cpuset
pthread_attr_getdetachstate i attr out
pthread_attr_setdetachstate i attr int
pthread_attr_getguardsize i attr out
pthread_attr_setguardsize i attr stacksize
pthread_attr_getinheritsched i attr out
pthread_attr_setinheritsched i attr int
pthread_attr_getschedparam i attr outsched
pthread_attr_setschedparam i attr sched
pthread_attr_getschedpolicy i attr out
pthread_attr_setschedpolicy i attr policy
pthread_attr_getscope i attr out
pthread_attr_setscope i attr int
pthread_attr_getsigmask_np i attr out
pthread_attr_setsigmask_np i attr sigset
pthread_attr_getstack i attr outptr out
pthread_attr_setstack i attr stackaddr stacksize
pthread_attr_getstackaddr i attr outptr
pthread_attr_setstackaddr i attr stackaddr
pthread_attr_getstacksize i attr out
pthread_attr_setstacksize i attr stacksize
pthread_getattr_default_np i outattr
pthread_setattr_default_np i attr

# --- thread-specific data, once --------------------------------------------
pthread_key_create i outkey destructor
__pthread_key_create i outkey destructor
pthread_key_delete i key
pthread_getspecific p key
__pthread_getspecific p key
pthread_setspecific i key ptr
__pthread_setspecific i key ptr
pthread_once i once oncefn
__pthread_once i once oncefn

# --- mutexes ---------------------------------------------------------------
pthread_mutex_init i mutex mutexattr
__pthread_mutex_init i mutex mutexattr
pthread_mutex_destroy i mutex
__pthread_mutex_destroy i mutex
pthread_mutex_lock i mutex
__pthread_mutex_lock i mutex
pthread_mutex_trylock i mutex
__pthread_mutex_trylock i mutex
pthread_mutex_unlock i mutex
__pthread_mutex_unlock i mutex
pthread_mutex_timedlock i mutex abstime
pthread_mutex_clocklock i mutex clock abstime
pthread_mutex_consistent i mutex
pthread_mutex_consistent_np i mutex
pthread_mutex_getprioceiling i mutex out
pthread_mutex_setprioceiling i mutex prio out
pthread_mutexattr_init i mutexattr
__pthread_mutexattr_init i mutexattr
pthread_mutexattr_destroy i mutexattr
__pthread_mutexattr_destroy i mutexattr
pthread_mutexattr_getkind_np i mutexattr out
pthread_mutexattr_setkind_np i mutexattr int
pthread_mutexattr_gettype i mutexattr out
pthread_mutexattr_settype i mutexattr int
__pthread_mutexattr_settype i mutexattr int
pthread_mutexattr_getprioceiling i mutexattr out
pthread_mutexattr_setprioceiling i mutexattr prio
pthread_mutexattr_getprotocol i mutexattr out
pthread_mutexattr_setprotocol i mutexattr int
pthread_mutexattr_getpshared i mutexattr out
pthread_mutexattr_setpshared i mutexattr int
pthread_mutexattr_getrobust i mutexattr out
pthread_mutexattr_setrobust i mutexattr int
pthread_mutexattr_getrobust_np i mutexattr out
pthread_mutexattr_setrobust_np i mutexattr int

# --- condition variables ---------------------------------------------------
pthread_cond_init i cond condattr
pthread_cond_destroy i cond
pthread_cond_signal i cond
pthread_cond_broadcast i cond
pthread_cond_wait skip waits for a signal nobody sends
pthread_cond_timedwait i cond heldmutex abstime
pthread_cond_clockwait i cond heldmutex clock abstime
pthread_condattr_init i condattr
pthread_condattr_destroy i condattr
pthread_condattr_getclock i condattr out
pthread_condattr_setclock i condattr clock
pthread_condattr_getpshared i condattr out
pthread_condattr_setpshared i condattr int

# --- read-write locks ------------------------------------------------------
pthread_rwlock_init i rwlock rwlockattr
__pthread_rwlock_init i rwlock rwlockattr
pthread_rwlock_destroy i rwlock
__pthread_rwlock_destroy i rwlock
pthread_rwlock_rdlock i rwlock
__pthread_rwlock_rdlock i rwlock
pthread_rwlock_wrlock i rwlock
__pthread_rwlock_wrlock i rwlock
pthread_rwlock_tryrdlock i rwlock
__pthread_rwlock_tryrdlock i rwlock
pthread_rwlock_trywrlock i rwlock
__pthread_rwlock_trywrlock i rwlock
pthread_rwlock_unlock i rwlock
__pthread_rwlock_unlock i rwlock
pthread_rwlock_timedrdlock i rwlock abstime
pthread_rwlock_timedwrlock i rwlock abstime
pthread_rwlock_clockrdlock i rwlock clock abstime
pthread_rwlock_clockwrlock i rwlock clock abstime
pthread_rwlockattr_init i rwlockattr
pthread_rwlockattr_destroy i rwlockattr
pthread_rwlockattr_getkind_np i rwlockattr out
pthread_rwlockattr_setkind_np i rwlockattr int
pthread_rwlockattr_getpshared i rwlockattr out
pthread_rwlockattr_setpshared i rwlockattr int

# --- barriers, spinlocks ---------------------------------------------------
pthread_barrier_init i barrier barrierattr count
pthread_barrier_destroy i barrier
pthread_barrier_wait i barrier
pthread_barrierattr_init i barrierattr
pthread_barrierattr_destroy i barrierattr
pthread_barrierattr_getpshared i barrierattr out
pthread_barrierattr_setpshared i barrierattr int
pthread_spin_init i spin int
pthread_spin_destroy i spin
pthread_spin_lock i spin
pthread_spin_trylock i spin
pthread_spin_unlock i spin

# --- semaphores ------------------------------------------------------------
sem_init e sem int count
sem_destroy e sem
sem_post e sem
sem_wait e sem
sem_trywait e sem
sem_timedwait e sem abstime
sem_clockwait e sem clock abstime
sem_getvalue e sem out
sem_open p semname oflags mode count
sem_close e namedsem
sem_unlink e semname

# --- C11 threads -----------------------------------------------------------
call_once v c11once c11oncefn
cnd_init i cnd
cnd_destroy v cnd
cnd_signal i cnd
cnd_broadcast i cnd
cnd_wait skip waits for a signal nobody sends
cnd_timedwait i cnd heldmtx abstime
mtx_init i mtx mtxtype
mtx_destroy v mtx
mtx_lock i mtx
mtx_trylock i mtx
mtx_unlock i mtx
mtx_timedlock i mtx abstime
thrd_create i outthrd thrdfn ptr
thrd_current p
thrd_detach i thrd
thrd_equal i thrd thrd
thrd_exit skip ends the thread that calls it
thrd_join i thrd out
thrd_sleep i reltime out
thrd_yield v
tss_create i outtss destructor
tss_delete v tss
tss_get p tss
tss_set i tss ptr

# --- xpthread's own --------------------------------------------------------
xpthread_mode_np x
xpthread_setfsuid_np x uid
xpthread_setfsgid_np x gid
xpthread_getfsuid_np x
xpthread_getfsgid_np x
xpthread_setresuid_np x uid uid uid
xpthread_setresgid_np x gid gid gid
xpthread_getresuid_np x out out out
xpthread_getresgid_np x out out out
xpthread_setgroups_np x ngroups groups
xpthread_getgroups_np x ngroups outgroups out
xpthread_identity_switch_np x identity int outsaved
xpthread_identity_restore_np x outsaved
