// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Declarations of RocksDB's FilterBitsBuilder / FilterBitsReader.
//
// Since RocksDB 7.0 these classes live only in the internal header
// table/block_based/filter_policy_internal.h; rocksdb/filter_policy.h merely
// forward-declares them. A FilterPolicy built outside the RocksDB tree must
// therefore declare them itself, with exactly the virtual functions of the
// RocksDB version it is compiled against, in the same order (the vtable
// layout is the ABI). RocksDB exports their typeinfo and out-of-line defaults
// as weak symbols, so a matching declaration links and dispatches correctly.
//
// When this file is compiled inside a RocksDB source tree (the in-tree plugin
// build, ROCKSDB_PLUGINS=cuckoo), the real internal header is used instead.
//
// Known layouts, verified with tools/abi_probe (which compiles a vtable-slot
// probe against a tree's real filter_policy_internal.h and against this file)
// on the last patch release of every minor version from 7.0 to 11.8, and on
// 11.9.0 (facebook/rocksdb main at 1dfa729, 2026-08-07, version.h 11.9.0):
//
//   RocksDB       FilterBitsBuilder virtuals, in order (vtable slot)
//   7.0 .. 9.5    ~dtor (0, 1), AddKey 2, EstimateEntriesAdded 3,
//                 Finish(buf) 4, Finish(buf, status) 5, MaybePostVerify 6,
//                 ApproximateNumEntries 7
//   9.6 .. 10.8   as above with AddKeyAndAlt right after AddKey (slot 3; the
//                 later ones move up by one)
//   10.9 .. 11.9  as 9.6, plus CalculateSpace 9 and EstimatedFpRate 10
//
//   FilterBitsReader (all versions): ~dtor (0, 1), MayMatch(key) 2,
//                 MayMatch(num_keys, keys, may_match) 3
//
// Any newer version is refused at compile time: a wrong guess would not fail
// to link, it would call the wrong virtual function at run time. To add one,
// run the probe on that release's source tree (only headers are compiled):
//
//   tools/abi_probe/abi_probe.sh /path/to/rocksdb-<version>
//
// and, if it reports the layout of a known row, raise the limit below (and
// this table); if it reports a new virtual, declare it in the matching place.
//
// Macros defined for the implementation:
//   CUCKOO_ABI_IN_TREE             1 when the real internal header is used
//   CUCKOO_ABI_HAS_ADD_KEY_AND_ALT 1 if FilterBitsBuilder::AddKeyAndAlt exists
//   CUCKOO_ABI_HAS_CALCULATE_SPACE 1 if FilterBitsBuilder::CalculateSpace and
//                                  EstimatedFpRate are (pure) virtuals
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_SST_FILTER_BITS_ABI_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_SST_FILTER_BITS_ABI_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "rocksdb/filter_policy.h"
#include "rocksdb/slice.h"
#include "rocksdb/status.h"
#include "rocksdb/version.h"

#if !defined(ROCKSDB_MAJOR) || !defined(ROCKSDB_MINOR)
#error "rocksdb/version.h did not define ROCKSDB_MAJOR / ROCKSDB_MINOR"
#endif

#define CUCKOO_ROCKSDB_VERSION_AT_LEAST(major, minor) \
  (ROCKSDB_MAJOR > (major) ||                         \
   (ROCKSDB_MAJOR == (major) && ROCKSDB_MINOR >= (minor)))

#if !CUCKOO_ROCKSDB_VERSION_AT_LEAST(7, 0)
#error "rocksdb-cuckoo needs RocksDB >= 7.0 (FilterBitsBuilder layout of 7.0+)"
#endif

#if CUCKOO_ROCKSDB_VERSION_AT_LEAST(9, 6)
#define CUCKOO_ABI_HAS_ADD_KEY_AND_ALT 1
#else
#define CUCKOO_ABI_HAS_ADD_KEY_AND_ALT 0
#endif

#if CUCKOO_ROCKSDB_VERSION_AT_LEAST(10, 9)
#define CUCKOO_ABI_HAS_CALCULATE_SPACE 1
#else
#define CUCKOO_ABI_HAS_CALCULATE_SPACE 0
#endif

#if defined(__has_include)
#if __has_include("table/block_based/filter_policy_internal.h")
#define CUCKOO_ABI_IN_TREE 1
#endif
#endif
#ifndef CUCKOO_ABI_IN_TREE
#define CUCKOO_ABI_IN_TREE 0
#endif

#if CUCKOO_ABI_IN_TREE

#include "table/block_based/filter_policy_internal.h"

#else  // !CUCKOO_ABI_IN_TREE

// Out of tree: the layout must be one we have verified. Extend the table in
// the header comment (and the #if blocks below) only after tools/abi_probe
// reports MATCH for the new version.
#if CUCKOO_ROCKSDB_VERSION_AT_LEAST(11, 10)
#error \
    "rocksdb-cuckoo: the FilterBitsBuilder/Reader layout of this RocksDB version (newer than 11.9) is not verified. Run tools/abi_probe/abi_probe.sh <RocksDB source tree of this version> and extend plugin/cuckoo/sst/filter_bits_abi.h as its comment says, or build in-tree (ROCKSDB_PLUGINS=cuckoo), which uses RocksDB's own header."
#endif

namespace ROCKSDB_NAMESPACE {

class FilterBitsBuilder {
 public:
  virtual ~FilterBitsBuilder() {}

  virtual void AddKey(const Slice& key) = 0;

#if CUCKOO_ABI_HAS_ADD_KEY_AND_ALT
  virtual void AddKeyAndAlt(const Slice& key, const Slice& alt) = 0;
#endif

  virtual size_t EstimateEntriesAdded() = 0;

  virtual Slice Finish(std::unique_ptr<const char[]>* buf) = 0;

  virtual Slice Finish(std::unique_ptr<const char[]>* buf,
                       Status* /* status */) {
    return Finish(buf);
  }

  virtual Status MaybePostVerify(const Slice& /* filter_content */) {
    return Status::OK();
  }

  virtual size_t ApproximateNumEntries(size_t bytes) = 0;

#if CUCKOO_ABI_HAS_CALCULATE_SPACE
  virtual size_t CalculateSpace(size_t num_entries) = 0;

  virtual double EstimatedFpRate(size_t num_entries, size_t bytes) = 0;
#endif
};

class FilterBitsReader {
 public:
  virtual ~FilterBitsReader() {}

  virtual bool MayMatch(const Slice& entry) = 0;

  virtual void MayMatch(int num_keys, Slice** keys, bool* may_match) {
    for (int i = 0; i < num_keys; ++i) {
      may_match[i] = MayMatch(*keys[i]);
    }
  }
};

}  // namespace ROCKSDB_NAMESPACE

#endif  // CUCKOO_ABI_IN_TREE

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_SST_FILTER_BITS_ABI_H_
