// What this process can do with GPUs and codecs: `zarrdirect info --system`, the Python module's
// describe_system(), and anyone deciding where to read to.
//
//   auto doc = zarrdirect::describe_system();
//   if (doc["cuda_devices"].get<int>() > 0) ...;
//   zarrdirect::print_system(doc);   // the same, as aligned text on stdout
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zarrdirect {

// A JSON description: {"cuda_built": bool, "cuda_devices": n, "device": name, "cufile": {...},
// "io_path": "host" | "staged" | "gds", "io_path_reason": "..."}. Never throws for a missing GPU
// or driver (that is what it reports); safe from any thread. cuFile's driver is opened only where
// nvidia-fs is loaded.
nlohmann::json describe_system();

// Prints describe_system()'s document as text on stdout, one field a line.
void print_system(const nlohmann::json& doc);

// The codec names (v3 names and numcodecs ids) this build decodes and encodes, sorted.
std::vector<std::string> supported_codecs();

}  // namespace zarrdirect
