#!/bin/sh
# A fork whose late handler (registered before xpthread's, as jemalloc's
# is, at its first allocation) waits for a mutex held by a thread that is
# inside the lock debugging tools' hooks: with lockdep and with the
# profiler, raw and hosted, the fork and the thread must end (a hang is
# killed after 30 s).  Preload only: the handler must be registered
# before libxpthread's constructor runs, which it is when it is preloaded
# after libxpthread.
handler=$XP_BUILDDIR/tests/.libs/fork-late-handler.so
prog=$XP_BUILDDIR/tests/fork-late
fail=0
for mode in raw hosted; do
  for tool in XPTHREAD_LOCKDEP XPTHREAD_PROF; do
    out=$(timeout -s KILL 30 env LD_PRELOAD="$XP_LIB:$handler" \
            XPTHREAD_MODE=$mode XPTHREAD_SHOW_MODE=1 $tool=1 \
            XPTHREAD_LOCKDEP_FILE=/dev/null XPTHREAD_PROF_FILE=/dev/null \
            "$prog" 2> "$XP_BUILDDIR/tests/fork-late.err")
    status=$?
    if [ $status != 0 ] || [ "$out" != forked ]; then
      echo "FAIL: $mode $tool: exit status $status, output '$out'"
      cat "$XP_BUILDDIR/tests/fork-late.err"
      fail=1
    elif ! grep -q "^xpthread: mode $mode" "$XP_BUILDDIR/tests/fork-late.err"; then
      echo "FAIL: $mode $tool: xpthread did not run in $mode mode"
      fail=1
    else
      echo "$mode $tool: the fork and the thread ended"
    fi
  done
done
rm -f "$XP_BUILDDIR/tests/fork-late.err"
exit $fail
