#!/bin/bash
# A JVM (OpenJDK): javac compiles tests/real/Work.java (javac is itself a
# multi-threaded Java program: its class file must be glibc's), then the
# JVM runs it; its digest and counts must be glibc's and the expected ones.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need java javac

workload ()
{
  rm -rf "$T/classes"; mkdir "$T/classes"
  real_timed "$1" javac -d "$T/classes" "$XP_SRCDIR/tests/real/Work.java" ||
    { echo "FAIL: javac failed"; return 1; }
  echo "class file sha256 $(sha256sum < "$T/classes/Work.class" | cut -d' ' -f1)" \
    > "$T/$1.result"
  # -Xshare:off: every run maps the same, no class data archive state.
  real_timed "$1" java -Xshare:off -Xmx256m -cp "$T/classes" Work > "$T/out" ||
    { echo "FAIL: java Work failed"; cat "$T/out"; return 1; }
  cat "$T/out" >> "$T/$1.result"
  # 8 threads x 100000 increments; thread t adds t to the map 100000
  # times: (0 + ... + 7) x 100000; the hand-off sums 0..49999.
  grep -q "^pool [0-9a-f]\{64\} counter 800000 map 2800000 handoff 1249975000$" "$T/out" ||
    { echo "FAIL: unexpected output:"; cat "$T/out"; return 1; }
}

real_main
