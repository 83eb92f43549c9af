// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Kill test: a child process (filtered_txn_crash_child.cc) runs random
// transactions against a FilteredTransactionDB, with prepared transactions
// open, and is SIGKILLed after a random time. The parent reopens the DB
// (alternately with the background build at Open and without) and checks:
//   - every key read through the filter equals the same read at a snapshot
//     (which bypasses the filter): no false negative, no wrong answer;
//   - the filter holds one fingerprint per live key;
//   - the prepared transactions recovered at Open, committed or rolled back
//     at random, leave the filter exact again (checked again after each).
// Then it closes the DB (a filter snapshot the next child may load) and
// starts the next child on the same DB. TXN_KILL_ITERATIONS=<n> (default 4;
// >= 100 by hand).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "filtered_txn_test_util.h"
#include "rocksdb/utilities/transaction.h"

#ifndef CUCKOO_TXN_CRASH_CHILD
#error "CUCKOO_TXN_CRASH_CHILD must name the live_txn_crash_child binary"
#endif

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::Transaction;
using test::Key;
using test::TempDir;

constexpr int kKeys = 5000;

// Starts the child; returns its pid once it printed "ready" (or -1).
pid_t StartChild(const std::string& db, const std::string& snap, int seed) {
  int out[2];
  if (pipe(out) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    const std::string seed_arg = std::to_string(seed);
    execl(CUCKOO_TXN_CRASH_CHILD, CUCKOO_TXN_CRASH_CHILD, db.c_str(),
          snap.c_str(), seed_arg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  close(out[0]);
  if (line != "ready") {
    int status = 0;
    waitpid(pid, &status, 0);
    return -1;
  }
  return pid;
}

struct Totals {
  uint64_t live_checked = 0;
  uint64_t recovered = 0;
  uint64_t committed = 0;
  uint64_t snapshots_used = 0;
};

// Every key through the filter against the same read at a snapshot; the
// filter exact.
void Verify(FilteredTransactionDB* db, Totals* totals) {
  db->WaitForFilterRebuilds();
  const cuckoo::LiveKeyFilter* filter = db->GetLiveKeyFilter(nullptr);
  ASSERT_NE(filter, nullptr);
  uint64_t live = 0;
  for (int k = 0; k < kKeys; ++k) {
    std::string a, b;
    const Status sa = db->Get(ReadOptions(), Key(k), &a);
    const Status sb = test::TruthGet(db, Key(k), &b);
    ASSERT_TRUE(sb.ok() || sb.IsNotFound()) << sb.ToString();
    ASSERT_EQ(sa.ok(), sb.ok()) << Key(k) << ": " << sa.ToString();
    if (sb.ok()) {
      ++live;
      ASSERT_EQ(a, b) << Key(k);
      ASSERT_TRUE(filter->MayContain(Key(k))) << Key(k);
    }
  }
  ASSERT_EQ(test::FilterKeys(db), live);
  totals->live_checked += live;
}

TEST(FilteredTxnKill, SigkillWithOpenAndPreparedTransactions) {
  int iterations = 4;
  if (const char* env = std::getenv("TXN_KILL_ITERATIONS")) {
    iterations = std::atoi(env);
  }
  TempDir dir;
  const std::string db_path = dir.Sub("db");
  const std::string snap = dir.Sub("snap");
  std::mt19937 rng(42);
  Totals totals;
  for (int it = 0; it < iterations; ++it) {
    SCOPED_TRACE("iteration " + std::to_string(it));
    const pid_t pid = StartChild(db_path, snap, it);
    ASSERT_GT(pid, 0) << "child did not start";
    std::this_thread::sleep_for(
        std::chrono::milliseconds(50 + static_cast<int>(rng() % 400)));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "child exited by itself (status " << status << ")";

    FilteredDBOptions fopts = test::SmallFilterOptions(1024);
    fopts.snapshot_dir = snap;
    fopts.background_open = it % 2 == 1;
    std::unique_ptr<FilteredTransactionDB> db;
    ASSERT_TRUE(test::OpenTxnDB(db_path, fopts, &db).ok());
    if (test::FilterStats(db.get()).loaded_from_snapshot) {
      ++totals.snapshots_used;
    }
    ASSERT_NO_FATAL_FAILURE(Verify(db.get(), &totals));
    std::vector<Transaction*> prepared;
    db->GetAllPreparedTransactions(&prepared);
    totals.recovered += prepared.size();
    for (Transaction* txn : prepared) {
      ASSERT_EQ(txn->GetState(), Transaction::PREPARED);
      if (rng() % 2 == 0) {
        ASSERT_TRUE(txn->Commit().ok());
        ++totals.committed;
      } else {
        ASSERT_TRUE(txn->Rollback().ok());
      }
      delete txn;
      ASSERT_NO_FATAL_FAILURE(Verify(db.get(), &totals));
    }
    ASSERT_TRUE(db->Close().ok());
  }
  std::printf(
      "%d kills: %llu live keys checked, %llu prepared transactions "
      "recovered (%llu committed after reopen), %llu opens from a "
      "snapshot\n",
      iterations, static_cast<unsigned long long>(totals.live_checked),
      static_cast<unsigned long long>(totals.recovered),
      static_cast<unsigned long long>(totals.committed),
      static_cast<unsigned long long>(totals.snapshots_used));
}

}  // namespace
}  // namespace rocksdb_cuckoo
