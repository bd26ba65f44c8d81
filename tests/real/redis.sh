#!/bin/bash
# redis-server (jemalloc, I/O threads, background threads, a forked
# BGSAVE) with redis-benchmark (two threads, pipelined): the server's own
# counts (INFO commandstats, DBSIZE, the counter and the list) must be
# what the benchmark sent, and the BGSAVE's file must check.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need redis-server redis-benchmark redis-cli redis-check-rdb

N=20000

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
  cli BGSAVE > /dev/null
  for _ in $(seq 100); do
    cli INFO persistence | grep -q '^rdb_bgsave_in_progress:0' && break
    sleep 0.1
  done
  echo "bgsave $(cli INFO persistence | tr -d '\r' | sed -n 's/^rdb_last_bgsave_status://p')" >> "$T/counts"
  real_stop "$mode" "$pid" || { tail -20 "$T/server.log"; return 1; }
  # The counts are taken before this script's own GET; the list, the
  # counter and key:__rand_int__ make 3 keys.
  printf '%s\n' "get $N" "incr $N" "lpush $N" "set $N" "dbsize 3" \
    "counter $N" "list $N" "bgsave ok" > "$T/want"
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
