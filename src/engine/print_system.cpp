#include <fmt/format.h>

#include "codec/registry.hpp"
#include "engine/device_info.hpp"

namespace zarrdirect {

void print_system(const nlohmann::json& doc) {
  for (const auto& [key, value] : doc.items())
    fmt::print("{:<16}{}\n", key + ":", value.is_string() ? value.get<std::string>() : value.dump());
}

std::vector<std::string> supported_codecs() { return codec::supported_codec_names(); }

}  // namespace zarrdirect
