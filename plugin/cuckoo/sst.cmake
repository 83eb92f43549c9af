# SST filter policy (issue 3), included by plugin/CMakeLists.txt:
#
#   rocksdb_cuckoo         static library (alias rocksdb_cuckoo::rocksdb_cuckoo);
#                          the application registers the factories
#                          (RegisterCuckooFilterPolicies) or uses
#                          NewCuckooFilterPolicy directly
#   rocksdb_cuckoo_shared  librocksdb_cuckoo.so; registers the factories in
#                          ObjectLibrary::Default() when loaded (LD_PRELOAD
#                          into stock db_bench / ldb / sst_dump)
#
# Both are built from the source list of the in-tree plugin fragment
# (cuckoo/CMakeLists.txt, also read by RocksDB's own build with
# ROCKSDB_PLUGINS=cuckoo), so that list is exercised by every build. The
# core sources in that list are linked through cuckoo_core instead.

add_subdirectory(${CMAKE_CURRENT_LIST_DIR} cuckoo_fragment)  # sets cuckoo_SOURCES, ...

set(_adapter_sources)
foreach(_src IN LISTS cuckoo_SOURCES)
  if(NOT _src IN_LIST cuckoo_CORE_SOURCES)
    list(APPEND _adapter_sources "${CMAKE_CURRENT_LIST_DIR}/${_src}")
  endif()
endforeach()

# RocksDB compiles in-tree plugins with these warnings and -Werror; keep the
# adapters clean under them here too.
set(CUCKOO_ROCKSDB_WARNINGS -Wsign-compare -Wshadow -Woverloaded-virtual
    -Wnon-virtual-dtor -Wno-missing-field-initializers)

add_library(rocksdb_cuckoo STATIC ${_adapter_sources})
add_library(rocksdb_cuckoo::rocksdb_cuckoo ALIAS rocksdb_cuckoo)
target_include_directories(rocksdb_cuckoo
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>
  PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(rocksdb_cuckoo
  PUBLIC cuckoo_core cuckoo_rocksdb
  PRIVATE cuckoo_core_internal cuckoo_xxhash)
target_compile_options(rocksdb_cuckoo PRIVATE ${CUCKOO_ROCKSDB_WARNINGS})

add_library(rocksdb_cuckoo_shared SHARED
  ${_adapter_sources}
  ${CMAKE_CURRENT_LIST_DIR}/shared_library_init.cc)
set_target_properties(rocksdb_cuckoo_shared PROPERTIES
  OUTPUT_NAME rocksdb_cuckoo
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR})
target_include_directories(rocksdb_cuckoo_shared
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>
  PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(rocksdb_cuckoo_shared
  PUBLIC cuckoo_rocksdb
  PRIVATE cuckoo_core cuckoo_core_internal cuckoo_xxhash)
target_compile_options(rocksdb_cuckoo_shared PRIVATE ${CUCKOO_ROCKSDB_WARNINGS})

install(TARGETS rocksdb_cuckoo rocksdb_cuckoo_shared
        ARCHIVE DESTINATION lib LIBRARY DESTINATION lib)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/rocksdb_cuckoo DESTINATION include)
