// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Test hooks of the live-key filter: null in production, set by tests to
// run code at a chosen point of a background operation. Internal header.
#ifndef CUCKOO_PLUGIN_CORE_LIVE_TEST_HOOKS_H_
#define CUCKOO_PLUGIN_CORE_LIVE_TEST_HOOKS_H_

#include <atomic>
#include <cstdint>

namespace cuckoo {
namespace internal {

// Called by a split after it copied chunk `chunk` of the frozen table,
// outside the filter mutex (on the split's thread). Writes to the filter are
// allowed, as long as they do not need the split to finish.
using SplitChunkHook = void (*)(uint64_t chunk);
inline std::atomic<SplitChunkHook> split_chunk_hook{nullptr};

// Called by LiveKeyFilter, with the filter mutex held, at the instant a new
// table is about to become the one readers probe: `what` is "Replace" (a
// rebuild or a decoded snapshot installed) or "Split" (a doubled table).
// Readers may run meanwhile (they take no lock); writers of the filter wait.
using PublishHook = void (*)(const char* what);
inline std::atomic<PublishHook> publish_hook{nullptr};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_LIVE_TEST_HOOKS_H_
