#!/bin/sh
# The differential harness: tests/abi-diff calls every exported name of
# the thread ABI with good, bad and borderline arguments (tests/abi-diff.c,
# tests/abi-diff.sig), once with glibc's threads and then with libxpthread
# preloaded (raw and hosted) and linked.  Where glibc answers, xpthread
# must answer the same, unless tests/abi-diff.known lists the difference
# and why; where glibc crashes or hangs, xpthread may answer or do the
# same; xpthread never hangs where glibc does not.
prog=$XP_BUILDDIR/tests/abi-diff
linked=$XP_BUILDDIR/tests/abi-diff-linked
known=$XP_SRCDIR/tests/abi-diff.known
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

release=$(getconf GNU_LIBC_VERSION | sed 's/^glibc //')
"$prog" > "$tmp/glibc" || { echo "FAIL: the harness fails with glibc"; exit 99; }
fail=0
for how in raw hosted linked; do
  # The harness's stderr says which library answered, and in which mode.
  case $how in
    linked) env XPTHREAD_SHOW_MODE=1 "$linked" ;;
    *) env LD_PRELOAD="$XP_LIB" XPTHREAD_MODE=$how XPTHREAD_SHOW_MODE=1 "$prog" ;;
  esac > "$tmp/$how" 2> "$tmp/$how.err"
  # Linked, the mode is the environment's (make check runs in both).
  want=$how
  [ $how = linked ] && { [ "${XPTHREAD_MODE:-}" = hosted ] && want=hosted || want=raw; }
  if ! grep -q "^xpthread: mode $want" "$tmp/$how.err"; then
    echo "FAIL: $how: xpthread did not answer in $want mode"; fail=1
  fi
done

for how in raw hosted linked; do
  awk -v how=$how -v known="$known" -v release="$release" '
    # RANGE: "<2.41" or ">=2.43", the glibc releases a line is for.
    function release_number(text,   v) {
      split(text, v, ".")
      return v[1] * 1000 + v[2]
    }
    function in_releases(range,   op, at) {
      op = range; sub(/[0-9.]+$/, "", op)
      at = release_number(substr(range, length(op) + 1))
      if (op == "<") return release_number(release) < at
      if (op == ">=") return release_number(release) >= at
      return 0
    }
    BEGIN {
      FS = "\t"
      while ((getline line < known) > 0)
        if (line !~ /^#/ && line != "") {
          n = split(line, f, "\t")
          if (n < 3 || in_releases(f[3]))
            pattern[++patterns] = f[1]
        }
      FS = ": "
    }
    # Key: the call and its argument, up to the first ": ".
    { key = $1; result = substr($0, length($1) + 3) }
    FILENAME == ARGV[1] { glibc[key] = result; next }
    !(key in glibc) { print how ": " key ": not called with glibc"; bad = 1; next }
    {
      g = glibc[key]
      if (result == g) next
      if (result ~ /hangs$/) {
        print "FAIL: " how ": " key ": hangs; glibc: " g; bad = 1; next
      }
      if (g == "absent" || g == "hangs") next
      if (g ~ /killed by/) {
        print how ": answered where glibc crashes: " key ": " result "; glibc: " g
        crashed++; next
      }
      for (i = 1; i <= patterns; i++)
        if (key ~ pattern[i]) {
          print how ": listed: " key ": " result "; glibc: " g
          listed++; next
        }
      print "FAIL: " how ": " key ": " result "; glibc: " g; bad = 1
    }
    END {
      printf "%s: %d calls, %d listed differences, %d answered where glibc crashes\n", how, NR - length(glibc), listed, crashed
      exit bad
    }' "$tmp/glibc" "$tmp/$how" || fail=1
done
exit $fail
