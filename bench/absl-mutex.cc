// Abseil's absl::Mutex and absl::CondVar behind the C functions that
// bench-mutex.c's cells and bench-pingpong.c's condition variable
// ping-pong call when built with -DBENCH_ABSL: bench/mutex-cells builds
// those variants to measure Abseil in the very loops the others run.
// The mutex lives in static storage of its own cache line and is made
// anew before every cell, as the pthread mutex is.
#include <absl/synchronization/mutex.h>
#include <new>

namespace
{
alignas (64) unsigned char storage[sizeof (absl::Mutex)];
absl::Mutex *lock;
absl::CondVar conds[2];
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

extern "C" void
bench_absl_cond_wait (int which)
{
  conds[which].Wait (lock);
}

extern "C" void
bench_absl_cond_signal (int which)
{
  conds[which].Signal ();
}
