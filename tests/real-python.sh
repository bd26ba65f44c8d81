#!/bin/sh
# A Python 3 threading workload under LD_PRELOAD: a thread pool hashing
# data must give the same answer as the same work done in one thread, and
# the interpreter must really have libxpthread mapped.
set -u
command -v python3 > /dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
# The interpreter itself, not a wrapper script that would run other
# programs under the preload first.
python=$(python3 -c 'import sys; print(sys.executable)') || exit 99
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/workload.py" <<'PYTHON'
import concurrent.futures
import ctypes
import hashlib
import sys
import threading

# hashlib releases the GIL for inputs over 2 KiB, so the pool's threads
# really run at once.
BLOCK = 16384
COUNT = 2000


def value(i):
    data = i.to_bytes(8, "little") * (BLOCK // 8)
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


def chunk(lo, hi):
    return sum(value(i) for i in range(lo, hi))


def main():
    with open("/proc/self/maps") as maps:
        if "libxpthread" not in maps.read():
            print("libxpthread is not mapped in this process")
            return 1
    mode = ctypes.CDLL(None).xpthread_mode_np
    mode.restype = ctypes.c_char_p
    print("xpthread mode", mode().decode())

    serial = chunk(0, COUNT)

    step = 50
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        futures = [pool.submit(chunk, lo, min(lo + step, COUNT))
                   for lo in range(0, COUNT, step)]
        parallel = sum(f.result() for f in futures)
    if parallel != serial:
        print("thread pool result", parallel, "!= serial", serial)
        return 1

    # Locks, thread-local data and distinct native thread ids.
    counter = [0]
    lock = threading.Lock()
    local = threading.local()
    ids = set()

    def bump(n):
        local.mine = n
        for _ in range(10000):
            with lock:
                counter[0] += 1
        with lock:
            ids.add(threading.get_native_id())
        return local.mine == n

    threads_ok = []
    workers = [threading.Thread(target=lambda n=n: threads_ok.append(bump(n)))
               for n in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if counter[0] != 80000 or threads_ok != [True] * 8 or len(ids) != 8:
        print("threading: counter", counter[0], "ok", threads_ok,
              "ids", len(ids))
        return 1
    print("ok", serial)
    return 0


sys.exit(main())
PYTHON

env LD_PRELOAD="$XP_LIB" XPTHREAD_SHOW_MODE=1 "$python" "$tmp/workload.py" \
  > "$tmp/out" 2> "$tmp/err"
status=$?
cat "$tmp/out"
cat "$tmp/err"
if [ $status -ne 0 ]; then
  echo "FAIL: the workload exited with status $status"
  exit 1
fi
grep -q '^xpthread: mode ' "$tmp/err" || { echo "FAIL: no xpthread mode line"; exit 1; }
grep -q '^ok ' "$tmp/out" || { echo "FAIL: the workload did not finish"; exit 1; }
exit 0
