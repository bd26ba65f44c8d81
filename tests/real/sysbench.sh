#!/bin/bash
# sysbench threads (yields under mutexes: four locks, then one lock that
# all threads share, held across sched_yield) and mutex, with a fixed
# amount of work: every event must be done, spread over all threads.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need sysbench

# check OUT EVENTS THREADS: sysbench's tally of a run.
check ()
{
  local events
  events=$(awk '/total number of events:/ { print $5 }' "$1")
  if [ "$events" != "$2" ]; then
    echo "FAIL: sysbench did ${events:-no} events, not $2:"; cat "$1"; return 1
  fi
  # "events (avg/stddev): 5000.0000/1.87": every thread did its share.
  awk -v want="$(($2 / $3))" '/events \(avg\/stddev\):/ {
      split($3, a, "/"); found = 1; if (a[1] + 0 != want) exit 1 }
    END { exit !found }' "$1" ||
    { echo "FAIL: events per thread are not $(($2 / $3)):"; cat "$1"; return 1; }
}

workload ()
{
  real_timed "$1" sysbench threads --threads=4 --events=16000 --time=0 \
    --thread-yields=100 --thread-locks=4 run > "$T/threads" ||
    { echo "FAIL: sysbench threads failed"; cat "$T/threads"; return 1; }
  check "$T/threads" 16000 4 || return 1
  real_timed "$1" sysbench threads --threads=4 --events=2000 --time=0 \
    --thread-locks=1 run > "$T/one-lock" ||
    { echo "FAIL: sysbench threads (one lock) failed"; cat "$T/one-lock"; return 1; }
  check "$T/one-lock" 2000 4 || return 1
  # The mutex test: one event per thread, each taking --mutex-locks locks.
  real_timed "$1" sysbench mutex --threads=4 --mutex-num=64 \
    --mutex-locks=2000000 --mutex-loops=0 --time=0 run > "$T/mutex" ||
    { echo "FAIL: sysbench mutex failed"; cat "$T/mutex"; return 1; }
  check "$T/mutex" 4 4 || return 1
  echo "threads: 16000 events on 4 threads, 2000 on one lock; mutex: 4 x 2000000 locks" > "$T/$1.result"
}

real_main
