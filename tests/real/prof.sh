#!/bin/bash
# The contention profiler (XPTHREAD_PROF=1, xpthread(7)) on real
# programs, under the preload in raw and hosted mode: each program must
# compute what it computes with glibc, and its report must hold
# together (check_report below):
#
#   bench/workload      the checksum of glibc's run; the stripes, the
#                       queue's lock and its condition variables appear
#   python3 threading   its output (tests/real/threads.py); the interpreter's lock (a mutex and
#                       condition variables of CPython's) is contended
#   sysbench mutex      its acquisitions: no more than it makes
#   xz -T2, zstd -T2    a round trip that gives the input back
#
# Every process writes its JSON report to $T/NAME.MODE.PID.json.  No time
# is measured.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need python3 xz zstd sysbench cmp
real_find_workload

# check_report GLOB WANT...: every report matching GLOB parses and is
# consistent (sites add up to their rows, waits and holds add up, the
# owners blamed are no more than the waits); WANT is a list of
# "KIND:NAME" rows that must be there, contended (NAME: the start of
# the class name), or "max-acquisitions:N" (no row counts more).
check_report ()
{
  python3 - "$@" <<'PYTHON'
import glob, json, sys
pattern, wants = sys.argv[1], sys.argv[2:]
problems, rows = [], []
files = sorted(glob.glob(pattern))
if not files:
    problems.append("no report matches " + pattern)
for name in files:
    with open(name) as f:
        r = json.load(f)
    if r.get("format") != "xpthread-profile" or r.get("reason") != "exit":
        problems.append(name + ": not an exit report")
    if any(r["overflow"].values()):
        problems.append(name + ": tables overflowed: %s" % r["overflow"])
    stack_wait = sum(s["wait_ns"] for s in r["stacks"])
    row_wait = sum(x["wait_ns"]["total"] for x in r["rows"])
    if stack_wait > row_wait:
        problems.append(name + ": stacks wait %d ns, rows %d" % (stack_wait, row_wait))
    for x in r["rows"]:
        rows.append(x)
        where = "%s: %s %s" % (name, x["kind"], x["class"])
        for key in ("acquisitions", "contended", "owner_changes"):
            total = sum(s[key] for s in x["sites"])
            if total != x[key]:
                problems.append("%s: %s %d, its sites %d" % (where, key, x[key], total))
        if sum(s["wait_ns"]["total"] for s in x["sites"]) != x["wait_ns"]["total"]:
            problems.append(where + ": the sites' waits do not add up")
        if x["wait_ns"]["max"] > x["wait_ns"]["total"]:
            problems.append(where + ": the longest wait is longer than all")
        if sum(n for _, n in x["wait_log2_ns"]) > x["contended"]:
            problems.append(where + ": more waits in the histogram than contended")
        if sum(h["waits"] for h in x["held_by"]) > x["contended"]:
            problems.append(where + ": more waits blamed than contended")
        if x["kind"] in ("mutex", "rwlock-write", "spinlock") and \
           x["owner_changes"] > x["acquisitions"]:
            problems.append(where + ": more owner changes than acquisitions")
for want in wants:
    kind, _, value = want.partition(":")
    if kind == "max-acquisitions":
        worst = max((x["acquisitions"] for x in rows), default=0)
        if worst > int(value):
            problems.append("a row counts %d acquisitions, more than %s made" % (worst, value))
    elif not any(x["kind"] == kind and x["class"].startswith(value) and x["contended"] > 0
                 for x in rows):
        seen = ", ".join("%s %d/%d" % (x["class"], x["contended"], x["acquisitions"])
                         for x in rows if x["kind"] == kind)
        problems.append("no contended %s row named %s... (%s rows, contended/"
                        "acquisitions: %s)" % (kind, value, kind, seen or "none"))
if problems:
    for p in problems[:20]:
        print("FAIL: " + p)
    sys.exit(1)
print("%d report%s, %d rows" % (len(files), "" if len(files) == 1 else "s", len(rows)))
PYTHON
}

# prof_run MODE NAME COMMAND...: COMMAND in MODE with the profiler on,
# its reports in $T/NAME.MODE.*.json, its output in $T/NAME.MODE.out.
prof_run ()
{
  local mode=$1 name=$2; shift 2
  rm -f "$T/$name.$mode."*.json
  real_env "$mode"
  "${XPENV[@]}" XPTHREAD_PROF=1 XPTHREAD_PROF_FORMAT=json \
    XPTHREAD_PROF_FILE="$T/$name.$mode.%p.json" \
    "$@" > "$T/$name.$mode.out" 2>> "$T/$mode.err"
}

seq 1 2000000 > "$T/data" || exit 99

# 4 KiB chunks: 2048 trips through the queue, whose lock then contends
# tens of times even on a loaded machine (64 KiB chunks: as few as once).
workload_args="-s 8 -c 4"
real_workload_sum $workload_args

tool_run () { prof_run "$@"; }
tool_verdict () { check_report "$T/$2.$1.*.json" "${@:3}"; }

echo "prof: real programs with XPTHREAD_PROF=1, raw and hosted"
for mode in $REAL_MODES; do
  : > "$T/$mode.err"
  post='grep -qxF "$want_sum" "$T/workload.$mode.out" && echo ", checksum as glibc" ||
        { echo ", FAIL: checksum differs from glibc"; false; }'
  real_tool_check "$mode" workload "mutex:stripe mutex:queue cond:queue" \
    "$workload_prog" $workload_args
  post='grep -q "^[0-9a-f]\{64\} 80000 10000$" "$T/python.$mode.out" && echo ", output as expected" ||
        { echo ", FAIL: unexpected output"; false; }'
  real_tool_check "$mode" python "mutex: cond:" python3 "$XP_SRCDIR/tests/real/threads.py"
  post='grep -q "total number of events: *4$" "$T/sysbench.$mode.out" && echo ", 4 events" ||
        { echo ", FAIL: unexpected output"; false; }'
  # 100000 locks a thread, some tens of ms: with 20000 a loaded machine
  # once ran the 4 threads one after the other, and nothing contended.
  real_tool_check "$mode" sysbench "mutex:sysbench max-acquisitions:400000" \
    sysbench mutex --threads=4 --mutex-num=2 --mutex-locks=100000 \
    --mutex-loops=50 run
  post=
  real_tool_check "$mode" xz "" sh -c 'xz -2 -T2 --block-size=1MiB -c "$1" | xz -d -T2 | cmp - "$1"' \
    sh "$T/data"
  real_tool_check "$mode" zstd "" sh -c 'zstd -q -3 -T2 -c "$1" | zstd -q -d -T2 | cmp - "$1"' \
    sh "$T/data"
  real_loaded "$mode" || real_failed="$real_failed $mode:loaded"
done
real_tool_summary "profiler reports (consistent, the known locks found)"
