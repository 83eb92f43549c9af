// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// policy_bench: RocksDB's Bloom and Ribbon filters against the cuckoo filter
// policy, through the FilterBitsBuilder / FilterBitsReader interface that
// RocksDB itself uses for SST filter blocks (same keys, same bits/key).
//
// For every bits/key value and every policy it builds one filter of --keys
// keys (make it larger than the L2 cache for the query-time targets), then
// measures:
//   - build time per key (AddKey for every key + Finish, hashing included);
//   - single-key MayMatch time for present keys and absent keys;
//   - on x86-64, serialized single-key MayMatch time for absent keys
//     (s.neg): an LFENCE after each call keeps the next lookup from starting
//     before this one has completed, so the time is one lookup's latency.
//     A point Get probes a filter between thousands of other instructions,
//     so its probes do not overlap either, whereas the independent single
//     queries overlap as many lookups as the core's out-of-order window
//     holds, which rewards short instruction sequences. (A chain through
//     the returned bool would not serialize: the answer comes from
//     predicted branches.);
//   - batched MayMatch (the MultiGet path, batches of --batch keys) for
//     present and absent keys;
//   - the false positive rate over --queries absent keys.
// Queries visit keys in a random order. No result is assumed: a false
// negative aborts the run.
//
// Policies (--policies, comma separated):
//   bloom        NewBloomFilterPolicy(bits)            (format_version 5)
//   ribbon       NewRibbonFilterPolicy(bits, -1)       (always Ribbon)
//   cuckoo       cuckoofilter:<bits>  (semi-sorted buckets of 4, the default)
//   cuckoo_plain cuckoofilter:<bits>:<f>:4:0 with the largest f <= 32 that
//                fits at load 0.95 (buckets of 4, not semi-sorted)
//   cuckoo_blocked cuckoofilter:<bits>:blocked (both buckets of a key in one
//                64-byte block, format version 3)
//
// DRAM-scale mode (--filters=N > 0): every policy builds N filters of --keys
// keys each (keys generated from (filter, index), not stored), so that the
// filters of one policy together exceed the caches (e.g. --filters=100
// --keys=1000000 at 10 bits/key is 125 MB per policy; the L3 here is
// 32 MiB). Single-key queries pick a random filter each; batched queries
// pick a random filter per batch (a MultiGet batch reads one table's filter)
// and --batch keys of it. Same columns; the times are of a query, over all
// filters; filter_bytes and keys are totals.
//
// --median reports the median of --repeats runs instead of the best.
// lines_neg (last column) is analytical: the 64-byte blocks a negative
// lookup reads: Bloom (RocksDB's cache-local Bloom) 1, Ribbon ~2 (a
// 64-bit-coefficient band), cuckoo 2 (two buckets anywhere in the table),
// cuckoo_blocked 1 + the measured fraction of overflow bits set. A block
// that is not 64-byte aligned in memory straddles two cache lines, for
// Bloom as for cuckoo_blocked; the builders' buffers are malloc-aligned.
//
// Output: a table on stdout and, with --csv=<file>, the same rows as CSV.
// CSV columns (stable; add new ones only at the end):
//   policy              one of the names above
//   bits_per_key_arg    the bits/key given to the policy
//   name                the policy's Name()
//   keys                distinct keys in the filter
//   filter_bytes        size of the filter block (with metadata/trailer)
//   bits_per_key        filter_bytes * 8 / keys
//   fpr_percent         measured false positive rate, percent
//   build_ns            build time per key, ns
//   pos_ns              single MayMatch, present keys, ns per key
//   neg_ns              single MayMatch, absent keys, ns per key
//   batch_pos_ns        batched MayMatch, present keys, ns per key
//   batch_neg_ns        batched MayMatch, absent keys, ns per key
//   fpr_vs_bloom        fpr_percent / Bloom's at the same bits_per_key_arg
//   build_vs_bloom      build_ns / Bloom's
//   neg_vs_bloom        neg_ns / Bloom's
//   batch_neg_vs_bloom  batch_neg_ns / Bloom's
//   pos_vs_bloom        pos_ns / Bloom's
//   batch_pos_vs_bloom  batch_pos_ns / Bloom's
//   filters             filters per policy (1, or --filters)
//   lines_neg           64-byte blocks read per negative lookup (see above)
//   serial_neg_ns       serialized single MayMatch, absent keys, ns per key
//                       (x86-64; empty elsewhere)
//   serial_neg_vs_bloom serial_neg_ns / Bloom's
// (ratio columns are empty when bloom is not among the policies).
#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "blocked/blocked_filter.h"
#include "db_bench_util.h"
#include "filter_bits_abi.h"
#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "rocksdb_cuckoo/filter_policy.h"

DEFINE_uint64(keys, 4000000, "Keys per filter (distinct)");
DEFINE_uint64(queries, 2000000, "Queries per measurement");
DEFINE_string(bits_per_key, "8,10,12,16", "Comma-separated bits/key values");
DEFINE_string(policies, "bloom,ribbon,cuckoo,cuckoo_plain",
              "Comma-separated policies: bloom, ribbon, cuckoo, cuckoo_plain, "
              "cuckoo_blocked");
DEFINE_int32(batch, 32, "Keys per batched MayMatch call (MultiGet uses <= 32)");
DEFINE_int32(key_size, 16, "Bytes per key (>= 8)");
DEFINE_int32(repeats, 5,
             "Runs per timing; the best (or, with --median, the median) is "
             "reported");
DEFINE_uint64(seed, 1, "Seed of the key generator and query order");
DEFINE_string(csv, "", "Also write the table as CSV to this file");
DEFINE_uint64(filters, 0,
              "DRAM-scale mode when > 0: this many filters of --keys keys "
              "per policy, queries spread at random over them");
DEFINE_int32(build_repeats, 1,
             "DRAM-scale mode: times every policy's filters are built (the "
             "policies take turns; the best or median build time is "
             "reported, and the last build is queried)");
DEFINE_bool(median, false,
            "Report the median of --repeats instead of the best");
DEFINE_string(clock, "wall",
              "wall, or cpu: this thread's CPU time, which leaves out the "
              "time other processes hold the core (a shared machine)");

namespace {

using cuckoo_bench::Clock;
using cuckoo_bench::kCanSerialize;
using cuckoo_bench::Seconds;
using cuckoo_bench::SerializeLookup;
using cuckoo_bench::SplitList;
using cuckoo_bench::ThreadCpuSeconds;
using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::FilterPolicy;
using ROCKSDB_NAMESPACE::Slice;

// Query keys. In DRAM-scale mode each key also names the filter it
// queries; `filter` is empty when every key queries the one filter.
struct Queries {
  std::vector<Slice> keys;
  std::vector<uint32_t> filter;
};

// Keys: 8-byte big-endian index (in its own range for present and absent
// keys) followed by pseudo-random bytes, all in one buffer.
struct KeySet : Queries {
  std::string data;
  KeySet(uint64_t count, uint64_t first_index, int key_size, uint64_t seed) {
    data.resize(count * key_size);
    std::mt19937_64 rng(seed);
    for (uint64_t i = 0; i < count; ++i) {
      char* p = &data[i * key_size];
      const uint64_t index = first_index + i;
      for (int b = 0; b < 8; ++b)
        p[b] = static_cast<char>(index >> (56 - 8 * b));
      for (int b = 8; b < key_size; b += 8) {
        const uint64_t r = rng();
        std::memcpy(p + b, &r, std::min(8, key_size - b));
      }
    }
    Index(key_size);
  }
  // The keys of `from` in the order of `order`, copied so that a query loop
  // reads its keys sequentially (the filter accesses stay random).
  KeySet(const KeySet& from, const std::vector<uint32_t>& order, int key_size) {
    data.resize(order.size() * key_size);
    for (size_t i = 0; i < order.size(); ++i) {
      std::memcpy(&data[i * key_size], from.keys[order[i]].data(), key_size);
    }
    Index(key_size);
  }
  void Index(int key_size) {
    const size_t count = data.size() / key_size;
    keys.reserve(count);
    for (size_t i = 0; i < count; ++i)
      keys.emplace_back(&data[i * key_size], key_size);
  }
};

struct Row {
  std::string policy;
  double bits_arg = 0;
  std::string name;
  uint64_t keys = 0;
  uint64_t filter_bytes = 0;
  double bits_per_key = 0;
  double fpr_percent = 0;
  double build_ns = 0, pos_ns = 0, neg_ns = 0, batch_pos_ns = 0,
         batch_neg_ns = 0;
  double serial_neg_ns = 0;  // 0: not measured
  uint64_t filters = 1;
  double lines_neg = 0;
};

// Best or median (--median) of the timings of the repeats.
double Pick(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return FLAGS_median ? v[v.size() / 2] : v.front();
}

// 64-byte blocks a negative lookup reads (see the header comment).
double LinesPerNegative(const std::string& kind, const Slice& contents) {
  if (kind == "bloom") return 1;
  if (kind == "ribbon") return 2;
  if (kind != "cuckoo_blocked") return 2;
  cuckoo::internal::BlockedView view;
  std::string error;
  if (!cuckoo::internal::ParseBlockedFilter(contents.data(), contents.size(),
                                            &view, &error)) {
    return 0;
  }
  return 1 + cuckoo::internal::BlockedOverflowBitFraction(view);
}

std::shared_ptr<const FilterPolicy> MakePolicy(const std::string& kind,
                                               double bits,
                                               std::string* error) {
  if (kind == "bloom") {
    return std::shared_ptr<const FilterPolicy>(
        ROCKSDB_NAMESPACE::NewBloomFilterPolicy(bits));
  }
  if (kind == "ribbon") {
    return std::shared_ptr<const FilterPolicy>(
        ROCKSDB_NAMESPACE::NewRibbonFilterPolicy(bits,
                                                 /*bloom_before_level=*/-1));
  }
  if (kind == "cuckoo") {
    return std::shared_ptr<const FilterPolicy>(
        rocksdb_cuckoo::NewCuckooFilterPolicy(bits));
  }
  if (kind == "cuckoo_plain") {
    // Plain buckets take every width up to 32 (semi-sorted ones stop at
    // 16): capping f at 16 would pay for more bits/key without lowering
    // the FPR.
    const int f =
        std::min(32, static_cast<int>(std::floor(0.95 * bits + 1e-9)));
    std::shared_ptr<const FilterPolicy> p;
    ROCKSDB_NAMESPACE::Status s =
        rocksdb_cuckoo::NewCuckooFilterPolicyWithLayout(
            bits, f, /*bucket_size=*/4, /*semi_sort=*/false, &p);
    if (!s.ok()) *error = s.ToString();
    return p;
  }
  if (kind == "cuckoo_blocked") {
    char name[64];
    snprintf(name, sizeof(name), "cuckoofilter:%g:blocked", bits);
    std::shared_ptr<const FilterPolicy> p;
    ROCKSDB_NAMESPACE::ConfigOptions options;
    ROCKSDB_NAMESPACE::Status s =
        FilterPolicy::CreateFromString(options, name, &p);
    if (!s.ok() || !p) *error = s.ToString() + " (" + name + ")";
    return p;
  }
  *error = "unknown policy '" + kind + "'";
  return nullptr;
}

// One policy under test: its filters (one, or --filters in DRAM-scale
// mode), their readers, and the time of each repeat.
struct Subject {
  std::string kind;
  std::shared_ptr<const FilterPolicy> policy;
  std::vector<std::unique_ptr<const char[]>> blocks;
  std::vector<Slice> contents;
  std::vector<std::unique_ptr<FilterBitsReader>> readers;
  // Seconds of each repeat.
  std::vector<double> build_s, pos_s, neg_s, batch_pos_s, batch_neg_s,
      serial_neg_s;
  size_t false_pos = 0;

  // Frees the filters and readers.
  void Clear() {
    readers.clear();
    blocks.clear();
    contents.clear();
  }
};

// The subjects of `kinds` at `bits`; false (with a message) if a policy
// cannot be made.
bool MakeSubjects(const std::vector<std::string>& kinds, double bits,
                  std::vector<Subject>* subjects) {
  subjects->clear();
  subjects->resize(kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) {
    std::string error;
    (*subjects)[i].kind = kinds[i];
    (*subjects)[i].policy = MakePolicy(kinds[i], bits, &error);
    if (!(*subjects)[i].policy) {
      fprintf(stderr, "%s: %s\n", kinds[i].c_str(), error.c_str());
      return false;
    }
  }
  return true;
}

// Seconds fn takes on the --clock clock.
double Time(const std::function<void()>& fn) {
  if (FLAGS_clock == "cpu") {
    const double start = ThreadCpuSeconds();
    fn();
    return ThreadCpuSeconds() - start;
  }
  const auto start = Clock::now();
  fn();
  return Seconds(start, Clock::now());
}

// Builds a filter of `count` keys (key i is key_at(i)) with a fresh builder,
// as RocksDB does per table file, and adds it and its reader to the
// subject. Returns the seconds taken (making the keys included).
template <typename KeyAt>
double BuildFilter(Subject* s, size_t count, KeyAt key_at) {
  ROCKSDB_NAMESPACE::BlockBasedTableOptions table_options;
  table_options.filter_policy = s->policy;
  ROCKSDB_NAMESPACE::FilterBuildingContext context(table_options);
  std::unique_ptr<const char[]> buf;
  Slice contents;
  const double seconds = Time([&] {
    std::unique_ptr<FilterBitsBuilder> builder(
        s->policy->GetBuilderWithContext(context));
    for (size_t i = 0; i < count; ++i) builder->AddKey(key_at(i));
    ROCKSDB_NAMESPACE::Status status;
    contents = builder->Finish(&buf, &status);
    if (!status.ok()) {
      fprintf(stderr, "%s: Finish failed: %s\n", s->kind.c_str(),
              status.ToString().c_str());
      std::exit(1);
    }
  });
  s->readers.emplace_back(s->policy->GetFilterBitsReader(contents));
  s->blocks.push_back(std::move(buf));
  s->contents.push_back(contents);
  return seconds;
}

// Exits unless a count of matched keys is the one expected: present keys
// that did not all match are false negatives, and another way of querying
// the same absent keys must match as many as the independent single calls.
void CheckMatched(const std::string& kind, const char* what, size_t matched,
                  size_t expected) {
  if (matched == expected) return;
  fprintf(stderr, "%s: %s: %zu matched, expected %zu\n", kind.c_str(), what,
          matched, expected);
  std::exit(2);
}

// Returns run(reader_of), where reader_of(i) is the reader that query key i
// asks: the one reader (held in a register) when the keys name no filter.
template <typename Run>
size_t WithReaders(const Subject& s, const Queries& q, Run run) {
  static_assert(
      sizeof(std::unique_ptr<FilterBitsReader>) == sizeof(FilterBitsReader*),
      "readers are read as raw pointers in the query loop");
  if (q.filter.empty()) {
    FilterBitsReader* const reader = s.readers[0].get();
    return run([reader](size_t) { return reader; });
  }
  FilterBitsReader* const* readers =
      reinterpret_cast<FilterBitsReader* const*>(s.readers.data());
  const uint32_t* filter = q.filter.data();
  return run([readers, filter](size_t i) { return readers[filter[i]]; });
}

// Single lookups, one at a time if kSerialized (see SerializeLookup).
template <bool kSerialized = false>
size_t SingleLookups(const Subject& s, const Queries& q) {
  return WithReaders(s, q, [&](auto reader_of) {
    size_t matched = 0;
    for (size_t i = 0; i < q.keys.size(); ++i) {
      matched += reader_of(i)->MayMatch(q.keys[i]);
      if (kSerialized) SerializeLookup();
    }
    return matched;
  });
}

// Batched lookups of --batch keys, as FullFilterBlockReader::KeysMayMatch
// does for MultiGet; a batch asks the filter of its first key.
size_t BatchedLookups(const Subject& s, const Queries& q) {
  const int batch = std::max(1, FLAGS_batch);
  std::vector<Slice*> ptrs(batch);
  std::unique_ptr<bool[]> may(new bool[batch]);
  return WithReaders(s, q, [&](auto reader_of) {
    size_t matched = 0;
    for (size_t start = 0; start < q.keys.size(); start += batch) {
      const int n =
          static_cast<int>(std::min<size_t>(batch, q.keys.size() - start));
      for (int k = 0; k < n; ++k)
        ptrs[k] = const_cast<Slice*>(&q.keys[start + k]);
      reader_of(start)->MayMatch(n, ptrs.data(), may.get());
      for (int k = 0; k < n; ++k) matched += may[k];
    }
    return matched;
  });
}

// The query sets of a measurement: present and absent keys for single and
// for batched lookups (the same sets, or sets whose batches each ask one
// filter).
struct QueryKinds {
  const Queries* pos;
  const Queries* neg;
  const Queries* batch_pos;
  const Queries* batch_neg;
};

// One repeat of every query kind; each kind runs over every subject back to
// back, so that a busy machine slows all of them alike.
void QueryRound(const QueryKinds& q, std::vector<Subject>* subjects) {
  for (Subject& s : *subjects) {
    size_t hits = 0;
    s.pos_s.push_back(Time([&] { hits = SingleLookups(s, *q.pos); }));
    CheckMatched(s.kind, "FALSE NEGATIVES in single MayMatch", hits,
                 q.pos->keys.size());
  }
  for (Subject& s : *subjects) {
    s.neg_s.push_back(Time([&] { s.false_pos = SingleLookups(s, *q.neg); }));
  }
  for (Subject& s : *subjects) {
    if (!kCanSerialize) break;
    size_t matched = 0;
    s.serial_neg_s.push_back(
        Time([&] { matched = SingleLookups<true>(s, *q.neg); }));
    CheckMatched(s.kind, "serialized and single MayMatch disagree", matched,
                 s.false_pos);
  }
  for (Subject& s : *subjects) {
    size_t hits = 0;
    s.batch_pos_s.push_back(
        Time([&] { hits = BatchedLookups(s, *q.batch_pos); }));
    CheckMatched(s.kind, "FALSE NEGATIVES in batched MayMatch", hits,
                 q.batch_pos->keys.size());
  }
  for (Subject& s : *subjects) {
    size_t matched = 0;
    s.batch_neg_s.push_back(
        Time([&] { matched = BatchedLookups(s, *q.batch_neg); }));
    if (q.batch_neg == q.neg) {
      CheckMatched(s.kind, "batched and single MayMatch disagree", matched,
                   s.false_pos);
    }
  }
}

// The row of a subject at `bits` whose filters hold `keys` keys in all.
Row MakeRow(const Subject& s, double bits, uint64_t keys, const QueryKinds& q) {
  Row row;
  row.policy = s.kind;
  row.bits_arg = bits;
  row.name = s.policy->Name();
  row.filters = s.contents.size();
  row.keys = keys;
  double lines = 0;
  for (const Slice& c : s.contents) {
    row.filter_bytes += c.size();
    lines += LinesPerNegative(s.kind, c);
  }
  row.lines_neg = lines / s.contents.size();
  row.bits_per_key = row.filter_bytes * 8.0 / keys;
  const double nq = q.neg->keys.size();
  row.fpr_percent = 100.0 * s.false_pos / nq;
  row.build_ns = Pick(s.build_s) * 1e9 / keys;
  row.pos_ns = Pick(s.pos_s) * 1e9 / q.pos->keys.size();
  row.neg_ns = Pick(s.neg_s) * 1e9 / nq;
  row.batch_pos_ns = Pick(s.batch_pos_s) * 1e9 / q.batch_pos->keys.size();
  row.batch_neg_ns = Pick(s.batch_neg_s) * 1e9 / q.batch_neg->keys.size();
  row.serial_neg_ns = Pick(s.serial_neg_s) * 1e9 / nq;
  return row;
}

// Measures every policy at one bits/key, one filter of `present` each.
// Every repeat builds each filter again, then runs the queries.
bool RunBits(const std::vector<std::string>& kinds, double bits,
             const KeySet& present, const KeySet& pos_queries,
             const KeySet& neg_queries, std::vector<Row>* rows) {
  std::vector<Subject> subjects;
  if (!MakeSubjects(kinds, bits, &subjects)) return false;
  const QueryKinds q{&pos_queries, &neg_queries, &pos_queries, &neg_queries};
  for (int r = 0; r < std::max(1, FLAGS_repeats); ++r) {
    for (Subject& s : subjects) {
      s.Clear();
      s.build_s.push_back(BuildFilter(
          &s, present.keys.size(), [&](size_t i) { return present.keys[i]; }));
    }
    QueryRound(q, &subjects);
  }
  for (Subject& s : subjects) {
    rows->push_back(MakeRow(s, bits, present.keys.size(), q));
  }
  return true;
}

// ------------------------------------------------------- DRAM-scale mode

// Key `index` of filter `filter` (absent keys: `absent` set): 8 bytes
// big-endian of (absent, filter, index) followed by pseudo-random bytes.
void MakeKey(uint64_t filter, uint64_t index, bool absent, char* out) {
  const uint64_t id = (uint64_t{absent} << 63) | (filter << 40) |
                      (index & ((uint64_t{1} << 40) - 1));
  for (int b = 0; b < 8; ++b) out[b] = static_cast<char>(id >> (56 - 8 * b));
  uint64_t r = id;
  for (int b = 8; b < FLAGS_key_size; b += 8) {
    r = (r ^ (r >> 31)) * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
    std::memcpy(out + b, &r, std::min(8, FLAGS_key_size - b));
  }
}

// Queries of one kind: keys stored back to back with their filter.
struct QuerySet : Queries {
  std::string data;
  // Single queries: a random filter per key; batched: per --batch keys.
  QuerySet(uint64_t count, bool absent, bool batched, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int ks = FLAGS_key_size;
    const uint64_t per_batch = batched ? std::max(1, FLAGS_batch) : 1;
    data.resize(count * ks);
    filter.resize(count);
    uint32_t f = 0;
    for (uint64_t i = 0; i < count; ++i) {
      if (i % per_batch == 0) f = static_cast<uint32_t>(rng() % FLAGS_filters);
      filter[i] = f;
      MakeKey(f, rng() % FLAGS_keys, absent, &data[i * ks]);
    }
    for (uint64_t i = 0; i < count; ++i) keys.emplace_back(&data[i * ks], ks);
  }
};

// Builds the --filters filters of a policy; returns the seconds taken.
double BuildAll(Subject* s) {
  s->Clear();
  std::vector<char> key(FLAGS_key_size);
  double seconds = 0;
  for (uint64_t f = 0; f < FLAGS_filters; ++f) {
    seconds += BuildFilter(s, FLAGS_keys, [&](size_t i) {
      MakeKey(f, i, false, key.data());
      return Slice(key.data(), key.size());
    });
  }
  return seconds;
}

// Measures every policy at one bits/key, --filters filters each. Every
// policy's filters stay built (and in memory) for all repeats, so the
// queries of each policy run over its full set; builds are timed
// --build_repeats times, the policies taking turns.
bool RunBitsDram(const std::vector<std::string>& kinds, double bits,
                 std::vector<Row>* rows) {
  std::vector<Subject> subjects;
  if (!MakeSubjects(kinds, bits, &subjects)) return false;
  const QuerySet pos(FLAGS_queries, false, false, FLAGS_seed + 10);
  const QuerySet neg(FLAGS_queries, true, false, FLAGS_seed + 11);
  const QuerySet bpos(FLAGS_queries, false, true, FLAGS_seed + 12);
  const QuerySet bneg(FLAGS_queries, true, true, FLAGS_seed + 13);
  const QueryKinds q{&pos, &neg, &bpos, &bneg};
  for (int r = 0; r < std::max(1, FLAGS_build_repeats); ++r) {
    for (Subject& s : subjects) s.build_s.push_back(BuildAll(&s));
  }
  for (int r = 0; r < std::max(1, FLAGS_repeats); ++r) QueryRound(q, &subjects);
  for (Subject& s : subjects) {
    rows->push_back(MakeRow(s, bits, FLAGS_filters * FLAGS_keys, q));
    s.Clear();  // before the next bits/key value
  }
  return true;
}

std::string Ratio(double a, double b) {
  if (!(b > 0)) return "";
  char buf[32];
  snprintf(buf, sizeof(buf), "%.3f", a / b);
  return buf;
}

std::string Fixed2(double v) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  cuckoo_bench::ParseFlags(&argc, &argv,
                           "Bloom / Ribbon / cuckoo filters through RocksDB's "
                           "FilterBitsBuilder/Reader",
                           __FILE__);
  rocksdb_cuckoo::RegisterCuckooFilterPolicies(
      *ROCKSDB_NAMESPACE::ObjectLibrary::Default(), "");
  if (FLAGS_clock != "cpu" && FLAGS_clock != "wall") {
    fprintf(stderr, "--clock: cpu or wall\n");
    return 1;
  }
  if (FLAGS_key_size < 8) {
    fprintf(stderr, "--key_size must be >= 8\n");
    return 1;
  }
  const std::vector<std::string> policies = SplitList(FLAGS_policies);
  std::vector<double> bits_list;
  for (const std::string& b : SplitList(FLAGS_bits_per_key))
    bits_list.push_back(std::stod(b));

  const bool dram = FLAGS_filters > 0;
  if (dram && (FLAGS_filters >= (uint64_t{1} << 23) ||
               FLAGS_keys >= (uint64_t{1} << 40))) {
    fprintf(stderr, "--filters must be < 2^23 and --keys < 2^40\n");
    return 1;
  }
  std::unique_ptr<KeySet> present, neg_queries, pos_queries;
  if (!dram) {
    present.reset(new KeySet(FLAGS_keys, 0, FLAGS_key_size, FLAGS_seed));
    // Absent keys come from another index range; present queries are keys
    // of the filter drawn at random.
    neg_queries.reset(new KeySet(FLAGS_queries, uint64_t{1} << 62,
                                 FLAGS_key_size, FLAGS_seed + 1));
    std::mt19937_64 rng(FLAGS_seed + 2);
    std::vector<uint32_t> pos_order(FLAGS_queries);
    for (auto& i : pos_order) i = static_cast<uint32_t>(rng() % FLAGS_keys);
    pos_queries.reset(new KeySet(*present, pos_order, FLAGS_key_size));
  }

  printf(
      "policy_bench: %llu filter(s) of %llu keys of %d bytes, %llu queries, "
      "batch %d, %s of %d, %s clock\n",
      static_cast<unsigned long long>(dram ? FLAGS_filters : 1),
      static_cast<unsigned long long>(FLAGS_keys), FLAGS_key_size,
      static_cast<unsigned long long>(FLAGS_queries), FLAGS_batch,
      FLAGS_median ? "median" : "best", FLAGS_repeats, FLAGS_clock.c_str());
  printf(
      "%-14s %5s %-24s %11s %7s %8s %8s %7s %7s %8s %8s %6s | %6s %6s %6s "
      "%6s %6s %6s%s\n",
      "policy", "bits", "name", "bytes", "bits/k", "fpr%", "build", "pos",
      "neg", "b.pos", "b.neg", "lines", "fpr/B", "bld/B", "pos/B", "neg/B",
      "bpos/B", "bneg/B", kCanSerialize ? " |  s.neg sneg/B" : "");

  std::vector<Row> rows;
  for (double bits : bits_list) {
    const Row* bloom = nullptr;
    size_t first = rows.size();
    const bool ok = dram ? RunBitsDram(policies, bits, &rows)
                         : RunBits(policies, bits, *present, *pos_queries,
                                   *neg_queries, &rows);
    if (!ok) return 1;
    for (size_t i = first; i < rows.size(); ++i) {
      if (rows[i].policy == "bloom") bloom = &rows[i];
    }
    for (size_t i = first; i < rows.size(); ++i) {
      const Row& r = rows[i];
      printf(
          "%-14s %5.1f %-24s %11llu %7.3f %8.4f %8.1f %7.1f %7.1f %8.1f %8.1f "
          "%6.3f | %6s %6s %6s %6s %6s %6s",
          r.policy.c_str(), r.bits_arg, r.name.c_str(),
          static_cast<unsigned long long>(r.filter_bytes), r.bits_per_key,
          r.fpr_percent, r.build_ns, r.pos_ns, r.neg_ns, r.batch_pos_ns,
          r.batch_neg_ns, r.lines_neg,
          bloom ? Ratio(r.fpr_percent, bloom->fpr_percent).c_str() : "",
          bloom ? Ratio(r.build_ns, bloom->build_ns).c_str() : "",
          bloom ? Ratio(r.pos_ns, bloom->pos_ns).c_str() : "",
          bloom ? Ratio(r.neg_ns, bloom->neg_ns).c_str() : "",
          bloom ? Ratio(r.batch_pos_ns, bloom->batch_pos_ns).c_str() : "",
          bloom ? Ratio(r.batch_neg_ns, bloom->batch_neg_ns).c_str() : "");
      if (kCanSerialize) {
        printf(
            " | %6.1f %6s", r.serial_neg_ns,
            bloom ? Ratio(r.serial_neg_ns, bloom->serial_neg_ns).c_str() : "");
      }
      printf("\n");
    }
    fflush(stdout);
  }

  if (!FLAGS_csv.empty()) {
    FILE* f = fopen(FLAGS_csv.c_str(), "w");
    if (f == nullptr) {
      fprintf(stderr, "cannot write %s\n", FLAGS_csv.c_str());
      return 1;
    }
    fprintf(f,
            "policy,bits_per_key_arg,name,keys,filter_bytes,bits_per_key,fpr_"
            "percent,"
            "build_ns,pos_ns,neg_ns,batch_pos_ns,batch_neg_ns,fpr_vs_bloom,"
            "build_vs_bloom,neg_vs_bloom,batch_neg_vs_bloom,pos_vs_bloom,"
            "batch_pos_vs_bloom,filters,lines_neg,serial_neg_ns,"
            "serial_neg_vs_bloom\n");
    for (const Row& r : rows) {
      const Row* bloom = nullptr;
      for (const Row& b : rows) {
        if (b.policy == "bloom" && b.bits_arg == r.bits_arg) bloom = &b;
      }
      fprintf(f,
              "%s,%g,%s,%llu,%llu,%.4f,%.5f,%.2f,%.2f,%.2f,%.2f,%.2f,%s,%s,%s,%"
              "s,%s,%s,%llu,%.4f,%s,%s\n",
              r.policy.c_str(), r.bits_arg, r.name.c_str(),
              static_cast<unsigned long long>(r.keys),
              static_cast<unsigned long long>(r.filter_bytes), r.bits_per_key,
              r.fpr_percent, r.build_ns, r.pos_ns, r.neg_ns, r.batch_pos_ns,
              r.batch_neg_ns,
              bloom ? Ratio(r.fpr_percent, bloom->fpr_percent).c_str() : "",
              bloom ? Ratio(r.build_ns, bloom->build_ns).c_str() : "",
              bloom ? Ratio(r.neg_ns, bloom->neg_ns).c_str() : "",
              bloom ? Ratio(r.batch_neg_ns, bloom->batch_neg_ns).c_str() : "",
              bloom ? Ratio(r.pos_ns, bloom->pos_ns).c_str() : "",
              bloom ? Ratio(r.batch_pos_ns, bloom->batch_pos_ns).c_str() : "",
              static_cast<unsigned long long>(r.filters), r.lines_neg,
              r.serial_neg_ns > 0 ? Fixed2(r.serial_neg_ns).c_str() : "",
              bloom && r.serial_neg_ns > 0
                  ? Ratio(r.serial_neg_ns, bloom->serial_neg_ns).c_str()
                  : "");
    }
    fclose(f);
  }
  return 0;
}
