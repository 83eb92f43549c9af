// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The live-key filter's effects, logged in the WAL (internal; design in
// docs/recovery_design.md, section 4). Each FilteredDB write appends, after
// its operations and in the same WriteBatch, a LogData blob saying what it
// did to the filters; the delete checker logs its erasures in batches of
// their own. After a crash, a checkpoint of the filter at sequence X plus
// the effects logged after X (wal_replay.h) give the filter at the DB's
// sequence without reading the DB.
//
// Blob layout (little-endian; "v32"/"v64": varints as RocksDB's):
//
//   byte 0: kMagic (0xC5), byte 1: kind
//   kind 1  one operation: byte 2 = OpEffect of the operation right before
//           the blob (3 bytes in all; the key is the operation's)
//   kind 2  a write: v32 ops (the write's operations right before the blob,
//           every family), v32 families, then per family: v32 cf id,
//           v32 inserts, v32 erases, fixed64 hashes (inserts, then erases).
//           Every family the writer filtered is listed, with or without
//           effects; an operation of a family the record does not list is
//           uncovered (the writing open did not filter that family)
//   kind 3  delete-checker erasures (a count-0 batch of its own): fixed64
//           session, v64 generation, v32 families, per family: v32 cf id,
//           v32 n, n fixed64 hashes (written up to 1.0.0; still read)
//   kind 4  ingestion marker: v32 n, n v32 cf ids (written before an
//           ingestion into those families: no replay may cross it)
//   kind 5  checkpoint marker: fixed64 nonce (a count-0 batch written when
//           a checkpoint is taken, so that the WAL bytes it is bound to
//           exist and are its own; no effect)
//   kind 6  delete-checker erasures as kind 3, with the writing session's
//           open sequence (the DB's sequence when that FilteredDB opened)
//           after the generation: fixed64 session, v64 generation, v64 open
//           sequence, v32 families, per family as kind 3. A replay applies
//           the erasures of a session that opened at or after the
//           checkpoint's sequence (none of them can be in its image)
//
// Inserts are applied before erases within one record. A blob whose first
// byte is not kMagic is an application's LogData and is ignored; FilteredDB
// refuses an application's blob that starts with kMagic
// (BatchCollector::LogDataStatus). A replay applies the checker records of
// the checkpoint's own session made after its freeze and those of sessions
// opened at or after the checkpoint's sequence (wal_replay.h).
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_EFFECT_LOG_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_EFFECT_LOG_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "rocksdb/slice.h"
#include "rocksdb/status.h"
#include "rocksdb/types.h"
#include "rocksdb/write_batch.h"

namespace rocksdb_cuckoo {
namespace live {
namespace effect_log {

constexpr uint8_t kMagic = 0xC5;
enum class Kind : uint8_t {
  kOneOp = 1,
  kWrite = 2,
  kCheckerErasures = 3,
  kIngestion = 4,
  kCheckpoint = 5,
  kSessionCheckerErasures = 6,
};

// What a single-key write did to its family's filter.
enum class OpEffect : uint8_t {
  kNone = 0,      // nothing (a key already live, a key not live deleted)
  kInsert = 1,    // inserted the key's hash before the write
  kErase = 2,     // erases the key's hash after the write
  kDeferred = 3,  // a Delete whose check is left to the delete checker, or
                  // an unchecked Delete (unchecked_delete_ratio): its
                  // fingerprint stays until a check or a rescan
};

// The blob of a single-key write (3 constant bytes, no allocation).
ROCKSDB_NAMESPACE::Slice OneOp(OpEffect effect);

// The effects of one family in a write or a checker record.
struct FamilyEffects {
  uint32_t cf_id = 0;
  std::vector<uint64_t> inserts;
  std::vector<uint64_t> erases;
};

// The blob of a write of `ops` operations (all families) with these effects.
std::string WriteRecord(uint32_t ops, const std::vector<FamilyEffects>& cfs);

// The effects of one write of several operations (a batch, a DeleteRange, a
// transaction's commit): per filtered family, the hashes inserted before
// the write and those erased after it (deferred delete checks are not
// listed: the checker logs their erasures).
struct WriteEffects {
  std::vector<FamilyEffects> cfs;
  // The entry of family cf_id, appended (empty) if missing. Linear: a write
  // touches few families.
  FamilyEffects& Family(uint32_t cf_id) {
    for (FamilyEffects& f : cfs) {
      if (f.cf_id == cf_id) return f;
    }
    cfs.push_back(FamilyEffects{cf_id, {}, {}});
    return cfs.back();
  }
  // The record of this write for a WriteBatch of `ops` operations.
  std::string Record(uint32_t ops) const { return WriteRecord(ops, cfs); }
};

// Calls write(b) (e.g. DB::Write(wo, b)) with b a copy of `batch` with
// `record` appended after its operations. A copy (one allocation and a
// memcpy of the batch): appending to the caller's batch could move its
// bytes, which the write's plan still points into, and would change the
// caller's batch. A batch that cannot take the record (its max_bytes) is
// written without: a replay then finds the write uncovered and falls back
// to a scan.
ROCKSDB_NAMESPACE::Status WriteWithRecord(
    const ROCKSDB_NAMESPACE::WriteBatch& batch,
    const ROCKSDB_NAMESPACE::Slice& record,
    const std::function<
        ROCKSDB_NAMESPACE::Status(ROCKSDB_NAMESPACE::WriteBatch*)>& write);
// The blob of the checker's erasures (FamilyEffects::erases only), kind 6:
// `open_sequence` is the DB's sequence when session `session` opened.
std::string CheckerRecord(uint64_t session, uint64_t generation,
                          ROCKSDB_NAMESPACE::SequenceNumber open_sequence,
                          const std::vector<FamilyEffects>& cfs);
// The same erasures as written up to 1.0.0 (kind 3, no open sequence):
// for the tests of logs written by those versions.
std::string LegacyCheckerRecord(uint64_t session, uint64_t generation,
                                const std::vector<FamilyEffects>& cfs);
// The blob written before an ingestion into these families.
std::string IngestionRecord(const std::vector<uint32_t>& cf_ids);
// The blob written when a checkpoint is taken.
std::string CheckpointRecord(uint64_t nonce);

// One decoded effect.
struct Effect {
  uint32_t cf_id;
  uint64_t hash;
  // Sequence number of the (last) operation it belongs to; 0 for a checker
  // erasure (count-0 batches have none).
  ROCKSDB_NAMESPACE::SequenceNumber seq;
};
// A checker record's erasures of one family.
struct CheckerErasures {
  uint64_t session;
  uint64_t generation;
  // The session's open sequence (kind 6); has_open_sequence false for a
  // kind-3 record.
  bool has_open_sequence;
  ROCKSDB_NAMESPACE::SequenceNumber open_sequence;
  uint32_t cf_id;
  std::vector<uint64_t> hashes;
};

// Why a record cannot be replayed.
enum class DecodeFailure : uint8_t {
  kNone = 0,
  kUncovered,    // an operation of a watched family without effects
  kMalformed,    // an effect record that does not parse or fit
  kTransaction,  // a prepare / commit / rollback marker
  kUnknownOp,    // an operation type the decoder does not know
};

// The effects of one WAL record (a write group's merged batch).
struct RecordEffects {
  DecodeFailure failure = DecodeFailure::kNone;
  std::vector<Effect> inserts;  // applied before the erases
  std::vector<Effect> erases;
  // Point deletes of watched families whose erasure the record leaves to
  // later: single-key deletes logged kDeferred (a delete check, or an
  // unchecked delete), and a write's deletes it lists no erasure for (also
  // those of keys that were not live: an upper bound).
  std::vector<Effect> deferred;
  std::vector<CheckerErasures> checker;
  std::vector<uint32_t> ingestions;  // families an ingestion marker names
  uint64_t ops = 0;                  // sequence-consuming operations
  uint64_t covered_ops = 0;  // operations of watched families with effects
};

// Decodes the effects of the watched families from one WAL record whose
// first operation has sequence `first_seq`. Fails (not OK, the reason in
// the message and in RecordEffects::failure) when the record cannot be replayed
// exactly: an operation of a watched family that no effect record covers, a
// malformed effect record, a transaction marker (prepare/commit/rollback), or
// an operation type this decoder does not know.
class RecordDecoder {
 public:
  // `watched(cf_id)`: the families whose effects are wanted.
  explicit RecordDecoder(std::function<bool(uint32_t)> watched)
      : watched_(std::move(watched)) {}

  ROCKSDB_NAMESPACE::Status Decode(const ROCKSDB_NAMESPACE::WriteBatch& batch,
                                   ROCKSDB_NAMESPACE::SequenceNumber first_seq,
                                   RecordEffects* out) const;

 private:
  std::function<bool(uint32_t)> watched_;
};

}  // namespace effect_log
}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_EFFECT_LOG_H_
