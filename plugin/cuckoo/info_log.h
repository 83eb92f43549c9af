// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Printf-style messages to a RocksDB info log, shared by the SST policy and
// FilteredDB (internal; the glue's sources include it as "../info_log.h").
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_INFO_LOG_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_INFO_LOG_H_

#include <cstdarg>
#include <cstdio>

#include "rocksdb/env.h"

namespace rocksdb_cuckoo {
namespace internal {

// Formats `format` with `args` (vsnprintf, cut at 511 bytes) and writes
// "<prefix><message>" to `logger` at `level`; nothing if `logger` is null.
// For variadic members: va_start, LogV, va_end.
inline void LogV(ROCKSDB_NAMESPACE::Logger* logger,
                 ROCKSDB_NAMESPACE::InfoLogLevel level, const char* prefix,
                 const char* format, va_list args)
    __attribute__((format(printf, 4, 0)));

inline void LogV(ROCKSDB_NAMESPACE::Logger* logger,
                 ROCKSDB_NAMESPACE::InfoLogLevel level, const char* prefix,
                 const char* format, va_list args) {
  if (logger == nullptr) return;
  char message[512];
  vsnprintf(message, sizeof(message), format, args);
  ROCKSDB_NAMESPACE::Log(level, logger, "%s%s", prefix, message);
}

}  // namespace internal
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_INFO_LOG_H_
