// Deferred existence checks of deletes (internal).
//
// A Delete of a key the filter may contain must erase one fingerprint only if
// the key was live just before the delete. Instead of a point read before
// the delete, on the writer's path, the writer takes a DB snapshot just
// before its delete (under the key's stripe lock, so every earlier write to
// the key is in the snapshot and none later), writes, and hands
// {key, snapshot} to this checker. A worker thread reads the key at the
// snapshot and erases the fingerprint if the key was live there, then
// releases the snapshot. Until then the fingerprint stays (a transient extra
// positive, never a false negative): the filter stays a superset.
//
// Copies of one fingerprint are interchangeable, so a later Put of the same
// key (which sees the key absent and inserts a new copy) does not disturb a
// pending erase. A rebuild must not start while checks are pending (their
// erase would reach the new table's delta log although the deleted key is
// not in its scan): FilteredDB drains the checker whenever it takes the
// exclusive writer lock.
//
// Thread safety: Add from any writer; Drain and Stop from a thread that
// holds the exclusive writer lock or no lock (never the filter mutex, which
// the resolve function takes).
#ifndef ROCKSDB_CUCKOO_PLUGIN_LIVE_DELETE_CHECKER_H_
#define ROCKSDB_CUCKOO_PLUGIN_LIVE_DELETE_CHECKER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rocksdb/snapshot.h"

namespace rocksdb_cuckoo {
namespace live {

struct CfState;

class DeleteChecker {
 public:
  struct Check {
    CfState* cf;
    std::string key;
    uint64_t hash;
    const ROCKSDB_NAMESPACE::Snapshot* snapshot;  // taken before the delete
  };
  // Resolves a batch: reads each key at its snapshot, erases the live ones,
  // releases every snapshot.
  using ResolveFn = std::function<void(std::vector<Check>*)>;

  DeleteChecker(ResolveFn resolve, size_t max_pending)
      : resolve_(std::move(resolve)), max_pending_(max_pending) {}
  ~DeleteChecker() { Stop(); }
  DeleteChecker(const DeleteChecker&) = delete;
  DeleteChecker& operator=(const DeleteChecker&) = delete;

  // True if the check was queued; false when max_pending checks wait (the
  // caller then checks before its delete instead).
  bool Add(Check check);
  // Resolves every queued check on the calling thread and waits for the
  // worker's batch in flight.
  void Drain();
  // Drain, then ends the worker (a later Add starts it again).
  void Stop();

 private:
  void Run();

  const ResolveFn resolve_;
  const size_t max_pending_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::vector<Check> queue_;
  bool busy_ = false;  // the worker resolves a batch
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_LIVE_DELETE_CHECKER_H_
