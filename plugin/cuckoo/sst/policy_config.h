// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Configuration of the cuckoo FilterPolicy: options strings, the layouts of
// the named factories, and the sizing rules shared by the builder (Finish),
// ApproximateNumEntries and the tests. Internal header.
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_SST_POLICY_CONFIG_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_SST_POLICY_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "rocksdb/status.h"
#include "rocksdb_cuckoo/filter_policy.h"

namespace rocksdb_cuckoo {
namespace internal {

// Class name / options-string prefix.
constexpr const char* kPolicyClassName = "cuckoofilter";
// Meta-block name suffix shared by every cuckoo policy. Change it (and the
// core's format version) whenever the encoding of a filter block changes.
constexpr const char* kCompatibilityName = "rocksdb_cuckoo.CuckooFilter.v1";
// Maximum target load of automatic layouts (buckets of 4).
constexpr double kAutoMaxLoad = 0.95;
// See PolicyConfig::HardMaxLoad.
constexpr double kLoadSlack = 0.01;
// Options-string suffix of the blocked layout ("cuckoofilter:10:blocked").
constexpr const char* kBlockedSuffix = "blocked";
// Maximum target load of the blocked layout (items per slot of a block).
// Measured (tests/core/blocked_test.cc, 10^6 keys, f = 10): at 0.914 the
// builder leaves no item in the stash and 5.2% of the overflow bits are
// set; at 0.95, 9.1%. 10 bits/key with f = 10 is 0.914.
constexpr double kBlockedMaxLoad = 0.93;

// A resolved policy configuration. The budget is kept in millibits per key
// so that Name() round-trips exactly.
struct PolicyConfig {
  int millibits_per_key = 0;
  int fingerprint_bits = 0;
  int bucket_size = 0;
  bool semi_sort = false;
  // Name() lists the layout (the explicit string form) when true.
  bool explicit_layout = false;
  // The one-cache-line layout for immutable filters (format version 4,
  // version 3 still read; blocked_layout.h): semi-sorted buckets of 4, both in
  // one 64-byte block. "buckets" are then 64-byte blocks in the sizing
  // functions below.
  bool blocked = false;

  // Bits of one bucket in the packed table (blocked: of one block).
  int BucketBits() const;
  double BitsPerKey() const { return millibits_per_key / 1000.0; }
  // Target load factor: bits per entry / bits per key.
  double TargetLoad() const;
  // Highest target load of the layout: kAutoMaxLoad, or the core's default
  // load of b for explicit layouts.
  double MaxLoad() const;
  // Highest load BucketsForKeys accepts: MaxLoad() plus kLoadSlack, so that
  // rounding the bucket count down to even never exceeds the budget for a
  // target load at MaxLoad() (n >= ~1000). The builder retries and, rarely,
  // grows the table if a walk fails there.
  double HardMaxLoad() const;
};

// 2 * b * load / (2^f - 1), at most 1: the false positive rate of a table
// at that load. An absent key matches iff its (bucket pair, fingerprint)
// combination, uniform among (m / 2) * (2^f - 1), is stored. The builder
// stores almost every combination at most once (see bulk_builder.h), so
// this is exact up to the rare repeats, which only lower the rate.
double ExpectedFpr(int fingerprint_bits, int bucket_size, double load);

// Parses an options string ("cuckoofilter:..."; see filter_policy.h).
ROCKSDB_NAMESPACE::Status ParsePolicyString(const std::string& value,
                                            PolicyConfig* out);

// The explicit layout of NewCuckooFilterPolicyWithLayout and of the
// "cuckoofilter:<bits>:<f>:<b>:<semi>" form; InvalidArgument if invalid.
ROCKSDB_NAMESPACE::Status ExplicitConfig(double bits_per_key,
                                         int fingerprint_bits, int bucket_size,
                                         bool semi_sort, PolicyConfig* out);

// The layout of NewCuckooFilterPolicyForFpr and of "cuckoofilter:fpr:<rate>";
// InvalidArgument if the rate is not in (0, 1) or needs more than
// kMaxBitsPerKey.
ROCKSDB_NAMESPACE::Status ConfigForTargetFpr(double rate, PolicyConfig* out);

// The automatic layout for a budget (millibits in [4000, 64000]).
PolicyConfig AutoConfig(int millibits_per_key);

// The blocked layout for a budget: the widest fingerprint (f <= 16) whose
// blocks hold 512 / bits_per_key keys at a load of at most kBlockedMaxLoad.
PolicyConfig BlockedConfig(int millibits_per_key);

// Canonical options string (the policy's Name()).
std::string PolicyName(const PolicyConfig& config);

// Fills the public description of a configuration.
void DescribeConfig(const PolicyConfig& config, CuckooFilterLayout* layout);

// Number of buckets for n distinct keys: the largest even count whose table
// fits n * bits_per_key bits, raised if needed so that the load stays at or
// below HardMaxLoad(); at least 2. Returns 0 if more than cuckoo::kMaxBuckets
// would be needed.
uint64_t BucketsForKeys(const PolicyConfig& config, uint64_t num_keys);

// Bytes of the packed bucket array of `num_buckets` buckets.
uint64_t TableBytes(const PolicyConfig& config, uint64_t num_buckets);

// Bytes of a filter block for n distinct keys (bucket array + trailer),
// when built at the target size. 0 if n is too large.
uint64_t FilterBytesForKeys(const PolicyConfig& config, uint64_t num_keys);

// Largest n with 0 < FilterBytesForKeys(n) <= bytes (0 if none).
uint64_t KeysForFilterBytes(const PolicyConfig& config, uint64_t bytes);

// Tests only: relocation steps a builder's walks may take (-1 restores the
// default). With 0, every item that needs a walk fails, which exercises the
// retry-with-another-seed and grow-the-table paths.
void SetBuilderMaxKicksForTesting(int max_kicks);

}  // namespace internal
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_SST_POLICY_CONFIG_H_
