#!/bin/sh
# A C++ std::thread program (mutex, condition_variable, thread_local with
# destructors, std::async with an exception) built here with the C++
# compiler and run with libxpthread preloaded; its output is compared with
# the known answer.
set -u
cxx=${XP_CXX:-c++}
set -- $cxx
command -v "$1" > /dev/null || { echo "SKIP: no C++ compiler ($cxx)"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

if ! $cxx -std=c++17 -O2 -pthread -o "$tmp/prog" \
     "$XP_SRCDIR/tests/real-cxx-prog.cc"; then
  echo "FAIL: cannot build real-cxx-prog.cc with $cxx"
  exit 1
fi

cat > "$tmp/expected" <<'OUT'
xpthread mapped: yes
pipeline: 333338333350000
thread_local: sum 7992, destroyed 8
async: 500000500000, error "task failed as intended"
OUT

env LD_PRELOAD="$XP_LIB" XPTHREAD_SHOW_MODE=1 "$tmp/prog" \
  > "$tmp/out" 2> "$tmp/err"
status=$?
cat "$tmp/out"
cat "$tmp/err"
if [ $status -ne 0 ]; then
  echo "FAIL: the program exited with status $status"
  exit 1
fi
grep -q '^xpthread: mode ' "$tmp/err" || { echo "FAIL: no xpthread mode line"; exit 1; }
if ! cmp -s "$tmp/expected" "$tmp/out"; then
  echo "FAIL: unexpected output; expected:"
  cat "$tmp/expected"
  exit 1
fi
exit 0
