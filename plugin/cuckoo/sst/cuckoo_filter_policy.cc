// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The cuckoo FilterPolicy: policy object, filter block builder and readers.
//
// Filter block = one serialized core filter (cuckoo/cuckoo_filter.h):
//
//   +----------------------------------+
//   | packed bucket array              |  TableBytes(m) bytes
//   +----------------------------------+
//   | 32-byte trailer (filter_format.h)|  m, items, seed, victim, checksum,
//   +----------------------------------+  f, b, flags, format version
//
// or, with the blocked option ("cuckoofilter:10:blocked", format version 3):
//
//   +----------------------------------+
//   | 64-byte blocks                   |  both buckets of a key in one block
//   +----------------------------------+  (blocked_layout.h)
//   | stash (sorted u32, usually none) |
//   +----------------------------------+
//   | 32-byte trailer, version 3       |
//   +----------------------------------+
//
// Items are XXH3_64bits(key) (cuckoo::HashKey). Readers decode the trailer,
// so every cuckoo policy reads every cuckoo block whatever its own layout.
// That is why CompatibilityName() did not change with version 3: a reader
// from before version 3 finds the same meta block, rejects the unknown
// version and answers "may match" (correct, unfiltered), and every current
// reader reads versions 1, 2 and 3.
#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../info_log.h"
#include "blocked/blocked_filter.h"
#include "blocked/blocked_layout.h"
#include "bulk/bulk_builder.h"
#include "bulk/hash_dedupe.h"
#include "bulk/hash_list.h"
#include "cuckoo/cuckoo_filter.h"
#include "filter/cuckoo_table.h"
#include "filter/filter_format.h"
#include "filter/table_settings.h"
#include "filter/view_access.h"
#include "filter_bits_abi.h"
#include "policy_config.h"
#include "rocksdb/env.h"
#include "rocksdb/table.h"
#include "rocksdb_cuckoo/filter_policy.h"
#include "util/key_hash_inline.h"
#include "util/relaxed_counters.h"

#if CUCKOO_ABI_HAS_ADD_KEY_AND_ALT
#define CUCKOO_OVERRIDE_IF_ALT override
#else
#define CUCKOO_OVERRIDE_IF_ALT
#endif

namespace rocksdb_cuckoo {

using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::FilterBuildingContext;
using ROCKSDB_NAMESPACE::FilterPolicy;
using ROCKSDB_NAMESPACE::InfoLogLevel;
using ROCKSDB_NAMESPACE::Logger;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

namespace internal {

using cuckoo::internal::BlockedSlot;
using cuckoo::internal::BlockedTable;
using cuckoo::internal::BlockedTableRef;
using cuckoo::internal::BulkBuilder;
using cuckoo::internal::BulkBuildParams;
using cuckoo::internal::BulkBuildResult;
using cuckoo::internal::BulkScratch;
using cuckoo::internal::CuckooTable;
using cuckoo::internal::DedupeHashes;
using cuckoo::internal::DedupeScratch;
using cuckoo::internal::DispatchSettings;
using cuckoo::internal::HashKeyInline;
using cuckoo::internal::HashList;
using cuckoo::internal::HashSpan;
using cuckoo::internal::TableRef;

namespace {

// ------------------------------------------------------------------ counters

using PolicyStats = CuckooFilterPolicyStats;
using Counters = cuckoo::internal::RelaxedCounters<
    PolicyStats, &PolicyStats::filters_built, &PolicyStats::keys_added,
    &PolicyStats::filter_bytes, &PolicyStats::build_retries,
    &PolicyStats::filters_grown, &PolicyStats::construction_corruptions,
    &PolicyStats::readers_created, &PolicyStats::invalid_blocks>;

// Never destroyed: builders and readers may outlive static destructors.
Counters& GlobalCounters() {
  static Counters* counters = new Counters;
  return *counters;
}

PolicyStats Snapshot(const Counters& counters) {
  PolicyStats stats;
  counters.CopyTo(&stats);
  return stats;
}

// Adds v to a field of the policy's counters and of the global ones.
template <uint64_t PolicyStats::*Field>
void Count(Counters* local, uint64_t v) {
  local->Add<Field>(v);
  GlobalCounters().Add<Field>(v);
}

inline uint64_t HashSlice(const Slice& key) {
  return HashKeyInline(key.data(), key.size());
}

// ------------------------------------------------------------------ readers

// Used for any block that does not validate: never a false negative.
class AlwaysMayMatchReader final : public FilterBitsReader {
 public:
  bool MayMatch(const Slice&) override { return true; }
  void MayMatch(int num_keys, Slice**, bool* may_match) override {
    std::fill(may_match, may_match + num_keys, true);
  }
};

// Zero-copy reader over a validated block, one class per layout so a lookup
// has a single virtual call (this one) and no runtime layout dispatch.
template <typename S>
class CuckooBitsReader final : public FilterBitsReader {
  using Codec = cuckoo::internal::BucketCodec<S>;

 public:
  explicit CuckooBitsReader(const TableRef& ref) : ref_(ref) {}

  // `flatten` inlines XXH3, which GCC otherwise calls out of line.
  __attribute__((flatten)) bool MayMatch(const Slice& key) override {
    return CuckooTable<S>::Contains(ref_, HashSlice(key));
  }

  // MultiGet path (batches of up to 32 keys), software-pipelined: key k is
  // hashed and both its buckets prefetched while key k - kDistance is
  // probed, so about kDistance keys' cache misses are in flight at any time
  // without flooding the line-fill buffers. (Measured with policy_bench:
  // about 1.5x faster than prefetching the whole batch before probing it.)
  __attribute__((flatten)) void MayMatch(int num_keys, Slice** keys,
                                         bool* may_match) override {
    constexpr int kDistance = 8;
    constexpr int kRing = 16;  // > kDistance, power of two
    uint32_t fps[kRing], b1[kRing], b2[kRing];
    const TableRef ref = ref_;  // not reloaded after each bool store
    for (int k = 0; k < num_keys + kDistance; ++k) {
      if (k < num_keys) {
        const uint64_t h = HashSlice(*keys[k]);
        const int j = k & (kRing - 1);
        fps[j] = cuckoo::internal::FingerprintOf<S::kFpBits>(h);
        b1[j] = cuckoo::internal::PrimaryBucket(h, ref.num_buckets);
        b2[j] = cuckoo::internal::AltBucket(b1[j], fps[j], ref.num_buckets,
                                            ref.seed);
        __builtin_prefetch(Codec::BucketAddress(ref.table, b1[j]));
        __builtin_prefetch(Codec::BucketAddress(ref.table, b2[j]));
      }
      if (k >= kDistance) {
        const int j = (k - kDistance) & (kRing - 1);
        may_match[k - kDistance] =
            CuckooTable<S>::Probe(ref, fps[j], b1[j], b2[j]);
      }
    }
  }

 private:
  const TableRef ref_;
};

// Reader of a blocked (version 3) block: one cache line per lookup unless
// the key's overflow bit is set in its block.
template <typename S>
class BlockedBitsReader final : public FilterBitsReader {
 public:
  explicit BlockedBitsReader(const BlockedTableRef& ref) : ref_(ref) {}

  // `flatten` inlines XXH3, which GCC otherwise calls out of line.
  // Measured at DRAM scale by a harness over 100 filters of 10^6 keys at 10
  // bits/key (ns per negative, Bloom's reader ~70 in the same runs): 155
  // with a branch-free probe of four buckets, 115 with Probe's branch on
  // the overflow bit and low-part test, 90 with flatten as well. Splitting
  // off a short negative path (the rest out of line) saved ~10% on
  // negatives and cost 25% on cache-resident positives: not done. Tried
  // again with the slot passed to the out-of-line rest and keys <= 16 bytes
  // hashed inline, longer ones by a call (116 instead of 133 instructions
  // on the negative path at f = 10): negatives level, positives 5-10%
  // slower (policy_bench --filters=100, 2 alternations). Copying each
  // filter to 64-byte-aligned memory changed nothing either.
  //
  // Now the lookup is BlockedTable::ContainsSingle: an inline path that
  // settles most negatives from the primary block's low parts and
  // overflow bit, with bucket positions from tables, and the rest of the
  // probe out of line (PrimaryRest) for the others and every positive;
  // keys over 16 bytes are hashed by a call. Counted with callgrind (Ir per
  // single MayMatch of a 16-byte absent key, f = 10, 10^6 keys; RocksDB
  // 7.8.3's Bloom reader: 72 with its Hash64 call): 143 before, 105 after;
  // present keys 159 -> 164. policy_bench --filters=128 --keys=1000000
  // --queries=400000 --bits_per_key=10 --policies=bloom,cuckoo_blocked
  // --repeats=5 --median --clock=cpu, 5 alternated runs against the binary
  // before (shared 2-core machine): single negatives / Bloom's, medians,
  // 1.51x -> 1.11x.
  __attribute__((flatten)) bool MayMatch(const Slice& key) override {
    // Keys of up to 16 bytes are hashed inline, longer ones by a call:
    // XXH3's longer-key code inline needs registers the short path then
    // saves and restores on every lookup.
    const uint64_t hash = key.size() <= 16 ? cuckoo::internal::HashKeyInline(
                                                 key.data(), key.size())
                                           : HashLongKey(key);
    return BlockedTable<S>::ContainsSingle(ref_, hash);
  }

  // Three passes over each chunk of up to kChunk keys (MultiGet batches
  // are <= 32): hash every key and prefetch its primary block; compute the
  // rest of each key's slot from its hash and probe its primary block, and
  // for a key whose overflow bit is set there prefetch
  // its secondary block and defer it; probe the deferred keys' secondary
  // blocks (and the stash). The first probe waits for one memory latency,
  // after which the chunk's other primaries arrive back to back, and the
  // secondaries (about lines_neg - 1 of the keys) load while the rest of
  // the chunk is probed. Measured at DRAM scale (100 filters of 10^6 keys,
  // 10 bits/key, batches of 32), before the builder halved the overflow
  // bits: 32 ns per key when the second pass read every overflow bit and
  // prefetched every second block, against 50 ns for a software pipeline
  // 8 keys deep, which waited on primaries not yet loaded.
  //
  // The second pass tests the low parts first only from 6 low bits (f >= 10),
  // where <= 1/8 of negatives pass that test: with policy_bench as above,
  // 4 alternations, batched negatives / Bloom's at 8 bits/key (f = 8, half
  // of negatives pass the test) 1.24 / 1.17 / 1.26 / 1.35 with the test,
  // 1.04 / 1.07 / 1.06 / 1.12 without; level at 10 and 12 bits/key.
  //
  // Only the 8-byte hashes are kept between the passes, and the second pass
  // computes each slot again (a few multiplies), instead of keeping the
  // 32-byte slots of the first: batched negatives / Bloom's, 4 alternations,
  // at 8 / 10 / 12 bits/key, medians 1.09 / 1.18 / 1.11 with slots kept,
  // 0.90 / 0.98 / 0.82 with hashes kept.
  static constexpr int kBatchedPretestMinLowBits = 6;

  __attribute__((flatten)) void MayMatch(int num_keys, Slice** keys,
                                         bool* may_match) override {
    constexpr int kChunk = 32;
    using Table = BlockedTable<S>;
    uint64_t hashes[kChunk];
    int deferred[kChunk];
    const BlockedTableRef ref = ref_;
    for (int start = 0; start < num_keys; start += kChunk) {
      const int n = std::min(kChunk, num_keys - start);
      for (int k = 0; k < n; ++k) {
        const uint64_t h = HashSlice(*keys[start + k]);
        hashes[k] = h;
        // Both lines a block can span: RocksDB's filter blocks are not
        // 64-byte aligned in memory (one line when they are).
        const uint8_t* block = Table::BlockAddress(
            ref, cuckoo::internal::BlockedPrimaryBlock(h, ref.num_blocks));
        __builtin_prefetch(block);
        __builtin_prefetch(block + cuckoo::internal::kBlockBytes - 1);
      }
      int num_deferred = 0;
      for (int k = 0; k < n; ++k) {
        const BlockedSlot slot = cuckoo::internal::BlockedPlace<S>(
            hashes[k], ref.num_blocks, ref.seed_mix);
        const uint8_t* block = Table::BlockAddress(ref, slot.block);
        may_match[start + k] =
            cuckoo::internal::BlockedPairHas<S, kBatchedPretestMinLowBits>(
                block, slot);
        if (__builtin_expect(Table::Overflowed(block, slot), 0)) {
          const uint8_t* second = Table::SecondaryBlock(ref, slot);
          __builtin_prefetch(second);
          __builtin_prefetch(second + cuckoo::internal::kBlockBytes - 1);
          deferred[num_deferred++] = k;
        }
      }
      for (int d = 0; d < num_deferred; ++d) {
        const int k = deferred[d];
        may_match[start + k] =
            may_match[start + k] ||
            Table::ProbeSecondary(ref,
                                  cuckoo::internal::BlockedPlace<S>(
                                      hashes[k], ref.num_blocks, ref.seed_mix));
      }
    }
  }

 private:
  __attribute__((noinline)) static uint64_t HashLongKey(const Slice& key) {
    return HashSlice(key);
  }

  const BlockedTableRef ref_;
};

FilterBitsReader* NewBlockedReader(const Slice& contents, std::string* error) {
  cuckoo::internal::BlockedView view;
  if (!cuckoo::internal::ParseBlockedFilter(contents.data(), contents.size(),
                                            &view, error)) {
    return nullptr;
  }
  FilterBitsReader* reader = nullptr;
  cuckoo::internal::DispatchBlocked(view.fingerprint_bits, [&](auto settings) {
    reader = new BlockedBitsReader<decltype(settings)>(view.ref);
  });
  return reader;
}

bool IsBlockedBlock(const Slice& contents) {
  if (contents.size() < cuckoo::internal::kTrailerSize) return false;
  const uint8_t version =
      static_cast<uint8_t>(contents.data()[contents.size() - 1]);
  return version == cuckoo::internal::kFormatVersionBlocked ||
         version == cuckoo::internal::kFormatVersionBlockedNext;
}

// Returns a reader for a block, or null (with *error) if it does not
// validate. Never reads outside `contents`.
FilterBitsReader* NewReaderForBlock(const Slice& contents, std::string* error) {
  if (IsBlockedBlock(contents)) return NewBlockedReader(contents, error);
  cuckoo::CuckooFilterView view;
  if (!cuckoo::CuckooFilterView::Parse(contents.data(), contents.size(), &view,
                                       error)) {
    return nullptr;
  }
  const TableRef ref = cuckoo::internal::ViewAccess::Ref(view);
  FilterBitsReader* reader = nullptr;
  DispatchSettings(view.fingerprint_bits(), view.bucket_size(),
                   view.semi_sort(), [&](auto settings) {
                     reader = new CuckooBitsReader<decltype(settings)>(ref);
                   });
  if (reader == nullptr && error != nullptr) *error = "unsupported layout";
  return reader;
}

// ------------------------------------------------------------------ builder

// Attempts at the budgeted size (each with another seed) before growing.
constexpr int kSeedsAtBudget = 3;
// Growth steps of +2% buckets (with a new seed each) before giving up.
constexpr int kMaxGrowSteps = 64;
constexpr int kBuilderMaxKicks = 500;
// Blocked layout: a build may leave n / kBlockedStashDivisor +
// kBlockedStashMin items in the stash (4 bytes each) before it retries.
constexpr uint64_t kBlockedStashDivisor = 1024;
constexpr uint64_t kBlockedStashMin = 4;

// Test hook (policy_config.h): relocation steps per walk, -1 for the default.
std::atomic<int> max_kicks_override{-1};

int BuilderMaxKicks() {
  const int v = max_kicks_override.load(std::memory_order_relaxed);
  return v >= 0 ? v : kBuilderMaxKicks;
}

class CuckooBitsBuilder final : public FilterBitsBuilder {
 public:
  CuckooBitsBuilder(const PolicyConfig& config,
                    std::shared_ptr<Counters> counters, bool detect_corruption,
                    Logger* info_log)
      : config_(config),
        counters_(std::move(counters)),
        detect_corruption_(detect_corruption),
        info_log_(info_log) {}

  CuckooBitsBuilder(const CuckooBitsBuilder&) = delete;
  CuckooBitsBuilder& operator=(const CuckooBitsBuilder&) = delete;

  // Keys arrive in comparator order with repeats (several versions of a
  // key) adjacent; those are dropped here by comparing hashes. While the keys
  // are strictly monotonic in bytewise order (the default comparator or its
  // reverse, without prefix interleaving) no other duplicate can exist, so
  // the count is exact without any de-duplication pass; once they are not,
  // Finish de-duplicates every hash (hash_dedupe.h).
  void AddKey(const Slice& key) override {
    const uint64_t h = HashSlice(key);
    if (have_last_key_ && h == last_key_) return;
    if (monotonic_) TrackOrder(key);
    last_key_ = h;
    have_last_key_ = true;
    have_last_alt_ = false;
    Push(h);
  }

  // Key and alternate (its prefix), each de-duplicated against the previous
  // key and alternate (RocksDB 9.6+ calls this). Interleaved keys and
  // prefixes are not monotonic: Finish de-duplicates.
  void AddKeyAndAlt(const Slice& key, const Slice& alt) CUCKOO_OVERRIDE_IF_ALT {
    const uint64_t hk = HashSlice(key);
    const uint64_t ha = HashSlice(alt);
    monotonic_ = false;
    if (!((have_last_key_ && hk == last_key_) ||
          (have_last_alt_ && hk == last_alt_))) {
      Push(hk);
    }
    if (!((have_last_alt_ && ha == last_alt_) || ha == hk ||
          (have_last_key_ && ha == last_key_))) {
      Push(ha);
    }
    last_key_ = hk;
    last_alt_ = ha;
    have_last_key_ = have_last_alt_ = true;
  }

  // Number of distinct hashes added. O(1) and exact while the keys are
  // monotonic (see AddKey). Otherwise exact whenever it de-duplicates: on the
  // first call for a filter (RocksDB <= 9.5 calls it once, just before
  // Finish) and when the hashes added since the last de-duplication are at
  // least as many as the ones before (amortized O(1) per call when called
  // after every key, as RocksDB 9.6+ does for partitioned filters); in
  // between it is an upper bound. 0 if and only if no key was added.
  size_t EstimateEntriesAdded() override {
    const size_t pending = hashes_.size() - deduped_size_;
    if (!monotonic_ && pending != 0 &&
        (estimate_calls_ == 0 || pending >= deduped_size_)) {
      Dedupe();
    }
    ++estimate_calls_;
    return hashes_.size();
  }

  Slice Finish(std::unique_ptr<const char[]>* buf) override {
    return Finish(buf, nullptr);
  }

  Slice Finish(std::unique_ptr<const char[]>* buf, Status* status) override {
    if (status != nullptr) *status = Status::OK();
    if (monotonic_) {
      VerifyChecksum();
    } else {
      Dedupe();
    }
    if (hashes_corrupted_) {
      ResetKeys();
      verify_hashes_.clear();
      Count<&PolicyStats::construction_corruptions>(counters_.get(), 1);
      Log("hash entries checksum mismatch before building the filter");
      if (status != nullptr) {
        *status =
            Status::Corruption("cuckoo filter: hash entries checksum mismatch");
      }
      // Not a valid block: a reader would treat it as "always may match".
      buf->reset(new char[1]());
      return Slice(buf->get(), 0);
    }

    const uint64_t n = hashes_.size();
    Slice result;
    if (!Build(buf, &result)) {
      // Only reachable with more keys than kMaxBuckets * b.
      ResetKeys();
      verify_hashes_.clear();
      Count<&PolicyStats::construction_corruptions>(counters_.get(), 1);
      Log("cannot build a filter for %llu keys",
          static_cast<unsigned long long>(n));
      if (status != nullptr) {
        *status =
            Status::Corruption("cuckoo filter: too many keys for one filter");
      }
      buf->reset(new char[1]());
      return Slice(buf->get(), 0);
    }
    Count<&PolicyStats::filters_built>(counters_.get(), 1);
    Count<&PolicyStats::keys_added>(counters_.get(), n);
    Count<&PolicyStats::filter_bytes>(counters_.get(), result.size());

    // Keep the hashes only for MaybePostVerify; the builder starts afresh.
    verify_hashes_.swap(hashes_);
    if (!detect_corruption_) verify_hashes_.clear();
    ResetKeys();
    return result;
  }

  // With detect_filter_construct_corruption: parses the block just built and
  // checks that it answers "may match" for every hash that went into it.
  Status MaybePostVerify(const Slice& filter_content) override {
    if (!detect_corruption_) return Status::OK();
    Status s;
    std::string error;
    cuckoo::CuckooFilterView view;
    cuckoo::internal::BlockedView blocked;
    if (IsBlockedBlock(filter_content)) {
      if (!cuckoo::internal::ParseBlockedFilter(
              filter_content.data(), filter_content.size(), &blocked, &error)) {
        s = Status::Corruption("cuckoo filter: built block does not parse: " +
                               error);
      }
      for (const HashSpan& span : verify_hashes_.Spans()) {
        for (size_t k = 0; k < span.size && s.ok(); ++k) {
          if (!cuckoo::internal::BlockedContains(blocked, span.data[k])) {
            s = Status::Corruption("cuckoo filter: built block misses a key");
          }
        }
      }
    } else if (!cuckoo::CuckooFilterView::Parse(filter_content.data(),
                                                filter_content.size(), &view,
                                                &error)) {
      s = Status::Corruption("cuckoo filter: built block does not parse: " +
                             error);
    } else {
      constexpr size_t kChunk = 256;
      cuckoo::KeyHash chunk[kChunk];
      bool found[kChunk];
      for (const HashSpan& span : verify_hashes_.Spans()) {
        for (size_t start = 0; start < span.size && s.ok(); start += kChunk) {
          const size_t count = std::min(kChunk, span.size - start);
          for (size_t k = 0; k < count; ++k) {
            chunk[k] = cuckoo::KeyHash(span.data[start + k]);
          }
          view.ContainsBatch(chunk, count, found);
          for (size_t k = 0; k < count; ++k) {
            if (!found[k]) {
              s = Status::Corruption("cuckoo filter: built block misses a key");
              break;
            }
          }
        }
      }
    }
    verify_hashes_.clear();
    if (!s.ok()) {
      Count<&PolicyStats::construction_corruptions>(counters_.get(), 1);
      Log("%s", s.ToString().c_str());
    }
    return s;
  }

  // The largest key count whose filter (at the budget) fits in `bytes`; 0 if
  // even an empty filter does not. Consistent with Finish's sizing.
  size_t ApproximateNumEntries(size_t bytes) override {
    return static_cast<size_t>(KeysForFilterBytes(config_, bytes));
  }

#if CUCKOO_ABI_HAS_CALCULATE_SPACE
  size_t CalculateSpace(size_t num_entries) override {
    return static_cast<size_t>(FilterBytesForKeys(config_, num_entries));
  }

  double EstimatedFpRate(size_t num_entries, size_t bytes) override {
    if (bytes <= cuckoo::internal::kTrailerSize) return 1.0;
    const double buckets = double(bytes - cuckoo::internal::kTrailerSize) * 8 /
                           config_.BucketBits();
    if (buckets < 1) return 1.0;
    const double slots = config_.blocked
                             ? 4.0 * cuckoo::internal::BlockedBucketsPerBlock(
                                         config_.fingerprint_bits)
                             : config_.bucket_size;
    const double load = double(num_entries) / (buckets * slots);
    return ExpectedFpr(config_.fingerprint_bits, config_.bucket_size,
                       std::min(load, 1.0));
  }
#endif

 private:
  void Push(uint64_t h) {
    hashes_.push_back(h);
    if (detect_corruption_) xor_checksum_ ^= h;
  }

  // Records whether the keys so far are strictly monotonic in bytewise order.
  void TrackOrder(const Slice& key) {
    if (have_prev_key_) {
      // c == 0 is impossible here: an equal key has an equal hash.
      const int direction =
          BytewiseLess(prev_key_.get(), prev_key_size_, key.data(), key.size())
              ? 1
              : -1;
      if (direction_ == 0) {
        direction_ = direction;
      } else if (direction != direction_) {
        monotonic_ = false;
        return;
      }
    }
    CopyPrevKey(key.data(), key.size());
    prev_key_size_ = key.size();
    have_prev_key_ = true;
  }

  // Copies a key into prev_key_. Keys of 8..32 bytes (most keys) take two
  // or four fixed-size, overlapping copies, which compile to a few moves:
  // a call to memcpy for every key was 10% of a filter's build.
  void CopyPrevKey(const char* key, size_t n) {
    if (n > prev_key_capacity_) {
      prev_key_capacity_ = std::max({n, 2 * prev_key_capacity_, size_t{32}});
      prev_key_.reset(new char[prev_key_capacity_]);
    }
    char* dst = prev_key_.get();
    if (n >= 8 && n <= 16) {
      std::memcpy(dst, key, 8);
      std::memcpy(dst + n - 8, key + n - 8, 8);
    } else if (n > 16 && n <= 32) {
      std::memcpy(dst, key, 16);
      std::memcpy(dst + n - 16, key + n - 16, 16);
    } else if (n != 0) {
      // memcpy needs valid pointers even for 0 bytes ("" is a legal key).
      std::memcpy(dst, key, n);
    }
  }

  static uint64_t LoadBigEndian64(const char* p) {
    uint64_t w;
    std::memcpy(&w, p, sizeof(w));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return w;
#else
    return __builtin_bswap64(w);
#endif
  }

  // a < b in bytewise (memcmp, then length) order, 8 bytes at a time.
  static bool BytewiseLess(const char* a, size_t na, const char* b, size_t nb) {
    const size_t n = std::min(na, nb);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const uint64_t wa = LoadBigEndian64(a + i);
      const uint64_t wb = LoadBigEndian64(b + i);
      if (wa != wb) return wa < wb;
    }
    for (; i < n; ++i) {
      if (a[i] != b[i]) {
        return static_cast<unsigned char>(a[i]) <
               static_cast<unsigned char>(b[i]);
      }
    }
    return na < nb;
  }

  // With corruption detection, checks the hashes against the XOR checksum
  // kept since they were added (memory corruption while buffering).
  void VerifyChecksum() {
    if (!detect_corruption_) return;
    uint64_t x = 0;
    hashes_.ForEach([&x](uint64_t h) { x ^= h; });
    if (x != xor_checksum_) hashes_corrupted_ = true;
  }

  // Exact de-duplication of hashes_ (see hash_dedupe.h).
  void Dedupe() {
    if (hashes_.size() == deduped_size_) return;
    VerifyChecksum();
    std::vector<uint64_t> flat = hashes_.TakeFlat();
    DedupeHashes(&flat, &dedupe_scratch_);
    if (detect_corruption_) {
      xor_checksum_ = 0;
      for (uint64_t h : flat) xor_checksum_ ^= h;
    }
    hashes_.Assign(std::move(flat));
    deduped_size_ = hashes_.size();
  }

  void ResetKeys() {
    hashes_.clear();
    deduped_size_ = 0;
    estimate_calls_ = 0;
    xor_checksum_ = 0;
    hashes_corrupted_ = false;
    have_last_key_ = have_last_alt_ = false;
    monotonic_ = true;
    direction_ = 0;
    have_prev_key_ = false;
  }

  // Builds the block for hashes_ (distinct). Returns false only if the key
  // count cannot be represented.
  bool Build(std::unique_ptr<const char[]>* buf, Slice* out) {
    if (config_.blocked) return BuildBlocked(buf, out);
    const std::vector<HashSpan> spans = hashes_.Spans();
    std::unique_ptr<char[]> block;
    size_t table_bytes = 0;
    return GrowUntilBuilt(
        BucketsForKeys(config_, hashes_.size()), "buckets",
        [](uint64_t buckets) {
          return std::max<uint64_t>(2, (buckets / 50) & ~uint64_t{1});
        },
        [&](uint64_t buckets, uint32_t seed, bool first_seed) {
          if (first_seed) {
            table_bytes = static_cast<size_t>(TableBytes(config_, buckets));
            block.reset(
                new char[table_bytes + cuckoo::internal::kTrailerSize]());
          }
          BulkBuildParams params;
          params.num_buckets = static_cast<uint32_t>(buckets);
          params.seed = seed;
          params.max_kicks = BuilderMaxKicks();
          BulkBuildResult r;
          DispatchSettings(config_.fingerprint_bits, config_.bucket_size,
                           config_.semi_sort, [&](auto settings) {
                             using S = decltype(settings);
                             r = BulkBuilder<S>::Build(
                                 spans.data(), spans.size(), hashes_.size(),
                                 params, &bulk_scratch_,
                                 reinterpret_cast<uint8_t*>(block.get()));
                           });
          if (!r.ok) return false;
          cuckoo::internal::Trailer t = cuckoo::internal::Trailer::ForLayout(
              config_.fingerprint_bits, config_.bucket_size, config_.semi_sort);
          t.num_buckets = static_cast<uint32_t>(buckets);
          t.num_items = r.num_items;
          t.seed = seed;
          t.victim_fp = r.victim_fp;
          t.victim_bucket = r.victim_bucket;
          cuckoo::internal::EncodeTrailer(t, block.get(), table_bytes);
          *out =
              Slice(block.get(), table_bytes + cuckoo::internal::kTrailerSize);
          *buf = std::move(block);
          return true;
        });
  }

  // Build of the blocked layout (format version 3): as Build, with blocks
  // for buckets; a build fails only if more items than kBlockedMaxStash
  // allows end up in the stash (none did in the measurements).
  bool BuildBlocked(std::unique_ptr<const char[]>* buf, Slice* out) {
    const uint64_t n = hashes_.size();
    const std::vector<HashSpan> spans = hashes_.Spans();
    const uint32_t max_stash = static_cast<uint32_t>(std::min<uint64_t>(
        n / kBlockedStashDivisor + kBlockedStashMin, uint64_t{1} << 24));
    std::unique_ptr<char[]> block;
    size_t blocks_bytes = 0;
    return GrowUntilBuilt(
        BucketsForKeys(config_, n), "blocks",
        [](uint64_t blocks) { return std::max<uint64_t>(1, blocks / 50); },
        [&](uint64_t blocks, uint32_t seed, bool first_seed) {
          if (first_seed) {
            blocks_bytes = static_cast<size_t>(TableBytes(config_, blocks));
            // Room for the largest stash, the trailer, and the 8 bytes the
            // packer may touch past the last block.
            block.reset(new char[blocks_bytes + 4 * size_t{max_stash} +
                                 cuckoo::internal::kTrailerSize + 8]());
          } else {
            std::memset(block.get(), 0, blocks_bytes + 8);
          }
          cuckoo::internal::BlockedBuildParams params;
          params.fingerprint_bits = config_.fingerprint_bits;
          params.num_blocks = static_cast<uint32_t>(blocks);
          params.seed = seed;
          params.max_stash = max_stash;
          if (BuilderMaxKicks() != kBuilderMaxKicks) {
            params.max_kicks = BuilderMaxKicks();
          }
          const cuckoo::internal::BlockedBuildResult r =
              cuckoo::internal::BuildBlockedTable(
                  spans.data(), spans.size(), static_cast<size_t>(n), params,
                  &blocked_scratch_, reinterpret_cast<uint8_t*>(block.get()));
          if (!r.ok) return false;
          *out = Slice(block.get(),
                       cuckoo::internal::EncodeBlockedTrailer(
                           params, r, reinterpret_cast<uint8_t*>(block.get())));
          *buf = std::move(block);
          return true;
        });
  }

  // The retry policy shared by both layouts: kSeedsAtBudget seeds at the
  // budgeted size `units` (buckets or blocks), then one seed per growth step
  // of step(units), at most kMaxGrowSteps steps and never past kMaxBuckets.
  // try_build(units, seed, first_seed_at_this_size) fills the output and
  // returns true on success. Counts retries and growth, and logs growth
  // (the block then exceeds the bits/key budget).
  template <typename Step, typename TryBuild>
  bool GrowUntilBuilt(uint64_t units, const char* unit_name, Step step,
                      TryBuild try_build) {
    if (units == 0) return false;
    const uint64_t budget_units = units;
    uint32_t seed = 0;
    int attempts = 0;
    for (int grow = 0; grow <= kMaxGrowSteps; ++grow) {
      const int seeds = grow == 0 ? kSeedsAtBudget : 1;
      for (int s = 0; s < seeds; ++s, ++seed) {
        ++attempts;
        if (!try_build(units, seed, s == 0)) continue;
        if (attempts > 1)
          Count<&PolicyStats::build_retries>(counters_.get(), attempts - 1);
        if (grow > 0) {
          Count<&PolicyStats::filters_grown>(counters_.get(), 1);
          Log("filter for %llu keys needed %llu %s instead of %llu "
              "(%d attempts); block exceeds the %s budget",
              static_cast<unsigned long long>(hashes_.size()),
              static_cast<unsigned long long>(units), unit_name,
              static_cast<unsigned long long>(budget_units), attempts,
              PolicyName(config_).c_str());
        }
        return true;
      }
      const uint64_t next = units + step(units);
      if (next > cuckoo::kMaxBuckets) return false;
      units = next;
    }
    return false;
  }

  void Log(const char* format, ...) __attribute__((format(printf, 2, 3))) {
    va_list args;
    va_start(args, format);
    LogV(info_log_, InfoLogLevel::WARN_LEVEL, "[cuckoofilter] ", format, args);
    va_end(args);
  }

  const PolicyConfig config_;
  const std::shared_ptr<Counters> counters_;
  const bool detect_corruption_;
  Logger* const info_log_;

  HashList hashes_;
  size_t deduped_size_ = 0;  // the first deduped_size_ hashes are distinct
  size_t estimate_calls_ = 0;
  uint64_t xor_checksum_ = 0;
  bool hashes_corrupted_ = false;
  uint64_t last_key_ = 0;
  uint64_t last_alt_ = 0;
  bool have_last_key_ = false;
  bool have_last_alt_ = false;
  // Bytewise order of the keys added so far (see AddKey).
  bool monotonic_ = true;
  int direction_ = 0;  // +1 increasing, -1 decreasing, 0 unknown
  bool have_prev_key_ = false;
  std::unique_ptr<char[]> prev_key_;
  size_t prev_key_size_ = 0;
  size_t prev_key_capacity_ = 0;

  HashList verify_hashes_;  // from Finish to MaybePostVerify
  DedupeScratch dedupe_scratch_;
  BulkScratch bulk_scratch_;
  cuckoo::internal::BlockedScratch blocked_scratch_;
};

// ------------------------------------------------------------------ policy

class CuckooFilterPolicy final : public FilterPolicy {
 public:
  explicit CuckooFilterPolicy(const PolicyConfig& config)
      : config_(config),
        name_(PolicyName(config)),
        counters_(std::make_shared<Counters>()) {}

  static const char* kClassName() { return kPolicyClassName; }

  // The canonical options string, e.g. "cuckoofilter:10"; also GetId().
  const char* Name() const override { return name_.c_str(); }

  // Shared by all cuckoo policies: any of them reads any cuckoo block.
  const char* CompatibilityName() const override { return kCompatibilityName; }

  bool IsInstanceOf(const std::string& id) const override {
    return id == kPolicyClassName || FilterPolicy::IsInstanceOf(id);
  }

  FilterBitsBuilder* GetBuilderWithContext(
      const FilterBuildingContext& context) const override {
    return new CuckooBitsBuilder(
        config_, counters_,
        context.table_options.detect_filter_construct_corruption,
        context.info_log);
  }

  FilterBitsReader* GetFilterBitsReader(const Slice& contents) const override {
    Count<&PolicyStats::readers_created>(counters_.get(), 1);
    FilterBitsReader* reader = NewReaderForBlock(contents, nullptr);
    if (reader == nullptr) {
      Count<&PolicyStats::invalid_blocks>(counters_.get(), 1);
      return new AlwaysMayMatchReader;
    }
    return reader;
  }

  const PolicyConfig& config() const { return config_; }
  CuckooFilterPolicyStats Stats() const { return Snapshot(*counters_); }

 private:
  const PolicyConfig config_;
  const std::string name_;
  const std::shared_ptr<Counters> counters_;
};

const CuckooFilterPolicy* AsCuckooPolicy(const FilterPolicy* policy) {
  if (policy == nullptr) return nullptr;
  return policy->CheckedCast<CuckooFilterPolicy>();
}

}  // namespace

void SetBuilderMaxKicksForTesting(int max_kicks) {
  max_kicks_override.store(max_kicks, std::memory_order_relaxed);
}

}  // namespace internal

// ------------------------------------------------------------------ public API

Status ParseCuckooFilterPolicyString(const std::string& value,
                                     CuckooFilterLayout* layout) {
  internal::PolicyConfig config;
  Status s = internal::ParsePolicyString(value, &config);
  if (s.ok()) internal::DescribeConfig(config, layout);
  return s;
}

namespace {
// Clamps a budget as NewCuckooFilterPolicy documents, in millibits.
int ClampedMillibits(double bits_per_key) {
  if (!(bits_per_key == bits_per_key)) bits_per_key = 10.0;  // NaN
  bits_per_key =
      std::min(std::max(bits_per_key, kMinBitsPerKey), kMaxBitsPerKey);
  return static_cast<int>(bits_per_key * 1000 + 0.5);
}
}  // namespace

const FilterPolicy* NewCuckooFilterPolicy(double bits_per_key) {
  return new internal::CuckooFilterPolicy(
      internal::AutoConfig(ClampedMillibits(bits_per_key)));
}

const FilterPolicy* NewBlockedCuckooFilterPolicy(double bits_per_key) {
  return new internal::CuckooFilterPolicy(
      internal::BlockedConfig(ClampedMillibits(bits_per_key)));
}

namespace {
// The policy of a resolved configuration, or null with the error.
Status MakePolicy(const Status& resolved, const internal::PolicyConfig& config,
                  std::shared_ptr<const FilterPolicy>* policy) {
  if (resolved.ok()) {
    *policy = std::make_shared<internal::CuckooFilterPolicy>(config);
  } else {
    policy->reset();
  }
  return resolved;
}
}  // namespace

Status NewCuckooFilterPolicyForFpr(
    double target_fpr, std::shared_ptr<const FilterPolicy>* policy) {
  internal::PolicyConfig config;
  const Status s = internal::ConfigForTargetFpr(target_fpr, &config);
  return MakePolicy(s, config, policy);
}

Status NewCuckooFilterPolicyWithLayout(
    double bits_per_key, int fingerprint_bits, int bucket_size, bool semi_sort,
    std::shared_ptr<const FilterPolicy>* policy) {
  internal::PolicyConfig config;
  const Status s = internal::ExplicitConfig(bits_per_key, fingerprint_bits,
                                            bucket_size, semi_sort, &config);
  return MakePolicy(s, config, policy);
}

bool GetCuckooFilterLayout(const FilterPolicy* policy,
                           CuckooFilterLayout* layout) {
  const internal::CuckooFilterPolicy* p = internal::AsCuckooPolicy(policy);
  if (p == nullptr) return false;
  internal::DescribeConfig(p->config(), layout);
  return true;
}

int RegisterCuckooFilterPolicies(ROCKSDB_NAMESPACE::ObjectLibrary& library,
                                 const std::string& /*arg*/) {
  // "cuckoofilter" followed by ":" and anything (even nothing): every
  // argument string reaches the factory, so a malformed one is an
  // InvalidArgument error instead of an unregistered name (which options
  // parsing would silently turn into "no filter"). The bare name also matches,
  // and is rejected.
  library.AddFactory<const FilterPolicy>(
      ROCKSDB_NAMESPACE::ObjectLibrary::PatternEntry(internal::kPolicyClassName,
                                                     /*optional=*/true)
          .AddSeparator(":", /*at_least_one=*/false),
      [](const std::string& uri, std::unique_ptr<const FilterPolicy>* guard,
         std::string* errmsg) -> const FilterPolicy* {
        internal::PolicyConfig config;
        Status s = internal::ParsePolicyString(uri, &config);
        if (!s.ok()) {
          *errmsg = s.ToString();
          return nullptr;
        }
        guard->reset(new internal::CuckooFilterPolicy(config));
        return guard->get();
      });
  return 1;
}

bool IsCuckooFilterPolicy(const FilterPolicy* policy) {
  return internal::AsCuckooPolicy(policy) != nullptr;
}

bool GetCuckooFilterPolicyStats(const FilterPolicy* policy,
                                CuckooFilterPolicyStats* stats) {
  const internal::CuckooFilterPolicy* p = internal::AsCuckooPolicy(policy);
  if (p == nullptr) return false;
  *stats = p->Stats();
  return true;
}

CuckooFilterPolicyStats GetGlobalCuckooFilterPolicyStats() {
  return internal::Snapshot(internal::GlobalCounters());
}

}  // namespace rocksdb_cuckoo
