#include "cuda/cuda_call_counter.hpp"

namespace zarrdirect::cuda {

CudaCallStats CudaCallCounter::stats() const {
  CudaCallStats stats;
  stats.copies = count(CudaCall::copy);
  stats.memsets = count(CudaCall::memset);
  stats.kernel_launches = count(CudaCall::launch);
  stats.event_records = count(CudaCall::event_record);
  stats.stream_waits = count(CudaCall::stream_wait);
  stats.synchronizations = count(CudaCall::sync);
  return stats;
}

}  // namespace zarrdirect::cuda
