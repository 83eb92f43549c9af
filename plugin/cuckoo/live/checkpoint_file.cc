// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "checkpoint_file.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "live/live_snapshot.h"  // core: the snapshot header layout
#include "util/bit_util.h"       // core: LoadLE / StoreLE

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::Env;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

namespace {

constexpr char kIdentityMagic[4] = {'C', 'K', 'P', '3'};
constexpr size_t kFixedSize = 56;

template <typename T>
void PutLE(std::string* out, T v) {
  char buf[sizeof(T)];
  cuckoo::internal::StoreLE<T>(buf, v);
  out->append(buf, sizeof(T));
}

template <typename T>
bool GetLE(std::string_view* in, T* v) {
  if (in->size() < sizeof(T)) return false;
  *v = cuckoo::internal::LoadLE<T>(in->data());
  in->remove_prefix(sizeof(T));
  return true;
}

void PutBytes(std::string* out, const std::string& s) {
  PutLE<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out->append(s);
}

bool GetBytes(std::string_view* in, std::string* s) {
  uint32_t n = 0;
  if (!GetLE(in, &n) || in->size() < n) return false;
  s->assign(in->data(), n);
  in->remove_prefix(n);
  return true;
}

}  // namespace

std::string CheckpointIdentity::Encode() const {
  std::string out(kIdentityMagic, sizeof(kIdentityMagic));
  PutLE<uint64_t>(&out, sequence);
  PutLE<uint32_t>(&out, cf_id);
  PutLE<uint64_t>(&out, session);
  PutLE<uint64_t>(&out, erase_generation);
  PutLE<uint64_t>(&out, wal.number);
  PutLE<uint64_t>(&out, wal.offset);
  PutLE<uint64_t>(&out, wal.tail_hash);
  PutBytes(&out, db_id);
  PutBytes(&out, cf_name);
  PutBytes(&out, manifest);
  PutBytes(&out, db_state);
  PutLE<uint64_t>(&out, unchecked);
  return out;
}

bool CheckpointIdentity::Decode(std::string_view in, CheckpointIdentity* out,
                                std::string* why) {
  if (in.size() < kFixedSize ||
      memcmp(in.data(), kIdentityMagic, sizeof(kIdentityMagic)) != 0) {
    *why = "checkpoint identity of an older format";
    return false;
  }
  in.remove_prefix(sizeof(kIdentityMagic));
  CheckpointIdentity id;
  const bool ok = GetLE(&in, &id.sequence) && GetLE(&in, &id.cf_id) &&
                  GetLE(&in, &id.session) && GetLE(&in, &id.erase_generation) &&
                  GetLE(&in, &id.wal.number) && GetLE(&in, &id.wal.offset) &&
                  GetLE(&in, &id.wal.tail_hash) && GetBytes(&in, &id.db_id) &&
                  GetBytes(&in, &id.cf_name) && GetBytes(&in, &id.manifest) &&
                  GetBytes(&in, &id.db_state) &&
                  (in.empty() || (GetLE(&in, &id.unchecked) && in.empty()));
  if (!ok) {
    *why = "malformed checkpoint identity";
    return false;
  }
  *out = std::move(id);
  return true;
}

Status PeekCheckpointIdentity(Env* env, const std::string& path,
                              std::string* identity) {
  using cuckoo::internal::kLiveSnapshotHeaderSize;
  std::unique_ptr<ROCKSDB_NAMESPACE::RandomAccessFile> file;
  Status s =
      env->NewRandomAccessFile(path, &file, ROCKSDB_NAMESPACE::EnvOptions());
  if (!s.ok()) return s;
  char header[kLiveSnapshotHeaderSize];
  Slice got;
  s = file->Read(0, sizeof(header), &got, header);
  if (!s.ok()) return s;
  if (got.size() != sizeof(header) ||
      memcmp(got.data(), cuckoo::internal::kLiveSnapshotMagic, 8) != 0) {
    return Status::Corruption("not a filter snapshot");
  }
  const uint32_t n = cuckoo::internal::LoadLE<uint32_t>(got.data() + 20);
  if (n > cuckoo::internal::kMaxSnapshotIdentity) {
    return Status::Corruption("identity too large");
  }
  identity->assign(n, '\0');
  s = file->Read(kLiveSnapshotHeaderSize, n, &got, identity->data());
  if (!s.ok()) return s;
  if (got.size() != n) return Status::Corruption("truncated identity");
  if (got.data() != identity->data()) identity->assign(got.data(), n);
  return Status::OK();
}

std::string CurrentManifest(Env* env, const std::string& dbname) {
  std::string current;
  if (!ROCKSDB_NAMESPACE::ReadFileToString(env, dbname + "/CURRENT", &current)
           .ok()) {
    return "";
  }
  while (!current.empty() &&
         (current.back() == '\n' || current.back() == '\r')) {
    current.pop_back();
  }
  if (current.find('/') != std::string::npos) return "";
  return current;
}

std::vector<ChainEntry> ParseChain(const std::vector<std::string>& lines) {
  std::vector<ChainEntry> chain;
  for (const std::string& line : lines) {
    ChainEntry e;
    char manifest[256];
    unsigned long long number = 0, offset = 0, hash = 0;
    if (line.size() >= sizeof(manifest) ||
        sscanf(line.c_str(), "%255s %llu %llu %llx", manifest, &number, &offset,
               &hash) != 4) {
      return {};  // unreadable: as if there were none
    }
    e.manifest = manifest;
    e.wal.number = number;
    e.wal.offset = offset;
    e.wal.tail_hash = hash;
    chain.push_back(std::move(e));
  }
  return chain;
}

std::vector<std::string> FormatChain(const std::vector<ChainEntry>& chain) {
  std::vector<std::string> lines;
  for (const ChainEntry& e : chain) {
    char buf[64];
    snprintf(buf, sizeof(buf), " %llu %llu %016llx",
             static_cast<unsigned long long>(e.wal.number),
             static_cast<unsigned long long>(e.wal.offset),
             static_cast<unsigned long long>(e.wal.tail_hash));
    lines.push_back(e.manifest + buf);
  }
  return lines;
}

DecodedCheckpoint ReadCheckpoint(Env* env, const std::string& path,
                                 const cuckoo::LiveKeyFilterOptions& options) {
  // Decoded as it is read, 1 MiB at a time, through one open file: the
  // image is not held in memory beside the table it is decoded into (and
  // not read 8 KiB at a time into a string that grows by doubling, as
  // ReadFileToString does).
  DecodedCheckpoint d;
  std::unique_ptr<ROCKSDB_NAMESPACE::RandomAccessFile> file;
  d.read =
      env->NewRandomAccessFile(path, &file, ROCKSDB_NAMESPACE::EnvOptions());
  if (!d.read.ok()) return d;
  uint64_t size = 0;
  d.read = env->GetFileSize(path, &size);
  if (!d.read.ok()) return d;
  uint64_t offset = 0;
  d.builder = cuckoo::LiveKeyFilter::DecodeSnapshot(
      options, size,
      [&](char* dst, size_t n, size_t* got) {
        Slice piece;
        d.read = file->Read(offset, n, &piece, dst);
        if (!d.read.ok()) return false;
        if (piece.size() > n) {
          d.read = Status::IOError("read returned more than asked");
          return false;
        }
        if (piece.data() != dst) memmove(dst, piece.data(), piece.size());
        *got = piece.size();
        offset += piece.size();
        return true;
      },
      &d.identity, &d.why);
  if (d.read.ok() && offset != size) {
    // Replaced or rewritten since GetFileSize (a rename after the file was
    // opened, or in place): not this file's verdict.
    d.builder.reset();
    d.read = Status::IOError("the checkpoint file changed while it was read (" +
                             std::to_string(size) + " bytes, read " +
                             std::to_string(offset) + ")");
  }
  return d;
}

CheckpointPreload PreloadCheckpoint(
    Env* env, const std::string& path,
    const cuckoo::LiveKeyFilterOptions& options) {
  return std::make_shared<std::future<DecodedCheckpoint>>(std::async(
      std::launch::async,
      [env, path, options] { return ReadCheckpoint(env, path, options); }));
}

Status GatherPreOpenFacts(Env* env, const std::string& dbname,
                          const std::string& wal_dir,
                          const SnapshotStore& store, PreOpenFacts* facts) {
  *facts = PreOpenFacts();
  Status s = store.Prepare();
  if (!s.ok()) return s;
  facts->manifest = CurrentManifest(env, dbname);
  facts->opens = ParseChain(store.ReadOpens());
  const std::string wdir = wal_dir.empty() ? dbname : wal_dir;
  bool clean_close = false;
  for (uint32_t cf : store.List()) {
    PreOpenFacts::Found& found = facts->checkpoints[cf];
    if (!PeekCheckpointIdentity(env, store.Path(cf), &found.identity).ok()) {
      found.identity.clear();
      continue;  // the load reports why
    }
    CheckpointIdentity id;
    std::string why;
    if (!CheckpointIdentity::Decode(found.identity, &id, &why)) continue;
    // The chain is this checkpoint's only if its first line is the
    // checkpoint's own (the list may be of another checkpoint, e.g. a file
    // put there from elsewhere). The binding to check: the one of the open
    // that wrote CURRENT's MANIFEST; else the checkpoint's own.
    WalBinding wal = id.wal;
    found.chain = {id.manifest};
    if (!facts->opens.empty() &&
        facts->opens.front() == ChainEntry{id.manifest, id.wal}) {
      found.chain.clear();
      for (const ChainEntry& e : facts->opens) {
        found.chain.push_back(e.manifest);
        if (e.manifest == facts->manifest) wal = e.wal;
      }
    }
    if (!VerifyWalBinding(env, wdir, wal, &found.wal_error) &&
        found.wal_error.empty()) {
      found.wal_error = "WAL binding does not hold";
    }
    clean_close |= !id.db_state.empty();
  }
  if (clean_close) facts->db_state = DbStateDigest(env, dbname, wal_dir);
  return Status::OK();
}

Judgement JudgeCheckpoint(const CheckpointIdentity& id, const OpeningDb& db) {
  Judgement j;
  if (id.db_id != db.db_id) {
    j.why = "checkpoint of another DB";
    return j;
  }
  if (id.cf_id != db.cf_id || id.cf_name != db.cf_name) {
    j.why = "checkpoint of another column family";
    return j;
  }
  if (id.sequence > db.sequence) {
    j.why = "checkpoint ahead of the DB: it covers sequence " +
            std::to_string(id.sequence) + ", the DB is at " +
            std::to_string(db.sequence) + " (the writes it covers were lost)";
    return j;
  }
  if (!id.db_state.empty()) {
    // Written after a clean close, bound to the files the DB left.
    if (id.db_state == db.db_state && id.sequence == db.sequence) {
      j.verdict = Verdict::kUse;
      return j;
    }
    if (id.wal.number == 0) {
      j.why = id.sequence != db.sequence
                  ? "stale checkpoint: it covers sequence " +
                        std::to_string(id.sequence) + ", the DB is at " +
                        std::to_string(db.sequence)
                  : "stale checkpoint: the DB's files changed since it was "
                    "written (" +
                        id.db_state + " -> " + db.db_state + ")";
      return j;
    }
  }
  // Any open by another program since the checkpoint breaks the chain of
  // MANIFESTs written by FilteredDB opens.
  std::vector<std::string> chain = db.opens;
  if (chain.empty() || chain.front() != id.manifest) chain = {id.manifest};
  if (db.manifest.empty() || id.manifest.empty() ||
      std::find(chain.begin(), chain.end(), db.manifest) == chain.end()) {
    j.why =
        "the DB was opened without FilteredDB since the checkpoint, or a "
        "FilteredDB open ended before it recorded itself in the chain of "
        "opens (a crash while its filter loaded; CURRENT names " +
        (db.manifest.empty() ? std::string("nothing readable") : db.manifest) +
        ", the checkpoint was written under " + id.manifest + ")";
    return j;
  }
  if (!db.wal_error.empty()) {
    j.why = db.wal_error;
    return j;
  }
  j.verdict = id.sequence == db.sequence ? Verdict::kUse : Verdict::kReplay;
  if (j.verdict == Verdict::kReplay) {
    j.why = std::to_string(db.sequence - id.sequence) +
            " sequence numbers written after the checkpoint";
  }
  return j;
}

}  // namespace live
}  // namespace rocksdb_cuckoo
