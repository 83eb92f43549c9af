// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Test hook of FilteredDB (internal; tests/live includes it): when set,
// called at named points of the write path, so that a test can pause a
// writer or the delete checker there and force an interleaving.
//   "WriteOneShared:BeforeWrite"          single-key writer, stripe held,
//                                         filter updated, DB write next
//   "WriteOpsShared:BeforeWrite"          a write of several keys (batch),
//                                         stripes held, filter inserts made,
//                                         DB write next
//   "ResolveDeferredChecks:BeforeRead"    delete checker, before it reads
//                                         the keys at their snapshots
//   "Rebuilder:Stopping"                  a rebuilder's Stop (Close), its
//                                         cancel set, before it joins
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_TEST_HOOKS_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_TEST_HOOKS_H_

namespace rocksdb_cuckoo {
namespace live {

using TestHookFn = void (*)(const char* point);
// Not for concurrent use with writes: set it before and clear it after.
void SetTestHook(TestHookFn hook);
void TestHook(const char* point);

// Failure injection: when set, TestFail(point) returns what it returns, and
// the code at that point fails as if an I/O error happened.
//   "BackgroundRebuild:Scan"   the background scan (Open's build, rescans)
using TestFailFn = bool (*)(const char* point);
void SetTestFailHook(TestFailFn hook);
bool TestFail(const char* point);

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_TEST_HOOKS_H_
