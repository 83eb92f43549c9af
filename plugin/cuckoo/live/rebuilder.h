// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The background rebuild of one filtered column family (a rescan): a scan of a
// DB iterator into a LiveKeyFilter::Builder on its own thread, and the
// hand-off of the result to the writers, who install it under their lock.
//
// Protocol (the "writer lock" is FilteredDBImpl's filter mutex, filter_mu_,
// which its exclusive lock also holds):
//   Start        writer lock held: the iterator and the filter's delta log
//                were created at the same instant; the scan runs on a new
//                thread.
//   scan ends    the thread publishes the result (ready()) and wakes any
//                WaitResult, then calls `install` (which blocks on the writer
//                lock and installs a result that is still waiting), and
//                exits. Writers also take a ready result when they hold the
//                lock, so whoever comes first installs it.
//   TakeResult   writer lock held: moves a ready result out.
//   WaitResult   writer lock held: blocks on a condition variable until the
//                scan ended, then TakeResult. The thread publishes before it
//                asks for the writer lock, so this cannot deadlock.
//   Stop         writer lock NOT held: cancels the scan and joins every
//                thread (a thread blocked on the writer lock gets it).
// A thread is never joined under the writer lock: one that has not exited
// when the next rebuild starts is joined by Stop (or by a later Start once it
// has exited).
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_REBUILDER_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_REBUILDER_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cuckoo/live_key_filter.h"
#include "rocksdb/iterator.h"
#include "rocksdb/status.h"

namespace rocksdb_cuckoo {
namespace live {

// The core's live-key filter, used throughout the RocksDB glue.
using cuckoo::LiveKeyFilter;
using cuckoo::LiveKeyFilterOptions;
using cuckoo::LiveKeyFilterStats;

class Rebuilder {
 public:
  using Builder = LiveKeyFilter::Builder;
  // Fills the builder from the iterator (on the rebuild thread); should
  // return early once cancelled() is true.
  using ScanFn = std::function<ROCKSDB_NAMESPACE::Status(
      ROCKSDB_NAMESPACE::Iterator*, Builder*)>;
  // Takes the writer lock and installs a result that is still ready (on the
  // rebuild thread, after the result was published; not called once
  // cancelled).
  using InstallFn = std::function<void()>;

  Rebuilder(ScanFn scan, InstallFn install)
      : scan_(std::move(scan)), install_(std::move(install)) {}
  ~Rebuilder() { Stop(); }
  Rebuilder(const Rebuilder&) = delete;
  Rebuilder& operator=(const Rebuilder&) = delete;

  // Writer lock held, running() false.
  void Start(std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it,
             std::unique_ptr<Builder> builder);
  // Produces the builder some other way than a scan (e.g. a checkpoint
  // loaded from disk); on the rebuild thread, should return early once
  // cancelled() is true.
  using JobFn =
      std::function<ROCKSDB_NAMESPACE::Status(std::unique_ptr<Builder>*)>;
  // As Start, with the job instead of the scan; the result is handed off the
  // same way.
  void StartJob(JobFn job);
  // Writer lock held: a rebuild was started and its result not taken yet.
  bool running() const { return running_.load(std::memory_order_acquire); }
  // Any thread: the scan ended and its result waits to be taken.
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  // Writer lock held: if ready(), moves the result out (null builder when
  // the scan failed, with the reason in *status) and returns true.
  bool TakeResult(std::unique_ptr<Builder>* builder,
                  ROCKSDB_NAMESPACE::Status* status);
  // Writer lock held, running() true: waits for the scan, then TakeResult.
  void WaitResult(std::unique_ptr<Builder>* builder,
                  ROCKSDB_NAMESPACE::Status* status);
  // For the scan function.
  bool cancelled() const { return cancel_.load(std::memory_order_relaxed); }

  // Writer lock NOT held: cancels a running scan and joins every thread.
  void Stop();
  // Writer lock held, after Stop: drops an unfinished or untaken result;
  // true if a rebuild was running (the caller aborts the filter's rebuild).
  bool Abandon();
  // After Stop (e.g. a Close that failed): rebuilds may start again.
  void Resume() { cancel_.store(false, std::memory_order_relaxed); }

 private:
  void Run(const JobFn& job);
  void Launch(JobFn job);
  void JoinExitedLocked();

  const ScanFn scan_;
  const InstallFn install_;
  std::atomic<bool> running_{false};  // written under the writer lock
  std::atomic<bool> ready_{false};
  std::atomic<bool> cancel_{false};

  std::mutex mu_;  // guards the fields below
  std::condition_variable done_cv_;
  std::unique_ptr<Builder> result_;
  ROCKSDB_NAMESPACE::Status status_;
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> exited;
  };
  std::vector<Worker> workers_;
};

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_REBUILDER_H_
