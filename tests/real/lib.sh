# Shared helper of the real-program suite (make check-real), sourced by
# every tests/real/PROGRAM.sh after it defines
#
#   workload MODE   run the program's workload once in MODE (glibc, raw or
#                   hosted), starting its commands with real_run, real_timed
#                   or real_start; check the outputs; write what must be the
#                   same in every mode to $T/MODE.result; return non-zero
#                   (after saying why) when a check fails.
#
# real_main then runs the workload with glibc's threads first (the
# reference: its failure is a broken harness or machine, exit 99), then
# with libxpthread preloaded in each mode of $XP_REAL_MODES, checks that
# every preloaded process announced the mode it was asked for, compares
# the results and prints the time ratio xpthread/glibc: of the totals
# over all rounds, and the median over rounds of the ratio within a
# round (paired, so that a slow spell of the machine, which may last a
# round, moves one ratio and not the result), with its range.
#
# Environment: XP_LIB (the library to preload), XP_REAL_MODES (default
# "raw hosted"), XP_REAL_SUMMARY (a file that gets one line per mode),
# XP_REAL_LOCKDEP (a directory: the preloaded runs get XPTHREAD_LOCKDEP=1,
# and the reports of every process of a run go to DIR/PROGRAM.MODE.log;
# for looking at what lockdep says of real programs, tests/real/lockdep.sh
# checks some of it).
set -u
export LC_ALL=C

real_name=$(basename "$0" .sh)
REAL_MODES=${XP_REAL_MODES:-raw hosted}
if [ -z "${XP_LIB:-}" ] || [ ! -r "$XP_LIB" ]; then
  echo "$real_name: XP_LIB (the libxpthread.so to preload) is not readable" >&2
  exit 99
fi
# Debian's programs, not wrappers found first on PATH (a pyenv shim would
# run a shell script and another interpreter under the preload).
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH

T=$(mktemp -d "${TMPDIR:-/tmp}/xp-real-$real_name.XXXXXX") || exit 99
real_pids=

# real_kill_all: stop every server still running (TERM, then KILL).
real_kill_all ()
{
  local p
  for p in $real_pids; do kill -TERM "$p" 2> /dev/null; done
  for p in $real_pids; do
    # Give servers a moment to exit cleanly, then insist.
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$p" 2> /dev/null || break
      sleep 0.2
    done
    kill -KILL "$p" 2> /dev/null
    wait "$p" 2> /dev/null
  done
  real_pids=
}

real_cleanup ()
{
  real_kill_all
  rm -rf "$T"
}
trap real_cleanup EXIT
# make check-real's timeout and ^C: run the EXIT trap, which stops the
# servers this script started.
trap 'echo "$real_name: interrupted"; exit 124' INT TERM HUP

# real_skip MESSAGE: the program cannot run here.
real_skip ()
{
  echo "SKIP: $real_name: $*"
  [ -n "${XP_REAL_SUMMARY:-}" ] && printf '%-10s %-6s SKIP (%s)\n' \
    "$real_name" - "$*" >> "$XP_REAL_SUMMARY"
  exit 77
}

# real_need COMMAND...: skip unless every command is installed.
real_need ()
{
  local c
  for c in "$@"; do
    command -v "$c" > /dev/null || real_skip "$c is not installed (scripts/setup-real-deps)"
  done
}

# real_env MODE: the command prefix (array XPENV) for MODE.  glibc runs
# too ask for the mode line, so that a preload leaking in shows.
real_env ()
{
  case $1 in
    glibc) XPENV=(env -u LD_PRELOAD -u XPTHREAD_MODE XPTHREAD_SHOW_MODE=1) ;;
    raw|hosted) XPENV=(env LD_PRELOAD="$XP_LIB" XPTHREAD_MODE="$1"
                       XPTHREAD_SHOW_MODE=1)
                if [ -n "${XP_REAL_LOCKDEP:-}" ]; then
                  XPENV+=(XPTHREAD_LOCKDEP=1
                          XPTHREAD_LOCKDEP_FILE="$XP_REAL_LOCKDEP/$real_name.$1.log")
                fi ;;
    *) echo "$real_name: unknown mode $1" >&2; exit 99 ;;
  esac
}

# real_run MODE COMMAND...: run COMMAND in MODE, its stderr to $T/MODE.err.
real_run ()
{
  local mode=$1; shift
  real_env "$mode"
  "${XPENV[@]}" "$@" 2>> "$T/$mode.err"
}

# real_timed MODE COMMAND...: real_run, adding its wall and CPU time
# (children's included) to the run's account (file descriptor 3, opened
# by real_once).
real_timed ()
{
  local mode=$1; shift
  local TIMEFORMAT="XPTIME %R %U %S"
  real_env "$mode"
  { time "${XPENV[@]}" "$@" 2>> "$T/$mode.err"; } 2>&3
}

# real_port: a free TCP port on the loopback interface.
real_port ()
{
  python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# real_start MODE LOG COMMAND...: start a server in the background (its
# output to LOG, its stderr also to MODE's), its PID in REAL_PID.  The
# command must exec the server (no daemonising), so that the PID is the
# server's own.
real_start ()
{
  local mode=$1 log=$2; shift 2
  real_env "$mode"
  "${XPENV[@]}" "$@" > "$log" 2>&1 &
  REAL_PID=$!
  real_pids="$real_pids $REAL_PID"
}

# real_wait_port PID PORT: wait (at most 30 s) until the server PID
# accepts connections on PORT; fail at once if it died.
real_wait_port ()
{
  local pid=$1 port=$2 i
  for i in $(seq 150); do
    if ! kill -0 "$pid" 2> /dev/null; then
      wait "$pid"
      echo "FAIL: server $pid died during start-up (status $?)"
      return 1
    fi
    (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null && return 0
    sleep 0.2
  done
  echo "FAIL: server $pid does not listen on port $port after 30 s"
  return 1
}

# real_cpu PID: CPU seconds of PID, its reaped children and its live
# children (a server's forked backends), from /proc.
real_cpu ()
{
  # After "pid (comm) ": 1 state, 2 ppid, 12-15 utime stime cutime cstime
  # (comm may hold spaces and parentheses: cut at the last ") ").
  # cat, not awk, reads them: a process may exit in between.
  cat /proc/[0-9]*/stat 2> /dev/null | awk -v pid="$1" -v tck="$(getconf CLK_TCK)" '
    { me = $1; sub(/^.*\) /, ""); split($0, f, " ") }
    me == pid { t += f[12] + f[13] + f[14] + f[15] }
    f[2] == pid { t += f[12] + f[13] }
    END { printf "%.2f\n", t / tck }'
}

# real_stop MODE PID: stop a server started by real_start, adding its CPU
# time to MODE's account.  Fails when it had died before (a crash).
real_stop ()
{
  local mode=$1 pid=$2 status
  if ! kill -0 "$pid" 2> /dev/null; then
    wait "$pid"
    echo "FAIL: server $pid died during the workload (status $?)"
    return 1
  fi
  echo "XPTIME 0 $(real_cpu "$pid") 0" >&3
  kill -TERM "$pid"
  for _ in $(seq 100); do
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2> /dev/null
  wait "$pid"
  status=$?
  real_pids=$(echo "$real_pids" | sed "s/ $pid\b//")
  # 143: the SIGTERM we sent; 137: it would not stop.
  case $status in
    0|143) return 0 ;;
    137) echo "FAIL: server $pid did not stop on SIGTERM within 10 s"; return 1 ;;
    *) echo "FAIL: server $pid exited with status $status on SIGTERM"; return 1 ;;
  esac
}

# real_loaded MODE: every preloaded process announces its mode on stderr;
# under glibc none may.
real_loaded ()
{
  local mode=$1 err=$T/$1.err
  if [ "$mode" = glibc ]; then
    if grep -q '^xpthread: mode ' "$err"; then
      echo "FAIL: libxpthread was loaded in the glibc run"; return 1
    fi
    return 0
  fi
  if ! grep -q "^xpthread: mode $mode (" "$err"; then
    echo "FAIL: no process announced 'xpthread: mode $mode'"; return 1
  fi
  # A script may accept another mode line too (REAL_ALSO_OK, a grep
  # pattern), e.g. hosted mode chosen by the library under valgrind.
  if grep '^xpthread: mode ' "$err" | grep -v "^xpthread: mode $mode (" |
     grep -vq "${REAL_ALSO_OK:-^$}"; then
    echo "FAIL: a process ran in another mode than $mode:"
    grep '^xpthread: mode ' "$err" | sort | uniq -c
    return 1
  fi
}

# real_sum MODE FIELD: total wall (2) or CPU (3, user+system) of MODE.
real_sum ()
{
  awk -v f="$2" '$1 == "XPTIME" { t += (f == 2 ? $2 : $3 + $4) }
                 END { printf "%.2f\n", t }' "$T/$1.time"
}

# real_paired MODE FIELD: the ratios of MODE's time to glibc's round by
# round, FIELD as real_sum's, as "median [lowest-highest]".
real_paired ()
{
  awk -v f="$2" '
    $1 == "XPROUND" { r = $2; next }
    $1 == "XPTIME" { t[FILENAME == ARGV[1], r] += (f == 2 ? $2 : $3 + $4)
                     seen[r] = 1 }
    END {
      n = 0
      for (r in seen)
        if (t[0, r] > 0) x[++n] = t[1, r] / t[0, r]
      if (n == 0) { printf "-"; exit }
      for (i = 2; i <= n; i++)          # insertion sort: a few rounds
        for (j = i; j > 1 && x[j - 1] > x[j]; j--) {
          v = x[j]; x[j] = x[j - 1]; x[j - 1] = v
        }
      m = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
      printf "%.2f [%.2f-%.2f]", m, x[1], x[n]
    }' "$T/$1.time" "$T/glibc.time"
}

real_ratio ()
{
  awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'
}

# real_once MODE: one run of the workload in MODE, checked; says FAIL
# and why, with the run's stderr, and returns 1 when a check fails.
real_once ()
{
  local mode=$1 time=$T/$1.time
  : > "$T/$mode.err"; rm -f "$T/$mode.result"
  # The warm-up's time does not count.
  [ "$2" = warm-up ] && time=$T/warm-up.time
  workload "$mode" 3>> "$time"
  local status=$?
  # A failed run may leave its servers running: they must not meet the
  # next run.
  real_kill_all
  if [ $status = 0 ] && real_loaded "$mode"; then
    if [ "$2" = warm-up ] || cmp -s "$T/reference" "$T/$mode.result"; then
      return 0
    fi
    echo "FAIL: the result differs from glibc's; glibc:"
    cat "$T/reference"; echo "$mode:"; cat "$T/$mode.result" 2> /dev/null
  fi
  echo "  stderr of the $mode run (last 30 lines):"
  tail -n 30 "$T/$mode.err" | sed 's/^/  | /'
  return 1
}

real_main ()
{
  local mode round order failed= line wall cpu gwall gcpu ok
  local rounds=${XP_REAL_ROUNDS:-2}
  echo "$real_name: a glibc warm-up, then $rounds rounds of glibc $REAL_MODES," \
       "in alternating order; times are xpthread/glibc (lower is better)"
  # The warm-up fills the page cache and is the reference result; without
  # it the first run would be slower (and always glibc's).
  echo "--- $real_name: glibc (warm-up)"
  if ! real_once glibc warm-up; then
    echo "ERROR: $real_name fails with glibc's threads"; exit 99
  fi
  [ -f "$T/glibc.result" ] || { echo "ERROR: $real_name wrote no result"; exit 99; }
  cp "$T/glibc.result" "$T/reference"
  sed 's/^/  result: /' "$T/reference"
  for mode in glibc $REAL_MODES; do : > "$T/$mode.time"; done
  for round in $(seq "$rounds"); do
    order="glibc $REAL_MODES"
    [ $((round % 2)) = 0 ] && order=$(echo "$order" | tr ' ' '\n' | tac | tr '\n' ' ')
    for mode in $order; do
      echo "--- $real_name: $mode (round $round)"
      echo "XPROUND $round" >> "$T/$mode.time"
      if ! real_once "$mode" round; then
        [ "$mode" = glibc ] && { echo "ERROR: $real_name fails with glibc's threads"; exit 99; }
        failed="$failed $mode"
      fi
    done
  done
  gwall=$(real_sum glibc 2); gcpu=$(real_sum glibc 3)
  for mode in glibc $REAL_MODES; do
    ok=PASS
    case " $failed " in *" $mode "*) ok=FAIL ;; esac
    wall=$(real_sum "$mode" 2); cpu=$(real_sum "$mode" 3)
    line=$(printf '%-10s %-6s %s wall %6.2f s (%s x glibc) cpu %6.2f s (%s x glibc)' \
             "$real_name" "$mode" $ok "$wall" "$(real_ratio "$wall" "$gwall")" \
             "$cpu" "$(real_ratio "$cpu" "$gcpu")")
    [ "$mode" = glibc ] ||
      line="$line; paired wall $(real_paired "$mode" 2) cpu $(real_paired "$mode" 3)"
    echo "$line"
    [ -n "${XP_REAL_SUMMARY:-}" ] && echo "$line" >> "$XP_REAL_SUMMARY"
  done
  [ -z "$failed" ]
}

# The lock debugging tools' checks (lockdep.sh, prof.sh), which define
# tool_run MODE NAME COMMAND... (COMMAND with the tool on) and
# tool_verdict MODE NAME WANT... (the tool's word on that run).
# real_tool_check MODE NAME "WANT..." COMMAND...: both, then, with $post
# (shell code), a word on the output; a line for each, and " MODE:NAME"
# added to real_failed when one fails.
real_failed=
real_tool_check ()
{
  local mode=$1 name=$2 want=$3; shift 3
  local status out
  tool_run "$mode" "$name" "$@"
  status=$?
  if [ $status != 0 ]; then
    out="FAIL: exit status $status"
  else
    out=$(tool_verdict "$mode" "$name" $want) || status=1
  fi
  if [ $status = 0 ] && [ -n "${post:-}" ]; then
    out="$out$(eval "$post")" || status=1
  fi
  printf '  %-8s %-16s %s\n' "$mode" "$name" "$out"
  if [ $status != 0 ]; then
    real_failed="$real_failed $mode:$name"
    echo "  stderr of the $mode runs (last 10 lines):"
    tail -n 10 "$T/$mode.err" | sed 's/^/  | /'
  fi
}

# real_tool_summary WHAT: the PASS or FAIL line of each mode, saying
# WHAT was checked; fails when a check did.
real_tool_summary ()
{
  local mode ok line
  for mode in $REAL_MODES; do
    ok=PASS
    case "$real_failed" in *" $mode:"*) ok=FAIL ;; esac
    line=$(printf '%-10s %-6s %s %s' "$real_name" "$mode" $ok "$1")
    echo "$line"
    [ -n "${XP_REAL_SUMMARY:-}" ] && echo "$line" >> "$XP_REAL_SUMMARY"
  done
  [ -z "$real_failed" ]
}

# real_find_workload: the bundled workload of the build tree, in
# workload_prog; skips without it.
real_find_workload ()
{
  local builddir=${XP_BUILDDIR:-$(dirname "$(dirname "$XP_LIB")")}
  workload_prog=$builddir/bench/workload
  [ -x "$workload_prog" ] || real_skip "no $workload_prog (build the tree first)"
}

# real_workload_sum ARG...: glibc's checksum of the bundled workload run
# with these arguments (its text depends on the chunk size) into want_sum.
real_workload_sum ()
{
  env -u LD_PRELOAD "$workload_prog" "$@" > "$T/workload.glibc" || exit 99
  want_sum=$(grep '^# check checksum' "$T/workload.glibc")
  [ -n "$want_sum" ] || { echo "ERROR: the workload printed no checksum"; exit 99; }
}
