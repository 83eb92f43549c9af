// Writes the seed corpus of parse_fuzzer: one small valid block of every
// configuration (format version 2), some with a victim. Run by run_fuzz.sh
// into a scratch directory; the committed seeds in corpus/ were made so.
#include <cstdio>
#include <string>

#include "cuckoo/cuckoo_filter.h"

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
        std::FILE* out = std::fopen(path.c_str(), "wb");
        if (out == nullptr) return 1;
        std::fwrite(bytes.data(), 1, bytes.size(), out);
        std::fclose(out);
        ++written;
      }
    }
  }
  std::printf("%d seeds\n", written);
  return 0;
}
