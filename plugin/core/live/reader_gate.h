// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Read sections without read-modify-writes, and the writer's wait for the
// read sections that may still use a retired object. Internal header.
//
// Every thread that reads gets a slot from a process-wide registry (on its
// first read; the slot returns to the registry when the thread exits and is
// reused by a later thread, so any number of threads may read over time).
// A slot is a cache line with a counter only its thread writes: odd while
// the thread is inside a read section. Entering a section is a relaxed load
// and a relaxed store of the counter plus a compiler barrier; leaving it is a
// release store. No locked instruction, no fence: independent lookups keep
// overlapping their cache misses.
//
// The writer that retires an object (a table replaced by a larger one)
// first publishes the new pointer, then calls Synchronize():
//   1. membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) makes every running
//      thread of the process execute a full barrier. A reader whose "odd"
//      store was still in its store buffer has it flushed: afterwards the
//      writer sees every reader that may have loaded the old pointer (a
//      reader that entered later sees the new pointer: its loads follow the
//      barrier, which follows the writer's store). This is the asymmetric
//      Dekker pattern of folly's asymmetricHeavyBarrier and liburcu's memb
//      flavour.
//   2. It then waits until every slot that was odd has changed (its section
//      ended; counters only grow, so a new section has another value).
// Without membarrier (not Linux, or the kernel refuses to register), readers
// use a seq_cst fence after their store instead (portable, slower).
//
// Per-thread statistics: ReaderSlot::index is small and unique among the
// threads alive at the same time (the lowest free index), so owners index
// their own counter stripes by it (see LiveKeyFilter).
#ifndef CUCKOO_PLUGIN_CORE_LIVE_READER_GATE_H_
#define CUCKOO_PLUGIN_CORE_LIVE_READER_GATE_H_

#include <atomic>
#include <cstdint>

namespace cuckoo {
namespace internal {

struct alignas(64) ReaderSlot {
  // Odd inside a read section; written only by the owning thread.
  std::atomic<uint64_t> state{0};
  uint32_t index = 0;
  // The sections of this slot fence themselves (no membarrier): set from
  // the registry's mode when the slot is handed out (and by
  // SetReaderFencesForTesting), read by the owner (one load, in the slot's
  // line, instead of a global's).
  std::atomic<bool> fence{false};
};

#if defined(__GNUC__) && defined(__linux__)
// A static TLS offset: one load from %fs, no __tls_get_addr call, also when
// the core is linked into a shared library (8 bytes of static TLS).
#define CUCKOO_INITIAL_EXEC_TLS __attribute__((tls_model("initial-exec")))
#else
#define CUCKOO_INITIAL_EXEC_TLS
#endif

namespace reader_gate_detail {
// Set before the first slot is handed out: readers may rely on the writer's
// membarrier (true) or must fence themselves (false).
inline std::atomic<bool> light_readers{false};
// Defined inline with a constant initializer, so that every user accesses it
// directly (no TLS wrapper call).
inline thread_local ReaderSlot* this_thread_slot CUCKOO_INITIAL_EXEC_TLS =
    nullptr;
// Assigns this thread's slot (first read of the thread).
ReaderSlot* AcquireSlot();
}  // namespace reader_gate_detail

// This thread's slot; registers the thread on its first call.
inline ReaderSlot* ThisThreadReaderSlot() {
  ReaderSlot* slot = reader_gate_detail::this_thread_slot;
  if (__builtin_expect(slot == nullptr, 0)) {
    slot = reader_gate_detail::AcquireSlot();
  }
  return slot;
}

// RAII read section. Sections must not nest (one per thread at a time).
class ReadSection {
 public:
  ReadSection() : slot_(ThisThreadReaderSlot()) {
    state_ = slot_->state.load(std::memory_order_relaxed) + 1;
    slot_->state.store(state_, std::memory_order_relaxed);
    if (__builtin_expect(!slot_->fence.load(std::memory_order_relaxed), 1)) {
      // Keeps the compiler from moving the section's loads above the store;
      // the CPU may, which the writer's membarrier accounts for.
      std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
  }
  ~ReadSection() { slot_->state.store(state_ + 1, std::memory_order_release); }
  ReadSection(const ReadSection&) = delete;
  ReadSection& operator=(const ReadSection&) = delete;

  uint32_t index() const { return slot_->index; }

 private:
  ReaderSlot* slot_;
  uint64_t state_;
};

// Writer side. Call after publishing the replacement of an object (with a
// release or seq_cst store): returns once no read section that could have
// loaded the old pointer is still running. May wait (yields); never called
// inside a read section.
void SynchronizeReaders();

// True if readers rely on membarrier (light read sections).
bool ReadersUseMembarrier();

// Tests only: switches between membarrier-backed read sections and the
// fenced fallback. Only while no other thread is inside a read section and
// no writer is in SynchronizeReaders.
void SetReaderFencesForTesting(bool use_membarrier);

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_LIVE_READER_GATE_H_
