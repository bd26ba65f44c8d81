// The C++ runtime on top of xpthread: std::thread, thread_local objects
// with destructors, exceptions, shared_ptr reference counts, mutexes and
// condition variables, std::async.  libstdc++ reaches the pthread API
// through the program's symbol bindings, so all of this runs on xpthread.
//
// Worker threads never call the Check API: they record what they saw and
// the main thread asserts.

#include "common.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// ---- thread_local with destructors -----------------------------------

namespace
{
std::atomic<int> tls_constructed{0};
std::atomic<int> tls_destroyed{0};

struct Tracked
{
  int value;
  explicit Tracked (int v) : value (v) { tls_constructed++; }
  ~Tracked () { tls_destroyed++; }
};

thread_local Tracked tracked (0x77);
thread_local std::string tls_text ("initial");

// Touches both thread_local objects, so that each is constructed in this
// thread and must be destroyed when it exits.
bool
use_thread_locals (int id)
{
  bool fresh = tracked.value == 0x77 && tls_text == "initial";
  tracked.value = id;
  tls_text = "thread " + std::to_string (id);
  return fresh && tls_text == "thread " + std::to_string (id);
}
}

START_TEST (thread_local_destructors)
{
  const int n = 8;
  std::vector<std::thread> threads;
  std::vector<char> fresh (n, 0);
  int before_constructed = tls_constructed.load ();
  for (int i = 0; i < n; i++)
    threads.emplace_back ([i, &fresh] { fresh[i] = use_thread_locals (i); });
  for (auto &t : threads)
    t.join ();
  for (int i = 0; i < n; i++)
    ck_assert_msg (fresh[i], "thread %d saw another thread's objects", i);
  ck_assert_int_eq (tls_constructed.load () - before_constructed, n);
  // Every thread's object destroyed by the time join returns; the main
  // thread has not touched its own yet.
  ck_assert_int_eq (tls_destroyed.load (), n);
}
END_TEST

// ---- exceptions ------------------------------------------------------

namespace
{
struct Unwound
{
  std::atomic<int> &count;
  ~Unwound () { count++; }
};

void __attribute__ ((noinline))
throw_deep (int depth, std::atomic<int> &unwound)
{
  Unwound guard{unwound};
  if (depth == 0)
    throw std::runtime_error ("deep " + std::to_string (unwound.load ()));
  throw_deep (depth - 1, unwound);
}
}

START_TEST (exceptions_in_threads)
{
  const int n = 4, rounds = 500, depth = 20;
  std::vector<std::thread> threads;
  std::vector<int> caught (n, 0), wrong (n, 0);
  for (int i = 0; i < n; i++)
    threads.emplace_back ([i, &caught, &wrong] {
      for (int r = 0; r < rounds; r++)
        {
          std::atomic<int> unwound{0};
          try
            {
              throw_deep (depth, unwound);
            }
          catch (const std::runtime_error &e)
            {
              caught[i]++;
              // Every frame's destructor ran during unwinding.
              if (unwound.load () != depth + 1
                  || std::strncmp (e.what (), "deep ", 5) != 0)
                wrong[i]++;
            }
        }
    });
  for (auto &t : threads)
    t.join ();
  for (int i = 0; i < n; i++)
    {
      ck_assert_int_eq (caught[i], rounds);
      ck_assert_int_eq (wrong[i], 0);
    }
}
END_TEST

// An exception escaping a future's task is rethrown by get().
START_TEST (exception_through_future)
{
  auto f = std::async (std::launch::async,
                       [] () -> int { throw std::logic_error ("from task"); });
  bool caught = false;
  try
    {
      f.get ();
    }
  catch (const std::logic_error &e)
    {
      caught = std::string (e.what ()) == "from task";
    }
  ck_assert (caught);
}
END_TEST

// ---- shared_ptr ------------------------------------------------------

namespace
{
std::atomic<int> payload_destroyed{0};

struct Payload
{
  int data[16] = {};
  ~Payload () { payload_destroyed++; }
};
}

// Lost updates to the reference count show up as a count other than 1 at
// the end, or as a destructor that runs early or twice.
START_TEST (shared_ptr_across_threads)
{
  const int n = 4, copies = 100000;
  payload_destroyed = 0;
  {
    auto p = std::make_shared<Payload> ();
    std::vector<std::thread> threads;
    std::atomic<int> early{0};
    for (int i = 0; i < n; i++)
      threads.emplace_back ([p, &early] {
        std::vector<std::shared_ptr<Payload>> held;
        held.reserve (64);
        for (int c = 0; c < copies; c++)
          {
            held.push_back (p);
            if (held.size () == 64)
              held.clear ();
            std::weak_ptr<Payload> w (p);
            if (w.expired () || payload_destroyed.load () != 0)
              early++;
          }
      });
    for (auto &t : threads)
      t.join ();
    ck_assert_int_eq (p.use_count (), 1);
    ck_assert_int_eq (early.load (), 0);
    ck_assert_int_eq (payload_destroyed.load (), 0);
  }
  ck_assert_int_eq (payload_destroyed.load (), 1);
}
END_TEST

// ---- mutex and condition variable ------------------------------------

START_TEST (producer_consumer)
{
  const int producers = 2, consumers = 2, items = 20000, capacity = 16;
  std::mutex m;
  std::condition_variable not_empty, not_full;
  std::queue<long> q;
  int producers_left = producers;
  std::vector<long> consumed_sum (consumers, 0), consumed_count (consumers, 0);

  std::vector<std::thread> threads;
  for (int p = 0; p < producers; p++)
    threads.emplace_back ([&, p] {
      for (int i = 0; i < items; i++)
        {
          std::unique_lock<std::mutex> lock (m);
          not_full.wait (lock, [&] { return (int) q.size () < capacity; });
          q.push ((long) p * items + i);
          not_empty.notify_one ();
        }
      std::lock_guard<std::mutex> lock (m);
      if (--producers_left == 0)
        not_empty.notify_all ();
    });
  for (int c = 0; c < consumers; c++)
    threads.emplace_back ([&, c] {
      for (;;)
        {
          std::unique_lock<std::mutex> lock (m);
          not_empty.wait (lock,
                          [&] { return !q.empty () || producers_left == 0; });
          if (q.empty ())
            return;
          consumed_sum[c] += q.front ();
          consumed_count[c]++;
          q.pop ();
          not_full.notify_one ();
        }
    });
  for (auto &t : threads)
    t.join ();

  long total = (long) producers * items;
  long count = std::accumulate (consumed_count.begin (),
                                consumed_count.end (), 0L);
  long sum = std::accumulate (consumed_sum.begin (), consumed_sum.end (), 0L);
  ck_assert_int_eq (count, total);
  ck_assert_int_eq (sum, total * (total - 1) / 2);
}
END_TEST

// ---- std::async ------------------------------------------------------

START_TEST (async_futures)
{
  const int n = 16;
  std::vector<std::future<long>> futures;
  for (int i = 0; i < n; i++)
    futures.push_back (std::async (std::launch::async, [i] {
      long sum = 0;
      for (long k = 0; k <= 10000 * (i + 1); k++)
        sum += k;
      return sum;
    }));
  for (int i = 0; i < n; i++)
    {
      long top = 10000L * (i + 1);
      ck_assert_int_eq (futures[i].get (), top * (top + 1) / 2);
    }

  // A promise fulfilled by one thread wakes another blocked on its future.
  std::promise<std::string> promise;
  std::shared_future<std::string> shared = promise.get_future ().share ();
  auto waiter = std::async (std::launch::async,
                            [shared] { return shared.get () + "!"; });
  std::thread setter ([&promise] { promise.set_value ("ready"); });
  setter.join ();
  std::string result = waiter.get ();
  ck_assert_str_eq (result.c_str (), "ready!");
}
END_TEST

// ---- the suite -------------------------------------------------------

static void
add_case (Suite *s, const char *name, const TTest *test)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, 20);
  tcase_add_test (tc, test);
  suite_add_tcase (s, tc);
}

int
main ()
{
  Suite *s = suite_create ("cxx");
  add_case (s, "thread_local", thread_local_destructors);
  add_case (s, "exceptions", exceptions_in_threads);
  add_case (s, "exception-future", exception_through_future);
  add_case (s, "shared_ptr", shared_ptr_across_threads);
  add_case (s, "condition_variable", producer_consumer);
  add_case (s, "async", async_futures);
  return xp_test_run (s);
}
