// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// StripeLock: the mutex of one key stripe of FilteredDB (internal).
//
// A batch holds the stripes of all its keys at once (up to all 1024 of
// them, taken in ascending order), which a pthread mutex per stripe does
// not suit: ThreadSanitizer's deadlock detector aborts a thread that holds
// more than 64 of them. This lock is one 32-bit word: a compare-and-swap to
// take it when free, a short spin, then a futex wait (Linux; elsewhere the
// waiter yields), and an atomic decrement to release it, waking one waiter
// only when one may wait (Drepper, "Futexes Are Tricky", mutex 3). Taking
// and releasing it are acquire and release operations on the word, so
// ThreadSanitizer sees the order they impose. Meets the Lockable
// requirements (std::lock_guard, std::unique_lock).
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_STRIPE_LOCK_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_STRIPE_LOCK_H_

#include <atomic>
#include <cstdint>
#include <thread>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace rocksdb_cuckoo {
namespace live {

class StripeLock {
 public:
  StripeLock() = default;
  StripeLock(const StripeLock&) = delete;
  StripeLock& operator=(const StripeLock&) = delete;

  bool try_lock() {
    uint32_t expected = kFree;
    return state_.compare_exchange_strong(expected, kLocked,
                                          std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  void lock() {
    if (try_lock()) return;
    // Holds are short (one DB write): spin a little before sleeping.
    for (int i = 0; i < 64; ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if (state_.load(std::memory_order_relaxed) == kFree && try_lock()) {
        return;
      }
    }
    // kContended: the holder wakes a waiter when it unlocks.
    while (state_.exchange(kContended, std::memory_order_acquire) != kFree) {
      Wait();
    }
  }
  void unlock() {
    if (state_.exchange(kFree, std::memory_order_release) == kContended) {
      Wake();
    }
  }

 private:
  static constexpr uint32_t kFree = 0;
  static constexpr uint32_t kLocked = 1;     // no waiter
  static constexpr uint32_t kContended = 2;  // waiters may sleep
  void Wait() {
#if defined(__linux__)
    // Sleeps only while the word is still kContended.
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAIT_PRIVATE,
            kContended, nullptr, nullptr, 0);
#else
    std::this_thread::yield();
#endif
  }
  void Wake() {
#if defined(__linux__)
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAKE_PRIVATE,
            1, nullptr, nullptr, 0);
#endif
  }
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
                "the futex is the atomic's word");
  std::atomic<uint32_t> state_{kFree};
};

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_STRIPE_LOCK_H_
