// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Shared helpers of the core filter tests: the list of supported
// configurations, deterministic key streams, test sizes and statistical
// bounds.
#ifndef CUCKOO_TESTS_CORE_TEST_UTIL_H_
#define CUCKOO_TESTS_CORE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "util/bit_util.h"

namespace cuckoo {

// gtest prints a FilterConfig parameter as "f=12 b=4 semi_sort=0 seed=0".
inline void PrintTo(const FilterConfig& c, std::ostream* os) {
  *os << "f=" << c.fingerprint_bits << " b=" << c.bucket_size
      << " semi_sort=" << c.semi_sort << " seed=" << c.seed
      << " max_kicks=" << c.max_kicks;
}

// gtest prints a KeyHash as its value in hex.
inline void PrintTo(KeyHash h, std::ostream* os) {
  *os << "KeyHash(0x" << std::hex << h.value << std::dec << ")";
}

namespace test {

// By default every build (Release and sanitizers) uses the full sizes
// (2^20 buckets, 1000003 buckets, 10^6 absent items, ...). Configuring
// with -DCUCKOO_TEST_SMALL=ON defines CUCKOO_TEST_SMALL, which shrinks the
// expensive tests for very slow builds (e.g. Debug + sanitizers).
#ifdef CUCKOO_TEST_SMALL
constexpr bool kSmall = true;
#else
constexpr bool kSmall = false;
#endif

// Picks the Release size or the sanitizer size.
constexpr uint64_t Size(uint64_t release, uint64_t sanitizer) {
  return kSmall ? sanitizer : release;
}

// Every configuration the core supports: f in 4..32 with b in
// {1, 2, 4, 8}, plus semi-sorting for b = 4 and f in 4..16.
inline std::vector<FilterConfig> AllConfigs() {
  std::vector<FilterConfig> configs;
  for (int f = 4; f <= 32; ++f) {
    for (int b : {1, 2, 4, 8}) {
      FilterConfig c;
      c.fingerprint_bits = f;
      c.bucket_size = b;
      configs.push_back(c);
    }
    if (f <= 16) {
      FilterConfig c;
      c.fingerprint_bits = f;
      c.bucket_size = 4;
      c.semi_sort = true;
      configs.push_back(c);
    }
  }
  return configs;
}

inline FilterConfig MakeConfig(int f, int b, bool semi_sort = false,
                               uint32_t seed = 0) {
  FilterConfig c;
  c.fingerprint_bits = f;
  c.bucket_size = b;
  c.semi_sort = semi_sort;
  c.seed = seed;
  return c;
}

// "f12_b4" / "f13_b4_ss": a gtest-safe name of a configuration.
inline std::string ConfigName(const FilterConfig& c) {
  return "f" + std::to_string(c.fingerprint_bits) + "_b" +
         std::to_string(c.bucket_size) + (c.semi_sort ? "_ss" : "");
}

using internal::Mix64;  // plugin/core/util/bit_util.h

// A deterministic stream of pseudo-random item hashes. Key(i) is a
// bijection of i, so distinct indexes give distinct keys: the items a test
// inserts use indexes [0, n) and its absent probes use indexes from
// kAbsentBase on, which can never collide with an inserted item.
class KeyStream {
 public:
  static constexpr uint64_t kAbsentBase = uint64_t{1} << 62;

  explicit KeyStream(uint64_t seed) : base_(Mix64(seed ^ 0x5eedULL)) {}

  KeyHash Key(uint64_t i) const {
    return KeyHash(Mix64(base_ + i * 0x9e3779b97f4a7c15ULL));
  }
  KeyHash Absent(uint64_t i) const { return Key(kAbsentBase + i); }

 private:
  uint64_t base_;
};

// Two-sided statistical bound on a count of false positives: `count` out of
// `trials` probes, each positive with probability `p`. Accepts a deviation
// of up to max(rel * mean, sigmas * stddev) + 3 (the +3 keeps tiny expected
// counts, e.g. f = 32, from failing on a single hit).
inline bool WithinBinomialBound(uint64_t count, uint64_t trials, double p,
                                double rel, double sigmas, std::string* why) {
  const double mean = double(trials) * p;
  const double sd = std::sqrt(double(trials) * p * (1 - p));
  const double slack = std::max(rel * mean, sigmas * sd) + 3.0;
  const bool ok = std::fabs(double(count) - mean) <= slack;
  *why = "observed " + std::to_string(count) + " of " + std::to_string(trials) +
         " (rate " + std::to_string(double(count) / double(trials)) +
         "), expected " + std::to_string(mean) + " (rate " + std::to_string(p) +
         "), allowed deviation " + std::to_string(slack);
  return ok;
}

// Compares two serialized filters, reporting the first differing byte
// (relative to the 32-byte trailer when it is there) instead of dumping both.
inline ::testing::AssertionResult SameBytes(const std::string& a,
                                            const std::string& b) {
  if (a == b) return ::testing::AssertionSuccess();
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure()
           << "sizes differ: " << a.size() << " vs " << b.size();
  }
  size_t k = 0;
  while (a[k] == b[k]) ++k;
  auto failure = ::testing::AssertionFailure();
  failure << "first difference at byte " << k << " of " << a.size();
  if (k + 32 >= a.size())
    failure << " (trailer offset " << k + 32 - a.size() << ")";
  failure << ": " << int(static_cast<unsigned char>(a[k])) << " vs "
          << int(static_cast<unsigned char>(b[k]));
  return failure;
}

// 2b * load / 2^f: the paper's FPR estimate (an upper bound for small rates).
inline double PaperFpr(int f, int b, double load) {
  return 2.0 * b * load / std::ldexp(1.0, f);
}

}  // namespace test
}  // namespace cuckoo

// Test-only: KeyHash in unordered containers (the reference sets).
template <>
struct std::hash<cuckoo::KeyHash> {
  size_t operator()(cuckoo::KeyHash h) const {
    return std::hash<uint64_t>()(h.value);
  }
};

#endif  // CUCKOO_TESTS_CORE_TEST_UTIL_H_
