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
constexpr char kOpensFile[] = "CUCKOO_LIVE_OPENS";

}  // namespace

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

Status SnapshotStore::Prepare() const {
  bool is_dir = false;
  if (env_->FileExists(dir_).ok()) {
    Status s = env_->IsDirectory(dir_, &is_dir);
    if (s.ok() && !is_dir) {
      return Status::InvalidArgument("FilteredDB: snapshot_dir '" + dir_ +
                                     "' is not a directory");
    }
    if (!s.ok()) return s;
    return Status::OK();
  }
  return env_->CreateDirIfMissing(dir_);
}

std::vector<uint32_t> SnapshotStore::List() const {
  std::vector<uint32_t> ids;
  std::vector<std::string> children;
  if (!enabled() || !env_->GetChildren(dir_, &children).ok()) return ids;
  const size_t n = sizeof(kSnapshotPrefix) - 1;
  for (const std::string& name : children) {
    if (name.size() <= n || name.compare(0, n, kSnapshotPrefix) != 0 ||
        name.size() - n > 10 ||
        name.find_first_not_of("0123456789", n) != std::string::npos) {
      continue;
    }
    const unsigned long long id = std::stoull(name.substr(n));
    if (id <= 0xffffffffULL) ids.push_back(static_cast<uint32_t>(id));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<std::string> SnapshotStore::ReadOpens() const {
  std::vector<std::string> out;
  std::string data;
  if (!enabled() ||
      !ROCKSDB_NAMESPACE::ReadFileToString(env_, dir_ + "/" + kOpensFile, &data)
           .ok()) {
    return out;
  }
  size_t pos = 0;
  while (pos < data.size()) {
    const size_t eol = data.find('\n', pos);
    if (eol == std::string::npos) break;  // an unterminated last line
    out.push_back(data.substr(pos, eol - pos));
    pos = eol + 1;
  }
  return out;
}

Status SnapshotStore::WriteOpens(
    const std::vector<std::string>& manifests) const {
  std::string data;
  for (const std::string& m : manifests) data += m + "\n";
  const std::string path = dir_ + "/" + kOpensFile;
  const std::string tmp = path + ".tmp";
  std::unique_ptr<ROCKSDB_NAMESPACE::WritableFile> file;
  Status s = env_->NewWritableFile(tmp, &file, ROCKSDB_NAMESPACE::EnvOptions());
  if (!s.ok()) return s;
  s = file->Append(data);
  if (s.ok()) s = file->Sync();
  Status closed = file->Close();
  if (s.ok()) s = closed;
  closed.PermitUncheckedError();
  if (s.ok()) s = env_->RenameFile(tmp, path);
  if (!s.ok()) env_->DeleteFile(tmp).PermitUncheckedError();
  return s;
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

Status SnapshotStore::Remove(const std::vector<uint32_t>& cf_ids) const {
  if (!enabled()) return Status::OK();
  Status result;
  bool removed = false;
  for (uint32_t id : cf_ids) {
    const std::string path = Path(id);
    if (!env_->FileExists(path).ok()) continue;
    Status st = env_->DeleteFile(path);
    if (!st.ok() && result.ok()) result = st;
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
      Status st = dir->Fsync();
      if (!st.ok() && result.ok()) result = st;
      dir->Close().PermitUncheckedError();
    }
  }
  return result;
}

}  // namespace live
}  // namespace rocksdb_cuckoo
