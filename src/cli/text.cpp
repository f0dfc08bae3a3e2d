#include "cli/text.hpp"

#include <iterator>

#include <fmt/format.h>

#include "cli/printable.hpp"

namespace zarrdirect::cli {
namespace {

// A configuration value compactly: strings bare, anything else as JSON, long ones shortened.
std::string compact(const nlohmann::json& value) {
  std::string text = value.is_string() ? value.get<std::string>()
                                       : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return printable_line(text, 80);
}

void add_codecs(const nlohmann::json& codecs, const std::string& prefix, std::vector<std::string>& lines) {
  if (!codecs.is_array()) return;
  for (const auto& codec : codecs) {
    if (!codec.is_object()) continue;
    const auto name_it = codec.find("name");
    std::string line = prefix + (name_it != codec.end() ? compact(*name_it) : "?");
    std::vector<std::pair<std::string, const nlohmann::json*>> nested;
    const auto configuration = codec.find("configuration");
    if (configuration != codec.end() && configuration->is_object()) {
      std::string settings;
      for (const auto& [key, value] : configuration->items()) {
        if (key == "codecs" || key == "index_codecs") {
          nested.emplace_back(key == "codecs" ? "inner: " : "index: ", &value);
          continue;
        }
        settings += fmt::format("{}{}={}", settings.empty() ? "" : ", ", printable_line(key, 40), compact(value));
      }
      if (!settings.empty()) line += ": " + settings;
    }
    lines.push_back(std::move(line));
    for (const auto& [label, chain] : nested) add_codecs(*chain, prefix + "  " + label, lines);
  }
}

}  // namespace

std::string human_size(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} byte{}", bytes, bytes == 1 ? "" : "s");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  // Rounded to one decimal, 1023.96 KiB would read "1024.0 KiB": carry into the next unit.
  if (value >= 1023.95 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {} ({} bytes)", value, units[unit], bytes);
}

std::vector<std::string> codec_lines(const nlohmann::json& codecs) {
  std::vector<std::string> lines;
  add_codecs(codecs, "", lines);
  return lines;
}

}  // namespace zarrdirect::cli
