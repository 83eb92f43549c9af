// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include <xxhash.h>

#include "cuckoo/cuckoo_filter.h"

namespace cuckoo {

KeyHash HashKey(std::string_view key) {
  return KeyHash(XXH3_64bits(key.data(), key.size()));
}

}  // namespace cuckoo
