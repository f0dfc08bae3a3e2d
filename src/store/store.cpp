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
