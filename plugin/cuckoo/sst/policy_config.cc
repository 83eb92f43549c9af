// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "policy_config.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "blocked/blocked_layout.h"
#include "cuckoo/cuckoo_filter.h"
#include "filter/filter_format.h"

namespace rocksdb_cuckoo {
namespace internal {
namespace {

using ROCKSDB_NAMESPACE::Status;

constexpr int kMinMillibits = static_cast<int>(kMinBitsPerKey * 1000);
constexpr int kMaxMillibits = static_cast<int>(kMaxBitsPerKey * 1000);

Status Invalid(const std::string& message) {
  return Status::InvalidArgument(std::string(kPolicyClassName) + ": " +
                                 message);
}

// A plain decimal: digits, optionally '.' and more digits. No sign, no
// exponent, no spaces, at most 20 characters.
bool ParseDecimal(const std::string& s, double* out) {
  if (s.empty() || s.size() > 20) return false;
  bool dot = false;
  bool digits_before = false;
  bool digits_after = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      (dot ? digits_after : digits_before) = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  if (!digits_before || (dot && !digits_after)) return false;
  *out = std::strtod(s.c_str(), nullptr);
  return std::isfinite(*out);
}

bool ParseSmallInt(const std::string& s, int* out) {
  if (s.empty() || s.size() > 4) return false;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t pos = s.find(sep, start);
    parts.push_back(
        s.substr(start, pos == std::string::npos ? pos : pos - start));
    if (pos == std::string::npos) return parts;
    start = pos + 1;
  }
}

std::string FormatMillibits(int millibits) {
  std::string out = std::to_string(millibits / 1000);
  int frac = millibits % 1000;
  if (frac != 0) {
    char digits[4] = {char('0' + frac / 100), char('0' + frac / 10 % 10),
                      char('0' + frac % 10), 0};
    std::string f(digits);
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += '.';
    out += f;
  }
  return out;
}

Status BitsToMillibits(double bits, int* millibits) {
  if (!(bits >= kMinBitsPerKey && bits <= kMaxBitsPerKey)) {
    return Invalid(
        "bits per key must be in [" + FormatMillibits(kMinMillibits) + ", " +
        FormatMillibits(kMaxMillibits) + "], got " + std::to_string(bits));
  }
  *millibits = static_cast<int>(std::lround(bits * 1000));
  return Status::OK();
}

// Bits per entry of a layout (semi-sorting saves one bit per entry).
// Semi-sorted buckets always hold 4 entries in 4f - 4 bits.
int BitsPerEntry(int f, bool semi) { return semi ? f - 1 : f; }

// Candidate layouts of the automatic mode, all with buckets of 4.
struct Candidate {
  int fingerprint_bits;
  bool semi_sort;
};
std::vector<Candidate> AutoCandidates() {
  std::vector<Candidate> c;
  for (int f = 4; f <= 16; ++f) c.push_back({f, true});
  // Semi-sorting stops at f = 16 (its lanes are read as one 64-bit word);
  // above, plain packed buckets keep every bit/key buying FPR.
  for (int f = 17; f <= 32; ++f) c.push_back({f, false});
  return c;
}

}  // namespace

Status ExplicitConfig(double bits_per_key, int fingerprint_bits,
                      int bucket_size, bool semi_sort, PolicyConfig* out) {
  PolicyConfig config;
  Status s = BitsToMillibits(bits_per_key, &config.millibits_per_key);
  if (!s.ok()) return s;
  cuckoo::FilterConfig fc;
  fc.fingerprint_bits = fingerprint_bits;
  fc.bucket_size = bucket_size;
  fc.semi_sort = semi_sort;
  const std::string error = cuckoo::ValidateConfig(fc);
  if (!error.empty()) return Invalid(error);
  const int per_entry = BitsPerEntry(fingerprint_bits, semi_sort);
  const double max_load = cuckoo::DefaultTargetLoad(bucket_size);
  if (per_entry * 1000.0 > max_load * config.millibits_per_key + 1e-6) {
    return Invalid("layout f=" + std::to_string(fingerprint_bits) +
                   " b=" + std::to_string(bucket_size) + " semi_sort=" +
                   std::to_string(semi_sort ? 1 : 0) + " needs at least " +
                   FormatMillibits(static_cast<int>(
                       std::ceil(per_entry * 1000 / max_load - 1e-9))) +
                   " bits per key (load <= " + std::to_string(max_load) +
                   "), got " + FormatMillibits(config.millibits_per_key));
  }
  config.fingerprint_bits = fingerprint_bits;
  config.bucket_size = bucket_size;
  config.semi_sort = semi_sort;
  config.explicit_layout = true;
  *out = config;
  return Status::OK();
}

Status ConfigForTargetFpr(double rate, PolicyConfig* out) {
  if (!(rate > 0.0 && rate < 1.0)) {
    return Invalid("target false positive rate must be in (0, 1), got " +
                   std::to_string(rate));
  }
  double best_bits = 0;
  for (const Candidate& c : AutoCandidates()) {
    // Load at which the expected rate equals `rate`, capped at the maximum.
    double load = rate * (std::ldexp(1.0, c.fingerprint_bits) - 1) / 8.0;
    if (load > kAutoMaxLoad) load = kAutoMaxLoad;
    const double bits = BitsPerEntry(c.fingerprint_bits, c.semi_sort) / load;
    if (best_bits == 0 || bits < best_bits) best_bits = bits;
  }
  if (best_bits > kMaxBitsPerKey) {
    return Invalid("target false positive rate " + std::to_string(rate) +
                   " needs more than " + FormatMillibits(kMaxMillibits) +
                   " bits per key");
  }
  int millibits = static_cast<int>(std::ceil(best_bits * 1000 - 1e-6));
  if (millibits < kMinMillibits) millibits = kMinMillibits;
  *out = AutoConfig(millibits);
  return Status::OK();
}

namespace {

// Slots of one 64-byte block of the blocked layout with f-bit fingerprints.
int BlockedSlots(int f) {
  return 4 * cuckoo::internal::BlockedBucketsPerBlock(f);
}

}  // namespace

int PolicyConfig::BucketBits() const {
  if (blocked) return 8 * static_cast<int>(cuckoo::internal::kBlockBytes);
  return semi_sort ? 4 * fingerprint_bits - 4 : bucket_size * fingerprint_bits;
}

double PolicyConfig::TargetLoad() const {
  const int slots = blocked ? BlockedSlots(fingerprint_bits) : bucket_size;
  return BucketBits() * 1000.0 / (double(slots) * millibits_per_key);
}

double PolicyConfig::MaxLoad() const {
  if (blocked) return kBlockedMaxLoad;
  return explicit_layout ? cuckoo::DefaultTargetLoad(bucket_size)
                         : kAutoMaxLoad;
}

double PolicyConfig::HardMaxLoad() const {
  return std::min(0.99, MaxLoad() + kLoadSlack);
}

double ExpectedFpr(int fingerprint_bits, int bucket_size, double load) {
  const double distinct = std::ldexp(1.0, fingerprint_bits) - 1;
  return std::min(1.0, 2.0 * bucket_size * load / distinct);
}

PolicyConfig AutoConfig(int millibits_per_key) {
  PolicyConfig best;
  double best_fpr = 2.0;
  for (const Candidate& c : AutoCandidates()) {
    const int per_entry = BitsPerEntry(c.fingerprint_bits, c.semi_sort);
    // per_entry / load_max <= bits per key, in exact integer arithmetic.
    if (per_entry * 1000 * 100 > 95 * int64_t{millibits_per_key}) continue;
    const double load = per_entry * 1000.0 / millibits_per_key;
    const double fpr = ExpectedFpr(c.fingerprint_bits, 4, load);
    if (fpr < best_fpr) {
      best_fpr = fpr;
      best.fingerprint_bits = c.fingerprint_bits;
      best.semi_sort = c.semi_sort;
    }
  }
  best.millibits_per_key = millibits_per_key;
  best.bucket_size = 4;
  best.explicit_layout = false;
  return best;
}

PolicyConfig BlockedConfig(int millibits_per_key) {
  PolicyConfig c;
  c.millibits_per_key = millibits_per_key;
  c.bucket_size = 4;
  c.semi_sort = true;
  c.blocked = true;
  // 512 bits per block: keys per block = 512000 / millibits.
  const double keys_per_block = 512000.0 / millibits_per_key;
  c.fingerprint_bits = cuckoo::internal::kBlockedMinFpBits;
  for (int f = cuckoo::internal::kBlockedMaxFpBits;
       f >= cuckoo::internal::kBlockedMinFpBits; --f) {
    if (keys_per_block <= kBlockedMaxLoad * BlockedSlots(f) + 1e-9) {
      c.fingerprint_bits = f;
      break;
    }
  }
  return c;
}

Status ParsePolicyString(const std::string& value, PolicyConfig* out) {
  const std::string prefix = std::string(kPolicyClassName) + ":";
  if (value == kPolicyClassName) {
    return Invalid("missing bits per key, e.g. " + prefix + "10");
  }
  if (value.compare(0, prefix.size(), prefix) != 0) {
    return Invalid("options string must start with '" + prefix + "', got '" +
                   value + "'");
  }
  const std::vector<std::string> parts =
      Split(value.substr(prefix.size()), ':');
  if (parts.size() == 2 && parts[0] == "fpr") {
    double rate = 0;
    if (!ParseDecimal(parts[1], &rate)) {
      return Invalid("false positive rate '" + parts[1] +
                     "' is not a decimal number");
    }
    return ConfigForTargetFpr(rate, out);
  }
  if (parts.size() != 1 && parts.size() != 4 &&
      !(parts.size() == 2 && parts[1] == kBlockedSuffix)) {
    return Invalid("expected " + prefix + "<bits_per_key>, " + prefix +
                   "<bits_per_key>:" + kBlockedSuffix + ", " + prefix +
                   "<bits_per_key>:<f>:<b>:<semi 0|1> or " + prefix +
                   "fpr:<rate>, got '" + value + "'");
  }
  double bits = 0;
  if (!ParseDecimal(parts[0], &bits)) {
    return Invalid("bits per key '" + parts[0] + "' is not a decimal number");
  }
  if (parts.size() == 1) {
    int millibits = 0;
    Status s = BitsToMillibits(bits, &millibits);
    if (!s.ok()) return s;
    *out = AutoConfig(millibits);
    return Status::OK();
  }
  if (parts.size() == 2) {
    int millibits = 0;
    Status s = BitsToMillibits(bits, &millibits);
    if (!s.ok()) return s;
    *out = BlockedConfig(millibits);
    return Status::OK();
  }
  int f = 0, b = 0, semi = 0;
  if (!ParseSmallInt(parts[1], &f)) {
    return Invalid("fingerprint bits '" + parts[1] + "' is not an integer");
  }
  if (!ParseSmallInt(parts[2], &b)) {
    return Invalid("bucket size '" + parts[2] + "' is not an integer");
  }
  if (!ParseSmallInt(parts[3], &semi) || semi > 1) {
    return Invalid("semi-sort flag '" + parts[3] + "' is not 0 or 1");
  }
  return ExplicitConfig(bits, f, b, semi == 1, out);
}

std::string PolicyName(const PolicyConfig& config) {
  // Appended piece by piece: GCC 12 reports a false -Werror=restrict for
  // `":" + std::to_string(...)` (const char* + string&&) at -O3.
  std::string name = kPolicyClassName;
  name += ':';
  name += FormatMillibits(config.millibits_per_key);
  if (config.blocked) {
    name += ':';
    name += kBlockedSuffix;
  } else if (config.explicit_layout) {
    name += ':';
    name += std::to_string(config.fingerprint_bits);
    name += ':';
    name += std::to_string(config.bucket_size);
    name += ':';
    name += config.semi_sort ? '1' : '0';
  }
  return name;
}

void DescribeConfig(const PolicyConfig& config, CuckooFilterLayout* layout) {
  layout->fingerprint_bits = config.fingerprint_bits;
  layout->bucket_size = config.bucket_size;
  layout->semi_sort = config.semi_sort;
  layout->blocked = config.blocked;
  layout->bits_per_key = config.BitsPerKey();
  layout->load_factor = config.TargetLoad();
  // Blocked: also compared in the secondary block when the item's overflow
  // bit is set (about 13% of lookups at 10 bits/key), not counted here.
  layout->expected_fpr = ExpectedFpr(config.fingerprint_bits,
                                     config.bucket_size, config.TargetLoad());
  layout->name = PolicyName(config);
}

uint64_t BucketsForKeys(const PolicyConfig& config, uint64_t num_keys) {
  if (config.blocked) {
    // floor(n * bits_per_key / 512) blocks, raised to keep the load at or
    // below HardMaxLoad(); at least 1.
    const unsigned __int128 budget_bits =
        static_cast<unsigned __int128>(num_keys) * config.millibits_per_key;
    uint64_t blocks = static_cast<uint64_t>(
        budget_bits / (1000 * static_cast<uint64_t>(config.BucketBits())));
    const double min_blocks =
        std::ceil(double(num_keys) / (BlockedSlots(config.fingerprint_bits) *
                                      config.HardMaxLoad()));
    if (!(min_blocks <= double(cuckoo::kMaxBuckets))) return 0;
    blocks = std::max<uint64_t>(blocks, static_cast<uint64_t>(min_blocks));
    blocks = std::max<uint64_t>(blocks, 1);
    return blocks > cuckoo::kMaxBuckets ? 0 : blocks;
  }
  const uint64_t bucket_bits = static_cast<uint64_t>(config.BucketBits());
  // floor(n * bits_per_key / bucket_bits), exact for n < 2^40.
  const unsigned __int128 budget_bits =
      static_cast<unsigned __int128>(num_keys) * config.millibits_per_key;
  uint64_t buckets = static_cast<uint64_t>(budget_bits / (1000 * bucket_bits));
  buckets &= ~uint64_t{1};
  // Never above the maximum load (only tiny n round that far down).
  const double min_buckets =
      std::ceil(double(num_keys) / (config.bucket_size * config.HardMaxLoad()));
  if (double(buckets) < min_buckets) {
    if (!(min_buckets <= double(cuckoo::kMaxBuckets))) return 0;
    buckets = static_cast<uint64_t>(min_buckets);
    buckets += buckets & 1;
  }
  if (buckets < 2) buckets = 2;
  if (buckets > cuckoo::kMaxBuckets) return 0;
  return buckets;
}

uint64_t TableBytes(const PolicyConfig& config, uint64_t num_buckets) {
  return (num_buckets * static_cast<uint64_t>(config.BucketBits()) + 7) / 8;
}

uint64_t FilterBytesForKeys(const PolicyConfig& config, uint64_t num_keys) {
  const uint64_t buckets = BucketsForKeys(config, num_keys);
  if (buckets == 0) return 0;
  return TableBytes(config, buckets) + cuckoo::internal::kTrailerSize;
}

uint64_t KeysForFilterBytes(const PolicyConfig& config, uint64_t bytes) {
  if (FilterBytesForKeys(config, 0) > bytes) return 0;
  // FilterBytesForKeys is non-decreasing in n: binary search the largest n
  // that fits, starting from the budget estimate.
  uint64_t lo = 0;  // fits
  uint64_t hi =
      (bytes * 8 * 1000) / static_cast<uint64_t>(config.millibits_per_key) + 2;
  while (FilterBytesForKeys(config, hi) != 0 &&
         FilterBytesForKeys(config, hi) <= bytes) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    const uint64_t need = FilterBytesForKeys(config, mid);
    if (need != 0 && need <= bytes) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace internal
}  // namespace rocksdb_cuckoo
