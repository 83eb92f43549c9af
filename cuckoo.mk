# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# rocksdb-cuckoo as an in-tree RocksDB plugin, read by RocksDB's Makefile
# (and, for the function and libraries, by RocksDB's CMake):
#
#   git clone <this repository> /path/to/rocksdb/plugin/cuckoo
#   cd /path/to/rocksdb && make ROCKSDB_PLUGINS=cuckoo static_lib db_bench
#
# Paths are relative to this directory (RocksDB prefixes plugin/cuckoo/);
# flags are relative to the RocksDB root, where make runs. The same lists are
# in CMakeLists.txt, one file per line (tests/sst/plugin_fragment_test.sh
# checks that both agree).
#
# RocksDB's CMake reads this file with regular expressions that take the rest
# of the first line where SOURCES, _FUNC or _LIBS is followed by " = ": keep
# FUNC and LIBS on one line each, never write that sequence in a comment,
# and keep the source list in the "-y" variable (as ZenFS does) so that
# CMake takes the sources from CMakeLists.txt.

cuckoo_SOURCES-y = \
	plugin/core/blocked/blocked_filter.cc \
	plugin/core/bulk/hash_dedupe.cc \
	plugin/core/filter/cuckoo_filter.cc \
	plugin/core/filter/filter_format.cc \
	plugin/core/filter/table_ops.cc \
	plugin/core/live/frozen_view.cc \
	plugin/core/live/live_key_filter.cc \
	plugin/core/live/live_snapshot.cc \
	plugin/core/live/live_table.cc \
	plugin/core/live/reader_gate.cc \
	plugin/core/util/key_hash.cc \
	plugin/core/util/table_memory.cc \
	plugin/cuckoo/sst/cuckoo_filter_policy.cc \
	plugin/cuckoo/sst/policy_config.cc \
	plugin/cuckoo/live/checkpoint_file.cc \
	plugin/cuckoo/live/delete_checker.cc \
	plugin/cuckoo/live/effect_log.cc \
	plugin/cuckoo/live/filtered_db_open.cc \
	plugin/cuckoo/live/filtered_db_persist.cc \
	plugin/cuckoo/live/filtered_db_families.cc \
	plugin/cuckoo/live/filtered_db_properties.cc \
	plugin/cuckoo/live/filtered_db_read.cc \
	plugin/cuckoo/live/filtered_db_rebuild.cc \
	plugin/cuckoo/live/filtered_db_write.cc \
	plugin/cuckoo/live/filtered_txn.cc \
	plugin/cuckoo/live/filtered_txn_db.cc \
	plugin/cuckoo/live/rebuilder.cc \
	plugin/cuckoo/live/recent_keys.cc \
	plugin/cuckoo/live/snapshot_store.cc \
	plugin/cuckoo/live/wal_replay.cc \
	plugin/cuckoo/live/write_plan.cc \
	plugin/cuckoo/cuckoo_statistics.cc \
	plugin/cuckoo/plugin_registrar.cc \
	plugin/cuckoo/version.cc

cuckoo_SOURCES += $(cuckoo_SOURCES-y)

# Installed by RocksDB's "make install" under include/rocksdb/plugin/cuckoo/.
cuckoo_HEADERS-y = \
	include/cuckoo/cuckoo_filter.h \
	include/cuckoo/detail/live_probe.h \
	include/cuckoo/detail/probe.h \
	include/cuckoo/detail/table_geometry.h \
	include/cuckoo/live_key_filter.h \
	include/cuckoo/typed_lookup.h \
	include/rocksdb_cuckoo/filter_policy.h \
	include/rocksdb_cuckoo/filtered_db.h \
	include/rocksdb_cuckoo/filtered_transaction_db.h \
	include/rocksdb_cuckoo/statistics.h \
	include/rocksdb_cuckoo/version.h

cuckoo_HEADERS += $(cuckoo_HEADERS-y)

cuckoo_CXXFLAGS += -I./plugin/cuckoo/include -I./plugin/cuckoo/plugin/core \
	-I./plugin/cuckoo/plugin/cuckoo/sst
cuckoo_LDFLAGS += -lxxhash

cuckoo_FUNC = cuckoo_RegisterPlugin
cuckoo_LIBS = xxhash
