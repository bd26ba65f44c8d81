#!/bin/bash
# The contention profiler (XPTHREAD_PROF=1, xpthread(7)) on
# tests/prof-cases, whose contention is known: under the preload in raw
# and hosted mode, and linked with -lxpthread.  That a report is
# written at all shows xpthread's locks ran: nothing else writes one.
#   truth     4 threads x 1000 acquisitions of a mutex held 1 ms: the
#             contended count and the owner changes exact, the total
#             wait and hold within 5% of the program's own clock, the
#             site's source line; hold times sampled (raw, linked) and
#             all timed (hosted)
#   timeout   5 timed locks that give up after 200 ms: 5 contended, no
#             acquisition, the total wait within 5% of the program's
#   rwlock    readers' waits behind a writer that holds 5 ms: blamed on
#             the writer's site, its holds from the lock's first
#             contention on all timed and as long as its own clock
#             says; run again, up to three times, while it misses
#   cond      a signal that wakes a waiter, 5 and a broadcast that find
#             none
#   million   a million static mutexes each found taken once: a million
#             rows, none merged or lost, no table overflow (raw only:
#             it takes seconds)
#   kinds     robust, priority-inheritance and priority-protection
#             mutexes (the last where the system allows it): 10
#             contended acquisitions each, all but the first (which
#             made the lock profiled) blamed on the holder's site
#   brief     2 threads holding a mutex about 2 us: waits that end in
#             the spin, timed 1 in 16 and the others estimated; the
#             total wait within a factor of 2 of what the program's own
#             clock saw around its slow lock calls, those not
#             preempted (not judged where fewer than 1000 were slow: a
#             loaded machine); run again, up to three times in all,
#             while it misses
#   owners    a mutex contended once, then taken in turns without
#             contention, three times in a row by each thread (the
#             other one by trylock), then by one thread at two sites
#             in turn and contended again: acquisitions, the two
#             contentions and the owner changes exact, the last wait
#             blamed on the site that held it
#   fork      each process reports its own contention
#   exec      the new program writes its own report
#   text, folded, signal, interval: the other formats and reports
#   tool      xpthread-prof's table, comparison (a hold made 1 ms longer
#             shows as worse, up to three tries), folded stacks and
#             flame graph; bad input
set -u
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
plain=$XP_BUILDDIR/tests/prof-cases linked=$XP_BUILDDIR/tests/prof-cases-linked
src=${srcdir:-.}/tests/prof-cases.c
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
fail=0

line_of ()
{
  grep -n "/\* line:$1 \*/" "$src" | cut -d: -f1
}
have_lines=yes
if ! { ldconfig -p 2>/dev/null || /sbin/ldconfig -p; } | grep -q 'libdw\.so\.1 '; then
  echo "prof: libdw.so.1 is not installed; source lines not checked"
  have_lines=
fi

# run HOW NAME CASE ENV...: CASE with the profiler on, its JSON reports
# in $tmp/NAME.HOW.PID.json, its output in $tmp/NAME.HOW.out and its
# standard error in $tmp/NAME.HOW.err.
run ()
{
  local how=$1 name=$2 case=$3; shift 3
  local prog=$plain pre=$XP_LIB mode=$how
  if [ "$how" = linked ]; then prog=$linked pre= mode=auto; fi
  env LD_PRELOAD="$pre" XPTHREAD_MODE=$mode XPTHREAD_PROF=1 \
    XPTHREAD_PROF_FORMAT=json XPTHREAD_PROF_FILE="$tmp/$name.$how.%p.json" \
    "$@" timeout 120 "$prog" "$case" > "$tmp/$name.$how.out" \
    2> "$tmp/$name.$how.err"
  local status=$?
  if [ $status != 0 ]; then
    echo "FAIL: $name ($how): exit status $status"; sed 's/^/  | /' "$tmp/$name.$how.err"
    fail=1
    return 1
  fi
}

# check HOW NAME: the python checks below for NAME (a function of that
# name), given the reports and the program's output.
check ()
{
  local how=$1 name=$2
  python3 - "$name" "$how" "$tmp" "$have_lines" \
    "$(line_of truth-lock)" "$(line_of rw-read)" "$(line_of rw-write)" \
    "$(line_of contend)" "$(line_of kind-wait)" "$(line_of kind-hold)" \
    "$(line_of owners-last)" <<'PYTHON' || fail=1
import glob, json, os, re, sys
case, how, tmp, have_lines = sys.argv[1:5]
lines = dict(zip(("truth-lock", "rw-read", "rw-write", "contend", "kind-wait",
                  "kind-hold", "owners-last"), sys.argv[5:12]))
problems = []
def fail(what):
    problems.append(what)
def reports(name=case):
    out = {}
    for f in glob.glob("%s/%s.%s.*.json" % (tmp, name, how)):
        with open(f) as fh:
            out[int(f.split(".")[-2])] = json.load(fh)
    return out
def only_report():
    r = reports()
    if len(r) != 1:
        fail("%d reports, expected one" % len(r))
        return {"rows": [], "overflow": {}}
    return list(r.values())[0]
def truth():
    out = {}
    with open("%s/%s.%s.out" % (tmp, case, how)) as fh:
        for l in fh:
            k, v = l.split()
            out[k] = int(v)
    return out
def row(report, kind, name):
    for x in report["rows"]:
        if x["kind"] == kind and x["class"].split(" (")[0] == name:
            return x
    return None
def want_row(report, kind, name):
    x = row(report, kind, name)
    if x is None:
        fail("no %s row for %s" % (kind, name))
    return x
def near(what, got, want, share):
    if abs(got - want) > share * want:
        fail("%s: %d, the program measured %d (more than %d%% apart)"
             % (what, got, want, share * 100))
def location(x, line):
    if have_lines and x["location"] != "prof-cases.c:" + line:
        fail("site %s at %s, expected prof-cases.c:%s" % (x["site"], x["location"], line))

def exact_counts(x, t):
    for key in ("acquisitions", "contended", "owner_changes"):
        if x[key] != t[key]:
            fail("%s: %d in the report, %d in the program" % (key, x[key], t[key]))

def check_truth():
    t, r = truth(), only_report()
    x = want_row(r, "mutex", "truth_lock")
    if x is None:
        return
    exact_counts(x, t)
    near("total wait", x["wait_ns"]["total"], t["wait_ns"], 0.05)
    near("total hold", x["hold_ns"]["total"], t["hold_ns"], 0.05)
    if len(x["sites"]) != 1:
        fail("%d sites, expected one" % len(x["sites"]))
    else:
        location(x["sites"][0], lines["truth-lock"])
    if sum(n for _, n in x["wait_log2_ns"]) != x["contended"]:
        fail("the histogram holds %d waits" % sum(n for _, n in x["wait_log2_ns"]))
    return "contended %d, owner changes %d, wait %.3f s, hold %.3f s (%d timed)" % (
        x["contended"], x["owner_changes"], x["wait_ns"]["total"] / 1e9,
        x["hold_ns"]["total"] / 1e9, x["hold_ns"]["samples"])

def check_brief():
    r = only_report()
    t = truth()
    if t["waits"] < 1000:
        # On a loaded machine the two threads may hardly overlap, and a
        # lock call is slow because its thread lost the CPU: nothing to
        # judge an estimate of spins by.
        return "too little contention to judge (%d slow lock calls)" % t["waits"]
    x = want_row(r, "mutex", "brief_lock")
    if x is None:
        return
    if x["contended"] < t["waits"] / 4:
        fail("%d contended in the report, %d slow lock calls in the program"
             % (x["contended"], t["waits"]))
    got = x["wait_ns"]["total"]
    if not t["wait_ns"] / 2 <= got <= 2 * t["wait_ns"]:
        fail("total wait %d ns, the program's slow lock calls %d ns"
             % (got, t["wait_ns"]))
    return "contended %d (%d slow calls), wait %.1f ms (program %.1f ms)" % (
        x["contended"], t["waits"], got / 1e6, t["wait_ns"] / 1e6)

def check_timeout():
    r = only_report()
    t = truth()
    x = want_row(r, "mutex", "timeout_lock")
    if x is None:
        return
    if x["contended"] != t["tries"] or x["acquisitions"] != 0:
        fail("%d contended and %d acquired, expected %d and 0"
             % (x["contended"], x["acquisitions"], t["tries"]))
    near("total wait", x["wait_ns"]["total"], t["wait_ns"], 0.05)
    return "%d given up, wait %.3f s (program %.3f s)" % (
        x["contended"], x["wait_ns"]["total"] / 1e9, t["wait_ns"] / 1e9)

def check_rwlock():
    r = only_report()
    read, write = want_row(r, "rwlock-read", "rw_lock"), want_row(r, "rwlock-write", "rw_lock")
    if read is None or write is None:
        return
    if read["contended"] == 0 or not read["held_by"]:
        fail("the readers never waited behind anyone")
        return
    top = read["held_by"][0]
    if have_lines and top["location"] != "prof-cases.c:" + lines["rw-write"]:
        fail("the readers' wait blamed on %s at %s, not the writer" % (top["site"], top["location"]))
    if top["wait_ns"] < 0.8 * read["wait_ns"]["total"]:
        fail("only %d of %d ns blamed on the writer" % (top["wait_ns"], read["wait_ns"]["total"]))
    location(read["sites"][0], lines["rw-read"])
    # The writer sleeps 5 ms holding the lock, longer on a loaded
    # machine: its own clock says how long.  The profiler times its
    # holds from the lock's first contention on: the last ones.
    t, samples = truth(), write["hold_ns"]["samples"]
    holds = [t["write_hold_ns_%d" % i] for i in range(50)]
    mean = write["hold_ns"]["mean"]
    if samples != write["acquisitions"] or not 40 <= samples <= 50:
        fail("%d of the writer's %d profiled holds timed" % (samples, write["acquisitions"]))
        return
    held = sum(holds[50 - samples:]) / samples
    if not 5e6 <= mean or not 0.95 * held <= mean <= 1.05 * held + 50000:
        fail("the writer's mean hold is %d ns, its own clock says %d" % (mean, held))
    return "readers waited %.3f s, %.0f%% behind the writer; writer holds %.2f ms" % (
        read["wait_ns"]["total"] / 1e9, 100 * top["wait_ns"] / read["wait_ns"]["total"], mean / 1e6)

def check_cond():
    x = want_row(only_report(), "cond", "cond_var")
    if x is None:
        return
    want = {"waits": 1, "signals": 6, "broadcasts": 1, "signals_no_waiter": 6}
    got = {k: x[k] for k in want}
    if got != want:
        fail("counts %s, expected %s" % (got, want))
    return "waits 1, signals 6, broadcasts 1, of which no waiter 6"

def check_kinds():
    t, r = truth(), only_report()
    said = []
    for name in ("kind_robust", "kind_pi", "kind_pp"):
        if name not in t:
            said.append(name + " refused by the system")
            continue
        x = want_row(r, "mutex", name)
        if x is None:
            continue
        if x["contended"] != t[name] or x["acquisitions"] < x["contended"]:
            fail("%s: contended %d of %d acquisitions, the program made %d wait"
                 % (name, x["contended"], x["acquisitions"], t[name]))
        location(x["sites"][0], lines["kind-wait"])
        # The first wait is blamed on nobody: the lock was profiled from
        # that wait on, after the holder had taken it.
        if not x["held_by"] or x["held_by"][0]["waits"] != t[name] - 1:
            fail("%s: waits blamed %s" % (name, x["held_by"]))
        elif have_lines and x["held_by"][0]["location"] != "prof-cases.c:" + lines["kind-hold"]:
            fail("%s: waits blamed on %s" % (name, x["held_by"][0]["location"]))
        said.append("%s %d" % (name, x["contended"]))
    return ", ".join(said)

def check_owners():
    t, r = truth(), only_report()
    x = want_row(r, "mutex", "owners_lock")
    if x is None:
        return
    exact_counts(x, t)
    if have_lines and not any(h["location"] == "prof-cases.c:" + lines["owners-last"]
                              and h["waits"] == 1 for h in x["held_by"]):
        fail("the last wait is not blamed on the site that held the mutex: %s"
             % [(h["location"], h["waits"]) for h in x["held_by"]])
    return "acquisitions %d, contended %d, owner changes %d" % (
        x["acquisitions"], x["contended"], x["owner_changes"])

def check_million():
    r = only_report()
    rows = [x for x in r["rows"] if x["kind"] == "mutex" and x["class"].startswith("many")]
    names = set(x["class"] for x in rows)
    if any(r["overflow"].values()):
        fail("tables overflowed: %s" % r["overflow"])
    if len(rows) != 1000000 or len(names) != 1000000:
        fail("%d rows, %d names, expected 1000000 of each" % (len(rows), len(names)))
    if any(x["contended"] != 1 for x in rows):
        fail("a lock not contended exactly once")
    return "1000000 rows, 1000000 names, no overflow"

def check_fork():
    t, r = truth(), reports()
    if sorted(r) != sorted([t["parent"], t["child"]]):
        fail("reports of %s, expected the parent's and the child's" % sorted(r))
        return
    for pid, mine, other in ((t["parent"], "parent_lock", "child_lock"),
                             (t["child"], "child_lock", "parent_lock")):
        x, y = row(r[pid], "mutex", mine), row(r[pid], "mutex", other)
        if x is None or x["contended"] == 0:
            fail("process %d: no contention of %s" % (pid, mine))
        if y is not None and y["contended"] != 0:
            fail("process %d: %s counted, the other process's" % (pid, other))
    return "two reports, each of its own process's lock"

def check_exec():
    t, r = truth(), reports()
    child = r.get(t["child"])
    x = row(child, "mutex", "child_lock") if child else None
    if x is None or x["contended"] == 0:
        fail("no report of the exec'd child %d with its contention" % t["child"])
    return "the exec'd program's own report"

def check_text():
    err = open("%s/%s.%s.err" % (tmp, case, how)).read()
    if not re.search(r"^  1 .* mutex child_lock \(prof-cases[^)]*\)", err, re.M):
        fail("no first row naming child_lock:\n" + err)
    if have_lines and ("prof-cases.c:" + lines["contend"]) not in err:
        fail("the site's line prof-cases.c:%s is not named" % lines["contend"])
    return "the table names the lock and its site's line"

def check_folded():
    err = open("%s/%s.%s.err" % (tmp, case, how)).read().splitlines()
    bad = [l for l in err if not re.match(r"^[^ ]+ [0-9]+$", l)]
    ours = [l for l in err if re.match(r"^.*;contend_worker;child_lock_\(prof-cases\) [0-9]+$", l)]
    if bad or not ours:
        fail("folded lines: %d malformed, %d of child_lock:\n%s" % (len(bad), len(ours), "\n".join(err)))
    return "%d folded stacks" % len(err)

def text_reports():
    err = open("%s/%s.%s.err" % (tmp, case, how)).read()
    return re.findall(r"^xpthread profile: pid \d+ \(prof-cases\), (on signal|at exit|at interval)", err, re.M), err

def check_signal():
    kinds, err = text_reports()
    counts = [int(n) for n in re.findall(r"^  1 +\S+ \S+ +\d+/(\d+) .* mutex parent_lock", err, re.M)]
    if kinds != ["on signal", "at exit"] or len(counts) != 2 or not counts[0] < counts[1]:
        fail("reports %s, acquisitions %s:\n%s" % (kinds, counts, err))
    return "a report on the signal, then a larger one at exit"

def check_interval():
    kinds, err = text_reports()
    if kinds.count("at interval") < 2 or kinds[-1] != "at exit":
        fail("reports %s" % kinds)
    return "%d reports at intervals, one at exit" % kinds.count("at interval")

def check_tool():
    # The reports of "contend" and of "slower" (1 ms more held), read by
    # the tool: the table, the comparison, the stacks, the flame graph.
    out = {}
    for what in ("show", "compare", "folded", "svg"):
        with open("%s/tool.%s" % (tmp, what)) as fh:
            out[what] = fh.read()
    if not re.search(r"^  1 .* mutex child_lock \(prof-cases[^)]*\)", out["show"], re.M):
        fail("show: no first row of child_lock:\n" + out["show"])
    first = [l for l in out["compare"].splitlines()[1:2]]
    if not first or "mutex child_lock" not in first[0] or len(re.findall(r"x worse", first[0])) != 2:
        fail("compare: the first row is not child_lock with wait and hold worse:\n" + out["compare"])
    folded = out["folded"].splitlines()
    if not folded or any(not re.match(r"^[^ ]+ [0-9]+$", l) for l in folded) \
       or not any(";contend_worker;child_lock_(prof-cases)" in l for l in folded):
        fail("folded: unexpected lines:\n" + out["folded"])
    import xml.etree.ElementTree as ET
    svg = ET.fromstring(out["svg"])
    ns = "{http://www.w3.org/2000/svg}"
    titles = [t.text for t in svg.iter(ns + "title")]
    if len(list(svg.iter(ns + "rect"))) != len(titles) + 1 \
       or not any(t.startswith("contend_worker (") for t in titles):
        fail("flamegraph: %d rects, titles %s" % (len(list(svg.iter(ns + "rect"))), titles[:8]))
    return "show, compare (hold and wait worse), folded, flame graph of %d frames" % len(titles)

said = globals()["check_" + case]()
if problems:
    for p in problems:
        print("FAIL: %s (%s): %s" % (case, how, p))
    sys.exit(1)
print("prof: %-8s %-7s %s" % (case, how, said))
PYTHON
}

# run_and_check HOW CASE: a case's run, its reports judged.
run_and_check ()
{
  rm -f "$tmp/$2.$1".*.json
  run $1 $2 $2 && check $1 $2
}

# judge_noisy WHAT COMMAND...: COMMAND, which runs a case and judges its
# timings, again while it fails, three times at most.  On a loaded
# machine timings vary from run to run: an estimate that is wrong fails
# every time, one that was unlucky rarely three times.
judge_noisy ()
{
  local what=$1 fail_before=$fail attempt; shift
  for attempt in 1 2 3; do
    fail=$fail_before
    "$@"
    [ $fail = "$fail_before" ] && return 0
    [ $attempt = 3 ] || echo "prof: $what: again (attempt $attempt failed)"
  done
}

for how in raw hosted linked; do
  hold=
  [ $how = hosted ] && hold=XPTHREAD_PROF_HOLD=all
  run $how truth truth $hold && check $how truth
  judge_noisy "brief ($how)" run_and_check $how brief
  # Readers wait behind a reader the machine's load stopped, where a
  # writer waits too: such waits are rightly not blamed on the writer.
  judge_noisy "rwlock ($how)" run_and_check $how rwlock
  for c in timeout cond kinds owners fork; do
    run $how $c $c && check $how $c
  done
done
run raw million million && check raw million
for how in raw linked; do
  run $how exec exec && check $how exec
done
run raw text contend XPTHREAD_PROF_FORMAT=text XPTHREAD_PROF_FILE= && check raw text
run raw folded contend XPTHREAD_PROF_FORMAT=folded XPTHREAD_PROF_FILE= && check raw folded
run raw signal signal XPTHREAD_PROF_FORMAT=text XPTHREAD_PROF_FILE= \
  XPTHREAD_PROF_SIGNAL=SIGUSR2 && check raw signal
# The reporter thread never keeps a process alive whose main thread
# called pthread_exit after its other threads ended; the report at exit
# is still written.
for how in raw hosted linked; do
  if run $how main-exits main-exits XPTHREAD_PROF_INTERVAL=1 &&
     ! grep -qs '"reason":"exit"' "$tmp"/main-exits.$how.*.json; then
    echo "FAIL: main-exits ($how): no report at exit"; fail=1
  fi
done
run raw interval interval XPTHREAD_PROF_FORMAT=text XPTHREAD_PROF_FILE= \
  XPTHREAD_PROF_INTERVAL=1 && check raw interval
# A report file that is no regular file is written into, never replaced
# by a regular file (as /dev/null once was): a FIFO with a reader (this
# shell, read and write, so that opening it never waits), and a symbolic
# link to a file not there yet.
mkfifo "$tmp/fifo"
exec 3<> "$tmp/fifo"
ln -s "$tmp/linked.txt" "$tmp/link"
for file in fifo link; do
  LD_PRELOAD=$XP_LIB XPTHREAD_PROF=1 XPTHREAD_PROF_FORMAT=text \
    XPTHREAD_PROF_FILE="$tmp/$file" timeout 60 "$plain" contend \
    > /dev/null 2>&1 || { echo "FAIL: $file: exit status $?"; fail=1; }
done
timeout 2 cat <&3 > "$tmp/fifo.out"
exec 3<&-
if [ ! -p "$tmp/fifo" ] || ! grep -q child_lock "$tmp/fifo.out"; then
  echo "FAIL: a FIFO as the report file: replaced, or no report read from it"
  ls -l "$tmp/fifo"; fail=1
elif [ ! -L "$tmp/link" ] || ! grep -q child_lock "$tmp/linked.txt"; then
  echo "FAIL: a link as the report file: replaced, or no report where it points"
  ls -l "$tmp/link"; fail=1
else
  echo "prof: files   raw     a FIFO and a link written into, neither replaced"
fi
# The tool (tools/xpthread-prof) on the reports of "contend" and of
# "slower", and on bad input.  Every hold is timed: each thread holds the
# lock 100 times, too few for samples 1 in 64.  On a loaded machine the
# waits, made of the other threads' holds, vary from run to run: a pair
# whose comparison misses the extra millisecond is run again.
tool=$XP_BUILDDIR/tools/xpthread-prof
tool_pair ()
{
  local before after
  rm -f "$tmp"/before.raw.*.json "$tmp"/after.raw.*.json
  run raw before contend XPTHREAD_PROF_HOLD=all &&
    run raw after slower XPTHREAD_PROF_HOLD=all || return
  before=$(ls "$tmp"/before.raw.*.json) after=$(ls "$tmp"/after.raw.*.json)
  if ! { "$tool" show "$after" > "$tmp/tool.show" &&
      "$tool" compare "$before" "$after" > "$tmp/tool.compare" &&
      "$tool" folded "$after" > "$tmp/tool.folded" &&
      "$tool" flamegraph "$after" -o "$tmp/tool.svg"; }; then
    echo "FAIL: tool: exit status $?"; fail=1
    return
  fi
  check raw tool
}
judge_noisy "tool (raw)" tool_pair
if [ -f "$tmp/tool.show" ]; then
  echo '{"format": "something else"}' > "$tmp/bad.json"
  for input in "$tmp/bad.json" "$tmp/absent.json" "$tmp/tool.show"; do
    "$tool" show "$input" > /dev/null 2> "$tmp/tool.err"
    status=$?
    if [ $status != 2 ] || [ "$(wc -l < "$tmp/tool.err")" != 1 ]; then
      echo "FAIL: tool: show $input: exit status $status, said:"
      cat "$tmp/tool.err"; fail=1
    fi
  done
fi
exit $fail
