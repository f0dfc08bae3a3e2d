#include "metadata/json_document.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "util/quote.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

// A bare NaN / Infinity / -Infinity found in the text, and which number (in document order) the
// `0` written in its place is.
struct BareToken {
  std::size_t offset = 0;
  std::size_t length = 0;
  std::size_t number_ordinal = 0;
  double value = 0;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_number_char(char c) { return is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'; }

// A token stands alone when what precedes it can precede a value and what follows can follow one;
// `1NaN` or `NaNa` are left alone (and refused by the parser).
bool stands_alone(std::string_view text, std::size_t offset, std::size_t length) {
  const bool before_ok = offset == 0 || is_space(text[offset - 1]) || text[offset - 1] == '[' ||
                         text[offset - 1] == ',' || text[offset - 1] == ':';
  const std::size_t end = offset + length;
  const bool after_ok = end == text.size() || is_space(text[end]) || text[end] == ',' || text[end] == ']' ||
                        text[end] == '}';
  return before_ok && after_ok;
}

// One pass over the bytes. Outside strings, letters occur in valid JSON only in true, false, null
// and in exponents, so a token starting with N or I (or -I) can only be one of ours or an error.
std::vector<BareToken> find_bare_tokens(std::string_view text) {
  std::vector<BareToken> tokens;
  std::size_t numbers = 0;
  bool in_string = false;
  const double inf = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character, whatever it is, does not end the string
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    std::optional<BareToken> token;
    const std::string_view rest = text.substr(i);
    if (rest.starts_with("NaN")) token = BareToken{i, 3, 0, std::numeric_limits<double>::quiet_NaN()};
    else if (rest.starts_with("Infinity")) token = BareToken{i, 8, 0, inf};
    else if (rest.starts_with("-Infinity")) token = BareToken{i, 9, 0, -inf};
    if (token && stands_alone(text, token->offset, token->length)) {
      token->number_ordinal = numbers++;
      tokens.push_back(*token);
      i += token->length - 1;
    } else if (c == '-' || is_digit(c)) {
      ++numbers;
      while (i + 1 < text.size() && is_number_char(text[i + 1])) ++i;
    }
  }
  return tokens;
}

// Builds the document from nlohmann's SAX events: constant work per event, so linear overall.
class DocumentBuilder {
 public:
  DocumentBuilder(const std::string& where, NonFiniteTokens non_finite, const std::vector<BareToken>& tokens)
      : where_(where), non_finite_(non_finite), tokens_(tokens) {}

  bool null() { return put(nullptr); }
  bool boolean(bool value) { return put(value); }
  bool number_integer(json::number_integer_t value) { return number(value); }
  bool number_unsigned(json::number_unsigned_t value) {
    if (next_token_ < tokens_.size() && tokens_[next_token_].number_ordinal == numbers_) {
      const BareToken& token = tokens_[next_token_++];
      ++numbers_;
      if (value != 0) return fail("the text changed while it was parsed");  // cannot happen: a guard
      if (!non_finite_allowed_here()) return fail(fmt::format("{} at byte {} is not JSON{}", token_text(token),
                                                              token.offset, non_finite_ == NonFiniteTokens::refused
                                                                                ? ""
                                                                                : " (accepted only in attributes)"));
      return put(token.value);
    }
    return number(value);
  }
  bool number_float(json::number_float_t value, const std::string&) { return number(value); }
  bool string(std::string& value) { return put(std::move(value)); }
  bool binary(json::binary_t&) { return fail("not valid JSON: a binary value"); }  // never from text
  bool key(std::string& name) {
    key_ = std::move(name);
    return true;
  }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const json::exception& e) {
    // The parser's message quotes the last token read: escaped and shortened, it cannot bring raw
    // bytes (invalid UTF-8, a megabyte-long string) into ours.
    return fail(fmt::format("not valid JSON: {}", printable(e.what(), 200)));
  }

  json take() {
    if (error_) throw Error(ErrorKind::invalid_metadata, fmt::format("{}: {}", where_, *error_));
    if (next_token_ != tokens_.size()) throw Error(ErrorKind::invalid_metadata, fmt::format("{}: not valid JSON", where_));
    return std::move(root_);
  }

 private:
  struct Frame {
    json* value;
    bool in_attributes;
  };

  static bool is_attributes_key(std::string_view name) {
    return name == "attributes" || name == ".zattrs" || name.ends_with("/.zattrs");
  }

  // Whether the value about to be put lies inside attributes.
  bool inside_attributes() const {
    if (stack_.empty()) return non_finite_ == NonFiniteTokens::anywhere;
    const Frame& parent = stack_.back();
    return parent.in_attributes || (parent.value->is_object() && is_attributes_key(key_));
  }

  bool non_finite_allowed_here() const {
    return non_finite_ == NonFiniteTokens::anywhere ||
           (non_finite_ == NonFiniteTokens::in_attributes && inside_attributes());
  }

  static std::string_view token_text(const BareToken& token) {
    return token.length == 3 ? "NaN" : token.length == 8 ? "Infinity" : "-Infinity";
  }

  template <typename Number>
  bool number(Number value) {
    ++numbers_;
    return put(value);
  }

  // Adds `value` to the open container (or makes it the root); returns false to stop on error.
  template <typename Value>
  bool put(Value&& value) {
    place(json(std::forward<Value>(value)));
    return true;
  }

  json* place(json&& value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& parent = *stack_.back().value;
    if (parent.is_array()) {
      auto& items = parent.get_ref<json::array_t&>();
      items.push_back(std::move(value));
      return &items.back();
    }
    // As nlohmann's own parser does, a repeated key keeps its last value.
    auto& members = parent.get_ref<json::object_t&>();
    return &members.insert_or_assign(std::move(key_), std::move(value)).first->second;
  }

  bool open(json&& container) {
    if (stack_.size() >= kMaxJsonDepth) return fail(fmt::format("JSON nests deeper than {} levels", kMaxJsonDepth));
    const bool in_attributes = inside_attributes();
    stack_.push_back({place(std::move(container)), in_attributes});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  bool fail(std::string why) {
    if (!error_) error_ = std::move(why);
    return false;
  }

  const std::string& where_;
  NonFiniteTokens non_finite_;
  const std::vector<BareToken>& tokens_;
  std::size_t next_token_ = 0;
  std::size_t numbers_ = 0;
  json root_;
  std::vector<Frame> stack_;
  std::string key_;
  std::optional<std::string> error_;
};

}  // namespace

json parse_json_document(std::string_view text, const std::string& where, NonFiniteTokens non_finite) {
  if (text.size() > kMaxMetadataBytes)
    throw Error(ErrorKind::invalid_metadata, fmt::format("{}: {} bytes of metadata, more than the {} allowed", where,
                                                         text.size(), kMaxMetadataBytes));
  const std::vector<BareToken> tokens = find_bare_tokens(text);
  std::string rewritten;
  if (!tokens.empty()) {
    rewritten.assign(text);
    for (const auto& token : tokens) {
      rewritten[token.offset] = '0';
      for (std::size_t k = 1; k < token.length; ++k) rewritten[token.offset + k] = ' ';
    }
    text = rewritten;
  }
  DocumentBuilder builder(where, non_finite, tokens);
  json::sax_parse(text.begin(), text.end(), &builder);
  json doc = builder.take();
  if (!doc.is_object()) throw Error(ErrorKind::invalid_metadata, fmt::format("{}: not a JSON object", where));
  return doc;
}

namespace {

void dump_value(const json& value, int indent, std::size_t depth, std::string& out) {
  const bool is_object = value.is_object();
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    const double number = value.get<double>();
    out += std::isnan(number) ? "NaN" : number > 0 ? "Infinity" : "-Infinity";
    return;
  }
  if (!(is_object || value.is_array()) || value.empty()) {
    out += value.dump(-1, ' ', true);
    return;
  }
  const std::string inner(static_cast<std::size_t>(indent) * (depth + 1), ' ');
  out += is_object ? "{\n" : "[\n";
  bool first = true;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (!first) out += ",\n";
    first = false;
    out += inner;
    if (is_object) {
      out += json(it.key()).dump(-1, ' ', true);
      out += ": ";
    }
    dump_value(*it, indent, depth + 1, out);
  }
  out += '\n';
  out.append(static_cast<std::size_t>(indent) * depth, ' ');
  out += is_object ? '}' : ']';
}

}  // namespace

std::string dump_json_document(const json& doc, int indent) {
  std::string out;
  dump_value(doc, indent, 0, out);
  return out;
}

std::string readable_json_document(const json& doc, const std::string& where, NonFiniteTokens non_finite) {
  std::string text = dump_json_document(doc);
  try {
    (void)parse_json_document(text, where, non_finite);
  } catch (const Error& e) {
    throw Error(ErrorKind::invalid_argument, fmt::format("not written, zarrdirect could not read it back: {}", e.what()));
  }
  return text;
}

}  // namespace zarrdirect
