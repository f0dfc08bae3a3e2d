// cuda_error() and check_cuda() need no GPU: the runtime names its status codes without one.
#include "cuda/cuda_check.hpp"

#include <gtest/gtest.h>

#include <string>

namespace zarrdirect::cuda {
namespace {

TEST(CudaCheck, ErrorNamesTheCallTheRuntimeMessageAndTheCode) {
  for (cudaError_t status : {cudaErrorMemoryAllocation, cudaErrorInvalidValue, cudaErrorNoDevice,
                             cudaErrorInvalidDevice, cudaErrorLaunchFailure}) {
    SCOPED_TRACE(static_cast<int>(status));
    const Error error = cuda_error(status, "cudaMalloc (device scratch)");
    EXPECT_EQ(error.kind(), ErrorKind::cuda);
    const std::string expected = std::string("cudaMalloc (device scratch): ") + cudaGetErrorString(status) + " (" +
                                 cudaGetErrorName(status) + ")";
    EXPECT_EQ(std::string(error.what()), expected);
  }
  // The symbolic name is the one programs and documentation use.
  const std::string message = cuda_error(cudaErrorMemoryAllocation, "x").what();
  EXPECT_TRUE(message.ends_with("(cudaErrorMemoryAllocation)")) << message;
  EXPECT_TRUE(message.starts_with("x: ")) << message;
  // Different failures read differently.
  EXPECT_NE(std::string(cuda_error(cudaErrorInvalidValue, "x").what()), message);
}

TEST(CudaCheck, CheckThrowsOnlyOnFailure) {
  EXPECT_NO_THROW(check_cuda(cudaSuccess, "cudaFree"));
  try {
    check_cuda(cudaErrorInvalidValue, "cudaMemcpy2DAsync (scatter)");
    FAIL() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cuda);
    EXPECT_TRUE(std::string(e.what()).starts_with("cudaMemcpy2DAsync (scatter): ")) << e.what();
    EXPECT_NE(std::string(e.what()).find("cudaErrorInvalidValue"), std::string::npos) << e.what();
  }
  // It composes with context like any other error.
  try {
    check_cuda(cudaErrorInvalidDevice, "cudaSetDevice");
    FAIL() << "no error thrown";
  } catch (const Error& e) {
    const Error outer = e.with_context("chunk c/0/0");
    EXPECT_EQ(outer.kind(), ErrorKind::cuda);
    EXPECT_TRUE(std::string(outer.what()).starts_with("chunk c/0/0: cudaSetDevice: ")) << outer.what();
  }
}

TEST(CudaCheck, MakingTheErrorClearsTheThreadsLastError) {
  // Without a usable driver the runtime's initialization error stays the last error for good,
  // so there is nothing to clear; with one, errors are cleared by reading them. The library runs
  // on its own (static) runtime: the failure and the check both happen there.
  (void)cuda_error(cudaSuccess, "clear");
  if (library_peek_last_error() != cudaSuccess)
    GTEST_SKIP() << "the runtime's last error cannot be cleared here: " << cudaGetErrorName(library_peek_last_error());
  // A failed call leaves its status as the thread's last error: no machine has this ordinal.
  const cudaError_t status = library_set_device(1 << 20);
  ASSERT_NE(status, cudaSuccess);
  ASSERT_NE(library_peek_last_error(), cudaSuccess) << "the runtime did not record the failure";
  const Error error = cuda_error(status, "cudaSetDevice");
  EXPECT_EQ(error.kind(), ErrorKind::cuda);
  // A later launch check must not see this call's failure.
  EXPECT_EQ(library_peek_last_error(), cudaSuccess) << cudaGetErrorName(library_peek_last_error());
}

}  // namespace
}  // namespace zarrdirect::cuda
