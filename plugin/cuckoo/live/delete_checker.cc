#include "delete_checker.h"

namespace rocksdb_cuckoo {
namespace live {

bool DeleteChecker::Add(Check check) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= max_pending_ || stop_) return false;
    if (!worker_.joinable()) worker_ = std::thread([this] { Run(); });
    queue_.push_back(std::move(check));
  }
  work_cv_.notify_one();
  return true;
}

void DeleteChecker::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_
    std::vector<Check> batch;
    batch.swap(queue_);
    busy_ = true;
    lock.unlock();
    resolve_(&batch);
    lock.lock();
    busy_ = false;
    idle_cv_.notify_all();
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
  idle_cv_.wait(lock, [this] { return !busy_; });
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
