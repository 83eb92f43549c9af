#include "cuckoo/live_key_filter.h"

#include <cmath>

#include "cuckoo/cuckoo_filter.h"
#include "live/live_snapshot.h"
#include "live/live_table.h"
#include "live/reader_gate.h"

namespace cuckoo {

using internal::LiveTable;
using internal::ReaderGate;

std::string ValidateLiveKeyFilterOptions(const LiveKeyFilterOptions& o) {
  if (!(o.max_load > 0.0 && o.max_load <= 0.97)) {
    return "max_load must be in (0, 0.97]";
  }
  if (!(o.target_load > 0.0 && o.target_load < o.max_load)) {
    return "target_load must be in (0, max_load)";
  }
  if (!(o.growth_factor >= 1.25 && o.growth_factor <= 64.0)) {
    return "growth_factor must be in [1.25, 64]";
  }
  if (o.initial_capacity > (uint64_t{1} << 34)) {
    return "initial_capacity above 2^34 keys";
  }
  return "";
}

// ------------------------------------------------------------------ Builder

LiveKeyFilter::Builder::Builder(uint64_t capacity_keys, double load,
                                uint32_t seed)
    : capacity_keys_(capacity_keys),
      table_(new LiveTable(LiveTable::BucketsFor(capacity_keys, load), seed)) {}

LiveKeyFilter::Builder::~Builder() = default;

bool LiveKeyFilter::Builder::Add(uint64_t hash) {
  if (failed_) return false;
  if (!table_->Insert(hash)) failed_ = true;
  return !failed_;
}

uint64_t LiveKeyFilter::Builder::size() const { return table_->size(); }

uint64_t LiveKeyFilter::Builder::memory_bytes() const {
  return table_->memory_bytes();
}

// ------------------------------------------------------------ LiveKeyFilter

LiveKeyFilter::LiveKeyFilter(const LiveKeyFilterOptions& options,
                             uint64_t capacity_keys)
    : options_(options),
      table_(new LiveTable(
          LiveTable::BucketsFor(capacity_keys, options.target_load),
          options.seed)),
      gate_(new ReaderGate) {}

LiveKeyFilter::~LiveKeyFilter() {
  delete table_.load(std::memory_order_relaxed);
}

uint64_t LiveKeyFilter::Hash(std::string_view key) {
  return cuckoo::HashKey(key).value;
}

bool LiveKeyFilter::MayContainHash(uint64_t hash) const {
  if (bypass_.load(std::memory_order_acquire)) return true;
  ReaderGate::ReadGuard guard(gate_.get());
  const LiveTable* table = table_.load(std::memory_order_seq_cst);
  uint64_t retries = 0;
  const bool result = table->Contains(hash, &retries);
  ReaderGate::Slot* slot = guard.slot();
  ReaderGate::Bump(&slot->lookups, 1);
  if (!result) ReaderGate::Bump(&slot->absent, 1);
  if (retries != 0) ReaderGate::Bump(&slot->retries, retries);
  return result;
}

void LiveKeyFilter::MayContainHashes(const uint64_t* hashes, size_t n,
                                     bool* out) const {
  if (bypass_.load(std::memory_order_acquire)) {
    for (size_t k = 0; k < n; ++k) out[k] = true;
    return;
  }
  ReaderGate::ReadGuard guard(gate_.get());
  const LiveTable* table = table_.load(std::memory_order_seq_cst);
  uint64_t retries = 0;
  table->ContainsBatch(hashes, n, out, &retries);
  uint64_t absent = 0;
  for (size_t k = 0; k < n; ++k) absent += !out[k];
  ReaderGate::Slot* slot = guard.slot();
  ReaderGate::Bump(&slot->lookups, n);
  ReaderGate::Bump(&slot->absent, absent);
  if (retries != 0) ReaderGate::Bump(&slot->retries, retries);
}

uint64_t LiveKeyFilter::size() const {
  ReaderGate::ReadGuard guard(gate_.get());
  return table_.load(std::memory_order_seq_cst)->size();
}

bool LiveKeyFilter::NeedsGrowth() const {
  ReaderGate::ReadGuard guard(gate_.get());
  return table_.load(std::memory_order_seq_cst)->load_factor() >=
         options_.max_load;
}

uint64_t LiveKeyFilter::GrowthCapacity() const {
  ReaderGate::ReadGuard guard(gate_.get());
  const LiveTable* table = table_.load(std::memory_order_seq_cst);
  const double by_growth =
      std::ceil(double(table->size()) * options_.growth_factor);
  const double current =
      std::floor(double(table->capacity()) * options_.target_load);
  const double keys = by_growth > current ? by_growth : current;
  return static_cast<uint64_t>(keys < 1.0 ? 1.0 : keys);
}

LiveKeyFilterStats LiveKeyFilter::GetStats() const {
  LiveKeyFilterStats s;
  {
    ReaderGate::ReadGuard guard(gate_.get());
    const LiveTable* table = table_.load(std::memory_order_seq_cst);
    s.num_keys = table->size();
    s.num_buckets = table->num_buckets();
    s.capacity = table->capacity();
    s.table_bytes = table->table_bytes();
    s.memory_bytes = table->memory_bytes();
    s.relocations = table->relocations();
  }
  s.memory_bytes += sizeof(*this) + sizeof(ReaderGate) +
                    rebuild_bytes_.load(std::memory_order_relaxed) +
                    delta_bytes_.load(std::memory_order_relaxed);
  s.load_factor =
      s.capacity == 0 ? 0.0 : double(s.num_keys) / double(s.capacity);
  s.bits_per_key =
      s.num_keys == 0 ? 0.0 : double(s.table_bytes) * 8 / double(s.num_keys);
  s.expected_fpr =
      1.0 - std::pow(1.0 - 1.0 / 65535.0,
                     double(LiveTable::kSlots) * 2 * s.load_factor);
  s.inserts = inserts_.load(std::memory_order_relaxed);
  s.erases = erases_.load(std::memory_order_relaxed);
  s.erase_misses = erase_misses_.load(std::memory_order_relaxed);
  s.insert_no_room = insert_no_room_.load(std::memory_order_relaxed);
  s.rebuilds = rebuilds_.load(std::memory_order_relaxed);
  s.lookups = gate_->Sum(&ReaderGate::Slot::lookups);
  s.absent = gate_->Sum(&ReaderGate::Slot::absent);
  s.read_retries = gate_->Sum(&ReaderGate::Slot::retries);
  s.rebuild_in_progress = rebuilding();
  s.bypassed = bypass();
  return s;
}

bool LiveKeyFilter::Insert(uint64_t hash) {
  LiveTable* table = table_.load(std::memory_order_relaxed);
  if (!table->Insert(hash)) {
    insert_no_room_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  inserts_.fetch_add(1, std::memory_order_relaxed);
  if (rebuilding_.load(std::memory_order_relaxed)) RecordPendingInsert(hash);
  return true;
}

bool LiveKeyFilter::Erase(uint64_t hash) {
  LiveTable* table = table_.load(std::memory_order_relaxed);
  if (!table->Erase(hash)) {
    erase_misses_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  erases_.fetch_add(1, std::memory_order_relaxed);
  if (rebuilding_.load(std::memory_order_relaxed)) {
    delta_.push_back(DeltaOp{hash, false});
    delta_bytes_.store(delta_.capacity() * sizeof(DeltaOp),
                       std::memory_order_relaxed);
  }
  return true;
}

void LiveKeyFilter::RecordPendingInsert(uint64_t hash) {
  delta_.push_back(DeltaOp{hash, true});
  delta_bytes_.store(delta_.capacity() * sizeof(DeltaOp),
                     std::memory_order_relaxed);
}

std::unique_ptr<LiveKeyFilter::Builder> LiveKeyFilter::BeginRebuild(
    uint64_t capacity_keys) {
  delta_.clear();
  rebuilding_.store(true, std::memory_order_relaxed);
  std::unique_ptr<Builder> builder(
      new Builder(capacity_keys, options_.target_load, options_.seed));
  rebuild_bytes_.store(builder->memory_bytes(), std::memory_order_relaxed);
  return builder;
}

void LiveKeyFilter::AbortRebuild() {
  rebuilding_.store(false, std::memory_order_relaxed);
  std::vector<DeltaOp>().swap(delta_);
  delta_bytes_.store(0, std::memory_order_relaxed);
  rebuild_bytes_.store(0, std::memory_order_relaxed);
}

bool LiveKeyFilter::Replace(std::unique_ptr<Builder> builder) {
  if (builder == nullptr || builder->failed_) return false;
  LiveTable* fresh = builder->table_.get();
  if (rebuilding_.load(std::memory_order_relaxed)) {
    // Replays, in order, what happened to the current table since the
    // rebuild's source was captured. Every erase in the log removed a key
    // that was present, so it is present in `fresh` too.
    for (const DeltaOp& op : delta_) {
      if (op.insert) {
        if (!fresh->Insert(op.hash)) return false;
      } else {
        fresh->Erase(op.hash);
      }
    }
  }
  builder->table_.release();
  LiveTable* old = table_.exchange(fresh, std::memory_order_seq_cst);
  gate_->WaitForOlderReaders();
  delete old;
  rebuilds_.fetch_add(1, std::memory_order_relaxed);
  AbortRebuild();  // stops recording, frees the delta log
  return true;
}

std::string LiveKeyFilter::EncodeSnapshot(const SnapshotIdentity& id) const {
  internal::SnapshotHeader header;
  header.cf_id = id.cf_id;
  header.sequence = id.sequence;
  // The state digest rides in the identity field after a NUL (DB identities
  // never contain one), so the format is unchanged for an empty digest.
  header.db_id = id.db_state.empty() ? id.db_id : id.db_id + '\0' + id.db_state;
  header.cf_name = id.cf_name;
  std::string out;
  // Writers are serialized with this call: the table cannot be replaced.
  internal::EncodeLiveSnapshot(*table_.load(std::memory_order_relaxed), header,
                               &out);
  return out;
}

std::unique_ptr<LiveKeyFilter::Builder> LiveKeyFilter::DecodeSnapshot(
    const LiveKeyFilterOptions& options, std::string_view data,
    const SnapshotIdentity& expected, std::string* why) {
  internal::SnapshotHeader header;
  std::unique_ptr<LiveTable> table =
      internal::DecodeLiveSnapshot(data, &header, why);
  if (table == nullptr) return nullptr;
  auto reject = [&](const std::string& reason) {
    if (why != nullptr) *why = reason;
    return nullptr;
  };
  const size_t nul = header.db_id.find('\0');
  const std::string stored_id = header.db_id.substr(0, nul);
  const std::string stored_state =
      nul == std::string::npos ? std::string() : header.db_id.substr(nul + 1);
  if (stored_id != expected.db_id) return reject("snapshot of another DB");
  if (header.cf_id != expected.cf_id || header.cf_name != expected.cf_name) {
    return reject("snapshot of another column family");
  }
  if (header.sequence != expected.sequence) {
    return reject("stale snapshot: covers sequence " +
                  std::to_string(header.sequence) + ", DB is at " +
                  std::to_string(expected.sequence));
  }
  if (stored_state != expected.db_state) {
    return reject(
        "stale snapshot: the DB's files changed since it was written (" +
        stored_state + " -> " + expected.db_state + ")");
  }
  const uint64_t keys = static_cast<uint64_t>(
      std::floor(double(table->capacity()) * options.target_load));
  std::unique_ptr<Builder> builder(
      new Builder(2, options.target_load, options.seed));
  builder->capacity_keys_ = keys;
  builder->table_ = std::move(table);
  return builder;
}

}  // namespace cuckoo
