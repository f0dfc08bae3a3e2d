// DeviceArray: a read result in GPU memory, handed to CuPy, PyTorch, JAX, Numba... without a copy.
//
// It speaks both exchange protocols: __cuda_array_interface__ (version 3: cupy.asarray,
// numba.cuda.as_cuda_array) and DLPack (__dlpack__ / __dlpack_device__: cupy.from_dlpack,
// torch.from_dlpack, jax.dlpack). Whatever a consumer builds shares this memory and keeps it
// alive: through a reference to the DeviceArray (the interface) or through the DLPack deleter,
// which owns a reference to the underlying buffer.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "zarrdirect/array.hpp"

namespace zarrdirect::python {

class DeviceArray {
 public:
  // `stream`: the caller's cudaStream_t the read was queued on; unset when the read had already
  // finished on return (the library's own streams).
  DeviceArray(NDArray array, std::vector<std::int64_t> shape, int device_id, std::optional<std::uintptr_t> stream);

  void* data() const { return array_.data(); }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  const DataType& dtype() const { return array_.dtype(); }
  int device_id() const { return device_id_; }
  const ReadStats& stats() const { return array_.stats(); }
  std::size_t size() const;

  pybind11::dict cuda_array_interface() const;
  pybind11::capsule dlpack(const pybind11::object& stream, const pybind11::object& max_version,
                           const pybind11::object& dl_device, const pybind11::object& copy);
  pybind11::tuple dlpack_device() const;
  // A copy in host memory, as a NumPy array.
  pybind11::array to_host();

 private:
  // Waits for the read's stream, unless the consumer's stream is that stream (work queued there
  // is ordered after the read anyway) or the consumer said not to (-1).
  void make_ready_for(std::optional<std::intptr_t> consumer_stream);

  NDArray array_;
  std::vector<std::int64_t> shape_;
  int device_id_;
  std::optional<std::uintptr_t> stream_;
  bool ready_;
};


}  // namespace zarrdirect::python
