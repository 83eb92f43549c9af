// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Deferred existence checks of deletes (internal).
//
// A Delete of a key the filter may contain must erase one fingerprint only if
// the key was live just before the delete. Instead of a point read before
// the delete, on the writer's path, the writer (under the key's stripe lock,
// so no other write of the key runs) picks a DB snapshot that holds every
// earlier write of the key and none later, writes, and hands {key, snapshot}
// to this checker. A worker thread reads the queued keys at their snapshots
// (one MultiGet per snapshot) and erases the fingerprints of the keys that
// were live there. Until then the fingerprint stays (a transient extra
// positive, never a false negative): the filter stays a superset.
//
// Shared snapshots (CheckSnapshots). A snapshot per delete would cost two DB
// mutex round trips per delete and one read per check. Consecutive deletes
// share one snapshot S instead, as long as S holds every earlier write of
// their key: every write FilteredDB makes under key stripes (single-key
// writes, batches) marks its keys' slots, after its DB write and before it
// releases the stripes, with the DB's latest sequence number (which is at
// least the write's own). A delete (holding its key's stripe, so every
// earlier write of the key has marked) may use S only if S's sequence number
// is at least its key's mark; otherwise it takes a new snapshot. Marks are
// plain atomic stores: no lock on the write path. Slots are hashed, and a
// slot's keys share a stripe (kSlots is a multiple of the stripe count), so
// a slot's marks never go backwards; a collision only takes a new snapshot.
// Writes made under FilteredDB's exclusive lock are not marked: the
// exclusive lock retires S (Reset).
//
// Copies of one fingerprint are interchangeable, so a later Put of the same
// key (which sees the key absent and inserts a new copy) does not disturb a
// pending erase. A rebuild must not start while checks are pending (their
// erase would reach the new table's delta log although the deleted key is
// not in its scan): FilteredDB drains the checker whenever it takes the
// exclusive writer lock.
//
// Thread safety: Add, Acquire and MarkWritten from any writer; Drain, Reset
// and Stop from a thread that holds the exclusive writer lock or no lock
// (never the filter mutex, which the resolve function takes).
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_DELETE_CHECKER_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_DELETE_CHECKER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rocksdb/db.h"
#include "rocksdb/snapshot.h"

namespace rocksdb_cuckoo {
namespace live {

struct CfState;

// A DB snapshot shared by the checks of several deletes (reference counted).
struct SharedSnapshot {
  const ROCKSDB_NAMESPACE::Snapshot* snapshot;
  uint64_t sequence;    // the snapshot's sequence number
  uint64_t generation;  // order of creation (checks of one snapshot group)
  size_t refs;          // checks holding it, + 1 while current
  size_t uses;          // deletes that used it
};

class CheckSnapshots {
 public:
  explicit CheckSnapshots(ROCKSDB_NAMESPACE::DB* db);
  ~CheckSnapshots() { Reset(); }
  CheckSnapshots(const CheckSnapshots&) = delete;
  CheckSnapshots& operator=(const CheckSnapshots&) = delete;

  // Writer, key's stripe held, before its delete: a snapshot holding every
  // earlier write of the key and no later one (a reference for the check).
  // nullptr when the DB gives no snapshots (a family with
  // inplace_update_support): the key must be checked before its write.
  SharedSnapshot* Acquire(uint64_t key_slot);
  // Writer, key's stripe held, after its DB write (every write of a
  // filtered key under its stripe, whatever the outcome). Lock-free.
  void MarkWritten(uint64_t key_slot) {
    marks_[key_slot % kSlots].store(db_->GetLatestSequenceNumber(),
                                    std::memory_order_relaxed);
  }
  // Any thread (a hint): brings the slot's mark into the cache for a later
  // MarkWritten.
  void Prefetch(uint64_t key_slot) const {
    __builtin_prefetch(&marks_[key_slot % kSlots], 1);
  }
  // Slots (a multiple of the writers' stripe count: a slot's keys share a
  // stripe).
  static constexpr size_t kSlots = size_t{1} << 16;
  // Drops `refs` references; the last one releases the DB snapshot.
  void Release(SharedSnapshot* s, size_t refs = 1);
  // No single-key writer runs: the current snapshot is retired (the writes
  // that follow under the exclusive lock are not marked).
  void Reset();

 private:
  bool UnrefLocked(SharedSnapshot* s);  // true: the caller frees s
  void Free(SharedSnapshot* s);

  // A snapshot serves at most this many deletes, so that it does not pin
  // old versions for long.
  static constexpr size_t kMaxUses = 4096;

  ROCKSDB_NAMESPACE::DB* const db_;
  std::mutex mu_;  // guards the two fields below
  uint64_t generation_ = 0;
  SharedSnapshot* current_ = nullptr;
  // Sequence number marked by each slot's last write (read and written
  // under the slot's stripe; atomic only for the reads of other slots'
  // neighbours in the same cache line).
  std::unique_ptr<std::atomic<uint64_t>[]> marks_;
};

class DeleteChecker {
 public:
  struct Check {
    CfState* cf;
    std::string key;
    uint64_t hash;
    SharedSnapshot* snapshot;  // holds the state just before the delete
  };
  // Resolves a batch: reads each key at its snapshot, erases the live ones,
  // releases every snapshot reference.
  using ResolveFn = std::function<void(std::vector<Check>*)>;

  DeleteChecker(ResolveFn resolve, size_t max_pending)
      : resolve_(std::move(resolve)), max_pending_(max_pending) {}
  ~DeleteChecker() { Stop(); }
  DeleteChecker(const DeleteChecker&) = delete;
  DeleteChecker& operator=(const DeleteChecker&) = delete;

  // Queues the check. When max_pending checks wait, the caller resolves the
  // whole queue with its own check instead (the writers help a worker that
  // falls behind).
  void Add(Check check);
  // Resolves every queued check on the calling thread and waits for the
  // worker's batch in flight.
  void Drain();
  // Drain, then ends the worker (a later Add starts it again).
  void Stop();

 private:
  void Run();

  // The worker resolves kBatch checks at once, or what is queued kBatchWait
  // after the first one.
  static constexpr size_t kBatch = 1024;
  static constexpr std::chrono::milliseconds kBatchWait{10};

  const ResolveFn resolve_;
  const size_t max_pending_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::vector<Check> queue_;
  int busy_ = 0;  // batches being resolved outside Drain
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_DELETE_CHECKER_H_
