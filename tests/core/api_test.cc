// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The item API of the core filter ("API hard to misuse"):
// keys go through HashKey, hashes are a KeyHash, and a raw integer is not an
// item.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cuckoo/cuckoo_filter.h"
#include "test_util.h"

namespace cuckoo {
namespace {

// Whether a call compiles: each probe's return type is the call, so
// std::is_invocable is false exactly when the call is ill-formed. Never
// called.
constexpr auto kInsert = [](auto& t,
                            auto arg) -> decltype(void(t.Insert(arg))) {};
constexpr auto kContains = [](const auto& t,
                              auto arg) -> decltype(void(t.Contains(arg))) {};
constexpr auto kErase = [](auto& t, auto arg) -> decltype(void(t.Erase(arg))) {
};
constexpr auto kContainsBatch =
    [](const auto& t,
       auto hashes) -> decltype(void(t.ContainsBatch(hashes, 1, nullptr))) {};

template <typename T, typename Arg, typename Probe>
constexpr bool Compiles(Probe) {
  return std::is_invocable_v<Probe, T&, Arg>;
}

// A raw integer (an unhashed ID) is not accepted as an item: it must be
// hashed (HashKey / the key overloads) or wrapped explicitly (KeyHash).
// Runtime checks, so that a regression reads as a failing test.
TEST(ItemApi, RawIntegersAreNotItems) {
  EXPECT_FALSE((Compiles<CuckooFilter, uint64_t>(kInsert)));
  EXPECT_FALSE((Compiles<CuckooFilter, int>(kInsert)));  // includes literal 0
  EXPECT_FALSE((Compiles<CuckooFilter, uint32_t>(kInsert)));
  EXPECT_FALSE((Compiles<CuckooFilter, uint64_t>(kContains)));
  EXPECT_FALSE((Compiles<CuckooFilter, int>(kContains)));
  EXPECT_FALSE((Compiles<CuckooFilter, uint64_t>(kErase)));
  EXPECT_FALSE((Compiles<CuckooFilterView, uint64_t>(kContains)));
  EXPECT_FALSE((Compiles<CuckooFilterView, int>(kContains)));
  EXPECT_FALSE((Compiles<CuckooFilter, const uint64_t*>(kContainsBatch)));
  EXPECT_FALSE((Compiles<CuckooFilterView, const uint64_t*>(kContainsBatch)));
  EXPECT_FALSE((std::is_convertible_v<uint64_t, KeyHash>));
}

TEST(ItemApi, KeysAndHashesAreAccepted) {
  EXPECT_TRUE((Compiles<CuckooFilter, KeyHash>(kInsert)));
  EXPECT_TRUE((Compiles<CuckooFilter, std::string_view>(kInsert)));
  EXPECT_TRUE((Compiles<CuckooFilter, const char*>(kInsert)));
  EXPECT_TRUE((Compiles<CuckooFilter, const std::string&>(kInsert)));
  EXPECT_TRUE((Compiles<CuckooFilter, KeyHash>(kContains)));
  EXPECT_TRUE((Compiles<CuckooFilter, const std::string&>(kContains)));
  EXPECT_TRUE((Compiles<CuckooFilter, std::string_view>(kErase)));
  EXPECT_TRUE((Compiles<CuckooFilterView, KeyHash>(kContains)));
  EXPECT_TRUE((Compiles<CuckooFilterView, std::string_view>(kContains)));
  EXPECT_TRUE((Compiles<CuckooFilter, const KeyHash*>(kContainsBatch)));
  EXPECT_TRUE((Compiles<CuckooFilterView, const KeyHash*>(kContainsBatch)));
  // What makes KeyHash free to pass by value and to batch.
  EXPECT_EQ(sizeof(KeyHash), 8u);
  EXPECT_TRUE(std::is_trivially_copyable_v<KeyHash>);
}

// A key overload is exactly the hash overload with HashKey(key).
TEST(ItemApi, KeyOverloadsHashWithHashKey) {
  auto filter = CuckooFilter::Create(FilterConfig(), 1000);
  ASSERT_NE(filter, nullptr);
  const std::string key = "user:42";
  EXPECT_EQ(filter->Insert(key), InsertResult::kInserted);
  EXPECT_TRUE(filter->Contains(HashKey(key)));
  EXPECT_TRUE(filter->Contains("user:42"));
  EXPECT_TRUE(filter->View().Contains(std::string_view(key)));
  const KeyHash h = HashKey(key);
  bool found = false;
  filter->ContainsBatch(&h, 1, &found);
  EXPECT_TRUE(found);
  EXPECT_TRUE(filter->Erase(HashKey(key)));
  EXPECT_FALSE(filter->Contains(key));
  EXPECT_EQ(filter->Insert(HashKey(key)), InsertResult::kInserted);
  EXPECT_TRUE(filter->Erase(key));
  EXPECT_EQ(filter->size(), 0u);
  // Keys with embedded zero bytes are whole keys, not C strings.
  const std::string a("a\0b", 3);
  filter->Insert(a);
  EXPECT_TRUE(filter->Contains(HashKey(a)));
  EXPECT_NE(HashKey(a), HashKey("a"));
}

// Little-endian bytes of an integer ID, as an application would store it.
std::string IdBytes(uint64_t id) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(id >> (8 * i));
  return std::string(bytes, 8);
}

// Sequential integer IDs through the key overload spread over the whole
// table: every one fits at the default sizing load, none is lost, and
// absent IDs match at the expected rate. The same IDs taken as hashes
// (what Insert(uint64_t) invited before) fill the filter after 2b + 1 of
// them, as KeyHash's comment says: they all map to bucket 0 with
// fingerprint 1.
TEST(ItemApi, SequentialIdsThroughTheKeyOverloadSpread) {
  const FilterConfig config;  // f = 12, b = 4, load 0.95
  const uint64_t n = test::Size(200000, 50000);
  auto filter = CuckooFilter::Create(config, n);
  ASSERT_NE(filter, nullptr);
  for (uint64_t id = 0; id < n; ++id) {
    ASSERT_EQ(filter->Insert(IdBytes(id)), InsertResult::kInserted)
        << "ID " << id << " of " << n;
  }
  const FilterStats stats = filter->stats();
  EXPECT_EQ(stats.num_items, n);
  EXPECT_GT(stats.load_factor, 0.94);
  for (uint64_t id = 0; id < n; ++id) {
    ASSERT_TRUE(filter->Contains(IdBytes(id))) << "ID " << id;
  }
  const uint64_t queries = test::Size(1000000, 200000);
  uint64_t positives = 0;
  for (uint64_t q = 0; q < queries; ++q) {
    positives += filter->Contains(IdBytes(n + q)) ? 1 : 0;
  }
  std::string why;
  EXPECT_TRUE(test::WithinBinomialBound(positives, queries, stats.expected_fpr,
                                        0.15, 5, &why))
      << why;

  // The misuse the old API allowed, spelled out explicitly now.
  auto raw = CuckooFilter::Create(config, n);
  uint64_t stored = 0;
  while (raw->Insert(KeyHash(stored)) == InsertResult::kInserted) ++stored;
  EXPECT_EQ(stored, 2u * config.bucket_size);
  EXPECT_TRUE(raw->full());
}

}  // namespace
}  // namespace cuckoo
