// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// plugin/cuckoo/info_log.h: the printf-to-Logger helper of the SST policy
// and FilteredDB.
#include "info_log.h"

#include <gtest/gtest.h>

#include <cstdarg>
#include <string>
#include <vector>

namespace {

using ROCKSDB_NAMESPACE::InfoLogLevel;

// Keeps each message with its level; logs everything (DEBUG and up).
class CapturingLogger : public ROCKSDB_NAMESPACE::Logger {
 public:
  CapturingLogger() : Logger(InfoLogLevel::DEBUG_LEVEL) {}
  void Logv(const char* format, va_list ap) override {
    Logv(InfoLogLevel::INFO_LEVEL, format, ap);
  }
  void Logv(const InfoLogLevel level, const char* format, va_list ap) override {
    char buf[4096];
    vsnprintf(buf, sizeof(buf), format, ap);
    messages.push_back(buf);
    levels.push_back(level);
  }
  std::vector<std::string> messages;
  std::vector<InfoLogLevel> levels;
};

void Log(ROCKSDB_NAMESPACE::Logger* logger, InfoLogLevel level,
         const char* prefix, const char* format, ...)
    __attribute__((format(printf, 4, 5)));
void Log(ROCKSDB_NAMESPACE::Logger* logger, InfoLogLevel level,
         const char* prefix, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  rocksdb_cuckoo::internal::LogV(logger, level, prefix, format, ap);
  va_end(ap);
}

TEST(InfoLogTest, FormatsWithPrefixAndLevel) {
  CapturingLogger logger;
  Log(&logger, InfoLogLevel::WARN_LEVEL, "[cuckoofilter] ", "%d keys in %s", 42,
      "cf");
  Log(&logger, InfoLogLevel::INFO_LEVEL, "", "plain %s", "message");
  ASSERT_EQ(logger.messages.size(), 2u);
  EXPECT_EQ(logger.messages[0], "[cuckoofilter] 42 keys in cf");
  EXPECT_EQ(logger.levels[0], InfoLogLevel::WARN_LEVEL);
  EXPECT_EQ(logger.messages[1], "plain message");
  EXPECT_EQ(logger.levels[1], InfoLogLevel::INFO_LEVEL);
}

TEST(InfoLogTest, NullLoggerIsANoOp) {
  Log(nullptr, InfoLogLevel::INFO_LEVEL, "", "%s", "nobody hears this");
}

TEST(InfoLogTest, LongMessagesAreCutAt511Bytes) {
  CapturingLogger logger;
  const std::string long_text(2000, 'x');
  Log(&logger, InfoLogLevel::INFO_LEVEL, "p: ", "%s", long_text.c_str());
  ASSERT_EQ(logger.messages.size(), 1u);
  EXPECT_EQ(logger.messages[0], "p: " + std::string(511, 'x'));
}

}  // namespace
