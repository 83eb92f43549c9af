// Internal access to a CuckooFilterView's table and victim slot, for the
// SST reader (which probes the table through its own per-layout code) and
// white-box tests. Not part of the public API. Internal header.
#ifndef CUCKOO_PLUGIN_CORE_VIEW_ACCESS_H_
#define CUCKOO_PLUGIN_CORE_VIEW_ACCESS_H_

#include "cuckoo/cuckoo_filter.h"
#include "cuckoo_table.h"

namespace cuckoo {
namespace internal {

struct ViewAccess {
  // The bucket array, bucket count, seed and victim slot of a valid view.
  static TableRef Ref(const CuckooFilterView& view) {
    TableRef t;
    t.table = view.table_;
    t.num_buckets = static_cast<uint32_t>(view.num_buckets_);
    t.seed = view.seed_;
    t.victim_fp = view.victim_fp_;
    t.victim_bucket = view.victim_bucket_;
    return t;
  }
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_VIEW_ACCESS_H_
