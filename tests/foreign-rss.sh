#!/bin/sh
# 100,000 threads started by glibc's pthread_create and joined with the
# program's pthread_join (tests/foreign-rss.c): under the preload, raw and
# hosted, the resident set at the end must be within 1 MiB of glibc's
# own, and grow no more than glibc's does between the first 1,000 threads
# and the last.
prog=$XP_BUILDDIR/tests/foreign-rss
run ()
{
  timeout -s KILL 300 env "$@" "$prog" 1000 100000
}
set -- $(run XP_NONE=1) || { echo "FAIL: the program fails with glibc"; exit 99; }
glibc_before=$1 glibc_after=$2
echo "glibc: $glibc_before KiB after 1000 threads, $glibc_after KiB after 100000"
fail=0
for mode in raw hosted; do
  out=$(run LD_PRELOAD="$XP_LIB" XPTHREAD_MODE=$mode) ||
    { echo "FAIL: $mode: the program failed"; fail=1; continue; }
  set -- $out
  echo "$mode: $1 KiB after 1000 threads, $2 KiB after 100000"
  if [ $(( $2 - glibc_after )) -gt 1024 ]; then
    echo "FAIL: $mode: $(( $2 - glibc_after )) KiB more than glibc"
    fail=1
  fi
  if [ $(( ($2 - $1) - (glibc_after - glibc_before) )) -gt 256 ]; then
    echo "FAIL: $mode: grew $(( $2 - $1 )) KiB, glibc $(( glibc_after - glibc_before ))"
    fail=1
  fi
done
exit $fail
