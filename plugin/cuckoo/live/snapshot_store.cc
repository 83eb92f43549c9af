// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "snapshot_store.h"

#include <algorithm>
#include <cstdio>

#include "cuckoo/cuckoo_filter.h"  // cuckoo::HashKey
#include "util/bit_util.h"         // core: LoadLE / StoreLE

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::Env;
using ROCKSDB_NAMESPACE::Status;

namespace {
constexpr char kSnapshotPrefix[] = "CUCKOO_LIVE_FILTER-";

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

std::string SnapshotIdentity::Encode() const {
  std::string out;
  PutLE<uint64_t>(&out, sequence);
  PutLE<uint32_t>(&out, cf_id);
  PutBytes(&out, db_id);
  PutBytes(&out, cf_name);
  PutBytes(&out, db_state);
  return out;
}

bool SnapshotIdentity::Matches(std::string_view stored,
                               std::string* why) const {
  SnapshotIdentity s;
  std::string_view in = stored;
  if (!GetLE(&in, &s.sequence) || !GetLE(&in, &s.cf_id) ||
      !GetBytes(&in, &s.db_id) || !GetBytes(&in, &s.cf_name) ||
      !GetBytes(&in, &s.db_state) || !in.empty()) {
    *why = "malformed snapshot identity";
    return false;
  }
  if (s.db_id != db_id) {
    *why = "snapshot of another DB";
  } else if (s.cf_id != cf_id || s.cf_name != cf_name) {
    *why = "snapshot of another column family";
  } else if (s.sequence != sequence) {
    *why = "stale snapshot: covers sequence " + std::to_string(s.sequence) +
           ", DB is at " + std::to_string(sequence);
  } else if (s.db_state != db_state) {
    *why = "stale snapshot: the DB's files changed since it was written (" +
           s.db_state + " -> " + db_state + ")";
  } else {
    return true;
  }
  return false;
}

std::string DbStateDigest(Env* env, const std::string& dbname,
                          const std::string& wal_dir) {
  std::string current;
  if (!ROCKSDB_NAMESPACE::ReadFileToString(env, dbname + "/CURRENT", &current)
           .ok())
    return "";
  while (!current.empty() &&
         (current.back() == '\n' || current.back() == '\r')) {
    current.pop_back();
  }
  if (current.empty() || current.find('/') != std::string::npos) return "";
  std::string manifest;
  if (!ROCKSDB_NAMESPACE::ReadFileToString(env, dbname + "/" + current,
                                           &manifest)
           .ok()) {
    return "";
  }
  std::string acc = current + ":" + std::to_string(manifest.size()) + ":" +
                    std::to_string(cuckoo::HashKey(manifest).value);
  const std::string wdir = wal_dir.empty() ? dbname : wal_dir;
  std::vector<std::string> children;
  if (!env->GetChildren(wdir, &children).ok()) return "";
  std::sort(children.begin(), children.end());
  for (const std::string& name : children) {
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".log") != 0)
      continue;
    std::string wal;
    if (!ROCKSDB_NAMESPACE::ReadFileToString(env, wdir + "/" + name, &wal).ok())
      return "";
    acc += ";" + name + ":" + std::to_string(wal.size()) + ":" +
           std::to_string(cuckoo::HashKey(wal).value);
  }
  char hex[17];
  snprintf(hex, sizeof(hex), "%016llx",
           static_cast<unsigned long long>(cuckoo::HashKey(acc).value));
  return current + "/" + hex;
}

std::string SnapshotStore::Path(uint32_t cf_id) const {
  return dir_ + "/" + kSnapshotPrefix + std::to_string(cf_id);
}

Status SnapshotStore::Read(uint32_t cf_id, std::string* data) const {
  return ROCKSDB_NAMESPACE::ReadFileToString(env_, Path(cf_id), data);
}

Status SnapshotStore::WriteStream(
    uint32_t cf_id, const std::function<bool(const Sink&)>& produce) const {
  Status s = env_->CreateDirIfMissing(dir_);
  if (!s.ok()) return s;
  const std::string path = Path(cf_id);
  const std::string tmp = path + ".tmp";
  std::unique_ptr<ROCKSDB_NAMESPACE::WritableFile> file;
  s = env_->NewWritableFile(tmp, &file, ROCKSDB_NAMESPACE::EnvOptions());
  if (!s.ok()) return s;
  const bool complete = produce([&](std::string_view piece) {
    s = file->Append(ROCKSDB_NAMESPACE::Slice(piece.data(), piece.size()));
    return s.ok();
  });
  if (s.ok() && !complete) {
    s = Status::Incomplete("cuckoo live filter: snapshot encoding stopped");
  }
  if (s.ok()) s = file->Sync();
  Status closed = file->Close();
  if (s.ok()) s = closed;
  closed.PermitUncheckedError();
  if (s.ok()) s = env_->RenameFile(tmp, path);
  if (!s.ok()) env_->DeleteFile(tmp).PermitUncheckedError();
  return s;
}

void SnapshotStore::Remove(const std::vector<uint32_t>& cf_ids) const {
  if (!enabled()) return;
  bool removed = false;
  for (uint32_t id : cf_ids) {
    const std::string path = Path(id);
    if (!env_->FileExists(path).ok()) continue;
    Status st = env_->DeleteFile(path);
    if (!st.ok() && info_log_ != nullptr) {
      ROCKSDB_NAMESPACE::Log(
          ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL, info_log_,
          "cuckoo live filter: cannot remove snapshot %s: %s", path.c_str(),
          st.ToString().c_str());
    }
    removed = true;
  }
  if (removed) {
    std::unique_ptr<ROCKSDB_NAMESPACE::Directory> dir;
    if (env_->NewDirectory(dir_, &dir).ok()) {
      dir->Fsync().PermitUncheckedError();
      dir->Close().PermitUncheckedError();
    }
  }
}

}  // namespace live
}  // namespace rocksdb_cuckoo
