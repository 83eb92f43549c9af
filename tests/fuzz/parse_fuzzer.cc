// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// libFuzzer target for cuckoo::CuckooFilterView::Parse (and Deserialize) and
// for the blocked (format version 3) parser of the SST policy,
// internal::ParseBlockedFilter, on hostile bytes. Build and run with
// tests/fuzz/run_fuzz.sh (clang only).
//
// Checks, beyond "no crash, no out-of-bounds read" (ASan/UBSan):
//  - Parse and Deserialize agree on which blocks are valid, except that
//    Deserialize also rejects an item count the table does not hold;
//  - a deserialized copy survives Insert/Erase, and its Serialize() output
//    parses again (an invariant a wrong item count once broke);
//  - everything a copy reports as inserted is found (no false negative);
//  - a version 3/4 block answers the SST reader's single lookup
//    (BlockedTable::ContainsSingle) as BlockedContains does.
// Each input is tried as given and once more with its checksum resealed
// (internal::ResealChecksum), so that mutations get past the block checksum
// of format 2 to the field validation and the table behind it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <vector>

#include "blocked/blocked_filter.h"
#include "blocked/blocked_layout.h"
#include "cuckoo/cuckoo_filter.h"
#include "filter/filter_format.h"

namespace {
void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "parse_fuzzer: %s\n", what);
    std::abort();
  }
}

// Version 3 blocks: a parsed block answers lookups without reading outside
// the bytes; the two parsers never both accept one block.
void FuzzBlocked(const char* bytes, size_t size) {
  cuckoo::internal::BlockedView view;
  std::string error;
  if (!cuckoo::internal::ParseBlockedFilter(bytes, size, &view, &error)) return;
  cuckoo::CuckooFilterView other;
  Check(!cuckoo::CuckooFilterView::Parse(bytes, size, &other, &error),
        "a block parsed as both version 3 and version 1/2");
  for (int k = 0; k < 16; ++k) {
    const uint64_t hash = cuckoo::HashKey(std::string(1, char(k))).value;
    const bool found = cuckoo::internal::BlockedContains(view, hash);
    // The SST reader's single lookup (its own reads of the block) agrees.
    bool single = false;
    cuckoo::internal::DispatchBlocked(view.fingerprint_bits, [&](auto s) {
      single = cuckoo::internal::BlockedTable<decltype(s)>::ContainsSingle(
          view.ref, hash);
    });
    Check(single == found, "ContainsSingle != BlockedContains");
  }
  (void)cuckoo::internal::BlockedOverflowBitFraction(view);
}

void FuzzOne(const char* bytes, size_t size) {
  FuzzBlocked(bytes, size);
  cuckoo::CuckooFilterView view;
  std::string error;
  const bool parsed =
      cuckoo::CuckooFilterView::Parse(bytes, size, &view, &error);
  Check(parsed == view.valid(), "valid() disagrees with Parse");
  std::unique_ptr<cuckoo::CuckooFilter> copy =
      cuckoo::CuckooFilter::Deserialize(bytes, size, &error);
  if (!parsed) {
    Check(copy == nullptr, "Deserialize accepted what Parse rejected");
    return;
  }
  cuckoo::KeyHash hashes[16];
  bool found[16];
  for (int k = 0; k < 16; ++k)
    hashes[k] = cuckoo::HashKey(std::string(1, char(k)));
  view.ContainsBatch(hashes, 16, found);
  for (int k = 0; k < 16; ++k)
    Check(found[k] == view.Contains(hashes[k]), "batch != single");
  (void)view.stats();
  if (copy == nullptr) return;  // a count the table does not hold

  for (int k = 0; k < 16; ++k) {
    if (copy->Insert(hashes[k]) == cuckoo::InsertResult::kFull) break;
    Check(copy->Contains(hashes[k]), "inserted item not found");
  }
  for (int k = 0; k < 16; k += 2) {
    if (copy->Contains(hashes[k])) copy->Erase(hashes[k]);
  }
  const std::string again = copy->Serialize();
  cuckoo::CuckooFilterView reparsed;
  Check(cuckoo::CuckooFilterView::Parse(again.data(), again.size(), &reparsed,
                                        &error),
        "a deserialized copy's Serialize() does not parse");
  Check(cuckoo::CuckooFilter::Deserialize(again.data(), again.size(), &error) !=
            nullptr,
        "a deserialized copy's Serialize() does not deserialize");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data);
  FuzzOne(bytes, size);
  std::vector<char> resealed(bytes, bytes + size);
  if (cuckoo::internal::ResealChecksum(resealed.data(), size)) {
    FuzzOne(resealed.data(), size);
  }
  return 0;
}
