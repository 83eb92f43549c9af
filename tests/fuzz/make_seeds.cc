// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Writes the seed corpus of parse_fuzzer: one small valid block of every
// configuration of format version 2 (some with a victim) and of the blocked
// format version 3 (some with a stash). The committed seeds in
// corpus/parse were made by building it against the core by hand:
//
//   g++ -std=c++17 -O1 -Iinclude -Iplugin/core tests/fuzz/make_seeds.cc
//     plugin/core/{blocked_filter,cuckoo_filter,filter_format,table_ops,
//     key_hash}.cc -lxxhash -o /tmp/make_seeds
//   /tmp/make_seeds tests/fuzz/corpus/parse
#include <cstdio>
#include <string>
#include <vector>

#include "blocked/blocked_filter.h"
#include "cuckoo/cuckoo_filter.h"
#include "filter/filter_format.h"

namespace {

bool WriteSeed(const std::string& path, const void* data, size_t size) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) return false;
  std::fwrite(data, 1, size, out);
  return std::fclose(out) == 0;
}

// Blocked blocks of every width: two blocks with a few items each, and one
// block holding more items than fit so that some go to the stash.
int WriteBlockedSeeds(const std::string& dir) {
  int written = 0;
  for (int f = 4; f <= 16; ++f) {
    for (int items : {12, 40}) {
      std::vector<uint64_t> hashes;
      for (int k = 0; k < items; ++k) {
        hashes.push_back(cuckoo::HashKey("blocked" + std::to_string(k)).value);
      }
      const cuckoo::internal::HashSpan span{hashes.data(), hashes.size()};
      cuckoo::internal::BlockedBuildParams params;
      params.fingerprint_bits = f;
      params.num_blocks = items > 20 ? 1 : 2;
      params.seed = static_cast<uint32_t>(f);
      params.max_stash = static_cast<uint32_t>(items);
      std::vector<uint8_t> block(
          params.num_blocks * cuckoo::internal::kBlockBytes +
          4 * params.max_stash + cuckoo::internal::kTrailerSize + 8);
      cuckoo::internal::BlockedScratch scratch;
      const cuckoo::internal::BlockedBuildResult r =
          cuckoo::internal::BuildBlockedTable(&span, 1, hashes.size(), params,
                                              &scratch, block.data());
      if (!r.ok) return -1;
      const size_t size =
          cuckoo::internal::EncodeBlockedTrailer(params, r, block.data());
      if (!WriteSeed(
              dir + "/v3_f" + std::to_string(f) + "_n" + std::to_string(items),
              block.data(), size)) {
        return -1;
      }
      ++written;
    }
  }
  return written;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <dir>\n", argv[0]);
    return 2;
  }
  int written = 0;
  for (int f = 4; f <= 32; ++f) {
    for (int b : {1, 2, 4, 8}) {
      for (bool semi : {false, true}) {
        cuckoo::FilterConfig c;
        c.fingerprint_bits = f;
        c.bucket_size = b;
        c.semi_sort = semi;
        c.seed = static_cast<uint32_t>(f * 16 + b);
        if (!cuckoo::ValidateConfig(c).empty()) continue;
        auto filter = cuckoo::CuckooFilter::CreateWithBuckets(c, 4);
        for (int k = 0; k < 40 && !filter->full(); ++k) {
          filter->Insert(cuckoo::HashKey("seed" + std::to_string(k)));
        }
        const std::string bytes = filter->Serialize();
        const std::string path = std::string(argv[1]) + "/f" +
                                 std::to_string(f) + "_b" + std::to_string(b) +
                                 (semi ? "_ss" : "");
        if (!WriteSeed(path, bytes.data(), bytes.size())) return 1;
        ++written;
      }
    }
  }
  const int blocked = WriteBlockedSeeds(argv[1]);
  if (blocked < 0) return 1;
  std::printf("%d seeds, %d blocked\n", written, blocked);
  return 0;
}
