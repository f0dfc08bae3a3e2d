#include "metadata/json_fields.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include <functional>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

// Runs `action`, which must throw Error(invalid_metadata); returns its message.
std::string invalid_metadata_message(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_metadata) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return {};
}

testing::AssertionResult contains(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

TEST(JsonFieldsErrors, InvalidFieldNamesTheFileAndTheField) {
  const std::string message =
      invalid_metadata_message([] { throw_invalid_field("a/b/zarr.json", "shape", "is not right"); });
  EXPECT_EQ(message, "a/b/zarr.json: field \"shape\" is not right");
}

TEST(JsonFieldsRequired, ReturnsTheMemberItself) {
  const json doc = {{"shape", {1, 2}}, {"name", "x"}};
  const json& shape = required_field(doc, "shape", "f");
  EXPECT_EQ(&shape, &doc["shape"]);
  EXPECT_EQ(required_field(doc, "name", "f"), "x");
  // A member that is present but null is present.
  const json with_null = {{"fill_value", nullptr}};
  EXPECT_TRUE(required_field(with_null, "fill_value", "f").is_null());
}

TEST(JsonFieldsRequired, MissingFieldIsNamed) {
  const json doc = {{"shape", {1}}};
  EXPECT_EQ(invalid_metadata_message([&] { required_field(doc, "chunks", "x/.zarray"); }),
            "x/.zarray: field \"chunks\" is missing");
  // Field names are matched exactly.
  EXPECT_TRUE(contains(invalid_metadata_message([&] { required_field(doc, "Shape", "f"); }), "\"Shape\" is missing"));
}

TEST(JsonFieldsExtents, AcceptsUnsignedAndNonNegativeSignedIntegers) {
  // Parsed text holds them unsigned; JSON built in code holds them signed.
  EXPECT_EQ(parse_extent_list(json::parse("[0, 7, 18446744073709551615]"), "shape", "f", false),
            (std::vector<std::uint64_t>{0, 7, ~std::uint64_t{0}}));
  EXPECT_EQ(parse_extent_list(json::array({std::int64_t{5}, std::int64_t{0}}), "shape", "f", false),
            (std::vector<std::uint64_t>{5, 0}));
  EXPECT_TRUE(parse_extent_list(json::array(), "shape", "f", true).empty());  // zero-dimensional
}

TEST(JsonFieldsExtents, RefusalsNameTheFieldAndTheValue) {
  auto message = [](const json& value, bool positive = false) {
    return invalid_metadata_message([&] { parse_extent_list(value, "chunk_shape", "arr/zarr.json", positive); });
  };
  for (const json& not_a_list : {json(3), json("3"), json::object(), json(nullptr)}) {
    auto text = message(not_a_list);
    EXPECT_TRUE(contains(text, "arr/zarr.json: field \"chunk_shape\""));
    EXPECT_TRUE(contains(text, "list of integers"));
  }
  EXPECT_TRUE(contains(message(json::array({4, -3})), "negative extent -3"));
  EXPECT_TRUE(contains(message(json::parse("[4, -3]")), "negative extent -3"));
  EXPECT_TRUE(contains(message(json::array({2.5})), "has 2.5, not an integer"));
  EXPECT_TRUE(contains(message(json::parse("[2.0]")), "not an integer"));  // a whole float is still a float
  EXPECT_TRUE(contains(message(json::array({true})), "has true, not an integer"));
  EXPECT_TRUE(contains(message(json::array({"8"})), "has \"8\", not an integer"));
  EXPECT_TRUE(contains(message(json::array({json::array({1})})), "not an integer"));
  EXPECT_TRUE(contains(message(json::array({3, 0}), true), "field \"chunk_shape\" has a zero extent"));
}

TEST(JsonFieldsExtents, AtMostThirtyTwoDimensions) {
  json list = json::array();
  for (int i = 0; i < 32; ++i) list.push_back(1);
  EXPECT_EQ(parse_extent_list(list, "shape", "f", true).size(), 32u);
  list.push_back(1);
  EXPECT_TRUE(contains(invalid_metadata_message([&] { parse_extent_list(list, "shape", "f", true); }),
                       "field \"shape\" has more than 32 dimensions"));
}

TEST(JsonFieldsStrings, StringsAndRefusals) {
  EXPECT_EQ(parse_string(json("uint16"), "data_type", "f"), "uint16");
  EXPECT_EQ(parse_string(json(""), "data_type", "f"), "");
  EXPECT_EQ(invalid_metadata_message([] { parse_string(json(16), "data_type", "a/zarr.json"); }),
            "a/zarr.json: field \"data_type\" must be a string, not 16");
  EXPECT_TRUE(contains(invalid_metadata_message([] { parse_string(json::array({"u2"}), "dtype", "f"); }),
                       "must be a string, not [\"u2\"]"));
  EXPECT_TRUE(contains(invalid_metadata_message([] { parse_string(json(nullptr), "dtype", "f"); }), "not null"));
}

TEST(JsonQuoted, QuotesAndEscapesSoNothingForgesALine) {
  EXPECT_EQ(json_quoted("plain"), "\"plain\"");
  EXPECT_EQ(json_quoted(""), "\"\"");
  EXPECT_EQ(json_quoted("a\nb"), "\"a\\nb\"");
  EXPECT_EQ(json_quoted("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
  EXPECT_EQ(json_quoted(std::string_view("\x01\x1b[31m", 6)), R"("\x01\x1b[31m")");
  EXPECT_EQ(json_quoted("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // valid UTF-8 is kept as it is
  // Invalid UTF-8 is escaped byte by byte rather than thrown about, so any name can go into a message.
  std::string quoted;
  ASSERT_NO_THROW(quoted = json_quoted("bad\xff\xfe"));
  EXPECT_EQ(quoted, R"("bad\xff\xfe")");
  EXPECT_EQ(json_quoted(std::string(1000, 'n')), "\"" + std::string(80, 'n') + "...\" (1000 bytes)");
}

TEST(QuotedJson, ValuesAreWrittenAsJsonAndCutShort) {
  EXPECT_EQ(quoted_json(json(16)), "16");
  EXPECT_EQ(quoted_json(json(-2.5)), "-2.5");
  EXPECT_EQ(quoted_json(json(nullptr)), "null");
  EXPECT_EQ(quoted_json(json(std::nan(""))), "NaN");
  EXPECT_EQ(quoted_json(json(-INFINITY)), "-Infinity");
  EXPECT_EQ(quoted_json(json::parse(R"({"a": [1, "x\ny"], "b": {}})")), R"({"a": [1, "x\ny"], "b": {}})");
  // The issue's 40 MB fill value: a string and a list of that size give a message of a few lines' worth.
  std::string huge_text = quoted_json(json(std::string(40u << 20, '7')));
  EXPECT_LT(huge_text.size(), 120u);
  EXPECT_NE(huge_text.find("(41943040 bytes)"), std::string::npos);
  std::string huge_list = quoted_json(json(std::vector<int>(5u << 20, 7)));
  EXPECT_LT(huge_list.size(), 200u);
  EXPECT_NE(huge_list.find("... (a list of 5242880 items)"), std::string::npos) << huge_list;
  std::string wide_object = quoted_json(json::parse(R"({"k": ")" + std::string(500, 'v') + R"(", "l": 1})"));
  EXPECT_LT(wide_object.size(), 250u);
  EXPECT_NE(wide_object.find("(an object of 2 members)"), std::string::npos) << wide_object;
}

TEST(JsonDocument, ParsesObjectsWhole) {
  json doc = parse_json_document(R"({"zarr_format": 3, "shape": [1, 2], "attributes": {"a": [[1]]}})", "f");
  EXPECT_EQ(doc["zarr_format"], 3);
  EXPECT_EQ(doc["shape"], json::array({1, 2}));
  EXPECT_EQ(doc["attributes"]["a"][0][0], 1);
  EXPECT_TRUE(parse_json_document("  {}\n", "f").empty());
}

TEST(JsonDocument, ErrorsNameTheFile) {
  auto message = [](std::string_view text) {
    return invalid_metadata_message([&] { parse_json_document(text, "grp/arr/.zarray"); });
  };
  for (std::string_view not_object : {"[]", "3", "\"text\"", "null", "true"})
    EXPECT_EQ(message(not_object), "grp/arr/.zarray: not a JSON object") << not_object;
  for (std::string_view broken : {"", "{", "{\"a\": }", "{} {}", "{\"a\": 1,}", "{'a': 1}"}) {
    auto text = message(broken);
    EXPECT_EQ(text.rfind("grp/arr/.zarray: not valid JSON: ", 0), 0u) << broken << ": " << text;
  }
}

TEST(JsonDocument, NestingIsLimited) {
  auto nested = [](int depth) {
    return "{\"a\": " + std::string(static_cast<std::size_t>(depth), '[') +
           std::string(static_cast<std::size_t>(depth), ']') + "}";
  };
  EXPECT_NO_THROW(parse_json_document(nested(400), "f"));
  auto text = invalid_metadata_message([&] { parse_json_document(nested(600), "deep/zarr.json"); });
  EXPECT_TRUE(contains(text, "deep/zarr.json"));
  EXPECT_TRUE(contains(text, "deeper than 512 levels"));
  // Objects count as much as lists.
  std::string objects;
  for (int i = 0; i < 600; ++i) objects += "{\"k\": ";
  objects += "1" + std::string(600, '}');
  EXPECT_TRUE(contains(invalid_metadata_message([&] { parse_json_document(objects, "o"); }), "deeper than 512"));
}

}  // namespace
}  // namespace zarrdirect
