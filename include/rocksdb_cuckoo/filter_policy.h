// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Cuckoo filters in RocksDB SST filter blocks: a FilterPolicy.
//
// Each full filter block (or each partition of a partitioned filter) holds one
// partial-key cuckoo filter (Fan et al., CoNEXT 2014) over the 64-bit XXH3
// hashes of the keys (and/or prefixes) RocksDB adds, serialized in the core
// format of include/cuckoo/cuckoo_filter.h (bucket array + 32-byte trailer).
//
// Example (examples/sst_filter_policy.cc):
//   #include "rocksdb_cuckoo/filter_policy.h"
//
//   ROCKSDB_NAMESPACE::BlockBasedTableOptions table_options;
//   table_options.filter_policy.reset(
//       rocksdb_cuckoo::NewCuckooFilterPolicy(10));  // bits/key
//
//   std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> policy;
//   ROCKSDB_NAMESPACE::Status s =
//       rocksdb_cuckoo::NewCuckooFilterPolicyForFpr(0.001, &policy);
//   s = rocksdb_cuckoo::NewCuckooFilterPolicyWithLayout(
//       /*bits_per_key=*/12, /*fingerprint_bits=*/12, /*bucket_size=*/4,
//       /*semi_sort=*/true, &policy);
//
// or, through an options string or OPTIONS file, after registering the
// factories once per process (or loading librocksdb_cuckoo.so, whose static
// initializer registers them in ObjectLibrary::Default()). Example
// (examples/sst_filter_policy.cc):
//   rocksdb_cuckoo::RegisterCuckooFilterPolicies(
//       *ROCKSDB_NAMESPACE::ObjectLibrary::Default(), "");
//   ROCKSDB_NAMESPACE::ConfigOptions config;
//   s = ROCKSDB_NAMESPACE::GetColumnFamilyOptionsFromString(
//       config, options,
//       "block_based_table_factory={filter_policy=cuckoofilter:10}", &options);
//
// Options strings (all numbers plain decimal, no sign, no exponent), one per
// factory:
//   cuckoofilter:<bits_per_key>
//       Automatic layout for a budget of <bits_per_key> bits per distinct key
//       (NewCuckooFilterPolicy), e.g. cuckoofilter:10.
//   cuckoofilter:<bits_per_key>:<f>:<b>:<semi>
//       Explicit layout (NewCuckooFilterPolicyWithLayout), semi 0 or 1.
//   cuckoofilter:fpr:<rate>
//       Smallest layout for a false positive rate
//       (NewCuckooFilterPolicyForFpr).
//   cuckoofilter:<bits_per_key>:blocked
//       One-cache-line layout (NewBlockedCuckooFilterPolicy), e.g.
//       cuckoofilter:10:blocked.
// Invalid arguments (e.g. "cuckoofilter:abc", "cuckoofilter:-1", bucket size 3)
// make FilterPolicy::CreateFromString and strict options parsing
// (ConfigOptions::input_strings_escaped = false) return InvalidArgument.
// Note that RocksDB's lenient parsing (escaped input, used for OPTIONS files)
// ignores errors of options set by name, and an unregistered name loads as
// "no filter" with an OK status: check that a loaded filter_policy is not
// null (IsCuckooFilterPolicy; examples/options_file.cc shows the trap).
// Name() is the canonical string, always of the first, second or fourth
// form (bits per key with at most 3 decimals), and parses back to an
// identical policy, so the policy round-trips through OPTIONS files.
//
// Compatibility: all cuckoo policies read each other's filter blocks (the
// layout is in the block trailer); CompatibilityName() is shared by all of
// them and changes only with the on-disk encoding. Tables written with another
// policy (Bloom, Ribbon, none) are read correctly but unfiltered, and vice
// versa.
//
// Filter size: for n distinct keys and a budget of B bits per key the bucket
// array never exceeds ceil(n * B / 8) bytes, plus the 32-byte trailer, except
// (a) tiny filters, which are at least 2 buckets, and (b) the rare builds in
// which the cuckoo random walk fails at the target load twice: the table then
// grows by 2% steps (counted in CuckooFilterPolicyStats::filters_grown).
//
// Costs: building a filter of n keys takes O(n) expected time and, until
// Finish, 8 bytes per added key (hashes) plus an unpacked scratch table of
// 2 bytes per slot (f <= 16; 4 bytes for f > 16), about 2.2 bytes per key at
// 10 bits/key. Keys that are not strictly monotonic in bytewise order (a
// non-bytewise comparator, or prefixes interleaved with whole keys) add one
// O(n) de-duplication pass. A lookup hashes the key (XXH3) and probes two
// buckets: O(1), no allocation; the batched (MultiGet) lookup overlaps the
// cache misses of its keys. A reader does not copy the block.
//
// Thread safety: the policy and its filter readers may be used concurrently
// from any number of threads; a builder (one per table file being written)
// is used by one thread at a time, as RocksDB does.
#ifndef ROCKSDB_CUCKOO_FILTER_POLICY_H_
#define ROCKSDB_CUCKOO_FILTER_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>

#include "rocksdb/filter_policy.h"
#include "rocksdb/rocksdb_namespace.h"
#include "rocksdb/status.h"
#include "rocksdb/utilities/object_registry.h"

namespace rocksdb_cuckoo {

// Range of the bits-per-key budget (bits per distinct key, trailer
// excluded). Budgets are kept to 0.001 bits (rounded to nearest).
constexpr double kMinBitsPerKey = 4.0;
constexpr double kMaxBitsPerKey = 64.0;

// Factories. Each returns a new policy that is immutable, thread-safe and
// cheap to share; its Name() is the canonical options string of its layout
// and parses back to the same policy. Creating a policy is O(1).
//
// Semi-sorted buckets: the core's FilterConfig::semi_sort defaults to false
// (faster inserts, every (f, b)), while the automatic layouts below are
// semi-sorted up to f = 16: a policy is sized by a bits-per-key budget, so
// the bit semi-sorting saves per entry buys one more fingerprint bit (half
// the false positive rate) in the same space, and SST filters are built
// once and then only read. NewCuckooFilterPolicyWithLayout takes semi_sort
// explicitly.

// Automatic layout for a budget of `bits_per_key` bits per distinct key
// (options string "cuckoofilter:<bits_per_key>"): the layout with the lowest
// expected false positive rate within the budget, always b = 4: semi-sorted
// with the largest f <= 16 such that (f - 1) / 0.95 <= bits_per_key, or from
// ~17.9 bits plain with the largest f <= 32 such that f / 0.95 <=
// bits_per_key; the load is then lowered to spend exactly the budget.
// Examples: 8 -> f=8 (~2.7%), 10 -> f=10 (~0.70%), 12 -> f=12 (~0.18%),
// 16 -> f=16 (~0.011%), 20 -> f=19 (~0.0015%), 24 -> f=22 (~0.0002%).
// Never fails, like NewBloomFilterPolicy: values outside [kMinBitsPerKey,
// kMaxBitsPerKey] are clamped and NaN selects 10. The caller owns the result
// (usually through BlockBasedTableOptions::filter_policy).
const ROCKSDB_NAMESPACE::FilterPolicy* NewCuckooFilterPolicy(
    double bits_per_key);

// The smallest automatic layout (as above) whose expected false positive
// rate is at most `target_fpr` (options string "cuckoofilter:fpr:<rate>";
// Name() is the automatic form, e.g. 0.001 -> "cuckoofilter:12.632").
// Returns InvalidArgument, and sets *policy to null, unless 0 < target_fpr
// < 1 and the layout needs at most kMaxBitsPerKey bits per key (rates down
// to about 9.3e-10, f = 32 at load 0.5).
ROCKSDB_NAMESPACE::Status NewCuckooFilterPolicyForFpr(
    double target_fpr,
    std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy>* policy);

// An explicit layout (options string
// "cuckoofilter:<bits_per_key>:<f>:<b>:<0|1>"): `fingerprint_bits` f in
// 4..32, `bucket_size` b in {1, 2, 4, 8}, `semi_sort` only with b = 4 and
// f <= 16 (each entry then takes f - 1 bits). The load factor is (bits per
// entry) / bits_per_key and must not exceed the maximum load of b (b=1:
// 0.45, 2: 0.84, 4: 0.95, 8: 0.98), e.g. f = 12 semi-sorted needs at least
// 11.579 bits per key. Returns InvalidArgument with the reason, and sets
// *policy to null, on any out-of-range or contradictory argument.
ROCKSDB_NAMESPACE::Status NewCuckooFilterPolicyWithLayout(
    double bits_per_key, int fingerprint_bits, int bucket_size, bool semi_sort,
    std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy>* policy);

// Blocked layout (filter block format version 4 after 1.0.0, whose second
// block of a key is the next block; version 3, written by 0.x from a04de18
// and by 1.0.0, is still read; plugin builds that do not know a version read
// its blocks as "always may match"): both candidate buckets of a key
// lie in one 64-byte block, so most lookups read one cache line instead of
// two, like RocksDB's cache-local Bloom filter. Semi-sorted buckets of 4
// with the widest f <= 16 that fits 512 / bits_per_key keys per block at a
// load of at most 0.93; a key that does not fit in its block overflows to a
// second block (one overflow bit per class of keys tells a lookup to read
// it) or, rarely, to a small sorted stash after the blocks. Its false
// positive rate is above NewCuckooFilterPolicy's at the same bits/key (f is
// one bit narrower from 12 bits/key); measured rates, against Bloom's, and
// the share of lookups that read a second block: docs/sample_report
// (sections 1e and 2). Clamping as NewCuckooFilterPolicy; never fails. The
// caller owns the result.
const ROCKSDB_NAMESPACE::FilterPolicy* NewBlockedCuckooFilterPolicy(
    double bits_per_key);

// The layout of a policy.
struct CuckooFilterLayout {
  int fingerprint_bits = 0;
  int bucket_size = 0;
  bool semi_sort = false;
  bool blocked = false;  // NewBlockedCuckooFilterPolicy
  // Bits per distinct key of the bucket array (the budget, 0.001 precision).
  double bits_per_key = 0;
  // Target load factor: (bits per entry) / bits_per_key.
  double load_factor = 0;
  // Expected false positive rate at that load: 2 * b * load / (2^f - 1)
  // (an absent key matches iff its (bucket pair, fingerprint) combination
  // is stored; the builder stores almost every combination only once).
  double expected_fpr = 0;
  // The canonical options string, e.g. "cuckoofilter:10" (== policy Name()).
  std::string name;
};

// Copies the layout of `policy` into *layout and returns true, or returns
// false if `policy` is not a cuckoo filter policy (or is null).
bool GetCuckooFilterLayout(const ROCKSDB_NAMESPACE::FilterPolicy* policy,
                           CuckooFilterLayout* layout);

// The layout an options string (any form above) selects, without creating
// a policy; InvalidArgument with the reason if the string is invalid.
ROCKSDB_NAMESPACE::Status ParseCuckooFilterPolicyString(
    const std::string& value, CuckooFilterLayout* layout);

// Registers the factories for the "cuckoofilter" options strings (all forms
// above) as `const FilterPolicy` in `library`. Returns the number of
// factories added. Call once per library (ObjectLibrary::Default() for the
// default registry); librocksdb_cuckoo.so does so when loaded.
int RegisterCuckooFilterPolicies(ROCKSDB_NAMESPACE::ObjectLibrary& library,
                                 const std::string& arg);

// True if `policy` is a cuckoo filter policy of this library.
bool IsCuckooFilterPolicy(const ROCKSDB_NAMESPACE::FilterPolicy* policy);

// Event counters of a policy (or of all policies of the process). Counters
// are updated once per filter built or reader created (never per key) with
// relaxed atomics; a snapshot is consistent per field only.
struct CuckooFilterPolicyStats {
  uint64_t filters_built = 0;  // Finish() calls that built a filter
  uint64_t keys_added = 0;     // distinct hashes in those filters
  uint64_t filter_bytes = 0;   // bytes of those filters (with trailer)
  uint64_t build_retries = 0;  // extra attempts with another seed
  uint64_t filters_grown = 0;  // filters built above the budget
  uint64_t construction_corruptions = 0;  // checksum / post-verify failures
  uint64_t readers_created = 0;           // GetFilterBitsReader calls
  uint64_t invalid_blocks = 0;  // blocks rejected -> "always may match"
};

// Copies the counters of `policy` into *stats and returns true, or returns
// false if `policy` is not a cuckoo filter policy.
bool GetCuckooFilterPolicyStats(const ROCKSDB_NAMESPACE::FilterPolicy* policy,
                                CuckooFilterPolicyStats* stats);

// The counters summed over every cuckoo policy of the process, including
// ones already destroyed.
CuckooFilterPolicyStats GetGlobalCuckooFilterPolicyStats();

}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_FILTER_POLICY_H_
