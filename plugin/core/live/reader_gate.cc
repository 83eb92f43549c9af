// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "live/reader_gate.h"

#include <pthread.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace cuckoo {
namespace internal {

namespace {

namespace reader_gate_detail {
// Set before the first slot is handed out: readers may rely on the writer's
// membarrier (true) or must fence themselves (false).
std::atomic<bool> light_readers{false};
}  // namespace reader_gate_detail

#if defined(__linux__) && defined(__NR_membarrier)
long Membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

bool RegisterMembarrier() {
  const long mask = Membarrier(MEMBARRIER_CMD_QUERY);
  if (mask < 0 || (mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

void HeavyBarrier() {
  if (Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
    // Registered at start-up: the kernel contract says this cannot fail.
    // Readers already rely on it, so there is no safe way on.
    std::fprintf(stderr, "cuckoo: membarrier failed after registration\n");
    std::abort();
  }
}
#else
bool RegisterMembarrier() { return false; }
void HeavyBarrier() {}
#endif

class Registry {
 public:
  // Never destroyed: threads may exit (and release slots) during static
  // destruction.
  static Registry& Get() {
    static Registry* registry = new Registry;
    return *registry;
  }

  // A slot for the calling thread; `fast` is the thread's fast pointer
  // (set here while sections need no fence, cleared on Release).
  ReaderSlot* Acquire(std::atomic<ReaderSlot*>* fast) {
    std::lock_guard<std::mutex> lock(mu_);
    uint32_t index;
    if (!free_.empty()) {
      index = *free_.begin();
      free_.erase(free_.begin());
    } else {
      index = static_cast<uint32_t>(slots_.size());
      slots_.push_back(std::make_unique<ReaderSlot>());
      slots_.back()->index = index;
      slots_.back()->counters_offset =
          (index % detail::kLiveCounterStripes) *
          static_cast<uint32_t>(sizeof(detail::LiveReaderCounters));
      in_use_.push_back(nullptr);
    }
    in_use_[index] = fast;
    fast->store(
        reader_gate_detail::light_readers.load(std::memory_order_relaxed)
            ? slots_[index].get()
            : nullptr,
        std::memory_order_relaxed);
    return slots_[index].get();
  }

  // Every slot's sections fence themselves (or not) from now on: the fast
  // pointers of the threads holding slots are cleared (or set).
  void SetFences(bool fence) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (in_use_[i] == nullptr) continue;
      in_use_[i]->store(fence ? nullptr : slots_[i].get(),
                        std::memory_order_relaxed);
    }
  }

  void Release(ReaderSlot* slot) {
    std::lock_guard<std::mutex> lock(mu_);
    in_use_[slot->index]->store(nullptr, std::memory_order_relaxed);
    in_use_[slot->index] = nullptr;
    free_.insert(slot->index);
  }

  // The slots inside a read section now, with their counter values.
  void ActiveSlots(std::vector<std::pair<ReaderSlot*, uint64_t>>* out) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (in_use_[i] == nullptr) continue;
      const uint64_t state = slots_[i]->state.load(std::memory_order_acquire);
      if ((state & 1) != 0) out->emplace_back(slots_[i].get(), state);
    }
  }

 private:
  Registry() {
    reader_gate_detail::light_readers.store(RegisterMembarrier(),
                                            std::memory_order_relaxed);
  }

  std::mutex mu_;
  std::vector<std::unique_ptr<ReaderSlot>> slots_;  // by index; never freed
  // By index: the fast pointer of the thread holding the slot, or null
  // when the slot is free.
  std::vector<std::atomic<ReaderSlot*>*> in_use_;
  std::set<uint32_t> free_;  // lowest index first
};

// This thread's slot once registered (also while its sections fence
// themselves, when detail::live_fast_slot stays null).
thread_local ReaderSlot* registered_slot CUCKOO_INITIAL_EXEC_TLS = nullptr;

// The thread's slot returns to the registry from the destructor of a pthread
// key. Key destructors run after all of the thread's thread_local
// destructors (glibc and musl: __call_tls_dtors, then the keys), so a read
// from a thread_local destructor still finds the thread's slot and the slot
// is returned afterwards. A read from another library's key destructor
// after ours ran registers again and sets the key again, which runs our
// destructor again in the next round, for up to PTHREAD_DESTRUCTOR_ITERATIONS
// rounds. Counted here (trivially destructible: valid until the thread's
// TLS is freed).
thread_local int release_rounds CUCKOO_INITIAL_EXEC_TLS = 0;

void ReleaseThisThreadSlot(void* slot) {
  ++release_rounds;
  registered_slot = nullptr;
  Registry::Get().Release(static_cast<ReaderSlot*>(slot));
}

pthread_key_t SlotKey() {
  static const pthread_key_t key = [] {
    pthread_key_t k;
    if (pthread_key_create(&k, &ReleaseThisThreadSlot) != 0) {
      std::fprintf(stderr, "cuckoo: pthread_key_create failed\n");
      std::abort();
    }
    return k;
  }();
  return key;
}

}  // namespace

ReaderSlot* ThisThreadReaderSlot() {
  ReaderSlot* slot = registered_slot;
  if (slot != nullptr) return slot;
  if (release_rounds < PTHREAD_DESTRUCTOR_ITERATIONS) {
    const pthread_key_t key = SlotKey();
    slot = Registry::Get().Acquire(&detail::live_fast_slot);
    if (pthread_setspecific(key, slot) == 0) {
      registered_slot = slot;
      return slot;
    }
    Registry::Get().Release(slot);  // ENOMEM: taken as an orphan below
  }
  // A read after the thread's last round of key destructors (or without
  // the key): the slot is never returned (one cache line), and its sections
  // take the slow (fenced) path: the registry must not keep the address of
  // this thread's TLS, which is about to be freed.
  static std::atomic<ReaderSlot*> orphans_fast_pointer{nullptr};
  slot = Registry::Get().Acquire(&orphans_fast_pointer);
  orphans_fast_pointer.store(nullptr, std::memory_order_relaxed);
  registered_slot = slot;
  return slot;
}

}  // namespace internal

namespace detail {

LiveReadSection EnterLiveReadSectionSlow() {
  internal::ReaderSlot* slot = internal::ThisThreadReaderSlot();
  const uint64_t state = slot->state.load(std::memory_order_relaxed) + 1;
  slot->state.store(state, std::memory_order_relaxed);
  if (live_fast_slot.load(std::memory_order_relaxed) == slot) {
    // Registered just now, with sections that need no fence.
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  return LiveReadSection{slot, state};
}

}  // namespace detail

namespace internal {

void SynchronizeReaders() {
  Registry& registry = Registry::Get();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (reader_gate_detail::light_readers.load(std::memory_order_relaxed)) {
    HeavyBarrier();
  }
  std::vector<std::pair<ReaderSlot*, uint64_t>> active;
  registry.ActiveSlots(&active);
  for (const auto& [slot, state] : active) {
    while (slot->state.load(std::memory_order_acquire) == state) {
      std::this_thread::yield();
    }
  }
}

bool ReadersUseMembarrier() {
  Registry::Get();
  return reader_gate_detail::light_readers.load(std::memory_order_relaxed);
}

void SetReaderFencesForTesting(bool use_membarrier) {
  Registry& registry = Registry::Get();
  const bool light = use_membarrier && RegisterMembarrier();
  reader_gate_detail::light_readers.store(light, std::memory_order_relaxed);
  registry.SetFences(!light);
}

}  // namespace internal
}  // namespace cuckoo
