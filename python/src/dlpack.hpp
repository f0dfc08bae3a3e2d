// The DLPack C structures, written out from the DLPack specification (dmlc/dlpack, the layout of
// v0.8 for DLManagedTensor and v1.0 for DLManagedTensorVersioned), so the module needs no copy of
// dlpack.h. Only what zarrdirect exports is here: CUDA and CPU devices and the numeric codes.
//
// The exchange protocol, in short: __dlpack__ returns a PyCapsule named "dltensor" (or
// "dltensor_versioned") holding a pointer to one of the managed structs. A consumer that takes
// ownership renames the capsule to "used_dltensor" ("used_dltensor_versioned") and later calls
// `deleter`; a capsule that dies unconsumed calls the deleter itself.
#pragma once

#include <cstdint>

namespace zarrdirect::python::dlpack {

// DLDeviceType: the enum is a C int, hence 4 bytes in every ABI we build for.
enum DeviceType : std::int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
};

// DLDataTypeCode.
enum TypeCode : std::uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
};

struct Device {
  DeviceType device_type;
  std::int32_t device_id;
};

struct DataType {
  std::uint8_t code;
  std::uint8_t bits;    // per lane: 8 for bool and uint8, 64 for complex64
  std::uint16_t lanes;  // 1: scalars
};

struct Tensor {
  void* data;
  Device device;
  std::int32_t ndim;
  DataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; v0.8 allows null (compact row-major), v1.0 does not
  std::uint64_t byte_offset;
};

struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

struct PackVersion {
  std::uint32_t major;
  std::uint32_t minor;
};

// DLPack 1.0 and later: the version travels with the tensor, and flags say read-only / copied.
struct ManagedTensorVersioned {
  PackVersion version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  std::uint64_t flags;
  Tensor dl_tensor;
};

inline constexpr std::uint32_t kMajorVersion = 1;
inline constexpr std::uint32_t kMinorVersion = 0;
inline constexpr std::uint64_t kFlagReadOnly = 1u << 0;
inline constexpr std::uint64_t kFlagIsCopied = 1u << 1;

inline constexpr const char* kCapsuleName = "dltensor";
inline constexpr const char* kUsedCapsuleName = "used_dltensor";
inline constexpr const char* kVersionedCapsuleName = "dltensor_versioned";
inline constexpr const char* kUsedVersionedCapsuleName = "used_dltensor_versioned";

// The structs must match the C layout byte for byte: consumers read them as their own dlpack.h.
static_assert(sizeof(Device) == 8);
static_assert(sizeof(DataType) == 4);
static_assert(sizeof(void*) != 8 || sizeof(Tensor) == 48);
static_assert(sizeof(void*) != 8 || sizeof(ManagedTensor) == 64);
static_assert(sizeof(void*) != 8 || sizeof(ManagedTensorVersioned) == 80);

}  // namespace zarrdirect::python::dlpack
