// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// ThreadSanitizer suppressions for the live tests (linked only in
// CUCKOO_TSAN builds). Debian's librocksdb is not built with TSan: its
// lock-free structures (memtable skiplist, versions, range tombstone caches)
// synchronize through atomics TSan cannot see, so memcpy/memcmp/free calls
// made inside the library, instrumented template code it calls (shared_ptr
// reference counts, std::string) and the test merge operator that RocksDB
// calls on memtable data are reported as races. Suppressed: reports with a
// librocksdb or libsnappy frame (block decompression), and interceptor calls
// (memcpy, memcmp, free) made from librocksdb, libsnappy and the out-of-line
// std::string code of libstdc++ (RocksDB copies values through it; its frames
// often hide the librocksdb ones, which lack frame pointers). The filter code
// (LiveTable, LiveKeyFilter, FilteredDB) is never called from inside RocksDB
// and keeps its shared state in atomics and mutexes, so its races are still
// reported. One mutex report is suppressed by name:
// PessimisticTransactionDB::GetAllPreparedTransactions (void) ends with its
// lock_guard's unlock as a tail call, so the unlock seems to come from its
// caller (FilteredTxnDBImpl) while the lock, from librocksdb, was ignored
// (called_from_lib): "unlock of an unlocked mutex".
extern "C" const char* __tsan_default_suppressions() {
  return "called_from_lib:librocksdb.so\n"
         "called_from_lib:libsnappy.so\n"
         "called_from_lib:libstdc++.so\n"
         "race:librocksdb.so\n"
         "race:libsnappy.so\n"
         "race:rocksdb_cuckoo::test::AppendOperator::Merge\n"
         "mutex:GetAllPreparedTransactions\n";
}
