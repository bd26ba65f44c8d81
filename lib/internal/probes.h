/* Static probes (USDT) for tracers: perf, bpftrace, bcc, SystemTap.

   The probes carry glibc's names and arguments (provider "libc", as glibc
   since 2.34) where glibc has the probe, so that scripts written for
   glibc's probes work on libxpthread.so; man/xpthread-probes.7 lists each
   probe, where it fires and its arguments.  A probe is a nop in the code
   plus a note that tracers read, but its arguments must sit in registers
   or memory at the nop, which can cost an instruction or a spill: so the
   probes sit on the paths that wait or wake, never on the inlined
   uncontended lock and unlock (bench/count-mutex counts those).

   Built without <sys/sdt.h> (configure says so), XP_PROBE expands to
   nothing and XP_PROBES_ON is 0, for the few places that would compute
   something only for a probe.  */
#ifndef XP_INTERNAL_PROBES_H
#define XP_INTERNAL_PROBES_H

#include <config.h>

#if HAVE_SYS_SDT_H
/* STAP_PROBEV, which counts the arguments, exists only on request.  */
# define SDT_USE_VARIADIC 1
# include <sys/sdt.h>
# define XP_PROBES_ON 1
/* XP_PROBE (name, arg...): probe libc:name with up to 12 arguments.  */
# define XP_PROBE(name, ...) STAP_PROBEV (libc, name, __VA_ARGS__)
#else
# define XP_PROBES_ON 0
# define XP_PROBE(name, ...) ((void) 0)
#endif

#endif
