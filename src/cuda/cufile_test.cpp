// cuFile loading and its error names. Most of this needs neither a GPU nor libcufile: the names
// and the ABI layouts are fixed by cufile.h, and where libcufile is missing the state must say
// so. Opening the driver needs a device and is skipped without one.
#include "cuda/cufile.hpp"

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <set>
#include <string>

#include "cuda/cuda_check.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect::cuda {
namespace {

void expect_same(const CuFileState& a, const CuFileState& b) {
  EXPECT_EQ(a.loaded, b.loaded);
  EXPECT_EQ(a.driver_open, b.driver_open);
  EXPECT_EQ(a.driver_tried, b.driver_tried);
  EXPECT_EQ(a.native, b.native);
  EXPECT_EQ(a.library, b.library);
  EXPECT_EQ(a.detail, b.detail);
}

TEST(CuFile, ErrorNamesFollowCufileH) {
  // CUfileOpError values as cufile.h defines them.
  struct Named {
    int code;
    const char* name;
  };
  for (const Named& n : std::initializer_list<Named>{{0, "CU_FILE_SUCCESS"},
                                                     {5001, "CU_FILE_DRIVER_NOT_INITIALIZED"},
                                                     {5007, "CU_FILE_PLATFORM_NOT_SUPPORTED"},
                                                     {5011, "CU_FILE_CUDA_DRIVER_ERROR"},
                                                     {5020, "CU_FILE_DIO_NOT_SET"},
                                                     {5022, "CU_FILE_INVALID_VALUE"},
                                                     {5026, "CU_FILE_DRIVER_ALREADY_OPEN"},
                                                     {5031, "CU_FILE_GETNEWFD_FAILED"},
                                                     {5033, "CU_FILE_NVFS_SETUP_ERROR"},
                                                     {5036, "CU_FILE_GPU_MEMORY_PINNING_FAILED"}}) {
    const std::string expected = std::string(n.name) + " (" + std::to_string(n.code) + ")";
    EXPECT_EQ(cufile_error_name(n.code), expected);
    // cuFileRead reports failures as negative CUfileOpError values: same name, positive code.
    EXPECT_EQ(cufile_error_name(-n.code), expected);
  }
}

TEST(CuFile, EveryCodeUpToPinningFailedHasItsOwnNameAndGapsAreUnknown) {
  std::set<std::string> names;
  for (int code = 5001; code <= 5036; ++code) {
    const std::string name = cufile_error_name(code);
    SCOPED_TRACE(name);
    EXPECT_TRUE(name.ends_with(" (" + std::to_string(code) + ")"));
    if (code == 5021 || code == 5032) {  // unused in cufile.h
      EXPECT_TRUE(name.starts_with("unknown cuFile error"));
      continue;
    }
    EXPECT_TRUE(name.starts_with("CU_FILE_"));
    names.insert(name.substr(0, name.find(' ')));
  }
  EXPECT_EQ(names.size(), 34u) << "two codes share a name";
  for (int code : {1, 4999, 5000, 99999, -7}) {
    const std::string name = cufile_error_name(code);
    EXPECT_TRUE(name.starts_with("unknown cuFile error (")) << name;
    EXPECT_TRUE(name.ends_with(std::to_string(code < 0 ? -code : code) + ")")) << name;
  }
}

TEST(CuFile, DeclaredTypesHaveCufileHsLayout) {
  // zarrdirect declares these itself; libcufile reads and writes them as cufile.h lays them out.
  EXPECT_EQ(sizeof(CuFileError), 2 * sizeof(int));
  EXPECT_EQ(offsetof(CuFileError, err), 0u);
  EXPECT_EQ(offsetof(CuFileError, cu_err), sizeof(int));
  EXPECT_EQ(kCuFileHandleTypeOpaqueFd, 1);  // CU_FILE_HANDLE_TYPE_OPAQUE_FD
  EXPECT_EQ(offsetof(CuFileDescr, type), 0u);
  EXPECT_EQ(offsetof(CuFileDescr, handle), alignof(void*));
  EXPECT_EQ(sizeof(CuFileDescr::handle), sizeof(void*));
  EXPECT_EQ(offsetof(CuFileDescr, fs_ops), alignof(void*) + sizeof(void*));
  EXPECT_EQ(sizeof(CuFileDescr), alignof(void*) + 2 * sizeof(void*));
  // A default descriptor is an ordinary file descriptor with no custom file system.
  CuFileDescr descr;
  EXPECT_EQ(descr.type, kCuFileHandleTypeOpaqueFd);
  EXPECT_EQ(descr.fs_ops, nullptr);
  const CuFileError ok;
  EXPECT_EQ(ok.err, kCuFileSuccess);
}

TEST(CuFile, StateIsConsistentWhateverWasFound) {
  CuFile& cufile = CuFile::instance();
  EXPECT_EQ(&cufile, &CuFile::instance());
  const CuFileState state = cufile.state();
  SCOPED_TRACE(state.detail);
  expect_same(state, cufile.state());  // asking again changes nothing
  EXPECT_FALSE(state.detail.empty());
  if (state.driver_open) {
    EXPECT_TRUE(state.loaded);
  }
  if (!state.loaded) {
    EXPECT_FALSE(state.driver_open);
    EXPECT_FALSE(state.native);
    EXPECT_NE(state.detail.find("GPUDirect Storage is unavailable"), std::string::npos);
    if (state.library.empty()) {
      // Not found at all: the loader's reason is passed on.
      EXPECT_TRUE(state.detail.starts_with("libcufile not found (")) << state.detail;
      EXPECT_NE(state.detail.find("libcufile.so"), std::string::npos);
    } else {
      EXPECT_NE(state.detail.find(state.library + " lacks cuFile entry points"), std::string::npos);
    }
  } else {
    EXPECT_FALSE(state.library.empty());
    EXPECT_NE(state.library.find("libcufile.so"), std::string::npos) << state.library;
    // Native GDS is exactly "nvidia-fs is loaded".
    EXPECT_EQ(state.native, nvidia_fs_loaded());
  }
}

TEST(CuFile, OpeningTheDriverWithoutTheLibraryChangesNothing) {
  CuFile& cufile = CuFile::instance();
  const CuFileState before = cufile.state();
  if (before.loaded) GTEST_SKIP() << "libcufile is present: " << before.detail;
  const CuFileState opened = cufile.open_driver();
  EXPECT_FALSE(opened.driver_open);
  expect_same(opened, before);
  expect_same(cufile.open_driver(), before);
  expect_same(cufile.state(), before);
}

TEST(CuFile, OpeningTheDriverOnADeviceHappensOnceAndIsExplained) {
  CuFile& cufile = CuFile::instance();
  if (!cufile.state().loaded) GTEST_SKIP() << cufile.state().detail;
  if (!cuda_available()) GTEST_SKIP() << "cuFileDriverOpen needs a CUDA device";
  check_cuda(cudaFree(nullptr), "cudaFree (context)");  // a current context for the driver
  const CuFileState first = cufile.open_driver();
  SCOPED_TRACE(first.detail);
  EXPECT_TRUE(first.loaded);
  EXPECT_TRUE(first.driver_tried);
  if (first.driver_open) {
    EXPECT_NE(first.detail.find("cuFile driver open"), std::string::npos);
  } else {
    EXPECT_TRUE(first.detail.starts_with("cuFileDriverOpen failed: ")) << first.detail;
  }
  // Later calls give the outcome of the first, and state() agrees.
  expect_same(cufile.open_driver(), first);
  expect_same(cufile.state(), first);
}

}  // namespace
}  // namespace zarrdirect::cuda
