# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# Registers the tests of one GoogleTest binary with CTest; run after the
# binary is built (cuckoo_add_test in tests/CMakeLists.txt), as CMake's
# gtest_discover_tests does. One CTest test per GoogleTest test, except that
# the instances of a value-parameterized test with at least GROUP_MIN
# parameter values are one CTest test, "Prefix/Suite.Name/*", which runs them
# all in one process (--gtest_filter). Each process costs a start: 0.02 s in
# Release and 0.13-0.15 s under ASan+UBSan, where 129 instances of a small
# test took 19 s one process each and 0.7 s together.
#
#   cmake -D TEST_EXECUTABLE=<binary> -D CTEST_FILE=<out.cmake> -D LABEL=<label>
#         -D TIMEOUT=<s> -D GROUP_MIN=<n> -D WORKING_DIR=<dir> -P gtest_groups.cmake
#
# A group reports its instances' failures by name in its output. A skipped
# instance is not marked in CTest when its group is (the skip expression
# would also hide a failure of another instance), so GROUP_MIN stays above
# the small suites whose instances skip by configuration.
cmake_minimum_required(VERSION 3.21)
foreach(var TEST_EXECUTABLE CTEST_FILE LABEL TIMEOUT GROUP_MIN WORKING_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "gtest_groups.cmake: -D ${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                WORKING_DIRECTORY "${WORKING_DIR}"
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE errors
                TIMEOUT 60)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${result}):\n"
                      "${output}${errors}")
endif()

# The listing: "Suite." lines, then "  Test" lines; parameter comments
# ("  # GetParam() = ...") dropped, and with them any ';' (a CMake list
# separator) they held.
string(REGEX REPLACE "[ ]*#[^\n]*" "" output "${output}")
string(REPLACE ";" "" output "${output}")
string(REPLACE "\n" ";" lines "${output}")

set(names "")  # every test, in listing order
set(suite "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ ]+)\\.$")
    set(suite "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^  ([^ ]+)$")
    set(test "${CMAKE_MATCH_1}")
    if(suite STREQUAL "" OR test MATCHES "^DISABLED_" OR suite MATCHES "(^|/)DISABLED_")
      continue()
    endif()
    list(APPEND names "${suite}.${test}")
    if(test MATCHES "^([^/]+)/")
      set(group "${suite}.${CMAKE_MATCH_1}")
      string(MAKE_C_IDENTIFIER "${group}" id)
      if(NOT DEFINED count_${id})
        set(count_${id} 0)
      endif()
      math(EXPR count_${id} "${count_${id}} + 1")
    endif()
  endif()
endforeach()

set(script "")
set(done_ids "")
foreach(name IN LISTS names)
  set(filter "${name}")
  set(skip TRUE)
  if(name MATCHES "^([^.]+\\.[^/]+)/")
    set(group "${CMAKE_MATCH_1}")
    string(MAKE_C_IDENTIFIER "${group}" id)
    if(count_${id} GREATER_EQUAL GROUP_MIN)
      if(id IN_LIST done_ids)
        continue()
      endif()
      list(APPEND done_ids "${id}")
      set(filter "${group}/*")
      set(skip FALSE)
    endif()
  endif()
  string(APPEND script
         "add_test([==[${filter}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${filter}]==])\n"
         "set_tests_properties([==[${filter}]==] PROPERTIES TIMEOUT ${TIMEOUT} "
         "LABELS [==[${LABEL}]==] WORKING_DIRECTORY [==[${WORKING_DIR}]==]")
  if(skip)
    string(APPEND script " SKIP_REGULAR_EXPRESSION [==[\\[  SKIPPED \\]]==]")
  endif()
  string(APPEND script ")\n")
endforeach()
file(WRITE "${CTEST_FILE}" "${script}")
