// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// RelaxedCounters: statistics counters kept as relaxed atomics, declared by
// naming the fields of the statistics struct they fill. Internal header.
//
//   struct MyStats {              // the struct callers read
//     uint64_t hits = 0;
//     uint64_t misses = 0;
//     bool busy = false;          // not a counter
//   };
//   using MyCounters =
//       RelaxedCounters<MyStats, &MyStats::hits, &MyStats::misses>;
//
//   MyCounters counters;          // all zero
//   counters.Add<&MyStats::hits>();        // +1, from any thread
//   counters.Add<&MyStats::misses>(n);     // +n
//   counters.Sub<&MyStats::misses>(n);     // -n (a gauge: e.g. queued work)
//   MyStats stats;
//   counters.CopyTo(&stats);      // sets hits and misses, nothing else
//
// Each listed field (a uint64_t member of Stats, listed once) gets one
// std::atomic<uint64_t>; Add (Sub) compiles to a single relaxed fetch_add
// (fetch_sub); the field's index is resolved at compile time, and naming a
// field that is not listed does not compile. The field list is the only
// place the counters are named: CopyTo is generated from it.
//
// Thread safety: every method may be called concurrently from any thread.
// The operations are relaxed (no ordering with other memory): a count is
// exact once the adding threads have synchronized with the reader (e.g.
// joined, or through a mutex), and CopyTo reads each field separately, so
// it is not a consistent snapshot of several fields while others add.
// Wrap-around at 2^64. Not copyable or movable (std::atomic members).
#ifndef CUCKOO_PLUGIN_CORE_UTIL_RELAXED_COUNTERS_H_
#define CUCKOO_PLUGIN_CORE_UTIL_RELAXED_COUNTERS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cuckoo {
namespace internal {

// The position of Field in Fields, or sizeof...(Fields) if absent.
template <typename Stats, uint64_t Stats::*Field, uint64_t Stats::*... Fields>
constexpr size_t CounterIndex() {
  constexpr uint64_t Stats::*kFields[] = {Fields...};
  size_t i = 0;
  while (i < sizeof...(Fields) && kFields[i] != Field) ++i;
  return i;
}

// True if no field is listed twice.
template <typename Stats, uint64_t Stats::*... Fields>
constexpr bool CounterFieldsDistinct() {
  constexpr uint64_t Stats::*kFields[] = {Fields...};
  for (size_t i = 0; i < sizeof...(Fields); ++i) {
    for (size_t j = i + 1; j < sizeof...(Fields); ++j) {
      if (kFields[i] == kFields[j]) return false;
    }
  }
  return true;
}

template <typename Stats, uint64_t Stats::*... Fields>
class RelaxedCounters {
  static_assert(sizeof...(Fields) > 0, "list at least one counted field");
  static_assert(CounterFieldsDistinct<Stats, Fields...>(),
                "a field is listed twice");

 public:
  // Adds n to the counter of Field.
  template <uint64_t Stats::*Field>
  void Add(uint64_t n = 1) {
    counters_[Index<Field>()].fetch_add(n, std::memory_order_relaxed);
  }

  // Subtracts n from the counter of Field (for a gauge such as a queue
  // length; the caller keeps it from going below zero).
  template <uint64_t Stats::*Field>
  void Sub(uint64_t n = 1) {
    counters_[Index<Field>()].fetch_sub(n, std::memory_order_relaxed);
  }

  // The current value of Field's counter.
  template <uint64_t Stats::*Field>
  uint64_t Load() const {
    return counters_[Index<Field>()].load(std::memory_order_relaxed);
  }

  // Sets each listed field of *stats to its counter; other fields of *stats
  // are left as they are.
  void CopyTo(Stats* stats) const {
    size_t i = 0;
    ((stats->*Fields = counters_[i++].load(std::memory_order_relaxed)), ...);
  }

 private:
  template <uint64_t Stats::*Field>
  static constexpr size_t Index() {
    constexpr size_t index = CounterIndex<Stats, Field, Fields...>();
    static_assert(index < sizeof...(Fields),
                  "the field is not one of this RelaxedCounters' fields");
    return index;
  }

  // Value-initialized: all zero.
  std::atomic<uint64_t> counters_[sizeof...(Fields)] = {};
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_UTIL_RELAXED_COUNTERS_H_
