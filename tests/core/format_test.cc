// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The serialized format: golden "schema" bytes of small filters (so the
// format cannot drift), an independent decoder written from the layout
// diagram in plugin/core/filter/filter_format.h, and corrupt-filter tests on
// trailers whose checksum is valid but whose fields are not.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "test_util.h"

namespace cuckoo {
namespace {

// ------------------------------------------- the format, re-stated from spec

constexpr size_t kTrailer = 32;
constexpr uint32_t kChecksumSeed = 0x43554b31;  // "CUK1"

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t k = 0; k + 1 < hex.size(); k += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(k, 2), nullptr, 16)));
  }
  return out;
}

std::string ToHex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

uint64_t Le(const std::string& s, size_t offset, int bytes) {
  uint64_t v = 0;
  for (int k = bytes - 1; k >= 0; --k) {
    v = (v << 8) | static_cast<unsigned char>(s[offset + k]);
  }
  return v;
}

void PutLe(std::string* s, size_t offset, uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) {
    (*s)[offset + k] = static_cast<char>(v >> (8 * k));
  }
}

// Trailer fields at the offsets of the layout diagram.
struct SpecTrailer {
  uint32_t num_buckets;
  uint64_t num_items;
  uint32_t seed;
  uint32_t victim_fp;
  uint32_t victim_bucket;
  uint32_t checksum;
  int f;
  int b;
  int flags;
  int version;
};

SpecTrailer ReadTrailer(const std::string& s) {
  const size_t t = s.size() - kTrailer;
  return {static_cast<uint32_t>(Le(s, t + 0, 4)),
          Le(s, t + 4, 8),
          static_cast<uint32_t>(Le(s, t + 12, 4)),
          static_cast<uint32_t>(Le(s, t + 16, 4)),
          static_cast<uint32_t>(Le(s, t + 20, 4)),
          static_cast<uint32_t>(Le(s, t + 24, 4)),
          static_cast<unsigned char>(s[t + 28]),
          static_cast<unsigned char>(s[t + 29]),
          static_cast<unsigned char>(s[t + 30]),
          static_cast<unsigned char>(s[t + 31])};
}

// XXH32 of the trailer with the checksum field zeroed; seed "CUK1" for
// version 1, and for version 2 "CUK1" ^ both halves of the XXH3 (seed
// "CUK1") of the bucket array.
uint32_t SpecChecksum(const std::string& s) {
  std::string trailer = s.substr(s.size() - kTrailer);
  PutLe(&trailer, 24, 0, 4);
  uint32_t seed = kChecksumSeed;
  if (static_cast<unsigned char>(trailer[31]) != 1) {
    const uint64_t x =
        XXH3_64bits_withSeed(s.data(), s.size() - kTrailer, kChecksumSeed);
    seed ^= static_cast<uint32_t>(x) ^ static_cast<uint32_t>(x >> 32);
  }
  return XXH32(trailer.data(), kTrailer, seed);
}

// Recomputes the checksum after a test edited trailer fields.
void Reseal(std::string* s) {
  PutLe(s, s->size() - kTrailer + 24, SpecChecksum(*s), 4);
}

uint32_t Fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bU;
  h ^= h >> 13;
  h *= 0xc2b2ae35U;
  h ^= h >> 16;
  return h;
}

// i1 = FastRange32(low 32 bits, m); fp = 1 + FastRange(high 32 bits, 2^f - 1);
// alt(i, fp) = (m - i - r(fp)) mod m, r(fp) = FastRange32(fmix32(fp ^ seed), m)
// | 1.
uint32_t SpecPrimary(uint64_t h, uint32_t m) {
  return static_cast<uint32_t>((uint64_t{static_cast<uint32_t>(h)} * m) >> 32);
}
uint32_t SpecFingerprint(uint64_t h, int f) {
  const uint64_t range = (uint64_t{1} << f) - 1;
  return static_cast<uint32_t>(((h >> 32) * range) >> 32) + 1;
}
uint32_t SpecAlt(uint32_t i, uint32_t fp, uint32_t m, uint32_t seed) {
  const uint64_t r = ((uint64_t{Fmix32(fp ^ seed)} * m) >> 32) | 1;
  return static_cast<uint32_t>((2 * uint64_t{m} - i - r) % m);
}

// Bit k of the bucket array is bit k % 8 of byte k / 8.
uint32_t Bits(const std::string& s, uint64_t pos, int width) {
  uint32_t v = 0;
  for (int k = 0; k < width; ++k) {
    const uint64_t bit = pos + k;
    v |= uint32_t((static_cast<unsigned char>(s[bit / 8]) >> (bit % 8)) & 1)
         << k;
  }
  return v;
}

// rank -> sorted nibbles, from rank = C(a,1) + C(b+1,2) + C(c+2,3) + C(d+3,4).
std::map<uint32_t, std::vector<uint32_t>> SpecRanks() {
  auto choose = [](uint32_t n, uint32_t k) {
    uint64_t r = 1;
    for (uint32_t j = 0; j < k; ++j) r = r * (n - j) / (j + 1);
    return n < k ? 0 : static_cast<uint32_t>(r);
  };
  std::map<uint32_t, std::vector<uint32_t>> ranks;
  for (uint32_t a = 0; a < 16; ++a)
    for (uint32_t b = a; b < 16; ++b)
      for (uint32_t c = b; c < 16; ++c)
        for (uint32_t d = c; d < 16; ++d)
          ranks[choose(a, 1) + choose(b + 1, 2) + choose(c + 2, 3) +
                choose(d + 3, 4)] = {a, b, c, d};
  return ranks;
}

// The entries of every bucket, decoded from the layout alone.
std::vector<std::vector<uint32_t>> SpecBuckets(const std::string& s) {
  const SpecTrailer t = ReadTrailer(s);
  const bool semi = (t.flags & 1) != 0;
  const int bucket_bits = semi ? 12 + 4 * (t.f - 4) : t.b * t.f;
  static const auto ranks = SpecRanks();
  std::vector<std::vector<uint32_t>> buckets(t.num_buckets);
  for (uint32_t i = 0; i < t.num_buckets; ++i) {
    const uint64_t base = uint64_t{i} * bucket_bits;
    for (int j = 0; j < t.b; ++j) {
      if (!semi) {
        buckets[i].push_back(Bits(s, base + uint64_t(j) * t.f, t.f));
      } else {
        const int low_bits = t.f - 4;
        const uint32_t rank = Bits(s, base, 12);
        EXPECT_LT(rank, 3876u);
        const uint32_t nibble = ranks.at(rank)[j];
        const uint32_t low =
            Bits(s, base + 12 + uint64_t(j) * low_bits, low_bits);
        buckets[i].push_back((nibble << low_bits) | low);
      }
    }
  }
  return buckets;
}

// --------------------------------------------------------------- golden bytes

struct Golden {
  const char* name;
  int f, b;
  bool semi_sort;
  uint32_t seed;
  uint64_t buckets;
  int keys;  // inserts HashKey("key0") ... HashKey("key<keys-1>")
  uint64_t expect_items;
  bool expect_victim;
  const char* hex;
};

// Built with max_kicks = 0, so no entry is ever relocated: the bytes pin the
// format (layout, hashing, slot order, semi-sort encoding, trailer), not the
// eviction walk, which may change without a format change. A key that finds
// both buckets full goes straight to the victim slot.
const Golden kGolden[] = {
    {"f12_b4", 12, 4, false, 0, 6, 10, 10, false,
     "4e67721cd7c36c5022c70900ef0e0000000000000000000000000000000085d3"
     "26000000060000000a000000000000000000000000000000000000001f2c28e4"
     "0c040001"},
    {"f13_b4_semi_sorted", 13, 4, true, 0x5eed, 6, 10, 10, false,
     "cc9563c9a63df301e09a92c74c09000000ef05000000006d0000000000000f00"
     "00000085060000000a00000000000000ed5e0000000000000000000052d00132"
     "0d040101"},
    // 14-bit buckets straddle bytes; key9 finds both buckets full.
    {"f7_b2_with_victim", 7, 2, false, 1, 10, 10, 10, true,
     "ba9c98020010ee000000000000001c490e000a0000000a000000000000000100"
     "00004e00000001000000c3ce334407020001"},
    {"f4_b1_with_victim", 4, 1, false, 0, 2, 3, 3, true,
     "47020000000300000000000000000000000700000001000000f50b0775040100"
     "01"},
    // 256-bit buckets: two 128-bit words each.
    {"f32_b8", 32, 8, false, 7, 2, 5, 5, false,
     "ed35d9743d5d5a7220f7c371c76dd6c300000000000000000000000000000000"
     "0c074d3800000000000000000000000000000000000000000000000000000000"
     "02000000050000000000000007000000000000000000000033e5c6f020080001"},
};

class GoldenTest : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenTest, SerializedBytesArePinned) {
  const Golden& g = GetParam();
  FilterConfig config = test::MakeConfig(g.f, g.b, g.semi_sort, g.seed);
  config.max_kicks = 0;
  auto filter = CuckooFilter::CreateWithBuckets(config, g.buckets);
  ASSERT_NE(filter, nullptr);
  std::vector<uint64_t> hashes;
  for (int k = 0; k < g.keys; ++k) {
    hashes.push_back(HashKey("key" + std::to_string(k)).value);
    const InsertResult r = filter->Insert(KeyHash(hashes.back()));
    ASSERT_EQ(r, k + 1 == g.keys && g.expect_victim
                     ? InsertResult::kInsertedFull
                     : InsertResult::kInserted)
        << "key" << k;
  }
  const std::string bytes = filter->Serialize();
  // The golden bytes are format version 1 (trailer-only checksum). Version 2
  // has the same bucket array and trailer fields, and a checksum over the
  // whole block.
  const std::string golden = FromHex(g.hex);
  std::string as_v1 = bytes;
  as_v1.back() = 1;
  Reseal(&as_v1);
  EXPECT_EQ(ToHex(as_v1), g.hex)
      << "the serialized format changed: bump kFormatVersion (and the "
         "adapters' CompatibilityName) instead of silently re-encoding";
  EXPECT_EQ(static_cast<unsigned char>(bytes.back()), 2);
  EXPECT_EQ(ReadTrailer(bytes).checksum, SpecChecksum(bytes));

  // The golden bytes mean what the layout diagram says.
  const SpecTrailer t = ReadTrailer(golden);
  EXPECT_EQ(t.version, 1);
  EXPECT_EQ(t.f, g.f);
  EXPECT_EQ(t.b, g.b);
  EXPECT_EQ(t.flags, g.semi_sort ? 1 : 0);
  EXPECT_EQ(t.num_buckets, g.buckets);
  EXPECT_EQ(t.num_items, g.expect_items);
  EXPECT_EQ(t.seed, g.seed);
  EXPECT_EQ(t.checksum, SpecChecksum(golden));
  EXPECT_EQ(t.victim_fp != 0, g.expect_victim);
  if (t.victim_fp == 0) {
    EXPECT_EQ(t.victim_bucket, 0u);
  }
  const int bucket_bits = g.semi_sort ? 12 + 4 * (g.f - 4) : g.b * g.f;
  const uint64_t table_bits = g.buckets * bucket_bits;
  ASSERT_EQ(golden.size(), (table_bits + 7) / 8 + kTrailer);
  if (table_bits % 8 != 0) {
    EXPECT_EQ(Bits(golden, table_bits, 8 - table_bits % 8), 0u)
        << "padding bits after the last bucket must be zero";
  }

  // Each stored fingerprint belongs to an inserted key's bucket pair:
  // the multisets of (fp, bucket pair) agree exactly.
  const uint32_t m = t.num_buckets;
  std::multiset<std::pair<uint32_t, uint32_t>> expected, found;
  for (uint64_t h : hashes) {
    const uint32_t fp = SpecFingerprint(h, g.f);
    const uint32_t i1 = SpecPrimary(h, m);
    const uint32_t i2 = SpecAlt(i1, fp, m, g.seed);
    ASSERT_NE(i1, i2);
    ASSERT_EQ(SpecAlt(i2, fp, m, g.seed), i1);
    expected.insert({fp, std::min(i1, i2)});
  }
  const auto buckets = SpecBuckets(golden);
  for (uint32_t i = 0; i < m; ++i) {
    if (g.semi_sort) {
      EXPECT_TRUE(std::is_sorted(buckets[i].begin(), buckets[i].end()))
          << "semi-sorted bucket " << i << " not in ascending order";
    }
    for (uint32_t fp : buckets[i]) {
      if (fp != 0) found.insert({fp, std::min(i, SpecAlt(i, fp, m, g.seed))});
    }
  }
  if (t.victim_fp != 0) {
    found.insert({t.victim_fp,
                  std::min(t.victim_bucket,
                           SpecAlt(t.victim_bucket, t.victim_fp, m, g.seed))});
  }
  EXPECT_EQ(found, expected);

  CuckooFilterView view;
  std::string error;
  ASSERT_TRUE(
      CuckooFilterView::Parse(golden.data(), golden.size(), &view, &error))
      << error;
  for (uint64_t h : hashes) EXPECT_TRUE(view.Contains(KeyHash(h)));
}

INSTANTIATE_TEST_SUITE_P(Format, GoldenTest, ::testing::ValuesIn(kGolden),
                         [](const ::testing::TestParamInfo<Golden>& info) {
                           return std::string(info.param.name);
                         });

// The format does not depend on how the bytes were produced: the spec
// decoder agrees with a large filter of every configuration, bucket by bucket.
TEST(FormatSpec, IndependentDecoderAgreesForEveryConfiguration) {
  for (const FilterConfig& base : test::AllConfigs()) {
    FilterConfig config = base;
    config.seed = 99;
    const uint32_t m = 202;
    auto filter = CuckooFilter::CreateWithBuckets(config, m);
    ASSERT_NE(filter, nullptr);
    const test::KeyStream keys(400);
    std::multiset<std::pair<uint32_t, uint32_t>> expected, found;
    for (uint64_t i = 0; i < m * config.bucket_size * 8 / 10; ++i) {
      const uint64_t h = keys.Key(i).value;
      const InsertResult r = filter->Insert(KeyHash(h));
      if (r == InsertResult::kFull) break;
      const uint32_t fp = SpecFingerprint(h, config.fingerprint_bits);
      const uint32_t i1 = SpecPrimary(h, m);
      expected.insert({fp, std::min(i1, SpecAlt(i1, fp, m, config.seed))});
      if (r == InsertResult::kInsertedFull) break;
    }
    const std::string bytes = filter->Serialize();
    const SpecTrailer t = ReadTrailer(bytes);
    const auto buckets = SpecBuckets(bytes);
    for (uint32_t i = 0; i < m; ++i) {
      for (uint32_t fp : buckets[i]) {
        if (fp != 0)
          found.insert({fp, std::min(i, SpecAlt(i, fp, m, config.seed))});
      }
    }
    if (t.victim_fp != 0) {
      found.insert({t.victim_fp, std::min(t.victim_bucket,
                                          SpecAlt(t.victim_bucket, t.victim_fp,
                                                  m, config.seed))});
    }
    EXPECT_EQ(found, expected) << test::ConfigName(config);
    EXPECT_EQ(t.num_items, expected.size()) << test::ConfigName(config);
  }
}

// ------------------------------------------------------------ corrupt fields

std::string SmallFilterBytes(int f, int b, bool semi, uint64_t buckets) {
  auto filter =
      CuckooFilter::CreateWithBuckets(test::MakeConfig(f, b, semi), buckets);
  const test::KeyStream keys(500);
  for (uint64_t i = 0; i < buckets * b / 2; ++i) filter->Insert(keys.Key(i));
  return filter->Serialize();
}

bool Accepts(const std::string& bytes, std::string* error) {
  // Exact-size heap copy so ASan catches any read past the end.
  std::unique_ptr<char[]> buf(new char[bytes.size() + 1]);
  std::memcpy(buf.get(), bytes.data(), bytes.size());
  CuckooFilterView view;
  error->clear();
  const bool ok =
      CuckooFilterView::Parse(buf.get(), bytes.size(), &view, error);
  EXPECT_EQ(ok, view.valid());
  if (!ok) {
    EXPECT_FALSE(error->empty());
    EXPECT_EQ(CuckooFilter::Deserialize(buf.get(), bytes.size(), error),
              nullptr);
  } else {
    uint64_t sink = 0;
    for (uint64_t k = 0; k < 64; ++k) {
      sink += view.Contains(KeyHash(test::Mix64(k)));
    }
    (void)sink;
  }
  return ok;
}

// Each field made invalid with a correct checksum: rejected with a message.
TEST(CorruptFilter, InvalidFieldsWithValidChecksumRejected) {
  const std::string good = SmallFilterBytes(12, 4, false, 10);
  const size_t t = good.size() - kTrailer;
  std::string error;
  ASSERT_TRUE(Accepts(good, &error)) << error;

  struct Edit {
    const char* what;
    size_t offset;
    int bytes;
    uint64_t value;
    const char* message;  // expected in the error
  };
  const Edit edits[] = {
      {"version 0", 31, 1, 0, "version"},
      {"version 3", 31, 1, 3, "version"},
      {"version 4", 31, 1, 4, "version"},
      {"version 255", 31, 1, 255, "version"},
      {"unknown flag", 30, 1, 2, "flags"},
      {"high flag", 30, 1, 0x81, "flags"},
      {"f = 3", 28, 1, 3, "configuration"},
      {"f = 33", 28, 1, 33, "configuration"},
      {"f = 255", 28, 1, 255, "configuration"},
      {"b = 3", 29, 1, 3, "configuration"},
      {"b = 0", 29, 1, 0, "configuration"},
      {"b = 16", 29, 1, 16, "configuration"},
      {"0 buckets", 0, 4, 0, "bucket count"},
      {"1 bucket", 0, 4, 1, "bucket count"},
      {"odd buckets", 0, 4, 9, "bucket count"},
      {"more buckets than bytes", 0, 4, 12, "table"},
      {"fewer buckets than bytes", 0, 4, 8, "table"},
      {"max buckets", 0, 4, 0xfffffffe, "table"},
      {"items > capacity + 1", 4, 8, 42, "item count"},
      {"items huge", 4, 8, ~uint64_t{0}, "item count"},
      {"victim fp > 2^f - 1", 16, 4, 4096, "victim"},
      {"victim bucket out of range", 20, 4, 10, "victim"},
      {"victim bucket without fp", 20, 4, 3, "victim"},
  };
  for (const Edit& e : edits) {
    std::string bad = good;
    PutLe(&bad, t + e.offset, e.value, e.bytes);
    Reseal(&bad);
    EXPECT_FALSE(Accepts(bad, &error)) << e.what;
    EXPECT_NE(error.find(e.message), std::string::npos)
        << e.what << ": error was \"" << error << "\"";
  }
  // A semi-sorted flag on a configuration that cannot be semi-sorted.
  for (auto [f, b] : {std::pair<int, int>{12, 2}, {32, 4}, {12, 8}}) {
    std::string bad = SmallFilterBytes(f, b, false, 10);
    bad[bad.size() - kTrailer + 30] = 1;
    Reseal(&bad);
    EXPECT_FALSE(Accepts(bad, &error))
        << "semi-sort flag with f=" << f << " b=" << b;
  }
  // Boundary values that are valid.
  {
    std::string ok = good;
    PutLe(&ok, t + 4, 41, 8);  // capacity + 1 (a full table plus the victim)
    Reseal(&ok);
    EXPECT_TRUE(Accepts(ok, &error)) << error;
    PutLe(&ok, t + 16, 4095, 4);  // largest 12-bit fingerprint
    PutLe(&ok, t + 20, 9, 4);     // last bucket
    Reseal(&ok);
    EXPECT_TRUE(Accepts(ok, &error)) << error;
  }
}

// Trailers with random field values (valid checksum) over random table
// lengths: never a crash, and accepted only when every field is valid.
TEST(CorruptFilter, RandomTrailersNeverCrash) {
  std::mt19937_64 rng(600);
  const uint64_t rounds = test::Size(200000, 20000);
  uint64_t accepted = 0;
  for (uint64_t round = 0; round < rounds; ++round) {
    const int f = rng() % 4 == 0 ? int(rng() % 40)
                                 : (rng() % 2 ? 32 : 4 + int(rng() % 13));
    const int b = rng() % 4 == 0 ? int(rng() % 10) : 1 << (rng() % 4);
    const int flags = rng() % 4 == 0 ? int(rng() % 256) : int(rng() % 2);
    const uint32_t m = rng() % 4 == 0 ? uint32_t(rng()) : uint32_t(rng() % 64);
    const bool semi = flags == 1;
    const int bucket_bits = semi ? 12 + 4 * (f - 4) : b * f;
    uint64_t table = bucket_bits > 0 && m < 64
                         ? (uint64_t{m} * bucket_bits + 7) / 8
                         : rng() % 600;
    if (rng() % 3 == 0) table += int(rng() % 5) - 2;
    if (table > 4096) table = rng() % 4096;
    std::string bytes(table + kTrailer, '\0');
    for (size_t k = 0; k < table; ++k) bytes[k] = static_cast<char>(rng());
    const size_t t = table;
    PutLe(&bytes, t + 0, m, 4);
    PutLe(&bytes, t + 4, rng() % 4 == 0 ? rng() : rng() % (uint64_t{m} * 8 + 3),
          8);
    PutLe(&bytes, t + 12, rng(), 4);
    const uint32_t victim = rng() % 2 ? 0 : uint32_t(rng() >> (rng() % 33));
    PutLe(&bytes, t + 16, victim, 4);
    PutLe(&bytes, t + 20, rng() % 2 ? 0 : uint32_t(rng() % (m + 2)), 4);
    bytes[t + 28] = static_cast<char>(f);
    bytes[t + 29] = static_cast<char>(b);
    bytes[t + 30] = static_cast<char>(flags);
    bytes[t + 31] =
        static_cast<char>(rng() % 8 == 0 ? rng() % 256 : 1 + rng() % 2);
    Reseal(&bytes);

    std::string error;
    const bool ok = Accepts(bytes, &error);
    const SpecTrailer s = ReadTrailer(bytes);
    const bool fp_ok = s.f >= 4 && s.f <= 32;
    const bool b_ok = s.b == 1 || s.b == 2 || s.b == 4 || s.b == 8;
    const bool semi_ok =
        s.flags == 0 || (s.flags == 1 && s.b == 4 && s.f <= 16);
    bool valid = (s.version == 1 || s.version == 2) && fp_ok && b_ok &&
                 semi_ok && s.num_buckets >= 2 && s.num_buckets % 2 == 0;
    if (valid) {
      const int bits = s.flags ? 12 + 4 * (s.f - 4) : s.b * s.f;
      const uint64_t fp_max =
          s.f == 32 ? 0xffffffffULL : (uint64_t{1} << s.f) - 1;
      valid = s.num_items <= uint64_t{s.num_buckets} * s.b + 1 &&
              s.victim_fp <= fp_max && s.victim_bucket < s.num_buckets &&
              (s.victim_fp != 0 || s.victim_bucket == 0) &&
              table == (uint64_t{s.num_buckets} * bits + 7) / 8;
    }
    ASSERT_EQ(ok, valid) << "round " << round << ": " << error;
    accepted += ok;
  }
  std::printf(
      "[ fuzz     ] %llu of %llu random trailers were valid and accepted\n",
      static_cast<unsigned long long>(accepted),
      static_cast<unsigned long long>(rounds));
  EXPECT_GT(accepted, 0u);
}

// Unsealed random bytes of every length: rejected, never a crash.
TEST(CorruptFilter, RandomGarbageRejected) {
  std::mt19937_64 rng(700);
  std::string error;
  for (int round = 0; round < 20000; ++round) {
    std::string bytes(rng() % 300, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    if (!bytes.empty() && rng() % 2) bytes.back() = 1;  // a plausible version
    EXPECT_FALSE(Accepts(bytes, &error)) << "round " << round;
  }
}

}  // namespace
}  // namespace cuckoo
