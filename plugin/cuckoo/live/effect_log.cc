// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "effect_log.h"

#include <algorithm>

#include <string_view>

#include "cuckoo/cuckoo_filter.h"  // cuckoo::HashKey
#include "rocksdb/version.h"
#include "util/bit_util.h"  // core: LoadLE / StoreLE

namespace rocksdb_cuckoo {
namespace live {
namespace effect_log {

using ROCKSDB_NAMESPACE::SequenceNumber;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

namespace {

// The one-operation blobs, one per OpEffect.
constexpr char kOneOpBlobs[4][3] = {
    {char(kMagic), char(Kind::kOneOp), 0},
    {char(kMagic), char(Kind::kOneOp), 1},
    {char(kMagic), char(Kind::kOneOp), 2},
    {char(kMagic), char(Kind::kOneOp), 3},
};

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutFixed64(std::string* out, uint64_t v) {
  char buf[8];
  cuckoo::internal::StoreLE<uint64_t>(buf, v);
  out->append(buf, 8);
}

void PutHeader(std::string* out, Kind kind) {
  out->push_back(static_cast<char>(kMagic));
  out->push_back(static_cast<char>(kind));
}

// Reads from a blob; any read past its end makes ok() false.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  bool done() const { return ok_ && in_.empty(); }
  uint64_t Varint(uint64_t max = ~uint64_t{0}) {
    uint64_t v = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
      if (in_.empty()) break;
      const uint8_t b = static_cast<uint8_t>(in_.front());
      in_.remove_prefix(1);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        if (v > max) ok_ = false;
        return ok_ ? v : 0;
      }
    }
    ok_ = false;
    return 0;
  }
  uint64_t Fixed64() {
    if (in_.size() < 8) {
      ok_ = false;
      return 0;
    }
    const uint64_t v = cuckoo::internal::LoadLE<uint64_t>(in_.data());
    in_.remove_prefix(8);
    return v;
  }
  uint8_t Byte() {
    if (in_.empty()) {
      ok_ = false;
      return 0;
    }
    const uint8_t b = static_cast<uint8_t>(in_.front());
    in_.remove_prefix(1);
    return b;
  }
  // n fixed64 values, n checked against the bytes left first.
  bool Hashes(uint64_t n, std::vector<uint64_t>* out) {
    if (!ok_ || n > in_.size() / 8) {
      ok_ = false;
      return false;
    }
    out->reserve(out->size() + n);
    for (uint64_t i = 0; i < n; ++i) out->push_back(Fixed64());
    return ok_;
  }

 private:
  std::string_view in_;
  bool ok_ = true;
};

constexpr uint64_t kMaxU32 = 0xffffffffu;

class DecodeHandler : public ROCKSDB_NAMESPACE::WriteBatch::Handler {
 public:
  DecodeHandler(const std::function<bool(uint32_t)>& watched,
                SequenceNumber first_seq, RecordEffects* out)
      : watched_(watched), seq_(first_seq), out_(out) {}

  Status PutCF(uint32_t cf, const Slice& key, const Slice&) override {
    return Op(cf, key, true);
  }
  Status PutEntityCF(uint32_t cf, const Slice& key, const Slice&) override {
    return Op(cf, key, true);
  }
#if ROCKSDB_MAJOR >= 9
  Status TimedPutCF(uint32_t cf, const Slice& key, const Slice&,
                    uint64_t) override {
    return Op(cf, key, true);
  }
#endif
  Status DeleteCF(uint32_t cf, const Slice& key) override {
    return Op(cf, key, true, /*del=*/true);
  }
  Status SingleDeleteCF(uint32_t cf, const Slice& key) override {
    return Op(cf, key, true, /*del=*/true);
  }
  Status DeleteRangeCF(uint32_t cf, const Slice& begin, const Slice&) override {
    return Op(cf, begin, false);
  }
  Status MergeCF(uint32_t cf, const Slice& key, const Slice&) override {
    return Op(cf, key, true);
  }
  Status PutBlobIndexCF(uint32_t cf, const Slice& key, const Slice&) override {
    return Op(cf, key, true);
  }
  void LogData(const Slice& blob) override {
    if (blob.size() < 2 || static_cast<uint8_t>(blob[0]) != kMagic) return;
    ParseRecord(std::string_view(blob.data(), blob.size()));
  }
  Status MarkBeginPrepare(bool) override { return Marker("begin prepare"); }
  Status MarkEndPrepare(const Slice&) override { return Marker("end prepare"); }
  Status MarkNoop(bool) override { return Status::OK(); }
  Status MarkRollback(const Slice&) override { return Marker("rollback"); }
  Status MarkCommit(const Slice&) override { return Marker("commit"); }
  Status MarkCommitWithTimestamp(const Slice&, const Slice&) override {
    return Marker("commit");
  }
  bool Continue() override { return status_.ok(); }

  // After Iterate: operations of watched families left uncovered.
  Status Finish(const Status& iterate_status) {
    if (!status_.ok()) return status_;
    if (!iterate_status.ok()) {
      Fail(DecodeFailure::kUnknownOp,
           "unreadable WAL record: " + iterate_status.ToString());
      return status_;
    }
    CheckUncovered(pending_.size());
    pending_.clear();
    return status_;
  }

 private:
  struct Pending {
    uint32_t cf;
    Slice key;
    SequenceNumber seq;
    bool watched;
    bool keyed;  // a point operation (not DeleteRange)
    bool del;    // Delete or SingleDelete
  };

  Status Op(uint32_t cf, const Slice& key, bool keyed, bool del = false) {
    pending_.push_back(Pending{cf, key, seq_, watched_(cf), keyed, del});
    ++seq_;
    ++out_->ops;
    return Status::OK();
  }

  // Returns OK (RocksDB asserts that MarkBeginPrepare does); Continue()
  // then stops the iteration.
  Status Marker(const char* what) {
    Fail(DecodeFailure::kTransaction,
         std::string("transaction marker (") + what + ") in the WAL");
    return Status::OK();
  }

  void Fail(DecodeFailure failure, const std::string& why) {
    if (!status_.ok()) return;
    out_->failure = failure;
    status_ = Status::Corruption(why);
  }

  // The first `uncovered` pending operations have no effect record: none
  // may be of a watched family.
  void CheckUncovered(size_t uncovered) {
    for (size_t i = 0; i < uncovered; ++i) {
      if (pending_[i].watched) {
        Fail(DecodeFailure::kUncovered,
             "write at sequence " + std::to_string(pending_[i].seq) +
                 " to column family " + std::to_string(pending_[i].cf) +
                 " without filter effects");
        return;
      }
    }
  }

  // Checks and takes the `n` operations right before an effect record.
  bool Cover(uint64_t n) {
    if (n == 0 || n > pending_.size()) {
      Fail(DecodeFailure::kMalformed, "filter effect record covers " +
                                          std::to_string(n) + " operations, " +
                                          std::to_string(pending_.size()) +
                                          " precede it");
      return false;
    }
    CheckUncovered(pending_.size() - n);
    if (!status_.ok()) return false;
    for (size_t i = pending_.size() - n; i < pending_.size(); ++i) {
      if (pending_[i].watched) ++out_->covered_ops;
    }
    return true;
  }

  void ParseRecord(std::string_view blob) {
    Reader in(blob);
    in.Byte();  // magic
    const uint8_t kind = in.Byte();
    switch (static_cast<Kind>(kind)) {
      case Kind::kOneOp: {
        const uint8_t effect = in.Byte();
        if (!in.done() || effect > 3) break;
        if (!Cover(1)) return;
        const Pending& op = pending_.back();
        if (!op.keyed) break;  // a DeleteRange needs a kWrite record
        if (op.watched) {
          const uint64_t h =
              cuckoo::HashKey(std::string_view(op.key.data(), op.key.size()))
                  .value;
          if (effect == static_cast<uint8_t>(OpEffect::kInsert)) {
            out_->inserts.push_back(Effect{op.cf, h, op.seq});
          } else if (effect == static_cast<uint8_t>(OpEffect::kErase)) {
            out_->erases.push_back(Effect{op.cf, h, op.seq});
          } else if (effect == static_cast<uint8_t>(OpEffect::kDeferred) &&
                     op.del) {
            out_->deferred.push_back(Effect{op.cf, h, op.seq});
          }
        }
        pending_.clear();
        return;
      }
      case Kind::kWrite: {
        const uint64_t ops = in.Varint(kMaxU32);
        const uint64_t families = in.Varint(kMaxU32);
        if (!in.ok()) break;
        if (!Cover(ops)) return;
        const SequenceNumber seq = pending_.back().seq;
        struct Family {
          uint32_t cf;
          uint64_t inserts;
          std::vector<uint64_t> hashes;  // inserts, then erases
        };
        std::vector<Family> listed;
        for (uint64_t f = 0; f < families && in.ok(); ++f) {
          Family family{static_cast<uint32_t>(in.Varint(kMaxU32)), 0, {}};
          family.inserts = in.Varint(kMaxU32);
          const uint64_t erases = in.Varint(kMaxU32);
          if (!in.Hashes(family.inserts, &family.hashes) ||
              !in.Hashes(erases, &family.hashes)) {
            break;
          }
          listed.push_back(std::move(family));
        }
        if (!in.done()) break;
        // The record covers an operation only if it names the operation's
        // family (the writer lists every family it filtered): a family the
        // writing open did not filter stays uncovered.
        for (size_t i = pending_.size() - ops; i < pending_.size(); ++i) {
          const Pending& op = pending_[i];
          if (!op.watched) continue;
          if (std::none_of(listed.begin(), listed.end(),
                           [&](const Family& f) { return f.cf == op.cf; })) {
            Fail(DecodeFailure::kUncovered,
                 "write at sequence " + std::to_string(op.seq) +
                     " to column family " + std::to_string(op.cf) +
                     " without filter effects (its family was not filtered)");
            return;
          }
        }
        for (const Family& f : listed) {
          if (!watched_(f.cf)) continue;
          for (uint64_t i = 0; i < f.hashes.size(); ++i) {
            (i < f.inserts ? out_->inserts : out_->erases)
                .push_back(Effect{f.cf, f.hashes[i], seq});
          }
        }
        // The point deletes the record lists no erasure for: left to a
        // check (or unchecked), or of keys that were not live.
        for (const Family& f : listed) {
          if (!watched_(f.cf)) continue;
          std::vector<uint64_t> erased(f.hashes.begin() + f.inserts,
                                       f.hashes.end());
          std::sort(erased.begin(), erased.end());
          for (size_t i = pending_.size() - ops; i < pending_.size(); ++i) {
            const Pending& op = pending_[i];
            if (op.cf != f.cf || !op.del || !op.keyed) continue;
            const uint64_t h =
                cuckoo::HashKey(std::string_view(op.key.data(), op.key.size()))
                    .value;
            auto it = std::lower_bound(erased.begin(), erased.end(), h);
            if (it != erased.end() && *it == h) {
              erased.erase(it);  // one erasure per delete
            } else {
              out_->deferred.push_back(Effect{f.cf, h, seq});
            }
          }
        }
        pending_.clear();
        return;
      }
      case Kind::kCheckerErasures:
      case Kind::kSessionCheckerErasures: {
        const bool has_open =
            kind == static_cast<uint8_t>(Kind::kSessionCheckerErasures);
        const uint64_t session = in.Fixed64();
        const uint64_t generation = in.Varint();
        const SequenceNumber open_sequence = has_open ? in.Varint() : 0;
        const uint64_t families = in.Varint(kMaxU32);
        for (uint64_t f = 0; f < families && in.ok(); ++f) {
          CheckerErasures e{session,
                            generation,
                            has_open,
                            open_sequence,
                            static_cast<uint32_t>(in.Varint(kMaxU32)),
                            {}};
          const uint64_t n = in.Varint(kMaxU32);
          if (!in.Hashes(n, &e.hashes)) break;
          if (watched_(e.cf_id)) out_->checker.push_back(std::move(e));
        }
        if (!in.done()) break;
        return;
      }
      case Kind::kCheckpoint: {
        in.Fixed64();
        if (!in.done()) break;
        return;
      }
      case Kind::kIngestion: {
        const uint64_t n = in.Varint(kMaxU32);
        for (uint64_t i = 0; i < n && in.ok(); ++i) {
          const uint32_t cf = static_cast<uint32_t>(in.Varint(kMaxU32));
          if (in.ok() && watched_(cf)) out_->ingestions.push_back(cf);
        }
        if (!in.done()) break;
        return;
      }
    }
    Fail(DecodeFailure::kMalformed,
         "malformed filter effect record (kind " + std::to_string(kind) + ", " +
             std::to_string(blob.size()) + " bytes)");
  }

  const std::function<bool(uint32_t)>& watched_;
  SequenceNumber seq_;
  RecordEffects* out_;
  std::vector<Pending> pending_;
  Status status_;
};

}  // namespace

Slice OneOp(OpEffect effect) {
  return Slice(kOneOpBlobs[static_cast<uint8_t>(effect) & 3], 3);
}

std::string WriteRecord(uint32_t ops, const std::vector<FamilyEffects>& cfs) {
  std::string out;
  PutHeader(&out, Kind::kWrite);
  PutVarint(&out, ops);
  PutVarint(&out, cfs.size());
  for (const FamilyEffects& f : cfs) {
    PutVarint(&out, f.cf_id);
    PutVarint(&out, f.inserts.size());
    PutVarint(&out, f.erases.size());
    for (uint64_t h : f.inserts) PutFixed64(&out, h);
    for (uint64_t h : f.erases) PutFixed64(&out, h);
  }
  return out;
}

Status WriteWithRecord(
    const ROCKSDB_NAMESPACE::WriteBatch& batch, const Slice& record,
    const std::function<Status(ROCKSDB_NAMESPACE::WriteBatch*)>& write) {
  ROCKSDB_NAMESPACE::WriteBatch with(batch);
  with.PutLogData(record).PermitUncheckedError();  // see the header
  return write(&with);
}

namespace {

void PutCheckerFamilies(std::string* out,
                        const std::vector<FamilyEffects>& cfs) {
  PutVarint(out, cfs.size());
  for (const FamilyEffects& f : cfs) {
    PutVarint(out, f.cf_id);
    PutVarint(out, f.erases.size());
    for (uint64_t h : f.erases) PutFixed64(out, h);
  }
}

}  // namespace

std::string CheckerRecord(uint64_t session, uint64_t generation,
                          SequenceNumber open_sequence,
                          const std::vector<FamilyEffects>& cfs) {
  std::string out;
  PutHeader(&out, Kind::kSessionCheckerErasures);
  PutFixed64(&out, session);
  PutVarint(&out, generation);
  PutVarint(&out, open_sequence);
  PutCheckerFamilies(&out, cfs);
  return out;
}

std::string LegacyCheckerRecord(uint64_t session, uint64_t generation,
                                const std::vector<FamilyEffects>& cfs) {
  std::string out;
  PutHeader(&out, Kind::kCheckerErasures);
  PutFixed64(&out, session);
  PutVarint(&out, generation);
  PutCheckerFamilies(&out, cfs);
  return out;
}

std::string IngestionRecord(const std::vector<uint32_t>& cf_ids) {
  std::string out;
  PutHeader(&out, Kind::kIngestion);
  PutVarint(&out, cf_ids.size());
  for (uint32_t id : cf_ids) PutVarint(&out, id);
  return out;
}

std::string CheckpointRecord(uint64_t nonce) {
  std::string out;
  PutHeader(&out, Kind::kCheckpoint);
  PutFixed64(&out, nonce);
  return out;
}

Status RecordDecoder::Decode(const ROCKSDB_NAMESPACE::WriteBatch& batch,
                             SequenceNumber first_seq,
                             RecordEffects* out) const {
  *out = RecordEffects();
  DecodeHandler handler(watched_, first_seq, out);
  const Status st = batch.Iterate(&handler);
  return handler.Finish(st);
}

}  // namespace effect_log
}  // namespace live
}  // namespace rocksdb_cuckoo
