// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The core cuckoo filter, without RocksDB: README.md "Using the core filter",
// include/cuckoo/cuckoo_filter.h and include/cuckoo/typed_lookup.h show
// parts of this file. Links rocksdb_cuckoo::core.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/typed_lookup.h"

int main() {
  cuckoo::FilterConfig config;  // f = 12 bits, b = 4, load 95%
  config.semi_sort = true;      // 11 bits per entry instead of 12
  std::string error;
  const uint64_t expected_items = 1000000;
  auto filter = cuckoo::CuckooFilter::Create(config, expected_items, &error);
  if (filter == nullptr) {
    fprintf(stderr, "Create: %s\n", error.c_str());  // error says why
    return 1;
  }

  filter->Insert("apple");                 // kInserted, kInsertedFull or kFull
  bool maybe = filter->Contains("apple");  // true: no false negatives
  filter->Erase("apple");                  // only items known to be present

  cuckoo::KeyHash h = cuckoo::HashKey("pear");  // hash once, use often
  filter->Insert(h);
  // filter->Insert(43);  // does not compile: a raw ID is not a hash

  // Building from a known set: InsertUnordered groups the items by bucket
  // (faster than one Insert per item on tables larger than the caches;
  // different bytes, same answers; 8 bytes per item of scratch meanwhile).
  std::vector<cuckoo::KeyHash> all;
  for (int i = 0; i < 100000; ++i) {
    all.push_back(cuckoo::HashKey("user:" + std::to_string(i)));
  }
  std::unique_ptr<cuckoo::CuckooFilter> users =
      cuckoo::CuckooFilter::Create(config, all.size(), &error);
  if (users->InsertUnordered(all.data(), all.size()) < all.size()) {
    fprintf(stderr, "full: build a larger filter\n");
    return 1;
  }

  // Many lookups in a loop: dispatch the layout once, not once per key
  // (cuckoo/typed_lookup.h).
  uint64_t hits = cuckoo::VisitLookup(*users, [&](auto lookup) {
    uint64_t n = 0;
    for (cuckoo::KeyHash q : all) n += lookup.Contains(q);
    return n;
  });

  std::string bytes = users->Serialize();
  cuckoo::CuckooFilterView view;  // zero-copy, validates every field
  if (!cuckoo::CuckooFilterView::Parse(bytes.data(), bytes.size(), &view,
                                       &error)) {
    fprintf(stderr, "corrupt: %s\n", error.c_str());
    return 1;
  }

  const bool ok = maybe && filter->Contains(h) && hits == all.size() &&
                  view.Contains(all[0]);
  printf("core_filter: %s (%llu of %zu found, %zu serialized bytes)\n",
         ok ? "ok" : "FAILED", static_cast<unsigned long long>(hits),
         all.size(), bytes.size());
  return ok ? 0 : 1;
}
