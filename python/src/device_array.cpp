#include "device_array.hpp"

#include "bindings.hpp"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "convert.hpp"
#include "cuda_runtime.hpp"
#include "dlpack.hpp"

namespace py = pybind11;

namespace zarrdirect::python {
namespace {

dlpack::DataType dlpack_type(const DataType& type) {
  dlpack::DataType out{dlpack::kDLUInt, static_cast<std::uint8_t>(type.size * 8u), 1};
  switch (type.kind) {
    case ScalarKind::boolean: out.code = dlpack::kDLBool; break;
    case ScalarKind::signed_int: out.code = dlpack::kDLInt; break;
    case ScalarKind::unsigned_int: out.code = dlpack::kDLUInt; break;
    case ScalarKind::floating: out.code = dlpack::kDLFloat; break;
    case ScalarKind::complex: out.code = dlpack::kDLComplex; break;
  }
  return out;
}

// The tensor handed to a consumer, with the shape and stride arrays it points into and a
// reference to the buffer. One allocation; the deleter frees all of it, from any thread and
// without the GIL (it touches no Python object).
template <typename Managed>
struct Export {
  Managed managed{};
  NDArray owner;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;

  static void release(Managed* self) { delete static_cast<Export*>(self->manager_ctx); }
};

template <typename Managed>
Managed* export_tensor(const NDArray& array, const std::vector<std::int64_t>& shape, int device_id) {
  auto* out = new Export<Managed>;
  out->owner = array;
  out->shape = shape;
  out->strides.resize(shape.size());
  std::int64_t stride = 1;  // DLPack strides count elements, C order
  for (std::size_t d = shape.size(); d-- > 0;) {
    out->strides[d] = stride;
    stride *= std::max<std::int64_t>(shape[d], 1);
  }
  auto& tensor = out->managed.dl_tensor;
  tensor.data = array.data();
  tensor.device = {dlpack::kDLCUDA, device_id};
  tensor.ndim = static_cast<std::int32_t>(shape.size());
  tensor.dtype = dlpack_type(array.dtype());
  tensor.shape = out->shape.data();
  tensor.strides = out->strides.data();
  tensor.byte_offset = 0;
  out->managed.manager_ctx = out;
  out->managed.deleter = &Export<Managed>::release;
  return &out->managed;
}

// Called when the capsule dies. A consumer that took the tensor renamed the capsule and owns it;
// otherwise nobody did, and the tensor is freed here. The error indicator is kept as it was:
// capsules die in the middle of unwinding.
template <typename Managed>
void capsule_destructor(PyObject* capsule, const char* name, const char* used_name) {
  if (PyCapsule_IsValid(capsule, used_name)) return;
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* saved = PyErr_GetRaisedException();
#else
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
#endif
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed) {
    if (managed->deleter) managed->deleter(managed);
  } else {
    PyErr_WriteUnraisable(capsule);
  }
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(saved);
#else
  PyErr_Restore(type, value, traceback);
#endif
}

void legacy_destructor(PyObject* capsule) {
  capsule_destructor<dlpack::ManagedTensor>(capsule, dlpack::kCapsuleName, dlpack::kUsedCapsuleName);
}

void versioned_destructor(PyObject* capsule) {
  capsule_destructor<dlpack::ManagedTensorVersioned>(capsule, dlpack::kVersionedCapsuleName,
                                                     dlpack::kUsedVersionedCapsuleName);
}

py::tuple shape_tuple(const std::vector<std::int64_t>& shape) {
  py::tuple out(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) out[d] = shape[d];
  return out;
}

}  // namespace

DeviceArray::DeviceArray(NDArray array, std::vector<std::int64_t> shape, int device_id,
                         std::optional<std::uintptr_t> stream)
    : array_(std::move(array)), shape_(std::move(shape)), device_id_(device_id), stream_(stream), ready_(!stream) {}

std::size_t DeviceArray::size() const {
  std::size_t count = 1;
  for (auto extent : shape_) count *= static_cast<std::size_t>(extent);
  return count;
}

void DeviceArray::make_ready_for(std::optional<std::intptr_t> consumer_stream) {
  if (ready_) return;
  if (consumer_stream && *consumer_stream == -1) return;
  if (consumer_stream && static_cast<std::uintptr_t>(*consumer_stream) == *stream_) return;
  {
    py::gil_scoped_release release;
    synchronize_stream(*stream_);
  }
  ready_ = true;
}

py::dict DeviceArray::cuda_array_interface() const {
  py::dict out;
  out["shape"] = shape_tuple(shape_);
  out["typestr"] = array_.dtype().numpy_typestr();
  py::list descr;
  descr.append(py::make_tuple("", array_.dtype().numpy_typestr()));
  out["descr"] = descr;
  out["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(array_.data()), false);
  out["strides"] = py::none();  // C-contiguous
  // Consumers synchronise on the stream the data was written on, when it may still be in flight.
  out["stream"] = ready_ ? py::object(py::none()) : py::object(py::int_(*stream_));
  out["version"] = 3;
  return out;
}

py::capsule DeviceArray::dlpack(const py::object& stream, const py::object& max_version, const py::object& dl_device,
                                const py::object& copy) {
  if (!copy.is_none() && copy.cast<bool>())
    throw py::buffer_error("zarrdirect.DeviceArray only exports its own memory: __dlpack__(copy=True) is not supported");
  if (!dl_device.is_none()) {
    auto wanted = dl_device.cast<std::pair<int, int>>();
    if (wanted.first != dlpack::kDLCUDA || wanted.second != device_id_)
      throw py::buffer_error(fmt::format("zarrdirect.DeviceArray lives on CUDA device {}; it cannot be exported to "
                                         "DLPack device ({}, {}) without a copy",
                                         device_id_, wanted.first, wanted.second));
  }
  std::optional<std::intptr_t> consumer_stream;
  if (!stream.is_none()) {
    consumer_stream = stream.cast<std::intptr_t>();
    if (*consumer_stream == 0)
      throw py::value_error("__dlpack__: stream=0 is ambiguous for CUDA; pass 1 (legacy default stream), 2 "
                            "(per-thread default stream) or a stream handle");
  }
  make_ready_for(consumer_stream);

  bool versioned = false;
  if (!max_version.is_none()) {
    auto version = max_version.cast<std::pair<int, int>>();
    versioned = version.first >= static_cast<int>(dlpack::kMajorVersion);
  }
  PyObject* capsule = nullptr;
  if (versioned) {
    auto* managed = export_tensor<dlpack::ManagedTensorVersioned>(array_, shape_, device_id_);
    managed->version = {dlpack::kMajorVersion, dlpack::kMinorVersion};
    managed->flags = 0;  // writable, and not a copy
    capsule = PyCapsule_New(managed, dlpack::kVersionedCapsuleName, versioned_destructor);
    if (!capsule) managed->deleter(managed);
  } else {
    auto* managed = export_tensor<dlpack::ManagedTensor>(array_, shape_, device_id_);
    capsule = PyCapsule_New(managed, dlpack::kCapsuleName, legacy_destructor);
    if (!capsule) managed->deleter(managed);
  }
  if (!capsule) throw py::error_already_set();
  return py::reinterpret_steal<py::capsule>(capsule);
}

py::tuple DeviceArray::dlpack_device() const { return py::make_tuple(static_cast<int>(dlpack::kDLCUDA), device_id_); }

py::array DeviceArray::to_host() {
  make_ready_for(std::nullopt);
  auto* bytes = new std::vector<std::byte>;
  py::capsule base(bytes, [](void* pointer) { delete static_cast<std::vector<std::byte>*>(pointer); });
  {
    py::gil_scoped_release release;
    *bytes = copy_to_host(array_);
  }
  std::vector<py::ssize_t> extents(shape_.begin(), shape_.end());
  return py::array(py::dtype(array_.dtype().numpy_typestr()), extents, bytes->data(), base);
}

void bind_device_array(py::module_& module) {
  py::class_<DeviceArray>(module, "DeviceArray", R"doc(
An n-d array in CUDA device memory, as returned by reads with device="cuda".

Hand it to any GPU library without a copy: cupy.asarray(x), cupy.from_dlpack(x),
torch.from_dlpack(x), jax.dlpack.from_dlpack(x), numba.cuda.as_cuda_array(x). The memory is
freed when the last of them lets go. x.get() copies it to a NumPy array.)doc")
      .def_property_readonly("shape", [](const DeviceArray& self) { return shape_tuple(self.shape()); })
      .def_property_readonly("dtype", [](const DeviceArray& self) { return py::dtype(self.dtype().numpy_typestr()); })
      .def_property_readonly("ndim", [](const DeviceArray& self) { return self.shape().size(); })
      .def_property_readonly("size", &DeviceArray::size)
      .def_property_readonly("itemsize", [](const DeviceArray& self) { return self.dtype().size; })
      .def_property_readonly("nbytes", [](const DeviceArray& self) { return self.size() * self.dtype().size; })
      .def_property_readonly("device_id", &DeviceArray::device_id)
      .def_property_readonly("device", [](const DeviceArray& self) { return fmt::format("cuda:{}", self.device_id()); })
      .def_property_readonly("ptr", [](const DeviceArray& self) { return reinterpret_cast<std::uintptr_t>(self.data()); })
      .def_property_readonly("stats", [](const DeviceArray& self) { return stats_to_dict(self.stats()); },
                             "What the read that made this array did (chunks, bytes, I/O path, threads).")
      .def_property_readonly("__cuda_array_interface__", &DeviceArray::cuda_array_interface)
      .def("__dlpack__", &DeviceArray::dlpack, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__", &DeviceArray::dlpack_device)
      .def("get", &DeviceArray::to_host, "A copy of the array in host memory, as a NumPy array.")
      .def("__array__",
           [](const DeviceArray&, const py::args&, const py::kwargs&) -> py::object {
             throw py::type_error(
                 "zarrdirect.DeviceArray lives in GPU memory: implicit conversion to NumPy is not allowed; use .get() "
                 "for a host copy, or cupy.asarray(x) / torch.from_dlpack(x) to use it on the GPU");
           })
      .def("__len__",
           [](const DeviceArray& self) {
             if (self.shape().empty()) throw py::type_error("len() of a 0-d DeviceArray");
             return self.shape()[0];
           })
      .def("__repr__", [](const DeviceArray& self) {
        std::string shape;
        for (std::size_t d = 0; d < self.shape().size(); ++d) shape += fmt::format("{}{}", d ? ", " : "", self.shape()[d]);
        if (self.shape().size() == 1) shape += ",";
        return fmt::format("zarrdirect.DeviceArray(shape=({}), dtype={}, device='cuda:{}')", shape, self.dtype().name(),
                           self.device_id());
      });
}

}  // namespace zarrdirect::python
