// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The recovery modules of FilteredDB against real RocksDB databases
// (docs/recovery_design.md): the effect records (effect_log), the RocksDB
// WAL facts they rest on, the replay from a sequence number with its
// continuity checks and every fallback reason (wal_replay), and the
// checkpoint identity and the rules that decide whether a checkpoint may be
// used (checkpoint_file).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../../plugin/cuckoo/live/checkpoint_file.h"
#include "../../plugin/cuckoo/live/effect_log.h"
#include "../../plugin/cuckoo/live/wal_replay.h"
#include "cuckoo/live_key_filter.h"
#include "open_db.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "rocksdb/sst_file_writer.h"
#include "rocksdb/transaction_log.h"
#include "rocksdb/version.h"
#include "rocksdb/write_batch.h"
#include "test_util.h"

namespace rocksdb_cuckoo {
namespace live {
namespace {

using effect_log::OpEffect;
using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::FlushOptions;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::SequenceNumber;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;
using test::Key;
using test::TempDir;

uint64_t H(const std::string& key) { return cuckoo::HashKey(key).value; }

// Options that keep WAL files after flushes (archive/), as FilteredDB asks
// for when it replays.
Options ArchivingOptions() {
  Options o = test::TestOptions();
  o.WAL_ttl_seconds = 1000000;
  return o;
}

struct Db {
  std::unique_ptr<DB> db;
  std::vector<ColumnFamilyHandle*> cfs;  // [0] default, [1] "other"
  ~Db() {
    for (ColumnFamilyHandle* h : cfs) {
      if (h != db->DefaultColumnFamily())
        db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    }
    db->Close().PermitUncheckedError();
  }
};

std::unique_ptr<Db> OpenDb(const std::string& path, Options o) {
  auto d = std::make_unique<Db>();
  o.create_missing_column_families = true;
  std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor> cfds = {
      {ROCKSDB_NAMESPACE::kDefaultColumnFamilyName,
       ROCKSDB_NAMESPACE::ColumnFamilyOptions(o)},
      {"other", ROCKSDB_NAMESPACE::ColumnFamilyOptions(o)}};
  DB* raw = nullptr;
  Status s = DB::Open(ROCKSDB_NAMESPACE::DBOptions(o), path, cfds, &d->cfs,
#if ROCKSDB_MAJOR >= 10
                      &d->db);
  (void)raw;
#else
                      &raw);
  d->db.reset(raw);
#endif
  EXPECT_TRUE(s.ok()) << s.ToString();
  return d;
}

// A FilteredDB-shaped write: the operation, then its effect record.
void PutWithEffect(Db* d, const std::string& key, OpEffect effect, int cf = 0) {
  WriteBatch b;
  ASSERT_TRUE(b.Put(d->cfs[cf], key, "v").ok());
  ASSERT_TRUE(b.PutLogData(effect_log::OneOp(effect)).ok());
  ASSERT_TRUE(d->db->Write(WriteOptions(), &b).ok());
}

void DeleteWithEffect(Db* d, const std::string& key, OpEffect effect,
                      int cf = 0) {
  WriteBatch b;
  ASSERT_TRUE(b.Delete(d->cfs[cf], key).ok());
  ASSERT_TRUE(b.PutLogData(effect_log::OneOp(effect)).ok());
  ASSERT_TRUE(d->db->Write(WriteOptions(), &b).ok());
}

void WriteLogOnly(Db* d, const std::string& blob) {
  WriteBatch b;
  ASSERT_TRUE(b.PutLogData(blob).ok());
  ASSERT_TRUE(d->db->Write(WriteOptions(), &b).ok());
}

// What a replay delivered: per family, the multiset of hashes (inserts add,
// erases remove).
struct Collected {
  std::map<uint32_t, std::map<uint64_t, int>> counts;
  std::vector<std::string> log;  // "+cf:hash" / "-cf:hash" in order
  ReplaySink Sink() {
    ReplaySink s;
    s.insert = [this](uint32_t cf, uint64_t h) {
      ++counts[cf][h];
      log.push_back("+" + std::to_string(cf) + ":" + std::to_string(h));
    };
    s.erase = [this](uint32_t cf, uint64_t h) {
      --counts[cf][h];
      log.push_back("-" + std::to_string(cf) + ":" + std::to_string(h));
    };
    return s;
  }
  int Count(uint32_t cf, const std::string& key) { return counts[cf][H(key)]; }
};

ReplayResult Replay(Db* d, SequenceNumber from, Collected* out,
                    std::vector<uint32_t> cfs = {0}, uint64_t session = 0,
                    uint64_t generation = 0, uint64_t current_session = 99) {
  std::vector<ReplayTarget> targets;
  for (uint32_t cf : cfs) targets.push_back({cf, from, session, generation});
  return ReplayWal(d->db.get(), targets, d->db->GetLatestSequenceNumber(),
                   current_session, out->Sink());
}

// ------------------------------------------------------------ RocksDB facts

// Design, section 2, facts 1-4 on this RocksDB: a LogData-only batch is
// written with the next sequence number in its header and consumes none;
// GetUpdatesSince returns it between two writes but not after the last one.
TEST(RecoveryWalFacts, LogDataOnlyBatchesConsumeNoSequenceNumber) {
  TempDir dir;
  auto d = OpenDb(dir.Sub("db"), ArchivingOptions());
  ASSERT_TRUE(d->db->Put(WriteOptions(), "a", "1").ok());
  const SequenceNumber before = d->db->GetLatestSequenceNumber();
  WriteLogOnly(d.get(), "tail-1");
  EXPECT_EQ(d->db->GetLatestSequenceNumber(), before);
  // Not returned while it is after the DB's last sequence.
  auto records = [&](SequenceNumber from) {
    std::vector<std::pair<SequenceNumber, uint32_t>> out;
    std::unique_ptr<ROCKSDB_NAMESPACE::TransactionLogIterator> it;
    EXPECT_TRUE(d->db->GetUpdatesSince(from, &it).ok());
    for (; it->Valid(); it->Next()) {
      auto b = it->GetBatch();
      out.emplace_back(b.sequence, b.writeBatchPtr->Count());
    }
    return out;
  };
  EXPECT_EQ(records(before),
            (std::vector<std::pair<SequenceNumber, uint32_t>>{{before, 1}}));
  // Returned once a later write follows it, with the next sequence number.
  ASSERT_TRUE(d->db->Put(WriteOptions(), "b", "2").ok());
  EXPECT_EQ(records(before),
            (std::vector<std::pair<SequenceNumber, uint32_t>>{
                {before, 1}, {before + 1, 0}, {before + 1, 1}}));
  // A replay from the sequence after a record skips the count-0 record that
  // follows it: the replay starts at the record holding X itself.
  EXPECT_EQ(
      records(before + 1),
      (std::vector<std::pair<SequenceNumber, uint32_t>>{{before + 1, 1}}));
}

// A file system whose WAL appends wait while its gate is closed. The write
// that leads the write queue appends its group's WAL record, so holding that
// append holds the queue: every write that arrives meanwhile queues up
// behind it, and the next leader merges them into one WAL record (RocksDB's
// write groups, without relying on threads meeting by chance).
class GatedWalFs : public ROCKSDB_NAMESPACE::FileSystemWrapper {
 public:
  explicit GatedWalFs(const std::shared_ptr<ROCKSDB_NAMESPACE::FileSystem>& t)
      : FileSystemWrapper(t) {}
  const char* Name() const override { return "GatedWalFs"; }

  ROCKSDB_NAMESPACE::IOStatus NewWritableFile(
      const std::string& fname, const ROCKSDB_NAMESPACE::FileOptions& opts,
      std::unique_ptr<ROCKSDB_NAMESPACE::FSWritableFile>* result,
      ROCKSDB_NAMESPACE::IODebugContext* dbg) override {
    ROCKSDB_NAMESPACE::IOStatus s =
        target()->NewWritableFile(fname, opts, result, dbg);
    if (s.ok() && fname.size() > 4 &&
        fname.compare(fname.size() - 4, 4, ".log") == 0) {
      result->reset(new File(std::move(*result), this));
    }
    return s;
  }

  void CloseGate() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
    held_ = false;
  }
  void OpenGate() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = false;
    cv_.notify_all();
  }
  // True once a WAL append waits at the closed gate (false after `limit`).
  bool WaitHeld(std::chrono::seconds limit) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, limit, [&] { return held_; });
  }

 private:
  class File : public ROCKSDB_NAMESPACE::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<ROCKSDB_NAMESPACE::FSWritableFile>&& f, GatedWalFs* fs)
        : FSWritableFileOwnerWrapper(std::move(f)), fs_(fs) {}
    ROCKSDB_NAMESPACE::IOStatus Append(
        const ROCKSDB_NAMESPACE::Slice& data,
        const ROCKSDB_NAMESPACE::IOOptions& opts,
        ROCKSDB_NAMESPACE::IODebugContext* dbg) override {
      fs_->Pass();
      return FSWritableFileOwnerWrapper::Append(data, opts, dbg);
    }
    ROCKSDB_NAMESPACE::IOStatus Append(
        const ROCKSDB_NAMESPACE::Slice& data,
        const ROCKSDB_NAMESPACE::IOOptions& opts,
        const ROCKSDB_NAMESPACE::DataVerificationInfo& info,
        ROCKSDB_NAMESPACE::IODebugContext* dbg) override {
      fs_->Pass();
      return FSWritableFileOwnerWrapper::Append(data, opts, info, dbg);
    }

   private:
    GatedWalFs* fs_;
  };

  void Pass() {
    std::unique_lock<std::mutex> l(mu_);
    if (!closed_) return;
    held_ = true;
    cv_.notify_all();
    cv_.wait(l, [&] { return !closed_; });
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  bool held_ = false;
};

// Fact 2: a write group's batches are merged into one WAL record; a blob
// appended after a batch's operations stays right after them.
TEST(RecoveryWalFacts, EffectRecordsFollowTheirOperationsInMergedRecords) {
  TempDir dir;
  auto fs =
      std::make_shared<GatedWalFs>(ROCKSDB_NAMESPACE::FileSystem::Default());
  std::unique_ptr<ROCKSDB_NAMESPACE::Env> env =
      ROCKSDB_NAMESPACE::NewCompositeEnv(fs);
  Options o = ArchivingOptions();
  o.env = env.get();
  auto d = OpenDb(dir.Sub("db"), o);
  auto write = [&](int key) {
    WriteBatch b;
    ASSERT_TRUE(b.Put(Key(key), "v").ok());
    ASSERT_TRUE(b.PutLogData(effect_log::OneOp(OpEffect::kInsert)).ok());
    ASSERT_TRUE(d->db->Write(WriteOptions(), &b).ok());
  };
  // Per round: one write is held in its WAL append (it leads the queue),
  // kFollowers writes from other threads queue up behind it, then the gate
  // opens. The followers' entry into the queue is only seen by their threads
  // having called Write, so the hold grows each round (10 ms to 1.3 s) until
  // a merged record is seen; one round normally suffices.
  constexpr int kFollowers = 6;
  constexpr int kWrites = kFollowers + 1;
  int keys = 0;
  ReplayResult r;
  Collected c;
  for (int round = 0; round < 8; ++round) {
    const SequenceNumber start = d->db->GetLatestSequenceNumber();
    const int base = keys;
    fs->CloseGate();
    std::thread leader([&] { write(base); });
    if (!fs->WaitHeld(std::chrono::seconds(60))) {
      fs->OpenGate();
      leader.join();
      FAIL() << "no WAL append reached the gate";
    }
    std::atomic<int> entered{0};
    std::vector<std::thread> followers;
    for (int t = 1; t <= kFollowers; ++t) {
      followers.emplace_back([&, t] {
        entered.fetch_add(1);
        write(base + t);
      });
    }
    while (entered.load() < kFollowers) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(10 << round));
    fs->OpenGate();
    leader.join();
    for (auto& f : followers) f.join();
    keys += kWrites;
    c = Collected();
    r = Replay(d.get(), start, &c);
    ASSERT_TRUE(r.ok()) << r.reason;
    EXPECT_EQ(r.stats.inserts, static_cast<uint64_t>(kWrites));
    EXPECT_EQ(r.stats.ops, static_cast<uint64_t>(kWrites));
    for (int i = base; i < keys; ++i) {
      ASSERT_EQ(c.Count(0, Key(i)), 1) << Key(i);
    }
    if (r.stats.records < static_cast<uint64_t>(kWrites)) break;
  }
  // A group of several writers did form (the merge is what is pinned), and
  // every write's effect was decoded right after its own operation.
  EXPECT_LT(r.stats.records, static_cast<uint64_t>(kWrites));
}

// ------------------------------------------------------------ effect_log

TEST(RecoveryEffectLog, RecordsRoundTrip) {
  WriteBatch b;
  ASSERT_TRUE(b.Put("k1", "v").ok());
  ASSERT_TRUE(b.PutLogData(effect_log::OneOp(OpEffect::kInsert)).ok());
  ASSERT_TRUE(b.Delete("k2").ok());
  ASSERT_TRUE(b.PutLogData(effect_log::OneOp(OpEffect::kErase)).ok());
  ASSERT_TRUE(b.Delete("k3").ok());
  ASSERT_TRUE(b.PutLogData(effect_log::OneOp(OpEffect::kDeferred)).ok());
  ASSERT_TRUE(b.Put("k4", "v").ok());
  ASSERT_TRUE(b.PutLogData(effect_log::OneOp(OpEffect::kNone)).ok());
  ASSERT_TRUE(b.PutLogData("an application's own blob").ok());
  ASSERT_TRUE(b.Put("k5", "v").ok());
  ASSERT_TRUE(b.DeleteRange("a", "b").ok());
  ASSERT_TRUE(b.Delete("k6").ok());  // no erasure listed: deferred
  ASSERT_TRUE(b.Delete("a1").ok());  // one of the listed erasures
  effect_log::FamilyEffects f{0, {H("k5")}, {H("a1"), H("a2")}};
  ASSERT_TRUE(b.PutLogData(effect_log::WriteRecord(4, {f})).ok());
  ASSERT_TRUE(
      b.PutLogData(effect_log::CheckerRecord(7, 3, 42, {{0, {}, {H("x")}}}))
          .ok());
  ASSERT_TRUE(
      b.PutLogData(effect_log::LegacyCheckerRecord(8, 4, {{0, {}, {H("y")}}}))
          .ok());
  ASSERT_TRUE(b.PutLogData(effect_log::IngestionRecord({0, 5})).ok());

  effect_log::RecordDecoder decoder([](uint32_t cf) { return cf == 0; });
  effect_log::RecordEffects e;
  ASSERT_TRUE(decoder.Decode(b, 100, &e).ok());
  EXPECT_EQ(e.ops, 8u);
  EXPECT_EQ(e.covered_ops, 8u);
  ASSERT_EQ(e.inserts.size(), 2u);
  EXPECT_EQ(e.inserts[0].hash, H("k1"));
  EXPECT_EQ(e.inserts[0].seq, 100u);
  EXPECT_EQ(e.inserts[1].hash, H("k5"));
  EXPECT_EQ(e.inserts[1].seq, 107u);  // the write's last operation
  ASSERT_EQ(e.erases.size(), 3u);
  EXPECT_EQ(e.erases[0].hash, H("k2"));
  EXPECT_EQ(e.erases[0].seq, 101u);
  EXPECT_EQ(e.erases[1].hash, H("a1"));
  EXPECT_EQ(e.erases[2].hash, H("a2"));
  // The deletes whose erasure is left to later: k3 (kDeferred) and the
  // write's k6 (a1 matches a listed erasure).
  ASSERT_EQ(e.deferred.size(), 2u);
  EXPECT_EQ(e.deferred[0].hash, H("k3"));
  EXPECT_EQ(e.deferred[0].seq, 102u);
  EXPECT_EQ(e.deferred[1].hash, H("k6"));
  ASSERT_EQ(e.checker.size(), 2u);
  EXPECT_EQ(e.checker[0].session, 7u);
  EXPECT_EQ(e.checker[0].generation, 3u);
  EXPECT_TRUE(e.checker[0].has_open_sequence);
  EXPECT_EQ(e.checker[0].open_sequence, 42u);
  EXPECT_EQ(e.checker[0].hashes, std::vector<uint64_t>{H("x")});
  // A record of 1.0.0 (kind 3): no open sequence.
  EXPECT_EQ(e.checker[1].session, 8u);
  EXPECT_EQ(e.checker[1].generation, 4u);
  EXPECT_FALSE(e.checker[1].has_open_sequence);
  EXPECT_EQ(e.checker[1].hashes, std::vector<uint64_t>{H("y")});
  EXPECT_EQ(e.ingestions, std::vector<uint32_t>{0});

  // Another family's effects are not decoded, and its writes need none.
  effect_log::RecordDecoder other([](uint32_t cf) { return cf == 1; });
  ASSERT_TRUE(other.Decode(b, 100, &e).ok());
  EXPECT_TRUE(e.inserts.empty() && e.erases.empty() && e.checker.empty() &&
              e.deferred.empty());
}

TEST(RecoveryEffectLog, OneOpBlobsAreConstantAndSmall) {
  for (OpEffect e : {OpEffect::kNone, OpEffect::kInsert, OpEffect::kErase,
                     OpEffect::kDeferred}) {
    const ROCKSDB_NAMESPACE::Slice s = effect_log::OneOp(e);
    EXPECT_EQ(s.size(), 3u);
    EXPECT_EQ(s.data(), effect_log::OneOp(e).data());  // no allocation
    EXPECT_EQ(static_cast<uint8_t>(s[0]), effect_log::kMagic);
  }
  // The golden bytes of a write record (the format must not drift).
  effect_log::FamilyEffects f{3, {0x0102030405060708ULL}, {}};
  EXPECT_EQ(effect_log::WriteRecord(2, {f}),
            std::string("\xC5\x02\x02\x01\x03\x01\x00"
                        "\x08\x07\x06\x05\x04\x03\x02\x01",
                        15));
}

TEST(RecoveryEffectLog, UncoveredAndMalformedRecordsFail) {
  effect_log::RecordDecoder decoder([](uint32_t cf) { return cf == 0; });
  effect_log::RecordEffects e;
  struct Case {
    const char* name;
    std::function<void(WriteBatch*)> fill;
    effect_log::DecodeFailure failure;
  };
  const std::vector<Case> cases = {
      {"write without record", [](WriteBatch* b) { b->Put("k", "v"); },
       effect_log::DecodeFailure::kUncovered},
      {"write before a covered one",
       [](WriteBatch* b) {
         b->Put("k0", "v");
         b->Put("k1", "v");
         b->PutLogData(effect_log::OneOp(OpEffect::kInsert));
       },
       effect_log::DecodeFailure::kUncovered},
      {"write record that does not name the operation's family",
       [](WriteBatch* b) {
         b->Put("k", "v");
         b->PutLogData(effect_log::WriteRecord(1, {{1, {}, {}}}));
       },
       effect_log::DecodeFailure::kUncovered},
      {"record covering more operations than precede it",
       [](WriteBatch* b) {
         b->Put("k", "v");
         b->PutLogData(effect_log::WriteRecord(2, {}));
       },
       effect_log::DecodeFailure::kMalformed},
      {"one-op record after a DeleteRange",
       [](WriteBatch* b) {
         b->DeleteRange("a", "b");
         b->PutLogData(effect_log::OneOp(OpEffect::kErase));
       },
       effect_log::DecodeFailure::kMalformed},
      {"truncated write record",
       [](WriteBatch* b) {
         b->Put("k", "v");
         std::string r = effect_log::WriteRecord(1, {{0, {1}, {}}});
         r.pop_back();
         b->PutLogData(r);
       },
       effect_log::DecodeFailure::kMalformed},
      {"unknown kind",
       [](WriteBatch* b) { b->PutLogData(std::string("\xC5\x09", 2)); },
       effect_log::DecodeFailure::kMalformed},
      {"one-op record with a bad code",
       [](WriteBatch* b) {
         b->Put("k", "v");
         b->PutLogData(std::string("\xC5\x01\x07", 3));
       },
       effect_log::DecodeFailure::kMalformed},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    WriteBatch b;
    c.fill(&b);
    EXPECT_FALSE(decoder.Decode(b, 1, &e).ok());
    EXPECT_EQ(e.failure, c.failure);
  }
  // An unwatched family's write needs no record.
  WriteBatch b;
  ASSERT_TRUE(b.Put("k", "v").ok());
  effect_log::RecordDecoder other([](uint32_t cf) { return cf == 1; });
  EXPECT_TRUE(other.Decode(b, 1, &e).ok());
}

// ------------------------------------------------------------ wal_replay

TEST(RecoveryWalReplay, EffectsAfterTheCheckpointAreReplayedExactly) {
  TempDir dir;
  auto d = OpenDb(dir.Sub("db"), ArchivingOptions());
  for (int i = 0; i < 100; ++i) {
    PutWithEffect(d.get(), Key(i), OpEffect::kInsert);
  }
  const SequenceNumber x = d->db->GetLatestSequenceNumber();
  // After the checkpoint: 50 new keys, 10 overwrites of live keys, 20
  // deletes of live keys (synchronous checks), 5 deletes of absent keys, a
  // write to the other family (its own effect record), a flush in between
  // (the WAL file is archived, not deleted).
  for (int i = 100; i < 150; ++i) {
    PutWithEffect(d.get(), Key(i), OpEffect::kInsert);
  }
  ASSERT_TRUE(d->db->Flush(FlushOptions()).ok());
  for (int i = 0; i < 10; ++i) PutWithEffect(d.get(), Key(i), OpEffect::kNone);
  for (int i = 20; i < 40; ++i) {
    DeleteWithEffect(d.get(), Key(i), OpEffect::kErase);
  }
  for (int i = 1000; i < 1005; ++i) {
    DeleteWithEffect(d.get(), Key(i), OpEffect::kNone);
  }
  PutWithEffect(d.get(), "o", OpEffect::kInsert, /*cf=*/1);
  Collected c;
  const ReplayResult r = Replay(d.get(), x, &c);
  ASSERT_TRUE(r.ok()) << r.reason;
  EXPECT_EQ(r.stats.inserts, 50u);
  EXPECT_EQ(r.stats.erases, 20u);
  EXPECT_EQ(r.stats.ops, 86u);
  for (int i = 0; i < 150; ++i) {
    const int expected = i >= 100 ? 1 : (i >= 20 && i < 40 ? -1 : 0);
    ASSERT_EQ(c.Count(0, Key(i)), expected) << Key(i);
  }
  // Both families at once.
  Collected both;
  ASSERT_TRUE(Replay(d.get(), x, &both, {0, 1}).ok());
  EXPECT_EQ(both.Count(1, "o"), 1);
  // From the DB's first write (a checkpoint of the empty DB).
  Collected all;
  const ReplayResult r0 = Replay(d.get(), 0, &all);
  ASSERT_TRUE(r0.ok()) << r0.reason;
  EXPECT_EQ(r0.stats.inserts, 150u);
  // Nothing after the DB's sequence.
  Collected none;
  const ReplayResult rn =
      Replay(d.get(), d->db->GetLatestSequenceNumber(), &none);
  ASSERT_TRUE(rn.ok());
  EXPECT_EQ(rn.stats.records, 0u);
}

TEST(RecoveryWalReplay, StopsAtTheSequenceItWasGiven) {
  TempDir dir;
  auto d = OpenDb(dir.Sub("db"), ArchivingOptions());
  PutWithEffect(d.get(), Key(0), OpEffect::kInsert);
  const SequenceNumber x = d->db->GetLatestSequenceNumber();
  PutWithEffect(d.get(), Key(1), OpEffect::kInsert);
  const SequenceNumber y = d->db->GetLatestSequenceNumber();
  // The caller's own session after y: writes and a checker record.
  PutWithEffect(d.get(), Key(2), OpEffect::kInsert);
  WriteLogOnly(d.get(),
               effect_log::CheckerRecord(99, 1, y, {{0, {}, {H(Key(1))}}}));
  PutWithEffect(d.get(), Key(3), OpEffect::kInsert);
  Collected c;
  const ReplayResult r =
      ReplayWal(d->db.get(), {{0, x, 0, 0}}, y, 99, c.Sink());
  ASSERT_TRUE(r.ok()) << r.reason;
  EXPECT_EQ(c.log, std::vector<std::string>{"+0:" + std::to_string(H(Key(1)))});
}

// The checker's erasures: applied when the image cannot hold them yet.
TEST(RecoveryWalReplay, CheckerRecordsFollowTheCheckpointsGeneration) {
  TempDir dir;
  auto d = OpenDb(dir.Sub("db"), ArchivingOptions());
  for (int i = 0; i < 10; ++i) {
    PutWithEffect(d.get(), Key(i), OpEffect::kInsert);
  }
  const SequenceNumber open7 = d->db->GetLatestSequenceNumber();
  // Session 7 (opened at open7): deletes of keys 0..3 deferred; generation
  // 1 resolves 0 and 1 (before the checkpoint's freeze), generation 2
  // resolves 2 after it.
  for (int i = 0; i < 4; ++i) {
    DeleteWithEffect(d.get(), Key(i), OpEffect::kDeferred);
  }
  WriteLogOnly(d.get(), effect_log::CheckerRecord(
                            7, 1, open7, {{0, {}, {H(Key(0)), H(Key(1))}}}));
  const SequenceNumber x = d->db->GetLatestSequenceNumber();
  WriteLogOnly(d.get(),
               effect_log::CheckerRecord(7, 2, open7, {{0, {}, {H(Key(2))}}}));
  PutWithEffect(d.get(), Key(20), OpEffect::kInsert);
  // Another session (8) opened before x resolves key 3: not applied. Its
  // record follows X but may be older than the checkpoint (a record left
  // after a killed session's last write); the erasure is skipped (an extra
  // fingerprint, never a missing one). So is a record of 1.0.0 (kind 3,
  // session 10), which does not say when its session opened.
  WriteLogOnly(d.get(),
               effect_log::CheckerRecord(8, 1, open7, {{0, {}, {H(Key(3))}}}));
  WriteLogOnly(d.get(),
               effect_log::LegacyCheckerRecord(10, 1, {{0, {}, {H(Key(4))}}}));
  PutWithEffect(d.get(), Key(21), OpEffect::kInsert);
  // Session 9 opened after the checkpoint (at or after x): all of its
  // erasures follow the image's, so they are applied (hostile review 8, O1:
  // skipped before, extra fingerprints piled up from crash to crash).
  const SequenceNumber open9 = d->db->GetLatestSequenceNumber();
  for (int i = 5; i < 7; ++i) {
    DeleteWithEffect(d.get(), Key(i), OpEffect::kDeferred);
  }
  WriteLogOnly(d.get(), effect_log::CheckerRecord(
                            9, 1, open9, {{0, {}, {H(Key(5)), H(Key(6))}}}));
  PutWithEffect(d.get(), Key(22), OpEffect::kInsert);
  Collected c;
  const ReplayResult r = Replay(d.get(), x, &c, {0}, /*session=*/7,
                                /*generation=*/1);
  ASSERT_TRUE(r.ok()) << r.reason;
  EXPECT_EQ(c.Count(0, Key(0)), 0);
  EXPECT_EQ(c.Count(0, Key(1)), 0);
  EXPECT_EQ(c.Count(0, Key(2)), -1);
  EXPECT_EQ(c.Count(0, Key(3)), 0);
  EXPECT_EQ(c.Count(0, Key(4)), 0);
  EXPECT_EQ(c.Count(0, Key(5)), -1);
  EXPECT_EQ(c.Count(0, Key(6)), -1);
  EXPECT_EQ(r.stats.checker_erases, 3u);
  EXPECT_EQ(r.stats.checker_skipped, 2u);
  // The same WAL for a checkpoint frozen after generation 2.
  Collected c2;
  ASSERT_TRUE(Replay(d.get(), x, &c2, {0}, 7, 2).ok());
  EXPECT_EQ(c2.Count(0, Key(2)), 0);
  EXPECT_EQ(c2.Count(0, Key(3)), 0);
  EXPECT_EQ(c2.Count(0, Key(5)), -1);
  // For a checkpoint taken after session 9 opened (at open9 + 1, so every
  // session of the WAL opened before it), no other session's erasure.
  Collected c3;
  const ReplayResult r3 = Replay(d.get(), open9 + 1, &c3, {0}, 11, 0);
  ASSERT_TRUE(r3.ok()) << r3.reason;
  EXPECT_EQ(c3.Count(0, Key(5)), 0);
  EXPECT_EQ(r3.stats.checker_erases, 0u);
  EXPECT_EQ(r3.stats.checker_skipped, 2u);
}

// Every case the log cannot cover ends the replay with its reason.
TEST(RecoveryWalReplay, UnloggedWriteIsAGap) {
  TempDir dir;
  auto d = OpenDb(dir.Sub("db"), ArchivingOptions());
  PutWithEffect(d.get(), Key(0), OpEffect::kInsert);
  const SequenceNumber x = d->db->GetLatestSequenceNumber();
  PutWithEffect(d.get(), Key(1), OpEffect::kInsert);
  WriteOptions no_wal;
  no_wal.disableWAL = true;
  ASSERT_TRUE(d->db->Put(no_wal, Key(2), "v").ok());
  PutWithEffect(d.get(), Key(3), OpEffect::kInsert);
  Collected c;
  const ReplayResult r = Replay(d.get(), x, &c);
  EXPECT_EQ(r.failure, ReplayFailure::kGap) << r.reason;
  EXPECT_NE(r.reason.find("disableWAL"), std::string::npos) << r.reason;
  // An unlogged write as the last one: the WAL ends early.
  TempDir dir2;
  auto d2 = OpenDb(dir2.Sub("db"), ArchivingOptions());
  PutWithEffect(d2.get(), Key(0), OpEffect::kInsert);
  const SequenceNumber x2 = d2->db->GetLatestSequenceNumber();
  PutWithEffect(d2.get(), Key(1), OpEffect::kInsert);
  ASSERT_TRUE(d2->db->Put(no_wal, Key(2), "v").ok());
  const ReplayResult r2 = Replay(d2.get(), x2, &c);
  EXPECT_EQ(r2.failure, ReplayFailure::kShort) << r2.reason;
}

TEST(RecoveryWalReplay, ReleasedWalIsReported) {
  TempDir dir;
  // No archival: a flush deletes the WAL files it made obsolete.
  auto d = OpenDb(dir.Sub("db"), test::TestOptions());
  PutWithEffect(d.get(), Key(0), OpEffect::kInsert);
  const SequenceNumber x = d->db->GetLatestSequenceNumber();
  PutWithEffect(d.get(), Key(1), OpEffect::kInsert);
  ASSERT_TRUE(d->db->Flush(FlushOptions()).ok());
  ASSERT_TRUE(d->db->Flush(FlushOptions(), d->cfs[1]).ok());
  PutWithEffect(d.get(), Key(2), OpEffect::kInsert);
  Collected c;
  const ReplayResult r = Replay(d.get(), x, &c);
  EXPECT_EQ(r.failure, ReplayFailure::kWalReleased) << r.reason;
  // A checkpoint of the empty DB needs the DB's first write too.
  const ReplayResult r0 = Replay(d.get(), 0, &c);
  EXPECT_EQ(r0.failure, ReplayFailure::kWalReleased) << r0.reason;
}

TEST(RecoveryWalReplay, WriteWithoutEffectsIsReported) {
  TempDir dir;
  auto d = OpenDb(dir.Sub("db"), ArchivingOptions());
  PutWithEffect(d.get(), Key(0), OpEffect::kInsert);
  const SequenceNumber x = d->db->GetLatestSequenceNumber();
  // Another family's plain writes are fine.
  ASSERT_TRUE(d->db->Put(WriteOptions(), d->cfs[1], "o", "v").ok());
  PutWithEffect(d.get(), Key(1), OpEffect::kInsert);
  Collected ok;
  ASSERT_TRUE(Replay(d.get(), x, &ok).ok());
  // A plain write to the replayed family (another program, GetBaseDB).
  ASSERT_TRUE(d->db->Put(WriteOptions(), Key(2), "v").ok());
  PutWithEffect(d.get(), Key(3), OpEffect::kInsert);
  Collected c;
  const ReplayResult r = Replay(d.get(), x, &c);
  EXPECT_EQ(r.failure, ReplayFailure::kUncovered) << r.reason;
  EXPECT_NE(r.reason.find("without filter effects"), std::string::npos);
  // Before the checkpoint it does not matter.
  Collected after;
  EXPECT_TRUE(
      Replay(d.get(), d->db->GetLatestSequenceNumber() - 1, &after).ok());
}

TEST(RecoveryWalReplay, IngestionMarkerAndMalformedRecordsAreReported) {
  TempDir dir;
  auto d = OpenDb(dir.Sub("db"), ArchivingOptions());
  PutWithEffect(d.get(), Key(0), OpEffect::kInsert);
  const SequenceNumber x = d->db->GetLatestSequenceNumber();
  WriteLogOnly(d.get(), effect_log::IngestionRecord({1}));  // other family
  PutWithEffect(d.get(), Key(1), OpEffect::kInsert);
  Collected c;
  ASSERT_TRUE(Replay(d.get(), x, &c).ok());
  const SequenceNumber x2 = d->db->GetLatestSequenceNumber();
  WriteLogOnly(d.get(), effect_log::IngestionRecord({0}));
  PutWithEffect(d.get(), Key(2), OpEffect::kInsert);
  ReplayResult r = Replay(d.get(), x2, &c);
  EXPECT_EQ(r.failure, ReplayFailure::kIngestion) << r.reason;
  r = Replay(d.get(), x, &c, {1});  // family 1's marker is after x
  EXPECT_EQ(r.failure, ReplayFailure::kIngestion) << r.reason;
  r = Replay(d.get(), x2, &c, {1});  // ... and before x2
  EXPECT_EQ(r.failure, ReplayFailure::kNone) << r.reason;
  const SequenceNumber x3 = d->db->GetLatestSequenceNumber();
  WriteBatch b;
  ASSERT_TRUE(b.Put(Key(3), "v").ok());
  ASSERT_TRUE(b.PutLogData(std::string("\xC5\x01\x09", 3)).ok());
  ASSERT_TRUE(d->db->Write(WriteOptions(), &b).ok());
  r = Replay(d.get(), x3, &c);
  EXPECT_EQ(r.failure, ReplayFailure::kMalformed) << r.reason;
}

// The WAL binding: a prefix of the WAL history that must still be there.
TEST(RecoveryWalBinding, HoldsWhileTheWalIsKeptAndDetectsOtherHistories) {
  TempDir dir;
  const std::string path = dir.Sub("db");
  Options o = ArchivingOptions();
  WalBinding b;
  {
    auto d = OpenDb(path, o);
    WalBinding empty;
    ASSERT_TRUE(ComputeWalBinding(d->db.get(), &empty).ok());
    for (int i = 0; i < 100; ++i) {
      PutWithEffect(d.get(), Key(i), OpEffect::kInsert);
    }
    ASSERT_TRUE(d->db->FlushWAL(true).ok());
    ASSERT_TRUE(ComputeWalBinding(d->db.get(), &b).ok());
    EXPECT_NE(b.number, 0u);
    EXPECT_GT(b.offset, 0u);
    std::string why;
    EXPECT_TRUE(VerifyWalBinding(d->db->GetEnv(), path, b, &why)) << why;
    // More writes and a flush (archived): still the same prefix.
    for (int i = 100; i < 200; ++i) {
      PutWithEffect(d.get(), Key(i), OpEffect::kInsert);
    }
    ASSERT_TRUE(d->db->Flush(FlushOptions()).ok());
    ASSERT_TRUE(d->db->Flush(FlushOptions(), d->cfs[1]).ok());
    EXPECT_TRUE(VerifyWalBinding(d->db->GetEnv(), path, b, &why)) << why;
  }
  ROCKSDB_NAMESPACE::Env* env = ROCKSDB_NAMESPACE::Env::Default();
  std::string why;
  EXPECT_TRUE(VerifyWalBinding(env, path, b, &why)) << why;
  // Other bytes before the bound offset: another history.
  char name[32];
  snprintf(name, sizeof(name), "%06llu.log",
           static_cast<unsigned long long>(b.number));
  std::string file = path + "/archive/" + name;
  if (!std::filesystem::exists(file)) file = path + "/" + name;
  ASSERT_TRUE(std::filesystem::exists(file));
  const std::string copy = dir.Sub("wal-copy");
  std::filesystem::copy_file(file, copy);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(b.offset) - 10);
    f.put('\x5a');
  }
  EXPECT_FALSE(VerifyWalBinding(env, path, b, &why));
  EXPECT_NE(why.find("differs"), std::string::npos) << why;
  // Shorter.
  std::filesystem::copy_file(copy, file,
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(file, b.offset - 1);
  EXPECT_FALSE(VerifyWalBinding(env, path, b, &why));
  EXPECT_NE(why.find("differs"), std::string::npos) << why;
  // Gone.
  std::filesystem::remove(file);
  EXPECT_FALSE(VerifyWalBinding(env, path, b, &why));
  EXPECT_NE(why.find("released"), std::string::npos) << why;
}

// ------------------------------------------------------------ checkpoints

CheckpointIdentity SampleIdentity() {
  CheckpointIdentity id;
  id.sequence = 1000;
  id.cf_id = 2;
  id.session = 0xabcdef;
  id.erase_generation = 17;
  id.wal = WalBinding{12, 4096, 0x1234};
  id.db_id = "db-identity";
  id.cf_name = "family";
  id.manifest = "MANIFEST-000010";
  return id;
}

OpeningDb MatchingDb(const CheckpointIdentity& id) {
  OpeningDb db;
  db.db_id = id.db_id;
  db.cf_id = id.cf_id;
  db.cf_name = id.cf_name;
  db.sequence = id.sequence;
  db.manifest = id.manifest;
  return db;
}

TEST(RecoveryCheckpoint, IdentityRoundTripsAndRejectsOtherFormats) {
  const CheckpointIdentity id = SampleIdentity();
  const std::string bytes = id.Encode();
  CheckpointIdentity back;
  std::string why;
  ASSERT_TRUE(CheckpointIdentity::Decode(bytes, &back, &why)) << why;
  EXPECT_EQ(back.Encode(), bytes);
  EXPECT_EQ(back.sequence, 1000u);
  EXPECT_EQ(back.wal.tail_hash, 0x1234u);
  EXPECT_EQ(back.manifest, "MANIFEST-000010");
  for (size_t n : {size_t{0}, size_t{3}, bytes.size() - 1}) {
    EXPECT_FALSE(CheckpointIdentity::Decode(bytes.substr(0, n), &back, &why));
  }
  EXPECT_FALSE(CheckpointIdentity::Decode(bytes + "x", &back, &why));
  EXPECT_EQ(why, "malformed checkpoint identity");
  // The identity FilteredDB wrote before (sequence first, no magic).
  std::string old(8, '\0');
  old += std::string(40, 'x');
  EXPECT_FALSE(CheckpointIdentity::Decode(old, &back, &why));
  EXPECT_EQ(why, "checkpoint identity of an older format");
}

TEST(RecoveryCheckpoint, JudgedByDbFamilySequenceChainAndWal) {
  const CheckpointIdentity id = SampleIdentity();
  auto judge = [&](const std::function<void(OpeningDb*)>& change,
                   const CheckpointIdentity& with = SampleIdentity()) {
    OpeningDb db = MatchingDb(with);
    change(&db);
    return JudgeCheckpoint(with, db);
  };
  EXPECT_EQ(judge([](OpeningDb*) {}).verdict, Verdict::kUse);
  Judgement j = judge([](OpeningDb* d) { d->sequence += 5; });
  EXPECT_EQ(j.verdict, Verdict::kReplay);
  EXPECT_EQ(j.why, "5 sequence numbers written after the checkpoint");
  struct Reject {
    const char* name;
    std::function<void(OpeningDb*)> change;
    const char* reason;
  };
  const std::vector<Reject> rejects = {
      {"foreign DB", [](OpeningDb* d) { d->db_id = "other"; }, "another DB"},
      {"other family id", [](OpeningDb* d) { d->cf_id = 3; },
       "another column family"},
      {"other family name", [](OpeningDb* d) { d->cf_name = "x"; },
       "another column family"},
      {"ahead", [](OpeningDb* d) { d->sequence -= 1; }, "ahead of the DB"},
      {"opened by another program",
       [](OpeningDb* d) { d->manifest = "MANIFEST-000020"; },
       "opened without FilteredDB"},
      {"CURRENT unreadable", [](OpeningDb* d) { d->manifest = ""; },
       "opened without FilteredDB"},
      {"chain of another checkpoint",
       [](OpeningDb* d) {
         d->manifest = "MANIFEST-000020";
         d->opens = {"MANIFEST-000005", "MANIFEST-000020"};
       },
       "opened without FilteredDB"},
      {"WAL released",
       [](OpeningDb* d) {
         d->wal_error =
             "WAL released: WAL 000012.log of the checkpoint is gone";
       },
       "WAL released"},
  };
  for (const Reject& r : rejects) {
    SCOPED_TRACE(r.name);
    j = judge(r.change);
    EXPECT_EQ(j.verdict, Verdict::kReject);
    EXPECT_NE(j.why.find(r.reason), std::string::npos) << j.why;
  }
  // FilteredDB opens since the checkpoint continue its chain.
  j = judge([](OpeningDb* d) {
    d->manifest = "MANIFEST-000020";
    d->opens = {"MANIFEST-000010", "MANIFEST-000015", "MANIFEST-000020"};
    d->sequence += 1;
  });
  EXPECT_EQ(j.verdict, Verdict::kReplay) << j.why;
  // A clean-close checkpoint: the state digest decides at equal sequence;
  // a mismatch falls back on the chain and the WAL binding only if it has
  // one.
  CheckpointIdentity clean = SampleIdentity();
  clean.db_state = "MANIFEST-000010/abc";
  j = judge([](OpeningDb* d) { d->db_state = "MANIFEST-000010/abc"; }, clean);
  EXPECT_EQ(j.verdict, Verdict::kUse);
  j = judge(
      [](OpeningDb* d) {
        d->db_state = "MANIFEST-000010/abd";
        d->manifest = "MANIFEST-000099";
      },
      clean);
  EXPECT_EQ(j.verdict, Verdict::kReject);
  clean.wal = WalBinding();
  j = judge([](OpeningDb* d) { d->db_state = "MANIFEST-000010/abd"; }, clean);
  EXPECT_EQ(j.verdict, Verdict::kReject);
  EXPECT_NE(j.why.find("files changed"), std::string::npos) << j.why;
}

// A checkpoint file: the core image with the identity; damaged files are
// rejected by the core's validation, and the identity can be read from the
// header alone before the DB is opened.
TEST(RecoveryCheckpoint, FileRejectsTruncatedAndFlippedBytes) {
  TempDir dir;
  cuckoo::LiveKeyFilterOptions fo;
  fo.initial_capacity = 4096;
  cuckoo::LiveKeyFilter filter(fo, 4096);
  for (int i = 0; i < 3000; ++i)
    ASSERT_TRUE(filter.Insert(cuckoo::HashKey(Key(i))));
  const std::string identity = SampleIdentity().Encode();
  const std::string image = filter.EncodeSnapshot(identity);
  ASSERT_FALSE(image.empty());
  const std::string path = dir.Sub("CUCKOO_LIVE_FILTER-2");
  auto write = [&](const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  };
  ROCKSDB_NAMESPACE::Env* env = ROCKSDB_NAMESPACE::Env::Default();
  write(image);
  std::string peeked;
  ASSERT_TRUE(PeekCheckpointIdentity(env, path, &peeked).ok());
  EXPECT_EQ(peeked, identity);
  std::string stored, why;
  auto decoded =
      cuckoo::LiveKeyFilter::DecodeSnapshot(fo, image, &stored, &why);
  ASSERT_NE(decoded, nullptr) << why;
  EXPECT_EQ(stored, identity);
  struct Damage {
    const char* name;
    std::string bytes;
    const char* reason;
  };
  std::string flipped = image;
  flipped[image.size() / 2] ^= 0x10;
  std::string flipped_identity = image;
  flipped_identity[48 + 5] ^= 0x01;
  const std::vector<Damage> damages = {
      {"flipped table byte", flipped, "checksum"},
      {"flipped identity byte", flipped_identity, "checksum"},
      {"truncated", image.substr(0, image.size() - 8), "checksum"},
      {"empty", "", "too short"},
  };
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.name);
    EXPECT_EQ(cuckoo::LiveKeyFilter::DecodeSnapshot(fo, d.bytes, &stored, &why),
              nullptr);
    EXPECT_NE(why.find(d.reason), std::string::npos) << why;
  }
  write(image.substr(0, 40));
  EXPECT_FALSE(PeekCheckpointIdentity(env, path, &peeked).ok());
  write(image.substr(0, 60));
  EXPECT_FALSE(PeekCheckpointIdentity(env, path, &peeked).ok());
}

// The load decodes the image as it reads it, in reads of at most 1 MiB: the
// image is never held in memory beside the table (before: one read of the
// whole file, about table_bytes more at the peak). A read error, and a file
// that changes size while it is read, are read errors (the checkpoint is
// kept); damage is the decoder's reason.
TEST(RecoveryCheckpoint, ImageIsDecodedAsItIsRead) {
  class CountingEnv : public ROCKSDB_NAMESPACE::EnvWrapper {
   public:
    CountingEnv() : EnvWrapper(ROCKSDB_NAMESPACE::Env::Default()) {}
    Status NewRandomAccessFile(
        const std::string& f,
        std::unique_ptr<ROCKSDB_NAMESPACE::RandomAccessFile>* r,
        const ROCKSDB_NAMESPACE::EnvOptions& o) override {
      std::unique_ptr<ROCKSDB_NAMESPACE::RandomAccessFile> file;
      Status s = target()->NewRandomAccessFile(f, &file, o);
      if (s.ok()) r->reset(new File(std::move(file), this));
      return s;
    }
    Status GetFileSize(const std::string& f, uint64_t* size) override {
      Status s = target()->GetFileSize(f, size);
      *size += size_delta;
      return s;
    }
    uint64_t size_delta = 0;  // added to the size GetFileSize reports
    size_t largest_read = 0;
    uint64_t bytes = 0;
    int fail_at = -1;  // the read that fails (-1: none)
    int reads = 0;

   private:
    class File : public ROCKSDB_NAMESPACE::RandomAccessFileWrapper {
     public:
      File(std::unique_ptr<ROCKSDB_NAMESPACE::RandomAccessFile> f,
           CountingEnv* env)
          : RandomAccessFileWrapper(f.get()), file_(std::move(f)), env_(env) {}
      Status Read(uint64_t offset, size_t n, ROCKSDB_NAMESPACE::Slice* result,
                  char* scratch) const override {
        env_->largest_read = std::max(env_->largest_read, n);
        if (env_->reads++ == env_->fail_at) return Status::IOError("injected");
        Status s = file_->Read(offset, n, result, scratch);
        env_->bytes += result->size();
        return s;
      }

     private:
      std::unique_ptr<ROCKSDB_NAMESPACE::RandomAccessFile> file_;
      CountingEnv* env_;
    };
  };
  TempDir dir;
  cuckoo::LiveKeyFilterOptions fo;
  // About 4.6 MB of table.
  cuckoo::LiveKeyFilter filter(fo, 3u << 20);
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE(filter.Insert(cuckoo::HashKey(Key(i))));
  }
  const std::string identity = SampleIdentity().Encode();
  const std::string image = filter.EncodeSnapshot(identity);
  ASSERT_GT(image.size(), 4u << 20);
  const std::string path = dir.Sub("CUCKOO_LIVE_FILTER-0");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << image;
  CountingEnv env;
  DecodedCheckpoint d = ReadCheckpoint(&env, path, fo);
  ASSERT_TRUE(d.read.ok()) << d.read.ToString();
  ASSERT_NE(d.builder, nullptr) << d.why;
  EXPECT_EQ(d.identity, identity);
  EXPECT_EQ(d.builder->size(), 5000u);
  EXPECT_EQ(env.bytes, image.size());
  EXPECT_LE(env.largest_read, size_t{1} << 20);
  // Every key is in the decoded table: installed, it answers for them.
  cuckoo::LiveKeyFilter loaded(fo, 1);
  loaded.MarkNotReady();
  cuckoo::LiveKeyFilter::AdoptRebuild(d.builder.get(),
                                      loaded.BeginRebuildLog());
  ASSERT_TRUE(loaded.Replace(std::move(d.builder)));
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE(loaded.MayContain(cuckoo::HashKey(Key(i)))) << i;
  }
  // A failed read: a read error, not a verdict on the file.
  env.reads = 0;
  env.fail_at = 2;
  d = ReadCheckpoint(&env, path, fo);
  EXPECT_TRUE(d.read.IsIOError()) << d.read.ToString();
  EXPECT_EQ(d.builder, nullptr);
  env.fail_at = -1;
  // The file's size changed between GetFileSize and the reads.
  env.size_delta = 8;
  d = ReadCheckpoint(&env, path, fo);
  EXPECT_TRUE(d.read.IsIOError()) << d.read.ToString();
  EXPECT_EQ(d.builder, nullptr);
  env.size_delta = 0;
  // Damage: the decoder's reason, as for an image in memory.
  std::string damaged = image;
  damaged[image.size() / 2] ^= 0x10;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << damaged;
  d = ReadCheckpoint(&env, path, fo);
  EXPECT_TRUE(d.read.ok()) << d.read.ToString();
  EXPECT_EQ(d.builder, nullptr);
  EXPECT_EQ(d.why, "checksum mismatch");
}

// The core's side of the background load: a decoded snapshot tied to a
// rebuild started before it existed receives the writes logged since.
TEST(RecoveryCore, AdoptedSnapshotReceivesTheWritesLoggedSinceItsTicket) {
  cuckoo::LiveKeyFilterOptions fo;
  fo.initial_capacity = 4096;
  fo.background_splits = false;
  cuckoo::LiveKeyFilter filter(fo, 4096);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(filter.Insert(cuckoo::HashKey(Key(i))));
  }
  const std::string image = filter.EncodeSnapshot("id");
  filter.MarkNotReady();
  const uint64_t ticket = filter.BeginRebuildLog();
  EXPECT_TRUE(filter.rebuilding());
  // Writes while the image is loaded: logged only.
  for (int i = 1000; i < 1100; ++i) {
    ASSERT_TRUE(filter.Insert(cuckoo::HashKey(Key(i))));
  }
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(filter.Erase(cuckoo::HashKey(Key(i))));
  }
  std::string stored, why;
  auto builder =
      cuckoo::LiveKeyFilter::DecodeSnapshot(fo, image, &stored, &why);
  ASSERT_NE(builder, nullptr) << why;
  // An effect replayed onto the image before it is installed.
  EXPECT_TRUE(builder->Erase(cuckoo::HashKey(Key(50))));
  EXPECT_FALSE(builder->Erase(cuckoo::HashKey("never inserted")));
  cuckoo::LiveKeyFilter::AdoptRebuild(builder.get(), ticket);
  ASSERT_TRUE(filter.Replace(std::move(builder)));
  EXPECT_TRUE(filter.ready());
  EXPECT_EQ(filter.size(), 1000u + 100u - 50u - 1u);
  for (int i = 51; i < 1100; ++i) {
    ASSERT_TRUE(filter.MayContain(cuckoo::HashKey(Key(i)))) << i;
  }
  // A ticket superseded by a later rebuild, or one MarkNotReady aborted,
  // is refused.
  filter.MarkNotReady();
  const uint64_t old_ticket = filter.BeginRebuildLog();
  filter.BeginRebuildLog();
  auto stale = cuckoo::LiveKeyFilter::DecodeSnapshot(fo, image, &stored, &why);
  cuckoo::LiveKeyFilter::AdoptRebuild(stale.get(), old_ticket);
  EXPECT_FALSE(filter.Replace(std::move(stale)));
  const uint64_t t = filter.BeginRebuildLog();
  filter.MarkNotReady();
  auto aborted =
      cuckoo::LiveKeyFilter::DecodeSnapshot(fo, image, &stored, &why);
  cuckoo::LiveKeyFilter::AdoptRebuild(aborted.get(), t);
  EXPECT_FALSE(filter.Replace(std::move(aborted)));
  EXPECT_FALSE(filter.ready());
}

// "Older than the WAL the plugin kept": a checkpoint whose WAL was released
// is rejected, both by its binding and by the replay.
TEST(RecoveryCheckpoint, CheckpointOlderThanTheKeptWalIsRejected) {
  TempDir dir;
  const std::string path = dir.Sub("db");
  auto d = OpenDb(path, test::TestOptions());  // no archival
  for (int i = 0; i < 50; ++i)
    PutWithEffect(d.get(), Key(i), OpEffect::kInsert);
  ASSERT_TRUE(d->db->FlushWAL(true).ok());
  CheckpointIdentity id = SampleIdentity();
  id.sequence = d->db->GetLatestSequenceNumber();
  ASSERT_TRUE(ComputeWalBinding(d->db.get(), &id.wal).ok());
  for (int i = 50; i < 60; ++i)
    PutWithEffect(d.get(), Key(i), OpEffect::kInsert);
  ASSERT_TRUE(d->db->Flush(FlushOptions()).ok());
  ASSERT_TRUE(d->db->Flush(FlushOptions(), d->cfs[1]).ok());
  OpeningDb db = MatchingDb(id);
  db.sequence = d->db->GetLatestSequenceNumber();
  ASSERT_FALSE(VerifyWalBinding(d->db->GetEnv(), path, id.wal, &db.wal_error));
  const Judgement j = JudgeCheckpoint(id, db);
  EXPECT_EQ(j.verdict, Verdict::kReject);
  EXPECT_NE(j.why.find("WAL released"), std::string::npos) << j.why;
  Collected c;
  EXPECT_EQ(Replay(d.get(), id.sequence, &c).failure,
            ReplayFailure::kWalReleased);
}

}  // namespace
}  // namespace live
}  // namespace rocksdb_cuckoo
