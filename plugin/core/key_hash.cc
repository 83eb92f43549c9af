#include <xxhash.h>

#include "cuckoo/cuckoo_filter.h"

namespace cuckoo {

uint64_t HashKey(std::string_view key) {
  return XXH3_64bits(key.data(), key.size());
}

}  // namespace cuckoo
