// Abseil's absl::Mutex behind the three C functions that bench-mutex.c's
// cells lock through when built with -DBENCH_ABSL: bench/mutex-cells
// builds that variant to measure Abseil's mutex in the very loop the
// others run.  The mutex lives in static storage of its own cache line
// and is made anew before every cell, as the pthread mutex is.
#include <absl/synchronization/mutex.h>
#include <new>

namespace
{
alignas (64) unsigned char storage[sizeof (absl::Mutex)];
absl::Mutex *lock;
}

extern "C" void
bench_absl_reset (void)
{
  if (lock != nullptr)
    lock->~Mutex ();
  lock = new (storage) absl::Mutex;
}

extern "C" void
bench_absl_lock (void)
{
  lock->Lock ();
}

extern "C" void
bench_absl_unlock (void)
{
  lock->Unlock ();
}
