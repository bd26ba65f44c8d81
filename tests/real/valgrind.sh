#!/bin/bash
# valgrind's memcheck, helgrind and DRD on xz -T2 (a small file cut into
# blocks, so that both threads work), with glibc's threads and under the
# preload (LD_PRELOAD reaches the guest through valgrind).  Each tool must
# run xz to the end (its output decompresses to the input) and find as
# many errors (ERROR SUMMARY) as with glibc's threads.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need valgrind xz
# Slow under valgrind: one round is enough to compare error counts.
XP_REAL_ROUNDS=${XP_REAL_ROUNDS:-1}
# Under valgrind the library may choose hosted mode itself.
REAL_ALSO_OK='^xpthread: mode hosted (running under valgrind)$'
# valgrind reads the debug information of every object it loads, at
# every start.  glibc's libc has none (Debian ships it apart), so the
# library is compared as installed stripped (make install-strip), not
# as built with -g.
strip --strip-debug -o "$T/libxpthread.so" "$XP_LIB" || exit 99
XP_LIB=$T/libxpthread.so

seq 1 20000 > "$T/data" || exit 99
want=$(sha256sum < "$T/data")

workload ()
{
  local mode=$1 tool errors got
  for tool in memcheck helgrind drd; do
    real_timed "$mode" valgrind --tool=$tool --log-file="$T/$tool.log" \
      xz -T2 -1 --block-size=16KiB -c "$T/data" > "$T/packed" ||
      { echo "FAIL: valgrind --tool=$tool xz failed:"
        grep -m1 -A14 -E 'impossible|Process terminating|Assertion' "$T/$tool.log" ||
          tail -20 "$T/$tool.log"
        return 1; }
    errors=$(sed -n 's/^==[0-9]*== ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$T/$tool.log")
    got=$(xz -d -c "$T/packed" | sha256sum)
    if [ -z "$errors" ] || [ "$got" != "$want" ]; then
      echo "FAIL: xz did not finish under $tool:"; tail -20 "$T/$tool.log"; return 1
    fi
    echo "$tool: $errors errors"
    echo "$tool: $errors errors" >> "$T/$mode.result"
    # Under the preload, what the tool found that glibc's run did not.
    if [ "$mode" != glibc ] && [ "$errors" != 0 ]; then
      grep -A4 -E '^==[0-9]*== (Possible data race|Thread #[0-9]* |Conflicting|[A-Z][a-z]+ .*(invalid|uninitialised))' \
        "$T/$tool.log" | head -12 | sed 's/^/    /'
    fi
  done
}

real_main
