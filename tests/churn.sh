#!/bin/sh
# Memory on thread churn: 100,000 threads that each malloc and free, run
# with plain glibc and with libxpthread preloaded.  xpthread's resident set
# growth may exceed glibc's by at most 1 MiB: an exited thread must not
# leave its malloc cache behind.  XP_CHURN_THREADS overrides the count.
set -u
prog="$XP_BUILDDIR/tests/test-churn"
threads=${XP_CHURN_THREADS:-100000}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

growth ()
{
  sed -n 's/^rss-growth-kib //p' "$1"
}

# Both runs at once: they are independent, and this halves the time.
"$prog" "$threads" > "$tmp/glibc.out" &
glibc_pid=$!
env LD_PRELOAD="$XP_LIB" XPTHREAD_SHOW_MODE=1 "$prog" "$threads" \
  > "$tmp/xp.out" 2> "$tmp/xp.err"
xp_status=$?
wait "$glibc_pid"
glibc_status=$?
if [ $glibc_status -ne 0 ]; then
  echo "FAIL: test-churn failed without xpthread (status $glibc_status)"
  exit 1
fi
if [ $xp_status -ne 0 ]; then
  echo "FAIL: test-churn failed under xpthread (status $xp_status)"
  cat "$tmp/xp.err"
  exit 1
fi
# The preload must have taken effect, or the comparison means nothing.
if ! grep '^xpthread: mode ' "$tmp/xp.err"; then
  echo "FAIL: xpthread was not loaded (no mode line on stderr)"
  cat "$tmp/xp.err"
  exit 1
fi

glibc_kib=$(growth "$tmp/glibc.out")
xp_kib=$(growth "$tmp/xp.out")
echo "glibc:    $(head -n 1 "$tmp/glibc.out")"
echo "xpthread: $(head -n 1 "$tmp/xp.out")"
echo "RSS growth over $threads threads: glibc ${glibc_kib} KiB, xpthread ${xp_kib} KiB"
if [ -z "$glibc_kib" ] || [ -z "$xp_kib" ]; then
  echo "FAIL: no growth figure"
  exit 1
fi
if [ "$xp_kib" -gt $((glibc_kib + 1024)) ]; then
  echo "FAIL: xpthread grew by more than glibc + 1 MiB"
  exit 1
fi
exit 0
