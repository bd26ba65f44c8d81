#!/bin/bash
# Python 3 threading: a thread pool hashing data (hashlib lets the GIL go
# for large inputs, so threads really run at once), a lock-protected
# counter, a queue between producer and consumer threads and
# threading.local; the digest of it all must be glibc's, and the pool's
# answer must equal the same work done in one thread.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need python3

cat > "$T/work.py" <<'PYTHON'
import concurrent.futures, hashlib, queue, sys, threading

BLOCK, COUNT = 32768, 16000

def value(i):
    data = i.to_bytes(8, "little") * (BLOCK // 8)
    return hashlib.sha256(data).digest()

def chunk(lo, hi):
    h = hashlib.sha256()
    for i in range(lo, hi):
        h.update(value(i))
    return h.digest()

STEP = 100
ranges = [(lo, min(lo + STEP, COUNT)) for lo in range(0, COUNT, STEP)]
with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
    parallel = list(pool.map(lambda r: chunk(*r), ranges))
serial = [chunk(*r) for r in ranges]
if parallel != serial:
    sys.exit("thread pool result differs from the serial one")

counter, lock, local = [0], threading.Lock(), threading.local()
def bump(n):
    local.n = n
    for _ in range(50000):
        with lock:
            counter[0] += 1
    assert local.n == n
workers = [threading.Thread(target=bump, args=(n,)) for n in range(8)]
for w in workers: w.start()
for w in workers: w.join()

q, out = queue.Queue(maxsize=16), []
def produce():
    for i in range(50000):
        q.put(i)
    q.put(None)
def consume():
    h = hashlib.sha256()
    while (i := q.get()) is not None:
        h.update(i.to_bytes(4, "little"))
    out.append(h.hexdigest())
threads = [threading.Thread(target=produce), threading.Thread(target=consume)]
for t in threads: t.start()
for t in threads: t.join()

total = hashlib.sha256(b"".join(parallel)).hexdigest()
print("pool", total, "counter", counter[0], "queue", out[0])
PYTHON

workload ()
{
  real_timed "$1" python3 "$T/work.py" > "$T/$1.result" ||
    { echo "FAIL: the python3 workload failed"; return 1; }
  grep -q '^pool [0-9a-f]\{64\} counter 400000 queue ' "$T/$1.result" ||
    { echo "FAIL: unexpected output"; return 1; }
}

real_main
