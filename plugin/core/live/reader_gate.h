// ReaderGate: lets one writer replace a shared object while readers use it
// without taking a lock, and tells the writer when the old object may be
// freed. Internal header.
//
// Readers register in one of kSlots cache-line-sized slots (chosen per
// thread) under the parity of a global epoch, then load the shared pointer.
// The writer publishes the new pointer, advances the epoch (new readers
// register under the other parity) and waits until the old parity's counters
// of every slot drain to zero. Readers never wait; the writer waits only for
// readers that started before the swap (a filter probe: nanoseconds).
//
// Each slot also carries per-thread-ish statistics counters, so that hot
// readers do not share a counter cache line.
#ifndef CUCKOO_PLUGIN_CORE_LIVE_READER_GATE_H_
#define CUCKOO_PLUGIN_CORE_LIVE_READER_GATE_H_

#include <atomic>
#include <cstdint>
#include <thread>

namespace cuckoo {
namespace internal {

class ReaderGate {
 public:
  static constexpr uint32_t kSlots = 32;

  struct alignas(64) Slot {
    std::atomic<uint64_t> active[2] = {};
    // Statistics of the readers mapped to this slot. Updated with Bump (a
    // relaxed load and store, not a locked read-modify-write: readers pay
    // no extra atomic RMW). Exact while each reading thread has its own
    // slot (up to kSlots threads); otherwise concurrent bumps of a shared
    // slot may occasionally be lost.
    std::atomic<uint64_t> lookups{0};
    std::atomic<uint64_t> absent{0};
    std::atomic<uint64_t> retries{0};
  };

  static void Bump(std::atomic<uint64_t>* counter, uint64_t n) {
    counter->store(counter->load(std::memory_order_relaxed) + n,
                   std::memory_order_relaxed);
  }

  // RAII registration of one read-side critical section.
  class ReadGuard {
   public:
    explicit ReadGuard(ReaderGate* gate) : slot_(&gate->slots_[ThreadSlot()]) {
      for (;;) {
        const uint64_t epoch = gate->epoch_.load(std::memory_order_seq_cst);
        parity_ = static_cast<int>(epoch & 1);
        slot_->active[parity_].fetch_add(1, std::memory_order_seq_cst);
        if (gate->epoch_.load(std::memory_order_seq_cst) == epoch) break;
        slot_->active[parity_].fetch_sub(1, std::memory_order_release);
      }
    }
    ~ReadGuard() {
      slot_->active[parity_].fetch_sub(1, std::memory_order_release);
    }
    ReadGuard(const ReadGuard&) = delete;
    ReadGuard& operator=(const ReadGuard&) = delete;
    Slot* slot() const { return slot_; }

   private:
    Slot* slot_;
    int parity_ = 0;
  };

  // Writer side, after the new object has been published with a seq_cst
  // store: returns once no reader can still hold the previous one. Callers
  // serialize (one writer at a time).
  void WaitForOlderReaders() {
    const uint64_t epoch = epoch_.fetch_add(1, std::memory_order_seq_cst);
    const int old_parity = static_cast<int>(epoch & 1);
    for (uint32_t s = 0; s < kSlots; ++s) {
      while (slots_[s].active[old_parity].load(std::memory_order_seq_cst) !=
             0) {
        std::this_thread::yield();
      }
    }
  }

  // Sum of a statistics counter over all slots.
  uint64_t Sum(std::atomic<uint64_t> Slot::*counter) const {
    uint64_t total = 0;
    for (uint32_t s = 0; s < kSlots; ++s) {
      total += (slots_[s].*counter).load(std::memory_order_relaxed);
    }
    return total;
  }

 private:
  static uint32_t ThreadSlot() {
    static std::atomic<uint32_t> next{0};
    thread_local const uint32_t slot =
        next.fetch_add(1, std::memory_order_relaxed) % kSlots;
    return slot;
  }

  std::atomic<uint64_t> epoch_{0};
  Slot slots_[kSlots];
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_LIVE_READER_GATE_H_
