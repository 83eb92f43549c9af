// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// CuckooFilter / CuckooFilterView: the public, runtime-configured API over
// the templated CuckooTable (see cuckoo_table.h).
#include "cuckoo/cuckoo_filter.h"

#include <cmath>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "filter/filter_format.h"
#include "filter/table_ops.h"
#include "filter/view_access.h"

namespace cuckoo {

using internal::GetTableOps;
using internal::kTableLoadSlack;
using internal::kTrailerSize;
using internal::MutableTableRef;
using internal::Trailer;
using internal::ViewAccess;

namespace {

bool Fail(std::string* error, const std::string& message) {
  if (error != nullptr) *error = "cuckoo filter: " + message;
  return false;
}

// Tables from this size on ask for transparent huge pages: a lookup touches
// two random buckets, and with 4 KiB pages nearly every one of them also
// misses the TLB once the table is larger than the TLB's reach (a few MiB).
constexpr size_t kHugePageMinBytes = size_t{4} << 20;

// A zero-filled table of `bytes` bytes. Large tables are advised
// MADV_HUGEPAGE before they are first touched, so that the zero fill faults
// them in as 2 MiB pages where the kernel allows it (THP "madvise" or
// "always"); advice only: on failure the table simply keeps 4 KiB pages.
std::unique_ptr<uint8_t[]> AllocateTable(size_t bytes) {
  std::unique_ptr<uint8_t[]> table(new uint8_t[bytes]);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHugePageMinBytes) {
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t start = reinterpret_cast<uintptr_t>(table.get());
    const uintptr_t begin = (start + page - 1) & ~(page - 1);
    const uintptr_t end = (start + bytes) & ~(page - 1);
    if (end > begin) {
      madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
    }
  }
#endif
  std::memset(table.get(), 0, bytes);
  return table;
}

// The alternate-bucket offsets of every fingerprint (detail::AltOffset),
// when they are worth their memory: f <= 16 (at most 256 KiB) and a table
// at least 64 times larger, i.e. one much larger than the table of offsets,
// which then stays in the cache while the lookups miss it.
std::unique_ptr<uint32_t[]> MakeAltOffsets(int fp_bits, uint64_t num_buckets,
                                           uint64_t table_bytes,
                                           uint32_t seed) {
  if (fp_bits > 16) return nullptr;
  const uint32_t count = uint32_t{1} << fp_bits;
  if (uint64_t{count} * sizeof(uint32_t) * 64 > table_bytes) return nullptr;
  std::unique_ptr<uint32_t[]> offsets(new uint32_t[count]);
  offsets[0] = 0;  // fingerprint 0 is never looked up
  for (uint32_t fp = 1; fp < count; ++fp) {
    offsets[fp] =
        detail::AltOffset(fp, static_cast<uint32_t>(num_buckets), seed);
  }
  return offsets;
}

uint64_t InitialRngState(uint32_t seed) {
  return 0x243f6a8885a308d3ULL ^ (uint64_t{seed} << 17);
}

FilterStats ComputeStats(uint64_t num_items, uint64_t num_buckets,
                         uint64_t table_bytes, int fp_bits, int bucket_size,
                         bool has_victim) {
  FilterStats s;
  s.num_items = num_items;
  s.num_buckets = num_buckets;
  s.capacity = num_buckets * static_cast<uint64_t>(bucket_size);
  s.table_bytes = table_bytes;
  s.load_factor =
      s.capacity == 0 ? 0.0 : double(num_items) / double(s.capacity);
  s.bits_per_item =
      num_items == 0 ? 0.0 : double(table_bytes) * 8 / double(num_items);
  // Each of the 2b probed entries matches a random fingerprint with
  // probability 1/(2^f - 1) if occupied (load factor of them are).
  const double distinct = std::ldexp(1.0, fp_bits) - 1;
  s.expected_fpr =
      1.0 - std::pow(1.0 - 1.0 / distinct, 2.0 * bucket_size * s.load_factor);
  s.has_victim = has_victim;
  return s;
}

}  // namespace

double DefaultTargetLoad(int bucket_size) {
  switch (bucket_size) {
    case 1:
      return 0.45;
    case 2:
      return 0.84;
    case 8:
      return 0.98;
    default:
      return 0.95;
  }
}

std::string ValidateConfig(const FilterConfig& c) {
  if (c.fingerprint_bits < 4 || c.fingerprint_bits > 32) {
    return "fingerprint_bits must be 4..32, got " +
           std::to_string(c.fingerprint_bits);
  }
  if (c.bucket_size != 1 && c.bucket_size != 2 && c.bucket_size != 4 &&
      c.bucket_size != 8) {
    return "bucket_size must be 1, 2, 4 or 8, got " +
           std::to_string(c.bucket_size);
  }
  if (c.semi_sort && (c.bucket_size != 4 || c.fingerprint_bits > 16)) {
    return "semi_sort needs bucket_size 4 and fingerprint_bits <= 16";
  }
  if (!(c.target_load >= 0.0 && c.target_load <= 1.0)) {
    return "target_load must be in (0, 1], or 0 for the default";
  }
  if (c.max_kicks < 0) return "max_kicks must be >= 0";
  return "";
}

uint64_t BucketsForItems(const FilterConfig& config, uint64_t expected_items) {
  const double load = config.target_load > 0
                          ? config.target_load
                          : DefaultTargetLoad(config.bucket_size);
  const double wanted =
      std::ceil(double(expected_items) / (config.bucket_size * load));
  if (!(wanted <= double(kMaxBuckets))) return 0;
  uint64_t buckets = static_cast<uint64_t>(wanted);
  buckets += buckets & 1;
  return buckets < 2 ? 2 : buckets;
}

// ---------------------------------------------------------------- CuckooFilter

CuckooFilter::CuckooFilter(const FilterConfig& config, uint64_t num_buckets,
                           const internal::TableOps* ops)
    : config_(config),
      ops_(ops),
      probe_(ops->probe_params()),
      num_buckets_(num_buckets),
      rng_state_(InitialRngState(config.seed)),
      table_(AllocateTable(ops->TableBytes(num_buckets) + kTableLoadSlack)),
      alt_offsets_(MakeAltOffsets(config.fingerprint_bits, num_buckets,
                                  ops->TableBytes(num_buckets), config.seed)) {}

CuckooFilter::~CuckooFilter() = default;

std::unique_ptr<CuckooFilter> CuckooFilter::Create(const FilterConfig& config,
                                                   uint64_t expected_items,
                                                   std::string* error) {
  const std::string invalid = ValidateConfig(config);
  if (!invalid.empty()) {
    Fail(error, invalid);
    return nullptr;
  }
  const uint64_t buckets = BucketsForItems(config, expected_items);
  if (buckets == 0) {
    Fail(error, std::to_string(expected_items) + " items need more than " +
                    std::to_string(kMaxBuckets) + " buckets");
    return nullptr;
  }
  return CreateWithBuckets(config, buckets, error);
}

std::unique_ptr<CuckooFilter> CuckooFilter::CreateWithBuckets(
    const FilterConfig& config, uint64_t num_buckets, std::string* error) {
  const std::string invalid = ValidateConfig(config);
  if (!invalid.empty()) {
    Fail(error, invalid);
    return nullptr;
  }
  if (num_buckets > kMaxBuckets) {
    Fail(error, "bucket count above " + std::to_string(kMaxBuckets));
    return nullptr;
  }
  num_buckets += num_buckets & 1;  // kMaxBuckets is even: stays in range
  if (num_buckets < 2) num_buckets = 2;
  const internal::TableOps* ops = GetTableOps(
      config.fingerprint_bits, config.bucket_size, config.semi_sort);
  return std::unique_ptr<CuckooFilter>(
      new CuckooFilter(config, num_buckets, ops));
}

std::unique_ptr<CuckooFilter> CuckooFilter::Deserialize(const char* data,
                                                        size_t size,
                                                        std::string* error) {
  CuckooFilterView view;
  if (!CuckooFilterView::Parse(data, size, &view, error)) return nullptr;
  FilterConfig config;
  config.fingerprint_bits = view.fingerprint_bits();
  config.bucket_size = view.bucket_size();
  config.semi_sort = view.semi_sort();
  config.seed = view.seed();
  std::unique_ptr<CuckooFilter> filter(
      new CuckooFilter(config, view.num_buckets(), view.ops_));
  std::memcpy(filter->table_.get(), view.table_, filter->TableBytes());
  // The trailer's count must be the table's: Erase decrements it and
  // Serialize writes it back, so a wrong count would underflow or produce
  // bytes that Parse rejects.
  const uint64_t occupied =
      view.ops_->CountOccupied(view.table_, view.num_buckets()) +
      (view.geometry_.victim_fp != 0 ? 1 : 0);
  if (occupied != view.size()) {
    Fail(error, "item count " + std::to_string(view.size()) + " but " +
                    std::to_string(occupied) + " occupied slots");
    return nullptr;
  }
  filter->num_items_ = view.size();
  filter->victim_fp_ = view.geometry_.victim_fp;
  filter->victim_bucket_ = view.geometry_.victim_bucket;
  return filter;
}

size_t CuckooFilter::TableBytes() const {
  return static_cast<size_t>(ops_->TableBytes(num_buckets_));
}

MutableTableRef CuckooFilter::MutableRef() {
  MutableTableRef t;
  t.table = table_.get();
  t.num_buckets = static_cast<uint32_t>(num_buckets_);
  t.seed = config_.seed;
  t.victim_fp = &victim_fp_;
  t.victim_bucket = &victim_bucket_;
  t.num_items = &num_items_;
  t.rng_state = &rng_state_;
  t.max_kicks = config_.max_kicks;
  t.alt_offsets = alt_offsets_.get();
  return t;
}

InsertResult CuckooFilter::Insert(KeyHash hash) {
  return ops_->Insert(MutableRef(), hash.value);
}

uint64_t CuckooFilter::InsertMany(const KeyHash* hashes, size_t n) {
  return ops_->InsertMany(MutableRef(), hashes, n);
}

uint64_t CuckooFilter::InsertUnordered(const KeyHash* hashes, size_t n) {
  return ops_->InsertUnordered(MutableRef(), hashes, n,
                               ops_->UnorderedMinTableBytes());
}

bool CuckooFilter::Erase(KeyHash hash) {
  return ops_->Erase(MutableRef(), hash.value);
}

bool CuckooFilter::ContainsGeneric(uint64_t hash) const {
  return View().ContainsGeneric(hash);
}

void CuckooFilter::ContainsBatch(const KeyHash* hashes, size_t n,
                                 bool* out) const {
  View().ContainsBatch(hashes, n, out);
}

void CuckooFilter::Clear() {
  std::memset(table_.get(), 0, TableBytes() + kTableLoadSlack);
  num_items_ = 0;
  victim_fp_ = 0;
  victim_bucket_ = 0;
  rng_state_ = InitialRngState(config_.seed);
}

FilterStats CuckooFilter::stats() const {
  return ComputeStats(num_items_, num_buckets_, TableBytes(),
                      config_.fingerprint_bits, config_.bucket_size, full());
}

size_t CuckooFilter::SerializedSize() const {
  return TableBytes() + kTrailerSize;
}

void CuckooFilter::SerializeTo(char* out) const {
  std::memcpy(out, table_.get(), TableBytes());
  Trailer t;
  static_cast<detail::TableGeometry&>(t) = Geometry();
  internal::EncodeTrailer(t, out, TableBytes());
}

std::string CuckooFilter::Serialize() const {
  std::string out(SerializedSize(), '\0');
  SerializeTo(&out[0]);
  return out;
}

CuckooFilterView CuckooFilter::View() const {
  CuckooFilterView v;
  v.ops_ = ops_;
  v.probe_ = probe_;
  v.table_ = table_.get();
  v.alt_offsets_ = alt_offsets_.get();
  v.geometry_ = Geometry();
  return v;
}

detail::TableGeometry CuckooFilter::Geometry() const {
  detail::TableGeometry g;
  g.num_buckets = num_buckets_;
  g.num_items = num_items_;
  g.seed = config_.seed;
  g.victim_fp = victim_fp_;
  g.victim_bucket = victim_bucket_;
  g.fingerprint_bits = config_.fingerprint_bits;
  g.bucket_size = config_.bucket_size;
  g.semi_sort = config_.semi_sort;
  return g;
}

// ------------------------------------------------------------ CuckooFilterView

bool CuckooFilterView::Parse(const char* data, size_t size,
                             CuckooFilterView* out, std::string* error) {
  Trailer t;
  uint64_t table_bytes = 0;
  if (!internal::DecodeFilter(data, size, &t, &table_bytes, error)) {
    return false;
  }
  CuckooFilterView v;
  v.ops_ = GetTableOps(t.fingerprint_bits, t.bucket_size, t.semi_sort);
  v.table_ = reinterpret_cast<const uint8_t*>(data);
  v.geometry_ = t;  // the trailer's geometry, without the format version
  v.probe_ = v.ops_->probe_params();
  *out = v;
  return true;
}

bool CuckooFilterView::ContainsGeneric(uint64_t hash) const {
  if (ops_ == nullptr) return false;
  return ops_->Contains(ViewAccess::Ref(*this), hash);
}

void CuckooFilterView::ContainsBatch(const KeyHash* hashes, size_t n,
                                     bool* out) const {
  if (ops_ == nullptr) {
    for (size_t k = 0; k < n; ++k) out[k] = false;
    return;
  }
  ops_->ContainsBatch(ViewAccess::Ref(*this), hashes, n, out);
}

FilterStats CuckooFilterView::stats() const {
  if (ops_ == nullptr) return FilterStats{};
  const detail::TableGeometry& g = geometry_;
  return ComputeStats(g.num_items, g.num_buckets,
                      ops_->TableBytes(g.num_buckets), g.fingerprint_bits,
                      g.bucket_size, g.victim_fp != 0);
}

}  // namespace cuckoo
