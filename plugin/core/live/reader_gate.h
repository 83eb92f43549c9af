// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Read sections without read-modify-writes, and the writer's wait for the
// read sections that may still use a retired object. Internal header.
//
// Every thread that reads gets a slot from a process-wide registry (on its
// first read; the slot returns to the registry when the thread exits, from
// a pthread key destructor, so after the thread's thread_local destructors,
// which may read too, and is reused by a later thread: any number of
// threads may read over time).
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
// use a seq_cst fence after their store instead (portable, slower). The
// choice costs the light path nothing: a thread's fast slot pointer
// (detail::live_fast_slot) is set only while its sections need no fence, so
// the inline entry is one TLS load and a null test, and every fenced
// section (or the thread's first) goes through EnterLiveReadSectionSlow.
//
// Per-thread statistics: ReaderSlot::index is small and unique among the
// threads alive at the same time (the lowest free index), so owners index
// their own counter stripes by it (see LiveKeyFilter).
#ifndef CUCKOO_PLUGIN_CORE_LIVE_READER_GATE_H_
#define CUCKOO_PLUGIN_CORE_LIVE_READER_GATE_H_

#include <atomic>
#include <cstdint>

#include "cuckoo/detail/live_probe.h"

namespace cuckoo {
namespace internal {

using ReaderSlot = detail::LiveReaderSlot;

// This thread's slot; registers the thread on its first call.
ReaderSlot* ThisThreadReaderSlot();

// RAII read section (detail::EnterLiveReadSection: the inline path of
// LiveKeyFilter::Probe enters the same way). Sections must not nest (one per
// thread at a time).
class ReadSection {
 public:
  ReadSection() : section_(detail::EnterLiveReadSection()) {}
  ~ReadSection() { detail::LeaveLiveReadSection(section_); }
  ReadSection(const ReadSection&) = delete;
  ReadSection& operator=(const ReadSection&) = delete;

  const ReaderSlot* slot() const { return section_.slot; }

 private:
  const detail::LiveReadSection section_;
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
