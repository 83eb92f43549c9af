// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// No heap allocation on the Insert / InsertMany / Contains / ContainsBatch /
// Erase paths (including eviction walks, the victim slot and the key
// overloads, which hash the key), nor in View, Parse, SerializeTo and stats.
// This binary replaces the global operator new with a counting one, so it is
// separate from the other core tests.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "test_util.h"

namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

// malloc/free pair correctly here; GCC cannot see that through the
// replacement functions.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace cuckoo {
namespace {

class AllocationTest : public ::testing::TestWithParam<FilterConfig> {};

TEST_P(AllocationTest, HotPathsNeverAllocate) {
  const uint64_t m = 4002;
  auto filter = CuckooFilter::CreateWithBuckets(GetParam(), m);
  ASSERT_NE(filter, nullptr);
  const test::KeyStream keys(900);
  const uint64_t n = m * GetParam().bucket_size + 1;  // more than fits
  std::vector<KeyHash> hashes(n), absent(1000);
  std::vector<std::string> keys_as_bytes;
  for (int i = 0; i < 100; ++i) {
    keys_as_bytes.push_back("a key longer than the small-string buffer " +
                            std::to_string(i));
  }
  for (uint64_t i = 0; i < n; ++i) hashes[i] = keys.Key(i);
  for (uint64_t i = 0; i < absent.size(); ++i) absent[i] = keys.Absent(i);
  std::vector<char> serialized(filter->SerializedSize());
  std::unique_ptr<bool[]> out(new bool[n]);
  uint64_t sink = 0;

  const uint64_t before = g_allocations.load();
  uint64_t stored = 0;
  // Fill through the eviction walks up to the victim slot and past it.
  for (uint64_t i = 0; i < n; ++i) {
    const InsertResult r = filter->Insert(hashes[i]);
    if (r == InsertResult::kFull) break;
    ++stored;
  }
  for (uint64_t i = 0; i < stored; ++i) sink += filter->Contains(hashes[i]);
  filter->ContainsBatch(hashes.data(), stored, out.get());
  filter->ContainsBatch(absent.data(), absent.size(), out.get());
  const CuckooFilterView live = filter->View();
  for (KeyHash h : absent) sink += live.Contains(h);
  sink += filter->stats().num_items;
  filter->SerializeTo(serialized.data());
  CuckooFilterView parsed;
  const bool ok = CuckooFilterView::Parse(serialized.data(), serialized.size(),
                                          &parsed, nullptr);
  for (KeyHash h : absent) sink += parsed.Contains(h);
  parsed.ContainsBatch(absent.data(), absent.size(), out.get());
  // Erase everything, which also moves the victim back into the table.
  for (uint64_t i = 0; i < stored; ++i) sink += filter->Erase(hashes[i]);
  for (KeyHash h : absent) sink += filter->Erase(h);
  filter->Clear();
  for (const std::string& key : keys_as_bytes) {
    sink += filter->Insert(key) == InsertResult::kInserted;
    sink += filter->Contains(key) + parsed.Contains(key) + filter->Erase(key);
  }
  // The bulk insert, also through walks and past full.
  sink += filter->InsertMany(hashes.data(), n);
  filter->Clear();
  const uint64_t allocations = g_allocations.load() - before;

  EXPECT_EQ(allocations, 0u);
  EXPECT_TRUE(ok);
  EXPECT_GT(stored, 0u);
  EXPECT_GT(sink, 0u);
  EXPECT_EQ(filter->size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    AllConfigs, AllocationTest, ::testing::ValuesIn(test::AllConfigs()),
    [](const ::testing::TestParamInfo<FilterConfig>& info) {
      return test::ConfigName(info.param);
    });

// The counter works (so a zero above means something).
TEST(AllocationCounter, CountsAllocations) {
  const uint64_t before = g_allocations.load();
  auto filter = CuckooFilter::CreateWithBuckets(FilterConfig{}, 100);
  std::string s = filter->Serialize();
  EXPECT_GE(g_allocations.load() - before, 2u);
}

}  // namespace
}  // namespace cuckoo
