// C++ programs for tests/lockdep.sh, one per argument: lock-order bugs
// among std::mutex and std::shared_mutex objects, which lockdep must
// report with C++ names, although no run hangs.  A std::mutex is
// zero-filled by its constexpr constructor, never initialised by
// pthread_mutex_init: its class is the site where it was first taken,
// in the program's code that std::mutex::lock was inlined into.  Built
// with debug information: the reports name the lines marked
// "line:NAME", whose numbers tests/lockdep.sh reads from here.
#include <cstdio>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <thread>

struct account
{
  std::mutex mu;
  long balance = 0;
  static std::mutex registry;
};

std::mutex account::registry;
static std::mutex g_mu;
static std::shared_mutex table;

// Not inlined, so that reports name them with any compiler.  Every
// account's mutex is first taken here: one class for all of them.
static __attribute__ ((noinline)) void
open_account (account &a)
{
  std::lock_guard<std::mutex> hold (a.mu); /* line:cxx-open */
  a.balance = 100;
}

static __attribute__ ((noinline)) void
audit (account &a)
{
  std::lock_guard<std::mutex> outer (g_mu); /* line:cxx-audit-g */
  std::lock_guard<std::mutex> inner (a.mu); /* line:cxx-audit-mu */
}

static __attribute__ ((noinline)) void
pay (account &a)
{
  std::lock_guard<std::mutex> outer (a.mu); /* line:cxx-pay-mu */
  std::lock_guard<std::mutex> inner (g_mu); /* line:cxx-pay-g */
  a.balance -= 10;
}

// Reported: g_mu before an account's mutex, and another account's
// mutex before g_mu; the two orders are seen on different accounts.
static void
account_members ()
{
  account *a1 = new account, *a2 = new account;
  open_account (*a1);
  open_account (*a2);
  std::thread ([a1] { audit (*a1); }).join ();
  std::thread ([a2] { pay (*a2); }).join ();
  delete a1;
  delete a2;
}

static __attribute__ ((noinline)) void
reindex ()
{
  std::unique_lock<std::shared_mutex> write (table); /* line:cxx-re-table */
  std::lock_guard<std::mutex> hold (account::registry); /* line:cxx-re-reg */
}

static __attribute__ ((noinline)) void
enrol ()
{
  std::lock_guard<std::mutex> hold (account::registry); /* line:cxx-en-reg */
  std::unique_lock<std::shared_mutex> write (table); /* line:cxx-en-table */
}

// Reported: a static member and a std::shared_mutex taken for writing
// in opposite orders.
static void
static_member ()
{
  std::thread (reindex).join ();
  std::thread (enrol).join ();
}

static __attribute__ ((noinline)) void
look_up ()
{
  std::lock_guard<std::mutex> hold (account::registry); /* line:cxx-lu-reg */
  std::shared_lock<std::shared_mutex> read (table); /* line:cxx-lu-table */
}

// Reported: a reader of the std::shared_mutex waits for its writer,
// which waits for the static member the reader holds.
static void
shared_reader ()
{
  std::thread (reindex).join ();
  std::thread (look_up).join ();
}

static const struct
{
  const char *name;
  void (*run) ();
} cases[] = {
  { "account-members", account_members },
  { "static-member", static_member },
  { "shared-reader", shared_reader },
};

int
main (int argc, char **argv)
{
  for (const auto &c : cases)
    if (argc == 2 && std::strcmp (argv[1], c.name) == 0)
      {
        c.run ();
        std::printf ("%s: done\n", c.name);
        return 0;
      }
  std::fprintf (stderr, "usage: %s CASE\n", argv[0]);
  return 2;
}
