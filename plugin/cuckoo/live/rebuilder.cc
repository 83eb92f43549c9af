// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "rebuilder.h"

#include "test_hooks.h"

namespace rocksdb_cuckoo {
namespace live {

namespace {
std::atomic<TestFailFn> test_fail_hook{nullptr};
}  // namespace

void SetTestFailHook(TestFailFn hook) { test_fail_hook.store(hook); }

bool TestFail(const char* point) {
  TestFailFn hook = test_fail_hook.load(std::memory_order_relaxed);
  return hook != nullptr && hook(point);
}

using ROCKSDB_NAMESPACE::Iterator;
using ROCKSDB_NAMESPACE::Status;

void Rebuilder::JoinExitedLocked() {
  for (size_t i = 0; i < workers_.size();) {
    if (workers_[i].exited->load(std::memory_order_acquire)) {
      workers_[i].thread.join();  // it has returned: no wait
      workers_[i] = std::move(workers_.back());
      workers_.pop_back();
    } else {
      ++i;
    }
  }
}

void Rebuilder::Start(std::unique_ptr<Iterator> it,
                      std::unique_ptr<Builder> builder) {
  // Shared with the job (a std::function must be copyable); only the
  // rebuild thread uses it.
  struct Scan {
    std::unique_ptr<Iterator> it;
    std::unique_ptr<Builder> builder;
  };
  auto scan = std::make_shared<Scan>(Scan{std::move(it), std::move(builder)});
  Launch([this, scan](std::unique_ptr<Builder>* out) {
    Status st = scan_(scan->it.get(), scan->builder.get());
    scan->it.reset();  // the scan's snapshot goes before the install
    if (st.ok()) {
      *out = std::move(scan->builder);
    } else {
      scan->builder.reset();
    }
    return st;
  });
}

void Rebuilder::StartJob(JobFn job) { Launch(std::move(job)); }

void Rebuilder::Launch(JobFn job) {
  std::lock_guard<std::mutex> lock(mu_);
  JoinExitedLocked();
  result_.reset();
  status_ = Status::OK();
  ready_.store(false, std::memory_order_release);
  running_.store(true, std::memory_order_release);
  Worker w;
  w.exited = std::make_shared<std::atomic<bool>>(false);
  w.thread = std::thread([this, exited = w.exited, job = std::move(job)] {
    Run(job);
    exited->store(true, std::memory_order_release);
  });
  workers_.push_back(std::move(w));
}

void Rebuilder::Run(const JobFn& job) {
  std::unique_ptr<Builder> builder;
  Status st = job(&builder);
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = st;
    result_ = st.ok() ? std::move(builder) : nullptr;
    ready_.store(true, std::memory_order_release);
  }
  done_cv_.notify_all();
  // Installed as soon as the writer lock is free, unless a writer took the
  // result first (install_ then finds nothing ready).
  if (!cancelled()) install_();
}

bool Rebuilder::TakeResult(std::unique_ptr<Builder>* builder, Status* status) {
  if (!ready()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  *builder = std::move(result_);
  *status = status_;
  ready_.store(false, std::memory_order_release);
  running_.store(false, std::memory_order_release);
  return true;
}

void Rebuilder::WaitResult(std::unique_ptr<Builder>* builder, Status* status) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [this] { return ready(); });
  }
  TakeResult(builder, status);
}

void Rebuilder::Stop() {
  cancel_.store(true, std::memory_order_relaxed);
  TestHook("Rebuilder:Stopping");
  std::vector<Worker> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers.swap(workers_);
  }
  for (Worker& w : workers) w.thread.join();
}

bool Rebuilder::Abandon() {
  if (!running()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  running_.store(false, std::memory_order_release);
  ready_.store(false, std::memory_order_release);
  result_.reset();
  return true;
}

}  // namespace live
}  // namespace rocksdb_cuckoo
