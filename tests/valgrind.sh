#!/bin/sh
# valgrind on programs using xpthread: each small program (valgrind-*.c)
# runs under memcheck and helgrind with glibc's threads, with libxpthread
# preloaded (XPTHREAD_MODE unset, raw and hosted: under valgrind all
# start threads hosted) and linked with it, and xpthread must give what
# glibc gives: no memcheck error on any of them, and helgrind's "lock
# order violated" on the AB/BA program.  SKIP (77) without valgrind or
# when the library was built without its headers.
set -u
builddir=${XP_BUILDDIR:-.}
lib=${XP_LIB:?XP_LIB must name libxpthread.so}
command -v valgrind >/dev/null 2>&1 ||
  { echo "valgrind: not installed (Debian package valgrind)"; exit 77; }
grep -q '^#define HAVE_VALGRIND_HELGRIND_H 1' "$builddir/config.h" ||
  { echo "valgrind: built without <valgrind/helgrind.h>"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# run TOOL PROGRAM LABEL ENV...: valgrind's log in $tmp/log, its error
# count in $errors.
run () {
  tool=$1 prog=$2 label=$3
  shift 3
  env "$@" valgrind --tool="$tool" --log-file="$tmp/log" \
    "$builddir/tests/$prog" > /dev/null 2>&1
  errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$tmp/log")
  echo "$tool $prog $label: ${errors:-none} errors"
  [ -n "$errors" ] || { cat "$tmp/log"; fail=1; errors=-1; }
}

# check TOOL PROGRAM WANT: WANT is 0 (no error) or a string helgrind must
# print; every way of running xpthread must match.
check () {
  tool=$1 prog=$2 want=$3
  for way in glibc auto raw hosted linked; do
    case $way in
      glibc) run "$tool" "$prog" glibc -u LD_PRELOAD ;;
      auto) run "$tool" "$prog" preload LD_PRELOAD="$lib" ;;
      linked) [ -x "$builddir/tests/$prog-linked" ] || continue
              run "$tool" "$prog-linked" linked -u LD_PRELOAD ;;
      *) run "$tool" "$prog" "preload $way" LD_PRELOAD="$lib" \
             XPTHREAD_MODE="$way" ;;
    esac
    if [ "$want" = 0 ]; then
      [ "$errors" = 0 ] || { cat "$tmp/log"; fail=1; }
    elif ! grep -q "$want" "$tmp/log"; then
      echo "  no \"$want\""; fail=1
    fi
  done
}

for prog in valgrind-correct valgrind-race valgrind-order; do
  check memcheck "$prog" 0
done
check helgrind valgrind-order 'lock order "0x[0-9A-F]* before 0x[0-9A-F]*" violated'
exit $fail
