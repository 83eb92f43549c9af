# rocksdb-cuckoo as an in-tree RocksDB plugin, for RocksDB's Makefile:
#
#   ln -s /path/to/rocksdb-cuckoo/plugin/cuckoo /path/to/rocksdb/plugin/cuckoo
#   make ROCKSDB_PLUGINS=cuckoo static_lib db_bench
#
# See README.md in this directory. File names are relative to this
# directory; the core sources are reached through ../core, which the
# compiler resolves through the symlink to this repository's plugin/core.
#
# RocksDB's CMake build reads this file too, with regular expressions that
# take the rest of the first line defining the variable: keep the function
# and library on one line each, and the source list in the "-y" variable
# (as ZenFS does) so that CMake takes the sources from CMakeLists.txt.
# Add one source per line.

cuckoo_SOURCES-y = \
	cuckoo_filter_policy.cc \
	hash_dedupe.cc \
	policy_config.cc \
	plugin_registrar.cc \
	live_table.cc \
	live_snapshot.cc \
	live_key_filter.cc \
	filtered_db.cc \
	../core/cuckoo_filter.cc \
	../core/filter_format.cc \
	../core/key_hash.cc \
	../core/table_ops.cc

cuckoo_SOURCES += $(cuckoo_SOURCES-y)

CUCKOO_PLUGIN_DIR := $(realpath $(dir $(lastword $(MAKEFILE_LIST))))
cuckoo_CXXFLAGS += -I$(CUCKOO_PLUGIN_DIR) -I$(CUCKOO_PLUGIN_DIR)/../core \
	-I$(CUCKOO_PLUGIN_DIR)/../../include
cuckoo_LDFLAGS += -lxxhash

cuckoo_FUNC = cuckoo_RegisterPlugin
cuckoo_LIBS = xxhash
