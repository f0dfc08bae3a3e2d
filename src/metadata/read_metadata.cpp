#include <fmt/format.h>

#include "metadata/metadata_file.hpp"
#include "store/file_store.hpp"
#include "util/quote.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {

ArrayMetadata read_array_metadata(const std::filesystem::path& path, const StoreOptions& options) {
  return read_array_metadata(*open_store(path, options), path);
}

ArrayMetadata read_array_metadata(const Store& store, const std::filesystem::path& path) {
  if (auto doc = read_metadata_document(store, "zarr.json"))
    return parse_v3_array_metadata(*doc, (path / "zarr.json").string());
  if (auto doc = read_metadata_document(store, ".zarray")) {
    auto attrs = read_metadata_document(store, ".zattrs");
    return parse_v2_array_metadata(*doc, attrs ? *attrs : nlohmann::json::object(), (path / ".zarray").string());
  }
  // The path may end in a level path taken from metadata: escaped, so the message stays one line.
  if (store.exists(".zgroup"))
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: is a Zarr v2 group, not an array (open one of its arrays, or a level)",
                            printable(path.string())));
  throw Error(ErrorKind::invalid_argument,
              fmt::format("{}: not a Zarr array: no zarr.json (v3) or .zarray (v2) found", printable(path.string())));
}

}  // namespace zarrdirect
