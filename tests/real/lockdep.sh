#!/bin/bash
# The lock validator (XPTHREAD_LOCKDEP=1, xpthread-lockdep(7)) on real
# programs, under the preload in raw and hosted mode: each program must
# work as with glibc, and lockdep must say of it what is known to be true
# (bench/RESULTS.md, "Lockdep on real programs", says why):
#
#   bench/workload -B   the planted order bug (queue.lock and totals_lock,
#                       taken in both orders but never at once): one
#                       report, the cycle of those two, and the program
#                       ends normally with glibc's checksum
#   bench/workload      no report
#   xz -T2, zstd -T2    no report
#   python3 threading   no report (a pool, a lock, a queue)
#   sqlite3             no report (PRAGMA threads=2: the sorter's threads)
#   C++ std::thread     no report (tests/real-cxx-prog.cc, when a C++
#                       compiler is there)
#   fork with jemalloc  no report, and no hang: python3 with jemalloc
#                       preloaded forks (jemalloc's fork handlers, which
#                       run while xpthread holds its fork locks, lock and
#                       initialise its mutexes; redis-server's BGSAVE),
#                       when libjemalloc.so.2 is installed
#
# Every process writes its reports and its summary to the run's
# XPTHREAD_LOCKDEP_FILE; the JSON lines there are what is checked.  No
# time is measured.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need python3 xz zstd sqlite3 cmp
real_find_workload

# verdict LOG WANT: check the JSON lines of LOG.  WANT is "none" (no
# report, and at least one summary), or "cycle A B" (exactly one report,
# a cycle of the orders A before B and B before A, the classes named A
# and B).  Says what is wrong and prints the reports when it fails.
verdict ()
{
  python3 - "$@" <<'PYTHON'
import json, sys
log, want = sys.argv[1], sys.argv[2:]
reports, summaries = [], []
try:
    with open(log) as f:
        lines = [l for l in f if l.startswith("{")]
except OSError:
    lines = []
for l in lines:
    r = json.loads(l)
    (summaries if r["report"] == "summary" else reports).append(r)
def name(c):
    return c.split(" (")[0]
problems = []
if not summaries:
    problems.append("no lockdep summary: was lockdep on?")
if sum(s["reports"] for s in summaries) != len(reports):
    problems.append("the summaries count %d reports, the file holds %d"
                    % (sum(s["reports"] for s in summaries), len(reports)))
if want == ["none"]:
    if reports:
        problems.append("%d reports where none is expected" % len(reports))
else:
    a, b = want[1], want[2]
    cycles = [r for r in reports if r["report"] == "cycle"]
    if len(reports) != 1 or len(cycles) != 1:
        problems.append("%d reports (%d cycles), expected one cycle"
                        % (len(reports), len(cycles)))
    else:
        got = sorted((name(o["first"]), name(o["second"]))
                     for o in cycles[0]["orders"])
        if got != sorted([(a, b), (b, a)]):
            problems.append("the cycle is %s, expected %s before %s "
                            "before %s" % (got, a, b, a))
if problems:
    for p in problems:
        print("FAIL: " + p)
    for r in reports:
        print("  report: " + json.dumps(r)[:600])
    sys.exit(1)
print("%d process%s, %s" % (len(summaries), "es" if len(summaries) != 1
                            else "", "no report" if want == ["none"] else
                            "the cycle %s / %s" % (want[1], want[2])))
PYTHON
}

# ld_run MODE NAME COMMAND...: COMMAND in MODE with lockdep on, its
# reports in $T/NAME.MODE.log, its output in $T/NAME.MODE.out.
ld_run ()
{
  local mode=$1 name=$2; shift 2
  rm -f "$T/$name.$mode.log"
  real_env "$mode"
  "${XPENV[@]}" XPTHREAD_LOCKDEP=1 XPTHREAD_LOCKDEP_FILE="$T/$name.$mode.log" \
    "$@" > "$T/$name.$mode.out" 2>> "$T/$mode.err"
}


seq 1 2000000 > "$T/data" || exit 99
cat > "$T/sort.sql" <<'SQL'
PRAGMA threads=2;
PRAGMA cache_size=100;
CREATE TABLE t AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<200000)
  SELECT x, printf('%08x', (x*31337)%999983) AS s FROM c;
CREATE INDEX t_s ON t(s);
SELECT count(*), sum(x) FROM t;
SQL

jemalloc=$(ls /usr/lib/*/libjemalloc.so.2 /usr/lib/libjemalloc.so.2 2> /dev/null | head -n 1)
cat > "$T/fork.py" <<'PYTHON'
import os, threading
threading.Thread(target=lambda: None).start()
n = 0
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    n += 1
print("forked", n)
PYTHON

cxx=${XP_CXX:-c++}
have_cxx=
if command -v "${cxx%% *}" > /dev/null &&
   $cxx -std=c++17 -O2 -pthread -o "$T/cxx" \
     "$XP_SRCDIR/tests/real-cxx-prog.cc" 2> "$T/cxx.err"; then
  have_cxx=yes
fi

# What glibc computes: the workload's checksum, with and without -B.
real_workload_sum -s 8

tool_run () { ld_run "$@"; }
tool_verdict () { verdict "$T/$2.$1.log" "${@:3}"; }

echo "lockdep: real programs with XPTHREAD_LOCKDEP=1, raw and hosted"
for mode in $REAL_MODES; do
  : > "$T/$mode.err"
  post='grep -qxF "$want_sum" "$T/workload-B.$mode.out" && echo ", checksum as glibc" ||
        { echo ", FAIL: checksum differs from glibc"; false; }'
  real_tool_check "$mode" workload-B "cycle queue totals_lock" "$workload_prog" -B -s 8
  post='grep -qxF "$want_sum" "$T/workload.$mode.out" && echo ", checksum as glibc" ||
        { echo ", FAIL: checksum differs from glibc"; false; }'
  real_tool_check "$mode" workload none "$workload_prog" -s 8
  post=
  real_tool_check "$mode" xz none sh -c 'xz -2 -T2 --block-size=1MiB -c "$1" | xz -d -T2 | cmp - "$1"' \
    sh "$T/data"
  real_tool_check "$mode" zstd none sh -c 'zstd -q -3 -T2 -c "$1" | zstd -q -d -T2 | cmp - "$1"' \
    sh "$T/data"
  post='grep -q "^[0-9a-f]\{64\} 80000 10000$" "$T/python.$mode.out" ||
        { echo ", FAIL: unexpected output"; false; }'
  real_tool_check "$mode" python none python3 "$XP_SRCDIR/tests/real/threads.py"
  post='grep -qx "200000|20000100000" "$T/sqlite.$mode.out" ||
        { echo ", FAIL: unexpected output"; false; }'
  real_tool_check "$mode" sqlite none sh -c 'rm -f "$1"; sqlite3 "$1" < "$2"' sh "$T/db.$mode" "$T/sort.sql"
  if [ -n "$jemalloc" ]; then
    post='grep -qx "forked 3" "$T/jemalloc-fork.$mode.out" ||
          { echo ", FAIL: unexpected output"; false; }'
    real_tool_check "$mode" jemalloc-fork none timeout -s KILL 60 \
      env LD_PRELOAD="$jemalloc:$XP_LIB" python3 "$T/fork.py"
  fi
  if [ -n "$have_cxx" ]; then
    post='grep -q "^pipeline: 333338333350000$" "$T/cxx.$mode.out" ||
          { echo ", FAIL: unexpected output"; false; }'
    real_tool_check "$mode" cxx none "$T/cxx"
  fi
  real_loaded "$mode" || real_failed="$real_failed $mode:loaded"
done
[ -n "$jemalloc" ] || echo "  (no fork with jemalloc: libjemalloc.so.2 is not installed)"
[ -n "$have_cxx" ] || echo "  (no C++ program: $cxx cannot build tests/real-cxx-prog.cc)"
real_tool_summary "lockdep verdicts (the planted bug found, no report elsewhere)"
