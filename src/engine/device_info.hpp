// What this process can do with GPUs: for `zarrdirect info --system` and the Python module.
#pragma once

#include <nlohmann/json.hpp>

namespace zarrdirect {

// {"cuda_built": bool, "cuda_devices": n, "device": name, "cufile": {...}, "io_path": "...",
//  "io_path_reason": "..."}
nlohmann::json describe_system();

void print_system(const nlohmann::json& doc);

}  // namespace zarrdirect
