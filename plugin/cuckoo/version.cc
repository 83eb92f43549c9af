// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The runtime side of include/rocksdb_cuckoo/version.h: compiled into the
// library, so a program sees the version of the build it runs with.
#include "rocksdb_cuckoo/version.h"

namespace rocksdb_cuckoo {

Version GetVersion() {
  return Version{ROCKSDB_CUCKOO_VERSION_MAJOR, ROCKSDB_CUCKOO_VERSION_MINOR,
                 ROCKSDB_CUCKOO_VERSION_PATCH};
}

const char* GetVersionString() { return ROCKSDB_CUCKOO_VERSION_STRING; }

}  // namespace rocksdb_cuckoo
