// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// ReadCounters: how many point reads of one column family consulted its
// live-key filter and how many of them it answered "absent" (internal;
// FilteredDB's properties report them).
//
// Counted on the read path without a shared cache line and without a
// read-modify-write: each thread adds to one of kSlots cache-line-sized
// slots (chosen once per thread) with a relaxed load and store, and the
// totals are summed when asked for. Exact while no two threads that read at
// the same time share a slot (at most kSlots threads); otherwise a
// concurrent add may be lost (the counters may undercount slightly, as the
// filter's own per-thread counters).
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_READ_COUNTERS_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_READ_COUNTERS_H_

#include <atomic>
#include <cstdint>

namespace rocksdb_cuckoo {
namespace live {

namespace read_counters_detail {
#if defined(__GNUC__) && defined(__linux__)
// A static TLS offset (as the core's reader slots): one load from %fs, no
// __tls_get_addr call and no initialization guard on the read path, also
// in the shared library (4 bytes of static TLS).
#define CUCKOO_READ_COUNTERS_TLS __attribute__((tls_model("initial-exec")))
#else
#define CUCKOO_READ_COUNTERS_TLS
#endif
inline constexpr uint32_t kUnassigned = ~uint32_t{0};
// This thread's slot, assigned at its first counted read; a constant
// initializer, so every access is direct.
inline thread_local uint32_t this_thread_slot CUCKOO_READ_COUNTERS_TLS =
    kUnassigned;
inline std::atomic<uint32_t> next_slot{0};
#undef CUCKOO_READ_COUNTERS_TLS
}  // namespace read_counters_detail

class ReadCounters {
 public:
  // Any thread: `checked` keys looked up in the filter, `absent` of them
  // ruled out.
  void Add(uint64_t checked, uint64_t absent) {
    Slot& slot = slots_[ThisThreadSlot()];
    Bump(&slot.checked, checked);
    if (absent != 0) Bump(&slot.absent, absent);
  }
  // Any thread; O(kSlots).
  uint64_t checked() const { return Sum(&Slot::checked); }
  uint64_t absent() const { return Sum(&Slot::absent); }

 private:
  static constexpr uint32_t kSlots = 32;
  struct alignas(64) Slot {
    std::atomic<uint64_t> checked{0};
    std::atomic<uint64_t> absent{0};
  };

  static void Bump(std::atomic<uint64_t>* counter, uint64_t n) {
    counter->store(counter->load(std::memory_order_relaxed) + n,
                   std::memory_order_relaxed);
  }
  static uint32_t ThisThreadSlot() {
    uint32_t slot = read_counters_detail::this_thread_slot;
    if (__builtin_expect(slot == read_counters_detail::kUnassigned, 0)) {
      slot = read_counters_detail::next_slot.fetch_add(
                 1, std::memory_order_relaxed) %
             kSlots;
      read_counters_detail::this_thread_slot = slot;
    }
    return slot;
  }
  uint64_t Sum(std::atomic<uint64_t> Slot::*counter) const {
    uint64_t total = 0;
    for (const Slot& slot : slots_) {
      total += (slot.*counter).load(std::memory_order_relaxed);
    }
    return total;
  }

  Slot slots_[kSlots];
};

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_READ_COUNTERS_H_
