#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "engine/device_info.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

std::string printed(const json& doc) {
  testing::internal::CaptureStdout();
  print_system(doc);
  return testing::internal::GetCapturedStdout();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(PrintSystem, OneAlignedLinePerKeyStringsBareOtherValuesAsJson) {
  const json doc = {{"io_path", "host"},
                    {"cuda_devices", 0},
                    {"cuda_built", true},
                    {"reason", "say \"why\""},
                    {"cufile", {{"loaded", false}, {"library", ""}}},
                    {"device", nullptr},
                    {"versions", {12, 13}}};
  // Keys come in the document's order (sorted), each with its colon in a 16-column field.
  EXPECT_EQ(printed(doc),
            "cuda_built:     true\n"
            "cuda_devices:   0\n"
            "cufile:         {\"library\":\"\",\"loaded\":false}\n"
            "device:         null\n"
            "io_path:        host\n"
            "reason:         say \"why\"\n"
            "versions:       [12,13]\n");
}

TEST(PrintSystem, EveryDeviceOnItsOwnLineWithNameMemoryAndBusId) {
  const json doc = {{"cuda_devices", 2},
                    {"devices",
                     {{{"index", 0}, {"name", "GPU A"}, {"memory", 2u << 30}, {"pci_bus_id", "0000:1B:00.0"},
                       {"compute", "9.0"}},
                      {{"index", 1}, {"name", "GPU B"}, {"memory", 3u << 29}, {"pci_bus_id", "0000:43:00.0"}}}}};
  EXPECT_EQ(printed(doc),
            "cuda_devices:   2\n"
            "devices:        cuda:0: GPU A, 2.0 GiB, PCI 0000:1B:00.0, compute 9.0\n"
            "                cuda:1: GPU B, 1.5 GiB, PCI 0000:43:00.0\n");
  EXPECT_EQ(printed(json{{"devices", json::array()}}), "devices:        none\n");
}

TEST(PrintSystem, ListsAsManyDevicesAsItCounts) {
  const json doc = describe_system();
  ASSERT_TRUE(doc["devices"].is_array()) << doc.dump();
  ASSERT_EQ(doc["devices"].size(), doc["cuda_devices"].get<std::size_t>());
  for (std::size_t i = 0; i < doc["devices"].size(); ++i) {
    const json& device = doc["devices"][i];
    EXPECT_EQ(device["index"], i);
    EXPECT_TRUE(device["name"].is_string()) << device.dump();
    EXPECT_GT(device["memory"].get<std::uint64_t>(), 0u);
    EXPECT_TRUE(device["pci_bus_id"].is_string()) << device.dump();
  }
}

TEST(PrintSystem, NothingForAnEmptyDocument) { EXPECT_EQ(printed(json::object()), ""); }

TEST(PrintSystem, WhatDescribeSystemReportsReadsBack) {
  // The real document of this machine (with or without a GPU): each line gives back its key and
  // its value, strings verbatim and everything else as the JSON it was.
  const json doc = describe_system();
  ASSERT_TRUE(doc.is_object());
  ASSERT_FALSE(doc.empty());
  const auto lines = lines_of(printed(doc));
  // The device list takes one line a device (at least one: "none"); every other key one.
  const std::size_t device_lines = std::max<std::size_t>(1, doc.value("devices", json::array()).size());
  ASSERT_EQ(lines.size(), doc.size() - 1 + device_lines) << printed(doc);
  std::size_t index = 0;
  for (const auto& [key, value] : doc.items()) {
    const std::string& line = lines[index++];
    if (key == "devices") {
      index += device_lines - 1;  // checked by the tests below
      continue;
    }
    SCOPED_TRACE(line);
    ASSERT_TRUE(line.starts_with(key + ":"));
    const std::size_t start = std::max<std::size_t>(16, key.size() + 1);
    ASSERT_GE(line.size(), start);
    // The padding is spaces only, and there is some between every key and its value.
    EXPECT_EQ(line.substr(key.size() + 1, start - key.size() - 1), std::string(start - key.size() - 1, ' '));
    EXPECT_GT(start, key.size() + 1) << "key and value run together";
    const std::string text = line.substr(start);
    if (value.is_string()) {
      EXPECT_EQ(text, value.get<std::string>());
    } else {
      EXPECT_EQ(json::parse(text), value);
    }
  }
}

}  // namespace
}  // namespace zarrdirect
