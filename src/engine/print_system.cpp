#include <fmt/format.h>

#include "codec/registry.hpp"
#include "engine/device_info.hpp"

namespace zarrdirect {
namespace {

// "0: NVIDIA H200, 139.8 GiB, PCI 0000:1B:00.0, compute 9.0" (what of it is known).
std::string device_line(const nlohmann::json& device) {
  std::string line = fmt::format("cuda:{}", device.value("index", -1));
  if (device.contains("name") && device["name"].is_string()) line += ": " + device["name"].get<std::string>();
  if (device.contains("memory") && device["memory"].is_number())
    line += fmt::format(", {:.1f} GiB", device["memory"].get<double>() / double(1u << 30));
  if (device.contains("pci_bus_id") && device["pci_bus_id"].is_string())
    line += ", PCI " + device["pci_bus_id"].get<std::string>();
  if (device.contains("compute") && device["compute"].is_string())
    line += ", compute " + device["compute"].get<std::string>();
  return line;
}

}  // namespace

void print_system(const nlohmann::json& doc) {
  for (const auto& [key, value] : doc.items()) {
    // The device list: one line a device, under one label ("none" when there is none).
    if (key == "devices" && value.is_array()) {
      if (value.empty()) fmt::print("{:<16}none\n", key + ":");
      for (std::size_t i = 0; i < value.size(); ++i)
        fmt::print("{:<16}{}\n", i == 0 ? key + ":" : std::string(), device_line(value[i]));
      continue;
    }
    fmt::print("{:<16}{}\n", key + ":", value.is_string() ? value.get<std::string>() : value.dump());
  }
}

std::vector<std::string> supported_codecs() { return codec::supported_codec_names(); }

}  // namespace zarrdirect
