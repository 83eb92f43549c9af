// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "wal_replay.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string_view>

#include "cuckoo/cuckoo_filter.h"  // cuckoo::HashKey
#include "effect_log.h"
#include "rocksdb/transaction_log.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::Env;
using ROCKSDB_NAMESPACE::SequenceNumber;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

namespace {

std::string WalName(uint64_t number) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%06" PRIu64 ".log", number);
  return buf;
}

std::string WalDir(DB* db) {
  const std::string dir = db->GetDBOptions().wal_dir;
  return dir.empty() ? db->GetName() : dir;
}

// Hash of the `n` bytes before `offset` of `path` (cuckoo::HashKey).
Status TailHash(Env* env, const std::string& path, uint64_t offset,
                uint64_t* hash) {
  std::unique_ptr<ROCKSDB_NAMESPACE::RandomAccessFile> file;
  Status s =
      env->NewRandomAccessFile(path, &file, ROCKSDB_NAMESPACE::EnvOptions());
  if (!s.ok()) return s;
  const uint64_t n = std::min(offset, WalBinding::kTailBytes);
  std::string scratch(n, '\0');
  Slice got;
  s = file->Read(offset - n, n, &got, scratch.data());
  if (!s.ok()) return s;
  if (got.size() != n) return Status::Incomplete("short read");
  *hash = cuckoo::HashKey(std::string_view(got.data(), got.size())).value;
  return Status::OK();
}

}  // namespace

Status ComputeWalBinding(DB* db, WalBinding* binding) {
  *binding = WalBinding();
  ROCKSDB_NAMESPACE::VectorLogPtr files;
  Status s = db->GetSortedWalFiles(files);
  if (!s.ok()) return s;
  Env* env = db->GetEnv();
  const std::string dir = WalDir(db);
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    const uint64_t size = (*it)->SizeFileBytes();
    if (size == 0) continue;
    const uint64_t number = (*it)->LogNumber();
    uint64_t hash = 0;
    // The file may have been archived since it was listed.
    s = TailHash(env, dir + "/" + WalName(number), size, &hash);
    if (!s.ok()) {
      s = TailHash(env, dir + "/archive/" + WalName(number), size, &hash);
    }
    if (!s.ok()) return s;
    binding->number = number;
    binding->offset = size;
    binding->tail_hash = hash;
    return Status::OK();
  }
  return Status::OK();  // no WAL byte yet
}

bool VerifyWalBinding(Env* env, const std::string& wal_dir,
                      const WalBinding& binding, std::string* why) {
  if (binding.number == 0) return true;
  const std::string name = WalName(binding.number);
  for (const std::string& path :
       {wal_dir + "/" + name, wal_dir + "/archive/" + name}) {
    uint64_t size = 0;
    if (!env->GetFileSize(path, &size).ok()) continue;
    if (size < binding.offset) {
      *why = "WAL history differs: WAL " + name + " has " +
             std::to_string(size) + " bytes, the checkpoint saw " +
             std::to_string(binding.offset);
      return false;
    }
    uint64_t hash = 0;
    const Status s = TailHash(env, path, binding.offset, &hash);
    if (!s.ok()) {
      *why = "cannot read WAL " + name + ": " + s.ToString();
      return false;
    }
    if (hash != binding.tail_hash) {
      *why = "WAL history differs: other bytes in WAL " + name +
             " than when the checkpoint was written";
      return false;
    }
    return true;
  }
  *why = "WAL released: WAL " + name + " of the checkpoint is gone";
  return false;
}

const char* ReplayFailureName(ReplayFailure f) {
  switch (f) {
    case ReplayFailure::kNone:
      return "none";
    case ReplayFailure::kUnsupported:
      return "unsupported";
    case ReplayFailure::kWalReleased:
      return "WAL released";
    case ReplayFailure::kGap:
      return "sequence gap";
    case ReplayFailure::kShort:
      return "WAL ends early";
    case ReplayFailure::kUncovered:
      return "write without filter effects";
    case ReplayFailure::kMalformed:
      return "malformed effect record";
    case ReplayFailure::kTransaction:
      return "transaction markers";
    case ReplayFailure::kIngestion:
      return "ingestion";
    case ReplayFailure::kReadError:
      return "read error";
    case ReplayFailure::kCancelled:
      return "cancelled";
  }
  return "?";
}

namespace {

ReplayResult Failed(ReplayFailure f, std::string reason,
                    const ReplayStats& stats) {
  ReplayResult r;
  r.failure = f;
  r.reason = std::move(reason);
  r.stats = stats;
  return r;
}

}  // namespace

ReplayResult ReplayWal(DB* db, const std::vector<ReplayTarget>& targets,
                       SequenceNumber to, uint64_t current_session,
                       const ReplaySink& sink,
                       const std::function<bool()>& cancelled) {
  ReplayStats stats;
  if (targets.empty()) return ReplayResult();
  SequenceNumber from = to;
  for (const ReplayTarget& t : targets) from = std::min(from, t.from);
  if (from >= to) return ReplayResult();  // no write after the checkpoints
  auto target_of = [&](uint32_t cf) -> const ReplayTarget* {
    for (const ReplayTarget& t : targets) {
      if (t.cf_id == cf) return &t;
    }
    return nullptr;
  };
  const effect_log::RecordDecoder decoder(
      [&](uint32_t cf) { return target_of(cf) != nullptr; });

  // From the record holding `from` (it is read, its effects are older than
  // every target's X), or from the DB's first write.
  const SequenceNumber start = std::max<SequenceNumber>(from, 1);
  std::unique_ptr<ROCKSDB_NAMESPACE::TransactionLogIterator> iter;
  Status s = db->GetUpdatesSince(start, &iter);
  if (s.IsNotSupported()) {
    return Failed(ReplayFailure::kUnsupported,
                  "WAL replay not supported: " + s.ToString(), stats);
  }
  if (!s.ok() || iter == nullptr || !iter->Valid()) {
    return Failed(ReplayFailure::kWalReleased,
                  "WAL released: no WAL record at sequence " +
                      std::to_string(start) +
                      (s.ok() ? std::string() : " (" + s.ToString() + ")"),
                  stats);
  }
  // Last sequence of the previous record (of X before the first).
  SequenceNumber last = from;
  bool first = true;
  effect_log::RecordEffects effects;
  for (; iter->Valid(); iter->Next()) {
    if (cancelled && cancelled()) {
      return Failed(ReplayFailure::kCancelled, "replay cancelled", stats);
    }
    ROCKSDB_NAMESPACE::BatchResult batch = iter->GetBatch();
    const SequenceNumber seq = batch.sequence;
    const uint32_t count = batch.writeBatchPtr->Count();
    if (first) {
      first = false;
      // The record holding X, or the first record after X when none holds
      // it (X's write was not logged: a DB whose last writes before the
      // checkpoint were flushed and their WAL released, e.g. a checkpoint
      // taken right after Open). Records after X start at X + 1.
      const bool holds_start =
          seq == from + 1 || (seq <= start && seq + count - 1 >= start);
      if (!holds_start) {
        return Failed(ReplayFailure::kWalReleased,
                      "WAL released: the oldest WAL record kept after "
                      "sequence " +
                          std::to_string(from) + " starts at " +
                          std::to_string(seq),
                      stats);
      }
    } else if (seq != last + 1) {
      return Failed(ReplayFailure::kGap,
                    "sequence gap at " + std::to_string(last + 1) +
                        " (next WAL record at " + std::to_string(seq) +
                        "): writes without WAL (disableWAL) or a lost WAL",
                    stats);
    }
    // A write of the new session (after `to`) ends the replay.
    if (count > 0 && seq > to) break;
    const SequenceNumber record_last = count > 0 ? seq + count - 1 : last;
    // A record is after a checkpoint at X when its operations are (> X), or,
    // for a count-0 record, when it follows the record ending at X.
    auto after = [&](SequenceNumber x) {
      return count > 0 ? record_last > x : last >= x;
    };
    if (count > 0 && record_last <= from) {  // the record holding X
      last = record_last;
      continue;
    }
    ++stats.records;
    stats.ops += count;
    stats.bytes += batch.writeBatchPtr->GetDataSize();
    Status d = decoder.Decode(*batch.writeBatchPtr, seq, &effects);
    if (!d.ok()) {
      ReplayFailure f = ReplayFailure::kMalformed;
      if (effects.failure == effect_log::DecodeFailure::kUncovered) {
        f = ReplayFailure::kUncovered;
      } else if (effects.failure == effect_log::DecodeFailure::kTransaction) {
        f = ReplayFailure::kTransaction;
      }
      return Failed(f, d.getState() != nullptr ? d.getState() : d.ToString(),
                    stats);
    }
    for (uint32_t cf : effects.ingestions) {
      if (after(target_of(cf)->from)) {
        return Failed(ReplayFailure::kIngestion,
                      "ingestion into column family " + std::to_string(cf) +
                          " after the checkpoint (WAL record at " +
                          std::to_string(seq) + ")",
                      stats);
      }
    }
    for (const effect_log::Effect& e : effects.inserts) {
      if (e.seq > target_of(e.cf_id)->from && e.seq <= to) {
        sink.insert(e.cf_id, e.hash);
        ++stats.inserts;
      }
    }
    for (const effect_log::Effect& e : effects.erases) {
      if (e.seq > target_of(e.cf_id)->from && e.seq <= to) {
        sink.erase(e.cf_id, e.hash);
        ++stats.erases;
      }
    }
    for (const effect_log::Effect& e : effects.deferred) {
      if (sink.deferred && e.seq > target_of(e.cf_id)->from && e.seq <= to) {
        sink.deferred(e.cf_id, e.hash);
      }
    }
    for (const effect_log::CheckerErasures& c : effects.checker) {
      const ReplayTarget* t = target_of(c.cf_id);
      // Which erasures the image cannot hold yet:
      //  - the checkpoint's own session's made after its freeze (generation);
      //  - those of a session that opened at or after X (kind 6 records
      //    carry the open sequence): its deletes all follow X, so the image
      //    holds none of its erasures, however that session built its own
      //    filter (hostile review 8, O1: skipping them piled up extra
      //    fingerprints from crash to crash).
      // Any other session opened before X. Its records may follow X in the
      // WAL and still be older than the image: a count-0 record left after
      // a killed session's last write is read once a later write follows
      // it, and the checkpoint of the open in between (built by a scan, or
      // by a replay that did not see that record) may or may not hold the
      // fingerprint. Skipping one leaves an extra fingerprint (a false
      // positive until the next rebuild); applying one twice can take a
      // live key's. The caller's own session (its erasures are in its delta
      // log) is never the checkpoint's.
      if (c.session == current_session || !after(t->from)) continue;
      const bool own = c.session == t->session;
      const bool later =
          !own && c.has_open_sequence && c.open_sequence >= t->from;
      if (!(own && c.generation > t->erase_generation) && !later) {
        if (!own) stats.checker_skipped += c.hashes.size();
        continue;
      }
      for (uint64_t h : c.hashes) {
        sink.erase(c.cf_id, h);
        ++stats.checker_erases;
      }
    }
    last = record_last;
  }
  if (last < to) {
    s = iter->status();
    if (!s.ok() && !s.IsTryAgain()) {
      const bool gap = s.IsCorruption() || s.IsNotFound();
      return Failed(gap ? ReplayFailure::kGap : ReplayFailure::kReadError,
                    (gap ? "sequence gap after " : "WAL read error after ") +
                        std::to_string(last) +
                        (gap ? " (writes without WAL (disableWAL) or a lost "
                               "WAL): "
                             : ": ") +
                        s.ToString(),
                    stats);
    }
    return Failed(ReplayFailure::kShort,
                  "WAL ends at sequence " + std::to_string(last) +
                      ", the DB is at " + std::to_string(to),
                  stats);
  }
  return ReplayResult{ReplayFailure::kNone, "", stats};
}

}  // namespace live
}  // namespace rocksdb_cuckoo
