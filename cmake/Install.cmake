# Installs the library, its public headers, the CLI, a CMake package and a pkg-config file:
#
#   cmake --install build --prefix /opt/zarrdirect
#   find_package(zarrdirect REQUIRED)            # CMAKE_PREFIX_PATH=/opt/zarrdirect
#   target_link_libraries(app zarrdirect::zarrdirect)
#   c++ app.cpp $(pkg-config --cflags --libs zarrdirect)   # PKG_CONFIG_PATH=/opt/zarrdirect/lib/pkgconfig
include(CMakePackageConfigHelpers)

if(NOT ZARRDIRECT_JSON_PACKAGE)
  # With packed dependencies (the GPU machine) nlohmann_json has no CMake package to name.
  message(STATUS "zarrdirect: no install rules (nlohmann_json's CMake package was not used)")
  return()
endif()

set(ZARRDIRECT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/zarrdirect)

install(TARGETS zarrdirect EXPORT zarrdirectTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS zarrdirect_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/zarrdirect DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT zarrdirectTargets NAMESPACE zarrdirect:: DESTINATION ${ZARRDIRECT_CMAKE_DIR})

# A static libzarrdirect.a needs its private libraries at the consumer's link: the package then
# finds them again with the same function the build used.
set(ZARRDIRECT_STATIC_PACKAGE OFF)
if(NOT BUILD_SHARED_LIBS)
  set(ZARRDIRECT_STATIC_PACKAGE ON)
endif()
configure_package_config_file(cmake/zarrdirectConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/zarrdirectConfig.cmake INSTALL_DESTINATION ${ZARRDIRECT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/zarrdirectConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/zarrdirectConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/zarrdirectConfigVersion.cmake
              cmake/Dependencies.cmake
        DESTINATION ${ZARRDIRECT_CMAKE_DIR})

# pkg-config: Libs.private lists what a static link needs.
set(ZARRDIRECT_PC_PRIVATE "-lblosc -lzstd -llz4 -lz -lbz2 -llzma -lzfp -lfmt -lpthread -ldl")
if(ZARRDIRECT_WITH_HTTP)
  string(APPEND ZARRDIRECT_PC_PRIVATE " -lcurl")
endif()
if(ZARRDIRECT_WITH_URING)
  string(APPEND ZARRDIRECT_PC_PRIVATE " -luring")
endif()
if(ZARRDIRECT_WITH_CUDA)
  string(APPEND ZARRDIRECT_PC_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lrt")
endif()
configure_file(cmake/zarrdirect.pc.in ${CMAKE_CURRENT_BINARY_DIR}/zarrdirect.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/zarrdirect.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
