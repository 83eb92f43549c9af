// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// vtable_probe: prints the vtable slot of every known virtual function of
// RocksDB's FilterBitsBuilder / FilterBitsReader, as compiled.
//
// Built twice by abi_probe.sh against one RocksDB source tree:
//   -DCUCKOO_PROBE_REAL=1  includes the tree's real internal header
//                          table/block_based/filter_policy_internal.h
//   (default)              includes this project's filter_bits_abi.h, which
//                          declares the classes itself (out-of-tree mode)
// and the two outputs are compared line by line.
//
// Itanium C++ ABI (GCC, Clang on Linux/macOS): a pointer to a *virtual*
// member function stores 1 + the byte offset of its slot from the vtable's
// address point in its first word (a non-virtual one stores the function
// address, which is even). Slot = (word - 1) / sizeof(void*). A virtual
// destructor takes two slots (complete and deleting) that cannot be named
// through a member pointer; they show up as a gap in the numbering.
//
// Each candidate signature is detected with SFINAE, so a member missing in a
// version prints "absent" instead of failing the build. A virtual that this
// probe does not know about is not listed here; abi_probe.sh catches that by
// counting the virtuals of the class (vtable dump or header scan).

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <type_traits>

#if defined(CUCKOO_PROBE_REAL)
#include "table/block_based/filter_policy_internal.h"
#else
#include "filter_bits_abi.h"
#endif
#include "rocksdb/version.h"

namespace probe {

using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using Buf = std::unique_ptr<const char[]>;

// Prints "<class>\t<signature>\tslot <n>" (or "not-virtual" / "absent").
template <typename MemberPtr>
void PrintSlot(const char* cls, const char* sig, MemberPtr mp) {
  static_assert(sizeof(MemberPtr) >= sizeof(std::uintptr_t),
                "unexpected member-pointer size (not the Itanium ABI?)");
  std::uintptr_t word = 0;
  std::memcpy(&word, &mp, sizeof(word));
  if ((word & 1u) == 0) {
    std::printf("%s\t%s\tnot-virtual\n", cls, sig);
    return;
  }
  std::printf("%s\t%s\tslot %zu\n", cls, sig,
              static_cast<size_t>((word - 1) / sizeof(void*)));
}

// One SFINAE detector + printer per candidate signature (TAG names them).
#define PROBE_ENTRY(TAG, CLS, NAME, SIG_TEXT, TYPE)                       \
  template <typename T, typename = void>                                  \
  struct Has_##TAG : std::false_type {};                                  \
  template <typename T>                                                   \
  struct Has_##TAG<T, std::void_t<decltype(static_cast<TYPE>(&T::NAME))>> \
      : std::true_type {};                                                \
  template <typename T = CLS>                                             \
  void Print_##TAG() {                                                    \
    if constexpr (Has_##TAG<T>::value) {                                  \
      PrintSlot(#CLS, SIG_TEXT, static_cast<TYPE>(&T::NAME));             \
    } else {                                                              \
      std::printf("%s\t%s\tabsent\n", #CLS, SIG_TEXT);                    \
    }                                                                     \
  }

// Every virtual seen in any release from 7.0 on. Add new ones here.
PROBE_ENTRY(b_addkey, FilterBitsBuilder, AddKey, "AddKey(const Slice&)",
            void (FilterBitsBuilder::*)(const Slice&))
PROBE_ENTRY(b_addkeyalt, FilterBitsBuilder, AddKeyAndAlt,
            "AddKeyAndAlt(const Slice&,const Slice&)",
            void (FilterBitsBuilder::*)(const Slice&, const Slice&))
PROBE_ENTRY(b_estimate, FilterBitsBuilder, EstimateEntriesAdded,
            "EstimateEntriesAdded()", size_t (FilterBitsBuilder::*)())
PROBE_ENTRY(b_finish1, FilterBitsBuilder, Finish, "Finish(Buf*)",
            Slice (FilterBitsBuilder::*)(Buf*))
PROBE_ENTRY(b_finish2, FilterBitsBuilder, Finish, "Finish(Buf*,Status*)",
            Slice (FilterBitsBuilder::*)(Buf*, Status*))
PROBE_ENTRY(b_postverify, FilterBitsBuilder, MaybePostVerify,
            "MaybePostVerify(const Slice&)",
            Status (FilterBitsBuilder::*)(const Slice&))
PROBE_ENTRY(b_approx, FilterBitsBuilder, ApproximateNumEntries,
            "ApproximateNumEntries(size_t)",
            size_t (FilterBitsBuilder::*)(size_t))
PROBE_ENTRY(b_calcspace, FilterBitsBuilder, CalculateSpace,
            "CalculateSpace(size_t)", size_t (FilterBitsBuilder::*)(size_t))
PROBE_ENTRY(b_fprate, FilterBitsBuilder, EstimatedFpRate,
            "EstimatedFpRate(size_t,size_t)",
            double (FilterBitsBuilder::*)(size_t, size_t))
PROBE_ENTRY(r_maymatch1, FilterBitsReader, MayMatch, "MayMatch(const Slice&)",
            bool (FilterBitsReader::*)(const Slice&))
PROBE_ENTRY(r_maymatch3, FilterBitsReader, MayMatch,
            "MayMatch(int,Slice**,bool*)",
            void (FilterBitsReader::*)(int, Slice**, bool*))

}  // namespace probe

int main() {
  std::printf("rocksdb %d.%d\n", ROCKSDB_MAJOR, ROCKSDB_MINOR);
  // The destructor cannot be named by a member pointer: print whether it is
  // virtual; its two slots are the gap before the first numbered slot.
  std::printf("FilterBitsBuilder\t~FilterBitsBuilder()\t%s\n",
              std::has_virtual_destructor<probe::FilterBitsBuilder>::value
                  ? "virtual"
                  : "not-virtual");
  std::printf("FilterBitsReader\t~FilterBitsReader()\t%s\n",
              std::has_virtual_destructor<probe::FilterBitsReader>::value
                  ? "virtual"
                  : "not-virtual");
  probe::Print_b_addkey();
  probe::Print_b_addkeyalt();
  probe::Print_b_estimate();
  probe::Print_b_finish1();
  probe::Print_b_finish2();
  probe::Print_b_postverify();
  probe::Print_b_approx();
  probe::Print_b_calcspace();
  probe::Print_b_fprate();
  probe::Print_r_maymatch1();
  probe::Print_r_maymatch3();
  return 0;
}
