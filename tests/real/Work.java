// The JVM workload of tests/real/jvm.sh: a thread pool hashing data, a
// synchronized counter, a ReentrantLock/Condition hand-off and a
// ConcurrentHashMap filled by many threads.  Prints a digest of it all.
import java.security.MessageDigest;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.locks.*;

public class Work {
    static long counter;

    static byte[] chunk(int lo, int hi) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        byte[] block = new byte[16384];
        for (int i = lo; i < hi; i++) {
            Arrays.fill(block, (byte) i);
            block[0] = (byte) (i >> 8);
            md.update(block);
        }
        return md.digest();
    }

    public static void main(String[] args) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<byte[]>> parts = new ArrayList<>();
        for (int lo = 0; lo < 20000; lo += 250) {
            final int l = lo;
            parts.add(pool.submit(() -> chunk(l, l + 250)));
        }
        MessageDigest all = MessageDigest.getInstance("SHA-256");
        for (Future<byte[]> f : parts) all.update(f.get());

        ConcurrentHashMap<Integer, Integer> map = new ConcurrentHashMap<>();
        CountDownLatch latch = new CountDownLatch(8);
        Object monitor = new Object();
        for (int t = 0; t < 8; t++) {
            final int me = t;
            pool.execute(() -> {
                for (int i = 0; i < 100000; i++) {
                    synchronized (monitor) { counter++; }
                    map.merge(i % 1000, me, Integer::sum);
                }
                latch.countDown();
            });
        }
        latch.await();
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
        long mapSum = 0;
        for (int v : map.values()) mapSum += v;

        // One slot hand-off through a lock and two conditions.
        ReentrantLock lock = new ReentrantLock();
        Condition full = lock.newCondition(), empty = lock.newCondition();
        long[] slot = {-1}, got = {0};
        Thread consumer = new Thread(() -> {
            for (int i = 0; i < 50000; i++) {
                lock.lock();
                try {
                    while (slot[0] < 0) full.awaitUninterruptibly();
                    got[0] += slot[0]; slot[0] = -1; empty.signal();
                } finally { lock.unlock(); }
            }
        });
        consumer.start();
        for (int i = 0; i < 50000; i++) {
            lock.lock();
            try {
                while (slot[0] >= 0) empty.awaitUninterruptibly();
                slot[0] = i; full.signal();
            } finally { lock.unlock(); }
        }
        consumer.join();

        StringBuilder hex = new StringBuilder();
        for (byte b : all.digest()) hex.append(String.format("%02x", b));
        System.out.println("pool " + hex + " counter " + counter
                           + " map " + mapSum + " handoff " + got[0]);
    }
}
