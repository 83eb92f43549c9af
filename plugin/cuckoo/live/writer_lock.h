// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// WriterLock: a shared/exclusive lock that prefers exclusive lockers
// (internal; FilteredDB's writer lock).
//
// Contract:
// - lock()/unlock(): exclusive; lock_shared()/unlock_shared(): shared. Meets
//   the standard SharedMutex requirements, so std::unique_lock and
//   std::shared_lock work with it.
// - Exclusive lockers are preferred: once a thread waits in lock(), later
//   lock_shared() calls wait until it has had the lock. An exclusive locker
//   therefore waits only for the shared holders already inside (and for
//   exclusive lockers ahead of it), however many threads keep asking for the
//   shared lock. std::shared_mutex gives no such promise: glibc's lets new
//   shared holders in while an exclusive locker waits, so a few threads
//   taking it in turn can keep it out forever.
// - Not recursive: a thread that holds the lock (either way) must not ask
//   for it again. A second lock_shared() of a shared holder deadlocks as
//   soon as an exclusive locker waits between the two.
// - Shared lockers can wait for a stream of exclusive lockers; the users of
//   the exclusive side (batches, rebuilds, ...) are rare by design.
// Cost: lock_shared()/unlock_shared() are one atomic read-modify-write each
// when uncontended (as std::shared_mutex, which is a pthread_rwlock_t too).
//
// WriterLock is a pthread_rwlock_t of kind
// PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP on glibc and
// PortableWriterLock (a mutex and two condition variables) elsewhere; both
// are compiled and tested everywhere.
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_WRITER_LOCK_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_WRITER_LOCK_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <system_error>

#if defined(__GLIBC__)
#include <pthread.h>
#endif

namespace rocksdb_cuckoo {
namespace live {

class PortableWriterLock {
 public:
  PortableWriterLock() = default;
  PortableWriterLock(const PortableWriterLock&) = delete;
  PortableWriterLock& operator=(const PortableWriterLock&) = delete;

  void lock() {
    std::unique_lock<std::mutex> guard(mu_);
    ++waiting_writers_;
    writer_cv_.wait(guard, [this] { return !writer_ && readers_ == 0; });
    --waiting_writers_;
    writer_ = true;
  }
  void unlock() {
    {
      std::lock_guard<std::mutex> guard(mu_);
      writer_ = false;
    }
    // A waiting writer goes first; readers re-check and wait again.
    writer_cv_.notify_one();
    reader_cv_.notify_all();
  }
  void lock_shared() {
    std::unique_lock<std::mutex> guard(mu_);
    reader_cv_.wait(guard,
                    [this] { return !writer_ && waiting_writers_ == 0; });
    ++readers_;
  }
  void unlock_shared() {
    bool last;
    {
      std::lock_guard<std::mutex> guard(mu_);
      last = --readers_ == 0;
    }
    if (last) writer_cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable reader_cv_;
  std::condition_variable writer_cv_;
  uint64_t readers_ = 0;          // shared holders
  uint64_t waiting_writers_ = 0;  // threads waiting in lock()
  bool writer_ = false;           // an exclusive holder
};

#if defined(__GLIBC__)

class WriterLock {
 public:
  WriterLock() {
    pthread_rwlockattr_t attr;
    Check(pthread_rwlockattr_init(&attr));
    Check(pthread_rwlockattr_setkind_np(
        &attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP));
    Check(pthread_rwlock_init(&rw_, &attr));
    pthread_rwlockattr_destroy(&attr);
  }
  ~WriterLock() { pthread_rwlock_destroy(&rw_); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

  void lock() { Check(pthread_rwlock_wrlock(&rw_)); }
  void unlock() { Check(pthread_rwlock_unlock(&rw_)); }
  void lock_shared() { Check(pthread_rwlock_rdlock(&rw_)); }
  void unlock_shared() { Check(pthread_rwlock_unlock(&rw_)); }

 private:
  // As std::shared_mutex: an error (EDEADLK on a recursive lock(), EAGAIN
  // past the reader limit) is a std::system_error.
  static void Check(int error) {
    if (error != 0) {
      throw std::system_error(error, std::generic_category(), "WriterLock");
    }
  }
  pthread_rwlock_t rw_;
};

#else

using WriterLock = PortableWriterLock;

#endif

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_WRITER_LOCK_H_
