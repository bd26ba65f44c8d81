#!/bin/bash
# redis-server (jemalloc, I/O threads, background threads, a forked
# BGSAVE) with redis-benchmark (two threads, pipelined): the server's own
# counts (INFO commandstats, DBSIZE, the counter and the list) must be
# what the benchmark sent, and the BGSAVE's file must check.  Then
# jemalloc's background thread, which jemalloc starts with the
# pthread_create it finds through dlsym (glibc's, behind xpthread's back)
# and stops with pthread_join, is switched off and on at run time, with
# the server counting commands in between.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need redis-server redis-benchmark redis-cli redis-check-rdb

N=20000
TOGGLES=3

# bg_threads PID: how many of PID's threads jemalloc named as its own.
bg_threads ()
{
  cat /proc/"$1"/task/*/comm 2> /dev/null | grep -c '^jemalloc_bg_thd'
}

# await_bg_threads PID WANT: wait (at most 5 s) until the count is WANT
# (0, or 1 meaning at least one).
await_bg_threads ()
{
  local n
  for _ in $(seq 50); do
    n=$(bg_threads "$1")
    { [ "$2" = 0 ] && [ "$n" = 0 ]; } || { [ "$2" = 1 ] && [ "$n" -gt 0 ]; } &&
      return 0
    sleep 0.1
  done
  echo "FAIL: $n jemalloc background threads where $2 (0: none, 1: some) were due"
  return 1
}

# toggle_bg_thread PID CLI...: switch the background thread off and on
# TOGGLES times, one INCR of "toggled" in each state.
toggle_bg_thread ()
{
  local pid=$1 i; shift
  for i in $(seq $TOGGLES); do
    "$@" CONFIG SET jemalloc-bg-thread no > /dev/null &&
      await_bg_threads "$pid" 0 && "$@" INCR toggled > /dev/null &&
      "$@" CONFIG SET jemalloc-bg-thread yes > /dev/null &&
      await_bg_threads "$pid" 1 && "$@" INCR toggled > /dev/null || return 1
  done
}

workload ()
{
  local mode=$1 port pid
  port=$(real_port) || return 1
  rm -rf "$T/data"; mkdir "$T/data"
  real_start "$mode" "$T/server.log" redis-server --port "$port" \
    --bind 127.0.0.1 --save "" --appendonly no --dir "$T/data" \
    --io-threads 2 --io-threads-do-reads yes --daemonize no
  pid=$REAL_PID
  real_wait_port "$pid" "$port" || { cat "$T/server.log"; return 1; }
  cli () { real_run "$mode" redis-cli -h 127.0.0.1 -p "$port" "$@"; }
  await_bg_threads "$pid" 1 || return 1
  real_timed "$mode" redis-benchmark -h 127.0.0.1 -p "$port" -n $N -c 20 \
    -P 4 --threads 2 -t set,get,incr,lpush -q > "$T/bench" ||
    { echo "FAIL: redis-benchmark failed"; tr '\r' '\n' < "$T/bench" | tail -5; return 1; }
  # Without -r the benchmark uses one key per command: 3 keys in all.
  { cli INFO commandstats | tr -d '\r' |
      sed -n 's/^cmdstat_\(set\|get\|incr\|lpush\):calls=\([0-9]*\),.*/\1 \2/p' | sort
    echo "dbsize $(cli DBSIZE)"
    echo "counter $(cli GET 'counter:__rand_int__')"
    echo "list $(cli LLEN mylist)"
  } > "$T/counts"
  toggle_bg_thread "$pid" cli || { tail -20 "$T/server.log"; return 1; }
  echo "toggled $(cli GET toggled)" >> "$T/counts"
  cli BGSAVE > /dev/null
  for _ in $(seq 100); do
    cli INFO persistence | grep -q '^rdb_bgsave_in_progress:0' && break
    sleep 0.1
  done
  echo "bgsave $(cli INFO persistence | tr -d '\r' | sed -n 's/^rdb_last_bgsave_status://p')" >> "$T/counts"
  real_stop "$mode" "$pid" || { tail -20 "$T/server.log"; return 1; }
  # The counts are taken before this script's own GET and toggling; the
  # list, the counter and key:__rand_int__ make 3 keys.
  printf '%s\n' "get $N" "incr $N" "lpush $N" "set $N" "dbsize 3" \
    "counter $N" "list $N" "toggled $((2 * TOGGLES))" "bgsave ok" > "$T/want"
  if ! cmp -s "$T/counts" "$T/want"; then
    echo "FAIL: the server counted"; cat "$T/counts"; echo "expected"; cat "$T/want"
    return 1
  fi
  real_run "$mode" redis-check-rdb "$T/data/dump.rdb" > "$T/check" ||
    { echo "FAIL: redis-check-rdb rejects the BGSAVE's file"; cat "$T/check"; return 1; }
  cp "$T/counts" "$T/$mode.result"
  tr '\r' '\n' < "$T/bench" | grep 'requests per second' | sed 's/^ *//; s/, p50.*//'
}

real_main
