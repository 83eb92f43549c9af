# Live-key filter: LiveKeyFilter (concurrent, deletable cuckoo filter) and
# FilteredDB (StackableDB keeping one per column family).
# Headers: include/rocksdb_cuckoo/{live_key_filter,filtered_db}.h.
set(ROCKSDB_CUCKOO_LIVE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/live_table.cc
  ${CMAKE_CURRENT_LIST_DIR}/live_snapshot.cc
  ${CMAKE_CURRENT_LIST_DIR}/live_key_filter.cc
  ${CMAKE_CURRENT_LIST_DIR}/filtered_db.cc)

add_library(rocksdb_cuckoo_live STATIC ${ROCKSDB_CUCKOO_LIVE_SOURCES})
add_library(rocksdb_cuckoo::live ALIAS rocksdb_cuckoo_live)
target_include_directories(rocksdb_cuckoo_live
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>
  PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(rocksdb_cuckoo_live
  PUBLIC cuckoo_core cuckoo_rocksdb
  PRIVATE cuckoo_core_internal cuckoo_xxhash)
