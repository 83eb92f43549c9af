#include <xxhash.h>

#include "cuckoo/cuckoo_filter.h"

namespace cuckoo {

KeyHash HashKey(std::string_view key) {
  return KeyHash(XXH3_64bits(key.data(), key.size()));
}

}  // namespace cuckoo
