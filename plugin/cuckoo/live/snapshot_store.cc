#include "snapshot_store.h"

#include <algorithm>
#include <cstdio>

#include "cuckoo/cuckoo_filter.h"  // cuckoo::HashKey

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::Env;
using ROCKSDB_NAMESPACE::Status;

namespace {
constexpr char kSnapshotPrefix[] = "CUCKOO_LIVE_FILTER-";
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

std::string SnapshotStore::Path(uint32_t cf_id) const {
  return dir_ + "/" + kSnapshotPrefix + std::to_string(cf_id);
}

Status SnapshotStore::Read(uint32_t cf_id, std::string* data) const {
  return ROCKSDB_NAMESPACE::ReadFileToString(env_, Path(cf_id), data);
}

Status SnapshotStore::Write(uint32_t cf_id, const std::string& data) const {
  Status s = env_->CreateDirIfMissing(dir_);
  if (!s.ok()) return s;
  const std::string path = Path(cf_id);
  const std::string tmp = path + ".tmp";
  s = ROCKSDB_NAMESPACE::WriteStringToFile(env_, data, tmp,
                                           /*should_sync=*/true);
  if (s.ok()) s = env_->RenameFile(tmp, path);
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
