// Naming devices (zarrdirect/device.hpp): parsing "cuda:N", printing it back, and checking a
// device against this machine before a read or write begins.
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "engine/device_read.hpp"
#include "util/quote.hpp"

namespace zarrdirect {

std::string_view to_string(Device device) { return device == Device::cuda ? "cuda" : "cpu"; }

std::string to_string(const DeviceSpec& device) {
  if (device.kind == Device::cpu || device.ordinal == DeviceSpec::kCurrent) return std::string(to_string(device.kind));
  return fmt::format("cuda:{}", device.ordinal);
}

DeviceSpec parse_device(std::string_view text) {
  if (text == "cpu") return Device::cpu;
  if (text == "cuda" || text == "gpu") return Device::cuda;
  constexpr std::string_view prefix = "cuda:";
  if (text.starts_with(prefix)) {
    const std::string_view digits = text.substr(prefix.size());
    int ordinal = -1;
    // Digits only: from_chars would take a sign, and "1x" must not read as 1.
    const bool all_digits = !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
    if (all_digits) {
      auto [end, status] = std::from_chars(digits.data(), digits.data() + digits.size(), ordinal);
      if (status == std::errc() && end == digits.data() + digits.size()) return DeviceSpec::cuda(ordinal);
    }
  }
  throw Error(ErrorKind::invalid_argument,
              fmt::format("device {}: expected cpu, cuda or cuda:N (N a device number: 0, 1, ...)",
                          quote(text, 40)));
}

int cuda_device_count() { return usable_cuda_devices(); }

void check_device(const DeviceSpec& device) {
  if (device.kind == Device::cpu) {
    if (device.ordinal != DeviceSpec::kCurrent)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("device cpu:{}: host memory takes no device number", device.ordinal));
    return;
  }
  if (device.ordinal < DeviceSpec::kCurrent)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("device cuda:{}: a CUDA device number is 0 or more", device.ordinal));
  require_cuda_device();
  const int count = usable_cuda_devices();
  if (device.ordinal >= count)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("cuda:{}: this machine has {} CUDA device{} ({}; CUDA_VISIBLE_DEVICES sets which are seen)",
                            device.ordinal, count, count == 1 ? "" : "s",
                            count == 1 ? "cuda:0" : fmt::format("cuda:0 to cuda:{}", count - 1)));
}

}  // namespace zarrdirect
