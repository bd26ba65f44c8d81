// An ordinary C++ program using std::thread, built without any knowledge
// of xpthread; tests/real-cxx.sh runs it with libxpthread preloaded and
// compares its output with the expected text.  Every line is
// deterministic.

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <future>
#include <mutex>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace
{
// Whether libxpthread is mapped, so that the test cannot pass on a
// preload that did not happen.
bool
xpthread_mapped ()
{
  std::ifstream maps ("/proc/self/maps");
  std::string line;
  while (std::getline (maps, line))
    if (line.find ("libxpthread") != std::string::npos)
      return true;
  return false;
}

// A producer feeds numbers through a bounded queue to several workers,
// which add up their squares.
long
pipeline (int workers, long count)
{
  std::mutex m;
  std::condition_variable changed;
  std::queue<long> q;
  bool done = false;
  long total = 0;

  std::vector<std::thread> pool;
  for (int w = 0; w < workers; w++)
    pool.emplace_back ([&] {
      long mine = 0;
      for (;;)
        {
          std::unique_lock<std::mutex> lock (m);
          changed.wait (lock, [&] { return !q.empty () || done; });
          if (q.empty ())
            break;
          long v = q.front ();
          q.pop ();
          changed.notify_all ();
          lock.unlock ();
          mine += v * v;
        }
      std::lock_guard<std::mutex> lock (m);
      total += mine;
    });
  for (long i = 1; i <= count; i++)
    {
      std::unique_lock<std::mutex> lock (m);
      changed.wait (lock, [&] { return q.size () < 32; });
      q.push (i);
      changed.notify_all ();
    }
  {
    std::lock_guard<std::mutex> lock (m);
    done = true;
  }
  changed.notify_all ();
  for (auto &t : pool)
    t.join ();
  return total;
}

std::atomic<int> destroyed{0};

struct PerThread
{
  std::vector<int> data = std::vector<int> (1000, 1);
  ~PerThread () { destroyed++; }
};

thread_local PerThread per_thread;

// Each thread uses its own thread_local object, destroyed at its exit.
int
thread_locals (int threads)
{
  std::vector<std::thread> pool;
  std::atomic<int> sum{0};
  for (int i = 0; i < threads; i++)
    pool.emplace_back ([&sum, i] {
      per_thread.data[0] = i;
      sum += std::accumulate (per_thread.data.begin (),
                              per_thread.data.end (), 0) - i;
    });
  for (auto &t : pool)
    t.join ();
  return sum.load ();
}

// std::async over slices of a vector; one task throws.
long
async_sum (long count, int tasks, std::string &error)
{
  std::vector<long> v (count);
  std::iota (v.begin (), v.end (), 1L);
  std::vector<std::future<long>> parts;
  long slice = count / tasks;
  for (int t = 0; t < tasks; t++)
    parts.push_back (std::async (std::launch::async, [&v, t, slice] {
      auto first = v.begin () + t * slice;
      return std::accumulate (first, first + slice, 0L);
    }));
  auto failing = std::async (std::launch::async, [] () -> long {
    throw std::runtime_error ("task failed as intended");
  });
  long total = 0;
  for (auto &f : parts)
    total += f.get ();
  try
    {
      failing.get ();
    }
  catch (const std::exception &e)
    {
      error = e.what ();
    }
  return total;
}
}

int
main ()
{
  std::printf ("xpthread mapped: %s\n", xpthread_mapped () ? "yes" : "no");
  std::printf ("pipeline: %ld\n", pipeline (3, 100000));
  int sum = thread_locals (8);
  std::printf ("thread_local: sum %d, destroyed %d\n", sum, destroyed.load ());
  std::string error;
  long total = async_sum (1000000, 4, error);
  std::printf ("async: %ld, error \"%s\"\n", total, error.c_str ());
  return 0;
}
