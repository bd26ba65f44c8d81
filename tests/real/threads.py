# A Python threading workload for the lock debugging tools' real-program
# checks (tests/real/lockdep.sh, prof.sh): a thread pool, a lock, a
# queue.  Prints a digest of its work, the lock's count and the queue's.
import concurrent.futures, hashlib, queue, threading
def chunk(lo):
    h = hashlib.sha256()
    for i in range(lo, lo + 50):
        h.update(hashlib.sha256(i.to_bytes(8, "little") * 2048).digest())
    return h.digest()
with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
    digest = hashlib.sha256(b"".join(pool.map(chunk, range(0, 2000, 50))))
counter, lock = [0], threading.Lock()
def bump():
    for _ in range(20000):
        with lock:
            counter[0] += 1
q, got = queue.Queue(maxsize=8), []
def consume():
    while (i := q.get()) is not None:
        got.append(i)
ts = [threading.Thread(target=bump) for _ in range(4)]
ts.append(threading.Thread(target=consume))
for t in ts: t.start()
for i in range(10000): q.put(i)
q.put(None)
for t in ts: t.join()
print(digest.hexdigest(), counter[0], len(got))
