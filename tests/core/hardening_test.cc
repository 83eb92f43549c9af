// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Regression tests of the core: item counts that disagree with the table,
// leaving the full state after erasing, the whole-block checksum of format
// version 2.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "filter/filter_format.h"
#include "test_util.h"

namespace cuckoo {
namespace {

using internal::DecodeFilter;
using internal::EncodeTrailer;
using internal::kTrailerSize;
using internal::Trailer;

// Decodes, edits and re-encodes the trailer of `bytes` (a valid block),
// resealing the checksum as the block's own version does.
template <typename Edit>
std::string Reencode(const std::string& bytes, Edit edit) {
  Trailer t;
  uint64_t table_bytes = 0;
  std::string error;
  EXPECT_TRUE(
      DecodeFilter(bytes.data(), bytes.size(), &t, &table_bytes, &error))
      << error;
  edit(&t);
  std::string out = bytes;
  EncodeTrailer(t, &out[0], table_bytes);
  return out;
}

std::vector<KeyHash> Hashes(size_t n, const char* tag = "k") {
  std::vector<KeyHash> h;
  for (size_t i = 0; i < n; ++i) h.push_back(HashKey(tag + std::to_string(i)));
  return h;
}

// ------------------------------------------------------------------ item 2

TEST(CountMismatch, DeserializeRejectsAWrongItemCount) {
  auto filter = CuckooFilter::Create(test::MakeConfig(12, 4), 100);
  ASSERT_NE(filter, nullptr);
  const KeyHash h = HashKey("only");
  ASSERT_EQ(filter->Insert(h), InsertResult::kInserted);
  const std::string good = filter->Serialize();
  std::string error;
  ASSERT_NE(CuckooFilter::Deserialize(good.data(), good.size(), &error),
            nullptr)
      << error;

  for (uint64_t claimed : {uint64_t{0}, uint64_t{2}, uint64_t{7}}) {
    const std::string bad =
        Reencode(good, [&](Trailer* t) { t->num_items = claimed; });
    // The mutable copy counts the occupied slots and refuses the block: a
    // copy that believed 0 items would underflow on Erase and serialize
    // bytes that Parse rejects.
    error.clear();
    EXPECT_EQ(CuckooFilter::Deserialize(bad.data(), bad.size(), &error),
              nullptr)
        << "claimed " << claimed;
    EXPECT_NE(error.find("item count"), std::string::npos) << error;
    // The zero-copy view only reports the claim; lookups never depend on it.
    CuckooFilterView view;
    if (CuckooFilterView::Parse(bad.data(), bad.size(), &view, &error)) {
      EXPECT_TRUE(view.Contains(h));
      EXPECT_EQ(view.size(), claimed);
    }
  }
}

TEST(CountMismatch, DeserializedCopyRoundTripsAfterErase) {
  for (const FilterConfig& config : test::AllConfigs()) {
    auto filter = CuckooFilter::Create(config, 50);
    ASSERT_NE(filter, nullptr);
    const auto hashes = Hashes(40);
    for (KeyHash h : hashes) filter->Insert(h);
    const std::string bytes = filter->Serialize();
    std::string error;
    auto copy = CuckooFilter::Deserialize(bytes.data(), bytes.size(), &error);
    ASSERT_NE(copy, nullptr) << error;
    for (KeyHash h : hashes) {
      if (copy->Contains(h)) copy->Erase(h);
    }
    EXPECT_EQ(copy->size(), 0u) << test::ConfigName(config);
    const std::string again = copy->Serialize();
    CuckooFilterView view;
    EXPECT_TRUE(
        CuckooFilterView::Parse(again.data(), again.size(), &view, &error))
        << error;
  }
}

// ------------------------------------------------------------------ item 3

// Fills a filter until it reports full, erases every second stored item and
// expects it to have left the full state: the erases made room in the
// victim's component (they are spread over the whole table).
void ExpectLeavesFullState(const FilterConfig& config,
                           uint64_t expected_items) {
  auto filter = CuckooFilter::Create(config, expected_items);
  ASSERT_NE(filter, nullptr);
  std::vector<KeyHash> stored;
  for (uint64_t i = 0; !filter->full(); ++i) {
    const KeyHash h = HashKey("fill" + std::to_string(i));
    ASSERT_NE(filter->Insert(h), InsertResult::kFull);
    stored.push_back(h);
    ASSERT_LT(i, 4 * filter->stats().capacity) << "never went full";
  }
  for (size_t k = 0; k < stored.size(); k += 2)
    ASSERT_TRUE(filter->Erase(stored[k]));
  EXPECT_FALSE(filter->full())
      << test::ConfigName(config) << " after erasing "
      << (stored.size() + 1) / 2 << " of " << stored.size();
  for (size_t k = 1; k < stored.size(); k += 2)
    ASSERT_TRUE(filter->Contains(stored[k]));
}

TEST(FullAfterErase, SmallFingerprints) {
  ExpectLeavesFullState(test::MakeConfig(4, 2), 999);
  ExpectLeavesFullState(test::MakeConfig(5, 2), 999);
  ExpectLeavesFullState(test::MakeConfig(4, 4), 999);
}

TEST(FullAfterErase, OneSlotBuckets) {
  FilterConfig config = test::MakeConfig(14, 1);
  config.target_load = 0.3;
  ExpectLeavesFullState(config, 1000);
  ExpectLeavesFullState(test::MakeConfig(8, 1), 1000);
}

TEST(FullAfterErase, EveryConfiguration) {
  for (const FilterConfig& config : test::AllConfigs()) {
    ExpectLeavesFullState(config, 500);
  }
}

// A closed component (documented at CuckooFilter::Erase): 2b + 1 copies of
// one item cannot all live in its two buckets, so the filter stays full
// while other items are erased, and leaves the full state as soon as one
// copy is erased.
TEST(FullAfterErase, ClosedComponentStaysFullUntilOneOfItsItemsIsErased) {
  for (int b : {1, 2, 4, 8}) {
    auto filter = CuckooFilter::Create(test::MakeConfig(12, b), 1000);
    const auto others = Hashes(300, "other");
    for (KeyHash h : others)
      ASSERT_EQ(filter->Insert(h), InsertResult::kInserted);
    const KeyHash dup = HashKey("duplicate");
    InsertResult last = InsertResult::kInserted;
    int copies = 0;
    while (last == InsertResult::kInserted) {
      last = filter->Insert(dup);
      ++copies;
    }
    ASSERT_EQ(last, InsertResult::kInsertedFull) << "b=" << b;
    ASSERT_GE(copies, 2 * b + 1);
    for (KeyHash h : others) {
      if (filter->Contains(h) && h != dup) filter->Erase(h);
    }
    EXPECT_TRUE(filter->full()) << "b=" << b << ": the victim has no room";
    ASSERT_TRUE(filter->Erase(dup));
    EXPECT_FALSE(filter->full()) << "b=" << b;
    EXPECT_TRUE(filter->Contains(dup));
  }
}

// ------------------------------------------------------------------ item 5

TEST(BlockChecksum, AnyFlippedTableBitIsRejected) {
  for (const FilterConfig& config : test::AllConfigs()) {
    auto filter = CuckooFilter::Create(config, 64);
    for (KeyHash h : Hashes(60)) filter->Insert(h);
    const std::string good = filter->Serialize();
    ASSERT_EQ(static_cast<uint8_t>(good.back()), internal::kFormatVersion);
    const size_t table = good.size() - kTrailerSize;
    for (size_t bit = 0; bit < table * 8; bit += 3) {
      std::string bad = good;
      bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
      CuckooFilterView view;
      std::string error;
      ASSERT_FALSE(
          CuckooFilterView::Parse(bad.data(), bad.size(), &view, &error))
          << test::ConfigName(config) << " bit " << bit;
      EXPECT_NE(error.find("block checksum"), std::string::npos) << error;
      EXPECT_EQ(CuckooFilter::Deserialize(bad.data(), bad.size(), &error),
                nullptr);
    }
  }
}

TEST(BlockChecksum, VersionOneBlocksAreStillRead) {
  auto filter = CuckooFilter::Create(test::MakeConfig(12, 4), 1000);
  const auto hashes = Hashes(900);
  for (KeyHash h : hashes) filter->Insert(h);
  const std::string v1 = Reencode(filter->Serialize(), [](Trailer* t) {
    t->format_version = internal::kFormatVersionTrailerChecksum;
  });
  ASSERT_EQ(v1.back(), 1);
  CuckooFilterView view;
  std::string error;
  ASSERT_TRUE(CuckooFilterView::Parse(v1.data(), v1.size(), &view, &error))
      << error;
  for (KeyHash h : hashes) ASSERT_TRUE(view.Contains(h));
  auto copy = CuckooFilter::Deserialize(v1.data(), v1.size(), &error);
  ASSERT_NE(copy, nullptr) << error;
  // Re-serialized, a version 1 block becomes version 2.
  EXPECT_EQ(copy->Serialize(), filter->Serialize());
  // Version 1 only covers the trailer: table damage goes unnoticed there.
  std::string damaged = v1;
  damaged[0] ^= 1;
  EXPECT_TRUE(
      CuckooFilterView::Parse(damaged.data(), damaged.size(), &view, &error));
}

}  // namespace
}  // namespace cuckoo
