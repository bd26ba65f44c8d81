#!/bin/sh
# valgrind on programs using xpthread: each small program (valgrind-*.c:
# a correct one, a racy one, a lock-order error) runs under memcheck,
# helgrind and DRD with glibc's threads, with libxpthread preloaded
# (XPTHREAD_MODE unset, raw and hosted: under valgrind all start threads
# hosted) and linked with it, and xpthread must give what glibc gives:
# no error where glibc has none, and otherwise the same errors, told by
# their kind, the program's line and the variable or locks named.  SKIP
# (77) without valgrind or when the library was built without its headers.
set -u
builddir=${XP_BUILDDIR:-.}
lib=${XP_LIB:?XP_LIB must name libxpthread.so}
command -v valgrind >/dev/null 2>&1 ||
  { echo "valgrind: not installed (Debian package valgrind)"; exit 77; }
grep -q '^#define HAVE_VALGRIND_HELGRIND_H 1' "$builddir/config.h" ||
  { echo "valgrind: built without <valgrind/helgrind.h>"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# valgrind 3.19 gives up on the DWARF 5 debug information clang 14
# writes ("unhandled DW_FORM"): then there is nothing to compare.
valgrind --tool=none --log-file="$tmp/probe" "$builddir/tests/valgrind-correct-linked" \
  > /dev/null 2>&1
if grep -q "I can't recover" "$tmp/probe"; then
  echo "valgrind: $(valgrind --version) cannot read this build's debug information"
  exit 77
fi
ways="glibc auto raw hosted linked"

# start TOOL PROGRAM WAY: runs it in the background, its log in
# $tmp/TOOL-PROGRAM-WAY.
start () {
  tool=$1 prog=$2 way=$3 exe=$builddir/tests/$2
  case $way in
    glibc) set -- -u LD_PRELOAD ;;
    auto) set -- LD_PRELOAD="$lib" ;;
    linked) set -- -u LD_PRELOAD; exe=$exe-linked ;;
    *) set -- LD_PRELOAD="$lib" XPTHREAD_MODE="$way" ;;
  esac
  env "$@" valgrind --tool="$tool" --log-file="$tmp/$tool-$prog-$way" \
    "$exe" > /dev/null 2>&1 &
}

# errors LOG: its "N errors from M contexts".
errors () {
  sed -n 's/.*ERROR SUMMARY: \([0-9]* errors from [0-9]* contexts\).*/\1/p' \
    "$1"
}

# signature LOG: each error's first line without addresses and thread
# numbers, with the first frame in the test program and the data symbols
# the tool names: what must be the same with glibc's threads and
# xpthread's, whose own frames differ.
signature () {
  sed -n 's/^==[0-9]*== //p' "$1" | awk '
    /^(Possible data race|Conflicting|Thread #[0-9]+: |The object at|Invalid|Conditional|Use of|Syscall param|Mismatched|[0-9,]+ .*bytes in)/ {
      if (head != "") print head; head = $0; frame = 0; next }
    head != "" && !frame && /valgrind-[a-z]*\.c:/ {
      sub (/.*: /, ""); head = head " @ " $0; frame = 1; next }
    /inside data symbol/ { sub (/.*inside /, ""); print "  " $0 }
    END { if (head != "") print head }' |
  sed 's/0x[0-9A-Fa-f]*/ADDR/g; s/#[0-9]*/#N/g; s/thread [0-9][0-9]*/thread N/g' |
  sort -u
}

# A tool's runs all at once, to keep the test short.
fail=0
progs="valgrind-correct valgrind-race valgrind-order"
for tool in memcheck helgrind drd; do
  for prog in $progs; do
    for way in $ways; do
      start "$tool" "$prog" "$way"
    done
  done
  wait
  for prog in $progs; do
    base=$tmp/$tool-$prog-glibc
    want=$(errors "$base")
    echo "$tool $prog glibc: ${want:-no summary}"
    [ -n "$want" ] || { cat "$base"; fail=1; continue; }
    signature "$base" > "$base.sig"
    for way in $ways; do
      [ "$way" = glibc ] && continue
      log=$tmp/$tool-$prog-$way
      got=$(errors "$log")
      echo "$tool $prog $way: ${got:-no summary}"
      signature "$log" > "$log.sig"
      case $want in
        "0 errors"*) [ "${got%% *}" = 0 ] ;;
        *) [ -n "$got" ] && [ "${got%% *}" != 0 ] &&
             cmp -s "$base.sig" "$log.sig" ;;
      esac || {
        echo "  differs from glibc's:"
        diff "$base.sig" "$log.sig" | sed 's/^/  /'
        [ "${want%% *}" != 0 ] || cat "$log"
        fail=1
      }
    done
  done
done
# Under valgrind, which runs one thread at a time, no waiter spins: the
# spin policy reports no spinner per lock there, and its default outside.
policy () {
  env XPTHREAD_SHOW_MODE=1 LD_PRELOAD="$lib" "$@" \
    "$builddir/tests/valgrind-correct" 2>&1 > /dev/null |
    sed -n 's/^xpthread: spin policy: \([0-9]*\) per lock.*/\1/p' | tail -1
}
inside=$(policy valgrind --tool=none --log-file=/dev/null)
outside=$(policy)
echo "spinners per lock: $inside under valgrind, $outside outside"
[ "$inside" = 0 ] && [ -n "$outside" ] || fail=1
exit $fail
