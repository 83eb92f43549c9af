// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// What a live-key filter checkpoint is bound to, and whether an opening DB
// may use it (internal; design in docs/recovery_design.md, 3.1 and 3.2).
//
// A checkpoint file is the core's snapshot format 2 (checksummed, validated
// bucket by bucket: cuckoo::LiveKeyFilter::DecodeSnapshot) whose opaque
// owner identity is a CheckpointIdentity:
//
//   offset  size  field (little-endian; "bytes": fixed32 length + bytes)
//   0       4     magic "CKP3"
//   4       8     sequence X (the last sequence number the image covers)
//   12      4     column family id
//   16      8     session (the writer's nonce)
//   24      8     erase generation (the writer's last checker record
//                 whose erasures the image holds)
//   32      8     WAL binding: file number (0: none)
//   40      8     ... offset (bytes of that file then)
//   48      8     ... hash of the <= 64 KiB before the offset
//   56      -     bytes: DB id, column family name, MANIFEST (the file
//                 CURRENT named when the checkpoint was written), DB state
//                 digest (clean close only, else empty)
//
// The identity of the previous format (sequence first, no magic) is
// rejected as an older format; the filter is then rebuilt.
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_CHECKPOINT_FILE_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_CHECKPOINT_FILE_H_

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cuckoo/live_key_filter.h"
#include "rocksdb/env.h"
#include "rocksdb/status.h"
#include "rocksdb/types.h"
#include "snapshot_store.h"
#include "wal_replay.h"

namespace rocksdb_cuckoo {
namespace live {

struct CheckpointIdentity {
  ROCKSDB_NAMESPACE::SequenceNumber sequence = 0;
  uint32_t cf_id = 0;
  uint64_t session = 0;
  uint64_t erase_generation = 0;
  WalBinding wal;
  std::string db_id;
  std::string cf_name;
  std::string manifest;
  std::string db_state;
  // Fingerprints the image may keep for deleted keys (unchecked deletes,
  // checks lost in crashes) since its filter was last built from the DB:
  // the next open goes on counting from there (CfState::unchecked). An
  // optional trailing field (identities of 1.0.0 have none: 0).
  uint64_t unchecked = 0;

  std::string Encode() const;
  // False with the reason when `bytes` is not an identity of this format.
  static bool Decode(std::string_view bytes, CheckpointIdentity* out,
                     std::string* why);
};

// The identity bytes stored in a checkpoint file, read from its header
// only (not validated: the checksum covers the whole file; compare them
// with the identity DecodeSnapshot returns). For the checks that must run
// before DB::Open (the WAL binding: recovery may release WAL files).
ROCKSDB_NAMESPACE::Status PeekCheckpointIdentity(ROCKSDB_NAMESPACE::Env* env,
                                                 const std::string& path,
                                                 std::string* identity);

// The name of the MANIFEST that CURRENT names ("" if unreadable).
std::string CurrentManifest(ROCKSDB_NAMESPACE::Env* env,
                            const std::string& dbname);

// One entry of snapshot_dir/CUCKOO_LIVE_OPENS: a MANIFEST written by a
// FilteredDB open (or the checkpoint's own, first) and the WAL prefix that
// open bound itself to, after verifying the previous entry's before its
// DB::Open (a chain of trust: the WAL file of the first may be gone since).
struct ChainEntry {
  std::string manifest;
  WalBinding wal;
  bool operator==(const ChainEntry& o) const {
    return manifest == o.manifest && wal.number == o.wal.number &&
           wal.offset == o.wal.offset && wal.tail_hash == o.wal.tail_hash;
  }
};
std::vector<ChainEntry> ParseChain(const std::vector<std::string>& lines);
std::vector<std::string> FormatChain(const std::vector<ChainEntry>& chain);

// A checkpoint file read and validated (cuckoo::LiveKeyFilter::
// DecodeSnapshot): by the family's load after DB::Open (background_open),
// or, when Open waits for the load, on a thread of its own while DB::Open
// runs.
struct DecodedCheckpoint {
  ROCKSDB_NAMESPACE::Status read;                           // of the file
  std::unique_ptr<cuckoo::LiveKeyFilter::Builder> builder;  // null: see why
  std::string identity;
  std::string why;
};
// Reads and decodes `path` for a filter with `options`.
DecodedCheckpoint ReadCheckpoint(ROCKSDB_NAMESPACE::Env* env,
                                 const std::string& path,
                                 const cuckoo::LiveKeyFilterOptions& options);
using CheckpointPreload = std::shared_ptr<std::future<DecodedCheckpoint>>;
// Starts ReadCheckpoint on a thread of its own.
CheckpointPreload PreloadCheckpoint(
    ROCKSDB_NAMESPACE::Env* env, const std::string& path,
    const cuckoo::LiveKeyFilterOptions& options);

// What FilteredDB reads before DB::Open (whose recovery may write a new
// MANIFEST and release WAL files) about the checkpoints in snapshot_dir.
struct PreOpenFacts {
  std::string manifest;           // CurrentManifest
  std::vector<ChainEntry> opens;  // SnapshotStore::ReadOpens
  // DbStateDigest, computed only if a checkpoint was written at Close.
  std::string db_state;
  struct Found {
    std::string identity;  // PeekCheckpointIdentity ("" if unreadable)
    // The MANIFESTs of the opens continuing this checkpoint: the list's if
    // its first line is this checkpoint's own (MANIFEST and WAL binding),
    // else the checkpoint's MANIFEST alone.
    std::vector<std::string> chain;
    // VerifyWalBinding's reason, "" if it held: of the chain entry CURRENT
    // names, else of the checkpoint itself.
    std::string wal_error;
    // The file being read and decoded while DB::Open runs (null if not
    // started: background_open, or never usable).
    CheckpointPreload preload;
  };
  std::map<uint32_t, Found> checkpoints;  // by column family id
};
ROCKSDB_NAMESPACE::Status GatherPreOpenFacts(ROCKSDB_NAMESPACE::Env* env,
                                             const std::string& dbname,
                                             const std::string& wal_dir,
                                             const SnapshotStore& store,
                                             PreOpenFacts* facts);

// What an opening DB knows about itself, to judge a checkpoint with.
struct OpeningDb {
  std::string db_id;
  uint32_t cf_id = 0;
  std::string cf_name;
  ROCKSDB_NAMESPACE::SequenceNumber sequence = 0;  // after DB::Open
  // Read before DB::Open:
  std::string db_state;  // DbStateDigest ("" if not computed)
  std::string manifest;  // CurrentManifest
  // The MANIFESTs of the FilteredDB opens since the newest checkpoint, in
  // order, the checkpoint's own first (SnapshotStore::ReadOpens).
  std::vector<std::string> opens;
  // The checkpoint's WAL binding, checked before DB::Open
  // (VerifyWalBinding): "" if it held, else why not.
  std::string wal_error;
};

enum class Verdict {
  kUse,     // the image is the filter at the DB's sequence
  kReplay,  // the image is the filter at X < the DB's sequence
  kReject,  // never usable for this DB: remove the file
};
struct Judgement {
  Verdict verdict = Verdict::kReject;
  std::string why;  // the reason of a rejection
};
// Design 3.2, steps 2 to 7.
Judgement JudgeCheckpoint(const CheckpointIdentity& id, const OpeningDb& db);

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_CHECKPOINT_FILE_H_
