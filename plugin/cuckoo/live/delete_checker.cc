// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "delete_checker.h"

#include <cassert>

#if defined(__linux__)
#include <pthread.h>
#endif

#if defined(__SANITIZE_THREAD__)
extern "C" void AnnotateIgnoreWritesBegin(const char* file, int line);
extern "C" void AnnotateIgnoreWritesEnd(const char* file, int line);
#endif

namespace rocksdb_cuckoo {
namespace live {

namespace {

// DB::ReleaseSnapshot frees RocksDB's snapshot object. Under TSan the free is
// reported as this project's write: Debian's librocksdb ends ReleaseSnapshot
// with tail calls to the deleting destructor and operator delete, so the
// free's caller is the frame that called ReleaseSnapshot, outside the
// library that tests/live/tsan_suppressions.cc ignores (called_from_lib),
// while the library's own accesses to the object, ordered by its DB mutex,
// are invisible to TSan. The object is RocksDB's alone (this code only
// passes the pointer, handed over under mutexes), so its free is ignored here
// as every other access inside librocksdb is.
void ReleaseDbSnapshot(ROCKSDB_NAMESPACE::DB* db,
                       const ROCKSDB_NAMESPACE::Snapshot* snapshot) {
#if defined(__SANITIZE_THREAD__)
  AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
#endif
  db->ReleaseSnapshot(snapshot);
#if defined(__SANITIZE_THREAD__)
  AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
#endif
}

}  // namespace

// ------------------------------------------------------------ snapshots

CheckSnapshots::CheckSnapshots(ROCKSDB_NAMESPACE::DB* db)
    : db_(db), marks_(new std::atomic<uint64_t>[kSlots]) {
  for (size_t i = 0; i < kSlots; ++i) {
    marks_[i].store(0, std::memory_order_relaxed);
  }
}

SharedSnapshot* CheckSnapshots::Acquire(uint64_t key_slot) {
  // The stripe is held: every earlier write of the key has marked.
  const uint64_t mark =
      marks_[key_slot % kSlots].load(std::memory_order_relaxed);
  SharedSnapshot* retired = nullptr;
  SharedSnapshot* s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (current_ == nullptr || current_->sequence < mark ||
        current_->uses >= kMaxUses) {
      // A snapshot taken now holds every write that completed before, the
      // key's last one included.
      const ROCKSDB_NAMESPACE::Snapshot* snapshot = db_->GetSnapshot();
      // None while a family has inplace_update_support: the caller checks
      // before the write instead.
      if (snapshot == nullptr) return nullptr;
      if (current_ != nullptr && UnrefLocked(current_)) retired = current_;
      current_ = new SharedSnapshot{snapshot, snapshot->GetSequenceNumber(),
                                    ++generation_, 1, 0};
    }
    s = current_;
    ++s->refs;
    ++s->uses;
  }
  if (retired != nullptr) Free(retired);
  return s;
}

void CheckSnapshots::Release(SharedSnapshot* s, size_t refs) {
  bool last;
  {
    std::lock_guard<std::mutex> lock(mu_);
    assert(s->refs >= refs);
    s->refs -= refs - 1;
    last = UnrefLocked(s);
  }
  if (last) Free(s);
}

void CheckSnapshots::Reset() {
  SharedSnapshot* retired = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (current_ != nullptr && UnrefLocked(current_)) retired = current_;
    current_ = nullptr;
  }
  if (retired != nullptr) Free(retired);
}

bool CheckSnapshots::UnrefLocked(SharedSnapshot* s) {
  assert(s->refs > 0);
  return --s->refs == 0;
}

void CheckSnapshots::Free(SharedSnapshot* s) {
  ReleaseDbSnapshot(db_, s->snapshot);
  delete s;
}

// ------------------------------------------------------------ checker

void DeleteChecker::Add(Check check) {
  std::vector<Check> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() < max_pending_ && !stop_) {
      if (!worker_.joinable()) worker_ = std::thread([this] { Run(); });
      queue_.push_back(std::move(check));
      // The worker waits for a batch (or a short while after the first
      // check): one wake-up and one MultiGet per batch, not per delete.
      if (queue_.size() == 1 || queue_.size() == kBatch) work_cv_.notify_one();
      return;
    }
    // The worker falls behind (or stops): this writer resolves the queue.
    batch.swap(queue_);
    batch.push_back(std::move(check));
    ++busy_;
  }
  resolve_(&batch);
  std::lock_guard<std::mutex> lock(mu_);
  if (--busy_ == 0) idle_cv_.notify_all();
}

void DeleteChecker::Run() {
#if defined(__linux__)
  // Shown by top -H and perf, like RocksDB's "rocksdb:low" threads.
  pthread_setname_np(pthread_self(), "cuckoo:check");
#endif
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    work_cv_.wait_for(lock, kBatchWait,
                      [this] { return stop_ || queue_.size() >= kBatch; });
    if (queue_.empty()) {
      if (stop_) return;
      continue;  // a Drain or an inline resolve took the queue meanwhile
    }
    std::vector<Check> batch;
    batch.swap(queue_);
    ++busy_;
    lock.unlock();
    resolve_(&batch);
    lock.lock();
    if (--busy_ == 0) idle_cv_.notify_all();
  }
}

void DeleteChecker::Drain() {
  std::vector<Check> batch;
  {
    std::unique_lock<std::mutex> lock(mu_);
    batch.swap(queue_);
  }
  if (!batch.empty()) resolve_(&batch);
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return busy_ == 0; });
}

void DeleteChecker::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  Drain();
  std::lock_guard<std::mutex> lock(mu_);
  stop_ = false;
}

}  // namespace live
}  // namespace rocksdb_cuckoo
