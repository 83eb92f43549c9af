// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Reading the live-key filter's effects back from the WAL (internal; design
// in docs/recovery_design.md, sections 3.1 and 3.4):
//   - WalBinding: which WAL bytes a checkpoint was taken against, so that a
//     checkpoint is never used with another history (a byte-copied DB
//     directory that diverged, a WAL that was released);
//   - ReplayWal: the effects (effect_log.h) of every write after a
//     checkpoint's sequence X up to the DB's sequence Y, read with
//     DB::GetUpdatesSince, with continuity checks; every case the log cannot
//     cover ends the replay with a reason (ReplayFailure), and the caller
//     falls back to a scan of the DB.
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_WAL_REPLAY_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_WAL_REPLAY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/status.h"
#include "rocksdb/types.h"

namespace rocksdb_cuckoo {
namespace live {

// A prefix of the WAL history: the WAL file `number` had at least `offset`
// bytes, and its last min(offset, kTailBytes) bytes before `offset` hash to
// `tail_hash` (cuckoo::HashKey). number 0: no WAL file had any byte.
struct WalBinding {
  static constexpr uint64_t kTailBytes = 64 << 10;
  uint64_t number = 0;
  uint64_t offset = 0;
  uint64_t tail_hash = 0;
};

// The binding of the DB's WAL now: its newest non-empty WAL file (live or
// archived) and that file's size. Call after FlushWAL(true): every write
// made before is then inside the bound prefix and durable.
ROCKSDB_NAMESPACE::Status ComputeWalBinding(ROCKSDB_NAMESPACE::DB* db,
                                            WalBinding* binding);
// True if the WAL files of `wal_dir` (live or archive/) still hold the bound
// prefix; otherwise false with the reason ("released": the file is gone;
// "differs": shorter or other bytes). Usable before the DB is opened.
bool VerifyWalBinding(ROCKSDB_NAMESPACE::Env* env, const std::string& wal_dir,
                      const WalBinding& binding, std::string* why);

// Why a replay cannot give the exact filter.
enum class ReplayFailure : uint8_t {
  kNone = 0,
  kUnsupported,  // GetUpdatesSince not available (write-prepared txns...)
  kWalReleased,  // the WAL after the checkpoint is gone (not archived,
                 // purged, or trimmed)
  kGap,          // a sequence gap: unlogged (disableWAL) writes, lost WAL
  kShort,        // the WAL ends before the DB's sequence
  kUncovered,    // a write to a replayed family without filter effects
  kMalformed,    // an unreadable effect record
  kTransaction,  // prepare / commit / rollback markers
  kIngestion,    // an ingestion into a replayed family after the checkpoint
  kReadError,    // the iterator failed
  kCancelled,
};
const char* ReplayFailureName(ReplayFailure f);

// One family to replay: the effects after its checkpoint's sequence.
struct ReplayTarget {
  uint32_t cf_id = 0;
  ROCKSDB_NAMESPACE::SequenceNumber from = 0;  // X: replay (X, to]
  // The checkpoint's session and last checker generation: that session's
  // checker records up to this generation are in the image already; only
  // its later ones are applied. Records of sessions opened at or after
  // `from` are applied too; those of sessions opened before it are skipped
  // (they may be in the image: extra fingerprints, never a missing one).
  uint64_t session = 0;
  uint64_t erase_generation = 0;
};

struct ReplayStats {
  uint64_t records = 0;  // WAL records read after X
  uint64_t ops = 0;      // sequence-consuming operations in them
  uint64_t inserts = 0;  // effects applied
  uint64_t erases = 0;
  uint64_t checker_erases = 0;
  // Checker erasures of sessions opened before the checkpoint, skipped:
  // at most this many extra fingerprints.
  uint64_t checker_skipped = 0;
  uint64_t bytes = 0;  // WriteBatch bytes read
};

struct ReplayResult {
  ReplayFailure failure = ReplayFailure::kNone;
  std::string reason;  // for the failure, human-readable
  ReplayStats stats;
  bool ok() const { return failure == ReplayFailure::kNone; }
};

// Receives the effects, in WAL order (a record's inserts before its erases).
struct ReplaySink {
  std::function<void(uint32_t cf_id, uint64_t hash)> insert;
  std::function<void(uint32_t cf_id, uint64_t hash)> erase;
  // A delete after X whose erasure its write left to later (a delete
  // check, an unchecked delete; effect_log::RecordEffects::deferred, which
  // includes a batch's deletes of keys that were not live: the record does
  // not tell them apart), in order with the effects above. Optional.
  std::function<void(uint32_t cf_id, uint64_t hash)> deferred;
};

// Replays the effects of the targets' families from min(from) to `to` (the
// DB's sequence when the caller's own log of new writes started; every
// record after it is left alone, and so are the checker records of
// `current_session`, the caller's own). All targets must have from <= to.
// `cancelled` is polled between records. On failure the sink may have
// received part of the effects: the caller discards what it built.
ReplayResult ReplayWal(ROCKSDB_NAMESPACE::DB* db,
                       const std::vector<ReplayTarget>& targets,
                       ROCKSDB_NAMESPACE::SequenceNumber to,
                       uint64_t current_session, const ReplaySink& sink,
                       const std::function<bool()>& cancelled = nullptr);

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_WAL_REPLAY_H_
