#include "store/store.hpp"

#include <fmt/format.h>

#include "store/file_store.hpp"
#include "store/url.hpp"
#include "util/quote.hpp"
#include "zarrdirect/error.hpp"

#if ZARRDIRECT_WITH_HTTP
#include "store/http_store.hpp"
#endif

namespace zarrdirect {

std::optional<std::uint64_t> Store::read_into(std::string_view key, const DestinationFor& destination) const {
  auto object = open_object(key);
  if (!object) return std::nullopt;
  auto target = destination(object->size());
  return object->read_all(target);
}

void Store::read_many(std::span<StoreWholeRead> reads, unsigned,
                      const std::function<void(std::size_t)>& on_ready) const {
  for (std::size_t i = 0; i < reads.size(); ++i) {
    StoreWholeRead& read = reads[i];
    try {
      read.size = read_into(read.key, *read.destination);
      read.missing = !read.size;
    } catch (...) {
      read.error = std::current_exception();
      return;
    }
    if (on_ready) on_ready(i);
  }
}

void Store::read_ranges(std::span<const StoreRangeRead> reads, unsigned,
                        const std::function<void(std::size_t, std::size_t)>& on_ready) const {
  std::size_t index = 0;
  std::unique_ptr<StoreObject> object;
  std::string_view open_key;
  for (const StoreRangeRead& read : reads) {
    if (!object || read.key != open_key) {
      object = open_object(read.key);
      if (!object)
        throw Error(ErrorKind::io, fmt::format("{}/{}: disappeared while being read", location(), printable(read.key)));
      open_key = read.key;
    }
    object->read_exact(read.offset, read.buffer);
    if (on_ready) on_ready(index, 1);
    ++index;
  }
}

bool is_url(std::string_view location) { return url_scheme(location).has_value(); }

std::unique_ptr<Store> open_store(const std::filesystem::path& location, const StoreOptions& options) {
  const std::string& text = location.native();
  if (auto scheme = url_scheme(text)) {
    if (*scheme == "http" || *scheme == "https") {
#if ZARRDIRECT_WITH_HTTP
      return std::make_unique<HttpStore>(text, HttpOptions::resolve(options));
#else
      throw Error(ErrorKind::unsupported, fmt::format("{}: this zarrdirect was built without HTTP support (libcurl)",
                                                      printable(url_for_messages(text))));
#endif
    }
    normalize_base_url(text);  // throws Error(unsupported) naming the scheme
  }
  (void)options;  // a folder is reached the same way whatever they say
  return std::make_unique<FileStore>(location);
}

void require_writable_location(const std::filesystem::path& location) {
  const std::string& text = location.native();
  auto scheme = url_scheme(text);
  if (!scheme) return;
  throw Error(ErrorKind::unsupported,
              fmt::format("{}: cannot write to a URL (scheme \"{}\"): zarrdirect writes to local folders only",
                          printable(url_for_messages(text)), printable(*scheme)));
}

}  // namespace zarrdirect
