// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Inline lookup path of LiveKeyFilter (Probe, MayContain): the read section,
// the placement arithmetic of a live table and its optimistic two-bucket
// read. Included by live_key_filter.h; not an API of its own: names and
// layout may change between versions (the library and every program that
// includes this header must come from the same release).
//
// Why inline: a loop of independent lookups on a table larger than the
// caches is bound by how many lookups the CPU keeps in flight, that is by
// the instructions per lookup. The call frame of an out-of-line Probe was
// about a tenth of them. The protocol is the core's: read sections in
// plugin/core/live/reader_gate.h, placement in plugin/core/live/live_layout.h
// (which uses the functions below: one copy of the arithmetic), seqlock
// stripes in plugin/core/live/live_table.h.
#ifndef CUCKOO_DETAIL_LIVE_PROBE_H_
#define CUCKOO_DETAIL_LIVE_PROBE_H_

#include <atomic>
#include <cstdint>

#include "cuckoo/detail/probe.h"  // FastRange32

#if defined(__GNUC__) && defined(__linux__)
// A static TLS offset: one load from %fs, no __tls_get_addr call, also when
// the core is linked into a shared library (8 bytes of static TLS).
#define CUCKOO_INITIAL_EXEC_TLS __attribute__((tls_model("initial-exec")))
#else
#define CUCKOO_INITIAL_EXEC_TLS
#endif

#if defined(__GNUC__)
#define CUCKOO_LIVE_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define CUCKOO_LIVE_LIKELY(x) (x)
#endif

namespace cuckoo {
namespace detail {

// ------------------------------------------------------------ read sections

// Reader statistics of the threads whose slot index maps here (64 stripes
// per filter). Written with a relaxed load and store by the threads of the
// stripe: exact while each reading thread has its own stripe.
struct alignas(64) LiveReaderCounters {
  std::atomic<uint64_t> answers[2] = {{0}, {0}};  // [0] absent, [1] may be
  std::atomic<uint64_t> retries{0};
};
constexpr uint32_t kLiveCounterStripes = 64;

// One reading thread's slot (plugin/core/live/reader_gate.h).
struct alignas(64) LiveReaderSlot {
  // Odd inside a read section; written only by the owning thread.
  std::atomic<uint64_t> state{0};
  // Small and unique among the threads alive at the same time.
  uint32_t index = 0;
  // (index mod kLiveCounterStripes) * sizeof(LiveReaderCounters): this
  // thread's counters in a filter's array, in bytes.
  uint32_t counters_offset = 0;
};

// The counters of the thread that holds `slot` in a filter's array of
// kLiveCounterStripes.
inline LiveReaderCounters* LiveCountersOf(LiveReaderCounters* stripes,
                                          const LiveReaderSlot* slot) {
  return reinterpret_cast<LiveReaderCounters*>(
      reinterpret_cast<char*>(stripes) + slot->counters_offset);
}

// This thread's slot while its read sections need no fence (the writers'
// membarrier covers them); null before the thread's first read section and
// while sections must fence themselves (then every section takes
// EnterLiveReadSectionSlow). Set by the registry (reader_gate.cc).
inline thread_local std::atomic<LiveReaderSlot*> live_fast_slot
    CUCKOO_INITIAL_EXEC_TLS = nullptr;

// An entered read section: the thread's slot and the odd value its state
// holds.
struct LiveReadSection {
  LiveReaderSlot* slot;
  uint64_t state;
};

// Registers the thread if needed, enters a read section (with a fence when
// the sections must fence themselves).
LiveReadSection EnterLiveReadSectionSlow();

// Read sections must not nest (one per thread at a time).
inline LiveReadSection EnterLiveReadSection() {
  LiveReaderSlot* slot = live_fast_slot.load(std::memory_order_relaxed);
  if (!CUCKOO_LIVE_LIKELY(slot != nullptr)) return EnterLiveReadSectionSlow();
  const uint64_t state = slot->state.load(std::memory_order_relaxed) + 1;
  slot->state.store(state, std::memory_order_relaxed);
  // Keeps the compiler from moving the section's loads above the store; the
  // CPU may, which the writer's membarrier accounts for.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return LiveReadSection{slot, state};
}
inline void LeaveLiveReadSection(const LiveReadSection& section) {
  // Reloaded (a store-forwarded L1 hit) rather than kept in a register for
  // the whole lookup: fewer spills in the caller's loop.
  LiveReaderSlot* const slot = section.slot;
  slot->state.store(slot->state.load(std::memory_order_relaxed) + 1,
                    std::memory_order_release);
}

// ------------------------------------------------------------ placement

// Placement constants of one table (f, c, d, seed; see live_layout.h).
struct LivePlacement {
  uint64_t lane_ones = 0;       // 1 in the lowest bit of every slot
  uint64_t lane_highs = 0;      // 1 in the highest bit of every slot
  uint32_t c = 0;               // base buckets (even)
  uint32_t shift = 0;           // 64 - f
  uint32_t slot_mask = 0;       // 2^f - 1
  uint32_t low_mask = 0;        // 2^d - 1
  uint32_t c_minus_r[16] = {};  // c - r(tag), in [1, c - 1]
};

// Where one item is looked for: its two buckets and the slot value that
// matches it.
struct LivePlace {
  uint64_t i1;
  uint64_t i2;
  uint32_t pattern;
};

inline LivePlace LivePlaceOf(const LivePlacement& p, uint64_t hash) {
  // G, with 2^f - 1 replaced by 2^f - 2: G - 1 + (G < 2^f - 1) (a compare
  // and an add with carry).
  uint32_t g = static_cast<uint32_t>(hash >> p.shift);
  g = g + (g < p.slot_mask) - 1;
  const uint32_t a1 = FastRange32(static_cast<uint32_t>(hash), p.c);
  // The tag, the top 4 bits of G, is the top 4 bits of the hash: the
  // substitution above changes only G's lowest bit (f > 4).
  // Alt: (c - a - r) mod c = (c - r) - a, plus c if negative.
  const uint32_t cr = p.c_minus_r[hash >> 60];
  const uint32_t x = cr - a1;
  const uint32_t a2 = cr < a1 ? x + p.c : x;
  const uint64_t base = uint64_t{g & p.low_mask} * p.c;
  // ~G within f bits: G ^ (2^f - 1), as G < 2^f.
  return LivePlace{base + a1, base + a2, (g ^ p.slot_mask) | p.low_mask};
}

// True if a slot of `word` equals `pattern` (non-zero). SWAR: exact, as a
// borrow can only start in a lane that is zero after the XOR.
inline bool LiveMatch(const LivePlacement& p, uint64_t word, uint32_t pattern) {
  const uint64_t x = word ^ (p.lane_ones * pattern);
  return ((x - p.lane_ones) & ~x & p.lane_highs) != 0;
}
// ------------------------------------------------------------ table reads

// Seqlock stripes of a table (power of two).
constexpr uint32_t kLiveStripes = 1024;
// The stripe of a bucket pair (symmetric: either order).
inline uint32_t LivePairStripe(uint64_t i1, uint64_t i2) {
  return static_cast<uint32_t>(i1 ^ i2) & (kLiveStripes - 1);
}

// What a reader needs of a table; the table object starts with it
// (LiveTable derives from it).
struct LiveProbeTable {
  LivePlacement placement;
  // The bucket array, preceded by the kLiveStripes seqlock versions (one
  // allocation; one base address for both).
  const std::atomic<uint64_t>* buckets = nullptr;
};

#ifdef ROCKSDB_CUCKOO_LIVE_TABLE_RACE_WINDOW
// Test builds only: when set, every optimistic read calls it once between
// its two bucket loads (the hook clears itself if it wants to run once), so
// tests can interleave a writer deterministically at that point.
inline void (*live_test_between_loads)(void* arg) = nullptr;
inline void* live_test_between_loads_arg = nullptr;
// Also widens that window (about a microsecond: PAUSE takes tens of
// cycles), so that a writer often moves entries while a reader is between
// its loads.
inline void LiveRaceWindow() {
  if (live_test_between_loads != nullptr)
    live_test_between_loads(live_test_between_loads_arg);
  for (int i = 0; i < 32; ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
  }
}
#else
inline void LiveRaceWindow() {}
#endif

enum : int { kLiveAbsent = 0, kLivePresent = 1, kLiveRaced = 2 };

// LiveMatch(w1) || LiveMatch(w2), with one multiply and one mask.
inline bool LiveMatchEither(const LivePlacement& p, uint64_t w1, uint64_t w2,
                            uint32_t pattern) {
  const uint64_t m = p.lane_ones * pattern;
  const uint64_t x1 = w1 ^ m;
  const uint64_t x2 = w2 ^ m;
  return ((((x1 - p.lane_ones) & ~x1) | ((x2 - p.lane_ones) & ~x2)) &
          p.lane_highs) != 0;
}

// One optimistic read of the item's two buckets.
inline int LiveTryContains(const LiveProbeTable& t, const LivePlace& p) {
  // A local copy of the array address: the acquire load below would
  // otherwise make the compiler reload it from the table. The versions
  // precede the buckets (one base address).
  const std::atomic<uint64_t>* const buckets = t.buckets;
  const std::atomic<uint64_t>* const versions = buckets - kLiveStripes;
  const uint32_t s = LivePairStripe(p.i1, p.i2);
  // The version with its "write running" bit cleared: a version that was
  // odd (a write running) can never be re-read equal to it.
  const uint64_t v = versions[s].load(std::memory_order_acquire) & ~uint64_t{1};
  const uint64_t w1 = buckets[p.i1].load(std::memory_order_relaxed);
  LiveRaceWindow();
  const uint64_t w2 = buckets[p.i2].load(std::memory_order_relaxed);
  // A fingerprint is only ever present for a present item: a match needs
  // no validation.
  if (LiveMatchEither(t.placement, w1, w2, p.pattern)) return kLivePresent;
  // Seqlock read side: the bucket loads above happen before this re-read,
  // so a relocation or erase in this pair that overlapped them changed the
  // version (or one was running: v was odd).
  std::atomic_thread_fence(std::memory_order_acquire);
  return versions[s].load(std::memory_order_relaxed) == v ? kLiveAbsent
                                                          : kLiveRaced;
}

// The retries of a read that raced a move or an erase (rare, out of line):
// counted in *retries (a relaxed bump), until a read is not raced.
bool LiveContainsRetry(const LiveProbeTable& t, uint64_t i1, uint64_t i2,
                       uint32_t pattern, std::atomic<uint64_t>* retries);

// True if the item may be present.
inline bool LiveContains(const LiveProbeTable& t, uint64_t hash,
                         std::atomic<uint64_t>* retries) {
  const LivePlace p = LivePlaceOf(t.placement, hash);
  const int r = LiveTryContains(t, p);
  if (CUCKOO_LIVE_LIKELY(r != kLiveRaced)) return r == kLivePresent;
  return LiveContainsRetry(t, p.i1, p.i2, p.pattern, retries);
}

}  // namespace detail
}  // namespace cuckoo

#endif  // CUCKOO_DETAIL_LIVE_PROBE_H_
