# The libraries zarrdirect builds with, as zd::<name> targets.
#
# On Debian they come from the -dev packages (scripts/setup.sh). On machines where nothing can be
# installed (the GPU machine), scripts/pack_device_deps.sh copies Debian's headers and libraries
# into one folder, passed as -DZARRDIRECT_DEPS_DIR=...; then fmt is used header-only and the
# libraries are found there first (the build's run path points at them).
set(ZARRDIRECT_DEPS_DIR "" CACHE PATH "Folder with include/ and lib/ of packed dependencies")

set(_zd_hints "")
if(ZARRDIRECT_DEPS_DIR)
  set(_zd_hints "${ZARRDIRECT_DEPS_DIR}")
endif()

# zd_dependency(NAME HEADER <header> [LIBS <lib>...]): an interface target zd::NAME.
function(zd_dependency name)
  cmake_parse_arguments(ARG "" "HEADER" "LIBS" ${ARGN})
  find_path(ZD_${name}_INCLUDE ${ARG_HEADER} HINTS ${_zd_hints} PATH_SUFFIXES include)
  if(NOT ZD_${name}_INCLUDE)
    message(FATAL_ERROR "zarrdirect: ${ARG_HEADER} not found (run scripts/setup.sh, or pass ZARRDIRECT_DEPS_DIR)")
  endif()
  add_library(zd::${name} INTERFACE IMPORTED GLOBAL)
  target_include_directories(zd::${name} INTERFACE ${ZD_${name}_INCLUDE})
  foreach(lib IN LISTS ARG_LIBS)
    if(ZARRDIRECT_DEPS_DIR)
    # The packed copy, never the machine's own.
    find_library(ZD_${name}_${lib}_LIB ${lib} PATHS ${_zd_hints} PATH_SUFFIXES lib NO_DEFAULT_PATH)
  endif()
  find_library(ZD_${name}_${lib}_LIB ${lib} HINTS ${_zd_hints} PATH_SUFFIXES lib)
    if(NOT ZD_${name}_${lib}_LIB)
      message(FATAL_ERROR "zarrdirect: library ${lib} not found (run scripts/setup.sh, or pass ZARRDIRECT_DEPS_DIR)")
    endif()
    target_link_libraries(zd::${name} INTERFACE ${ZD_${name}_${lib}_LIB})
  endforeach()
endfunction()

find_package(Threads REQUIRED)

# nlohmann_json is the one public dependency (the API passes nlohmann::json): from its own CMake
# package where there is one (Debian's), so the installed zarrdirect package names it by that
# package's target and consumers find it again with find_dependency.
find_package(nlohmann_json 3 CONFIG QUIET)
if(nlohmann_json_FOUND AND NOT ZARRDIRECT_DEPS_DIR)
  set(ZARRDIRECT_JSON_TARGET nlohmann_json::nlohmann_json)
  set(ZARRDIRECT_JSON_PACKAGE ON)
  add_library(zd::json INTERFACE IMPORTED GLOBAL)
  target_link_libraries(zd::json INTERFACE nlohmann_json::nlohmann_json)
else()
  zd_dependency(json HEADER nlohmann/json.hpp)
  set(ZARRDIRECT_JSON_TARGET $<BUILD_INTERFACE:zd::json>)
  set(ZARRDIRECT_JSON_PACKAGE OFF)
endif()
if(NOT ZARRDIRECT_PACKAGE_CONSUMER)  # the installed package's config reuses this file
  zd_dependency(cli11 HEADER CLI/CLI.hpp)
endif()
zd_dependency(zstd HEADER zstd.h LIBS zstd)
zd_dependency(lz4 HEADER lz4.h LIBS lz4)
zd_dependency(zlib HEADER zlib.h LIBS z)
zd_dependency(bz2 HEADER bzlib.h LIBS bz2)
zd_dependency(lzma HEADER lzma.h LIBS lzma)
zd_dependency(zfp HEADER zfp.h LIBS zfp)
if(ZARRDIRECT_DEPS_DIR)
  zd_dependency(fmt HEADER fmt/format.h)
  target_compile_definitions(zd::fmt INTERFACE FMT_HEADER_ONLY=1)
  zd_dependency(blosc HEADER blosc.h LIBS blosc snappy)
else()
  zd_dependency(fmt HEADER fmt/format.h LIBS fmt)
  zd_dependency(blosc HEADER blosc.h LIBS blosc)
endif()

if(ZARRDIRECT_TESTS)
  zd_dependency(gtest HEADER gtest/gtest.h LIBS gtest_main gtest)
  target_link_libraries(zd::gtest INTERFACE Threads::Threads)
endif()

# libcurl for reading http(s) URLs (the HTTP store). Debian's libcurl4-openssl-dev; where it is
# missing (a packed-dependency build on a machine without it) the store is left out and opening a
# URL says so (Error unsupported). ZARRDIRECT_HTTP=OFF leaves it out on purpose.
if(NOT DEFINED ZARRDIRECT_HTTP)
  set(ZARRDIRECT_HTTP "AUTO")
endif()
set(ZARRDIRECT_WITH_HTTP OFF)
if(NOT ZARRDIRECT_HTTP STREQUAL "OFF")
  if(ZARRDIRECT_HTTP STREQUAL "ON")
    find_package(CURL 7.85 REQUIRED)
  else()
    find_package(CURL 7.85 QUIET)
  endif()
  if(CURL_FOUND)
    set(ZARRDIRECT_WITH_HTTP ON)
    if(NOT TARGET zd::curl)
      add_library(zd::curl INTERFACE IMPORTED GLOBAL)
      target_link_libraries(zd::curl INTERFACE CURL::libcurl)
    endif()
  endif()
endif()

# liburing for batched reads of many small files (store/uring_file_reads.cpp). Debian's
# liburing-dev, found with pkg-config; where it is missing the reader keeps its thread pool and
# says so (ReadStats::file_reads, `info --system`). ZARRDIRECT_URING=OFF leaves it out on purpose.
if(NOT DEFINED ZARRDIRECT_URING)
  set(ZARRDIRECT_URING "AUTO")
endif()
set(ZARRDIRECT_WITH_URING OFF)
if(NOT ZARRDIRECT_URING STREQUAL "OFF")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    if(ZARRDIRECT_URING STREQUAL "ON")
      pkg_check_modules(ZD_URING REQUIRED IMPORTED_TARGET GLOBAL liburing>=2.2)
    else()
      pkg_check_modules(ZD_URING QUIET IMPORTED_TARGET GLOBAL liburing>=2.2)
    endif()
  elseif(ZARRDIRECT_URING STREQUAL "ON")
    message(FATAL_ERROR "ZARRDIRECT_URING=ON needs pkg-config to find liburing")
  endif()
  if(ZD_URING_FOUND)
    set(ZARRDIRECT_WITH_URING ON)
    if(NOT TARGET zd::uring)
      add_library(zd::uring INTERFACE IMPORTED GLOBAL)
      target_link_libraries(zd::uring INTERFACE PkgConfig::ZD_URING)
    endif()
  endif()
endif()
