// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// CuckooStatistics (include/rocksdb_cuckoo/statistics.h): RocksDB's own
// Statistics object behind a forwarding wrapper that adds the SST filter
// policies' counters to ToString() and getTickerMap().
#include "rocksdb_cuckoo/statistics.h"

#include <cinttypes>
#include <cstdio>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "rocksdb_cuckoo/filter_policy.h"

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::HistogramData;
using ROCKSDB_NAMESPACE::Statistics;
using ROCKSDB_NAMESPACE::StatsLevel;
using ROCKSDB_NAMESPACE::Status;

// The counters and their names, in the order ToString() prints them.
struct Counter {
  const char* name;
  uint64_t CuckooFilterPolicyStats::*field;
};
constexpr Counter kCounters[] = {
    {"rocksdb.cuckoo.sst.filters.built",
     &CuckooFilterPolicyStats::filters_built},
    {"rocksdb.cuckoo.sst.keys.added", &CuckooFilterPolicyStats::keys_added},
    {"rocksdb.cuckoo.sst.filter.bytes", &CuckooFilterPolicyStats::filter_bytes},
    {"rocksdb.cuckoo.sst.build.retries",
     &CuckooFilterPolicyStats::build_retries},
    {"rocksdb.cuckoo.sst.filters.grown",
     &CuckooFilterPolicyStats::filters_grown},
    {"rocksdb.cuckoo.sst.construction.corruptions",
     &CuckooFilterPolicyStats::construction_corruptions},
    {"rocksdb.cuckoo.sst.readers.created",
     &CuckooFilterPolicyStats::readers_created},
    {"rocksdb.cuckoo.sst.invalid.blocks",
     &CuckooFilterPolicyStats::invalid_blocks},
};

class CuckooStatistics final : public Statistics {
 public:
  CuckooStatistics()
      : inner_(ROCKSDB_NAMESPACE::CreateDBStatistics()),
        base_(GetGlobalCuckooFilterPolicyStats()) {
    // The levels are checked here, against this object's level (the one
    // RocksDB and db_bench set), as RocksDB's StatisticsImpl checks its own.
    inner_->set_stats_level(StatsLevel::kAll);
  }

  const char* Name() const override { return kCuckooStatisticsName; }

  uint64_t getTickerCount(uint32_t ticker) const override {
    return inner_->getTickerCount(ticker);
  }
  void histogramData(uint32_t type, HistogramData* const data) const override {
    inner_->histogramData(type, data);
  }
  std::string getHistogramString(uint32_t type) const override {
    return inner_->getHistogramString(type);
  }
  void recordTick(uint32_t ticker, uint64_t count) override {
    if (get_stats_level() <= StatsLevel::kExceptTickers) return;
    inner_->recordTick(ticker, count);
  }
  void setTickerCount(uint32_t ticker, uint64_t count) override {
    inner_->setTickerCount(ticker, count);
  }
  uint64_t getAndResetTickerCount(uint32_t ticker) override {
    return inner_->getAndResetTickerCount(ticker);
  }
  void recordInHistogram(uint32_t type, uint64_t value) override {
    if (get_stats_level() <= StatsLevel::kExceptHistogramOrTimers) return;
    inner_->recordInHistogram(type, value);
  }
  bool HistEnabledForType(uint32_t type) const override {
    return inner_->HistEnabledForType(type);
  }

  Status Reset() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      base_ = GetGlobalCuckooFilterPolicyStats();
    }
    return inner_->Reset();
  }
  std::string ToString() const override {
    std::string out = inner_->ToString();
    for (const auto& counter : Counters()) {
      char line[128];
      snprintf(line, sizeof(line), "%s COUNT : %" PRIu64 "\n",
               counter.first.c_str(), counter.second);
      out += line;
    }
    return out;
  }
  bool getTickerMap(std::map<std::string, uint64_t>* map) const override {
    inner_->getTickerMap(map);
    for (const auto& counter : Counters()) map->insert(counter);
    return true;
  }

 private:
  // The counters since construction or the last Reset, in kCounters order.
  std::vector<std::pair<std::string, uint64_t>> Counters() const {
    const CuckooFilterPolicyStats now = GetGlobalCuckooFilterPolicyStats();
    CuckooFilterPolicyStats base;
    {
      std::lock_guard<std::mutex> lock(mu_);
      base = base_;
    }
    std::vector<std::pair<std::string, uint64_t>> counters;
    for (const Counter& c : kCounters) {
      // Relaxed counters read one by one: never below the base.
      const uint64_t v =
          now.*c.field >= base.*c.field ? now.*c.field - base.*c.field : 0;
      counters.emplace_back(c.name, v);
    }
    return counters;
  }

  const std::shared_ptr<Statistics> inner_;
  mutable std::mutex mu_;
  CuckooFilterPolicyStats base_;  // mu_
};

}  // namespace

std::shared_ptr<ROCKSDB_NAMESPACE::Statistics> NewCuckooStatistics() {
  return std::make_shared<CuckooStatistics>();
}

int RegisterCuckooStatistics(ROCKSDB_NAMESPACE::ObjectLibrary& library,
                             const std::string& /*arg*/) {
  library.AddFactory<Statistics>(
      kCuckooStatisticsName,
      [](const std::string& /*uri*/, std::unique_ptr<Statistics>* guard,
         std::string* /*errmsg*/) {
        guard->reset(new CuckooStatistics());
        return guard->get();
      });
  return 1;
}

}  // namespace rocksdb_cuckoo
