#!/bin/bash
# gdb attaches to a preloaded python3 that runs 4 threads, and lists them
# with "info threads" through glibc's libthread_db: it must find every
# thread of /proc/PID/task, each as "Thread 0x... (LWP n)" (libthread_db
# understood the thread).  gdb names a thread by glibc's descriptor; when
# that is not the pthread_t the program sees (threading.get_ident() is
# pthread_self()), a NOTE says so: xpthread's pthread_t is its own.
# gdb itself runs on glibc.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need gdb python3

cat > "$T/threads.py" <<'PYTHON'
import os, sys, threading, time
ready, go, idents = threading.Barrier(5), threading.Event(), []
def worker():
    idents.append(threading.get_ident())
    ready.wait()
    go.wait()
ts = [threading.Thread(target=worker) for _ in range(4)]
for t in ts: t.start()
ready.wait()
print("ready", " ".join(hex(i) for i in sorted(idents + [threading.get_ident()])),
      flush=True)
while not os.path.exists(sys.argv[1]):   # until the script says go
    time.sleep(0.05)
go.set()
for t in ts: t.join()
PYTHON

workload ()
{
  local mode=$1 pid i
  rm -f "$T/go"
  real_start "$mode" "$T/prog.out" python3 "$T/threads.py" "$T/go"
  pid=$REAL_PID
  for i in $(seq 150); do
    grep -q '^ready' "$T/prog.out" && break
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.2
  done
  if ! grep -q '^ready' "$T/prog.out"; then
    kill -0 "$pid" 2> /dev/null && echo "FAIL: the program did not start in 30 s" ||
      { wait "$pid"; echo "FAIL: the program ended at start, status $?"; }
    cat "$T/prog.out"; return 1
  fi
  ls "/proc/$pid/task" | sort -n > "$T/tasks"
  local TIMEFORMAT="XPTIME %R %U %S"
  { time gdb -nx -batch -iex 'set auto-load off' -iex 'set debuginfod enabled off' \
      -p "$pid" -ex 'info threads' > "$T/gdb.out" 2> "$T/gdb.err"; } 2>&3
  touch "$T/go"
  wait "$pid"; local status=$?
  real_pids=$(echo "$real_pids" | sed "s/ $pid\b//")
  [ $status = 0 ] || { echo "FAIL: the program exited with status $status after gdb"; cat "$T/prog.out"; return 1; }
  cat "$T/prog.out" >> "$T/$mode.err"   # its mode line
  sed -n 's/^[* ] *[0-9][0-9]* *Thread \(0x[0-9a-f]*\) (LWP \([0-9]*\)).*/\1 \2/p' \
    "$T/gdb.out" > "$T/seen"
  local tasks ptrs
  tasks=$(cut -d' ' -f2 "$T/seen" | sort -n)
  ptrs=$(cut -d' ' -f1 "$T/seen" | sort | tr '\n' ' ')
  if [ "$tasks" != "$(cat "$T/tasks")" ] || [ "$(wc -l < "$T/tasks")" != 5 ]; then
    echo "FAIL: gdb's threads differ from the process's"
    echo "tasks: $(cat "$T/tasks" | tr '\n' ' ')"
    echo "program: $(grep '^ready' "$T/prog.out")"
    echo "gdb:"; cat "$T/gdb.out" "$T/gdb.err"
    return 1
  fi
  [ "ready $ptrs" = "$(grep '^ready' "$T/prog.out" | tr '\n' ' ')" ] ||
    echo "NOTE: gdb's thread ids $ptrs are not the program's pthread_t:" \
         "$(grep '^ready' "$T/prog.out" | cut -d' ' -f2-)"
  echo "gdb lists all $(wc -l < "$T/tasks") threads, each known to libthread_db" > "$T/$mode.result"
}

real_main
