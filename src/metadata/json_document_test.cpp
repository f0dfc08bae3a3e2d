#include "metadata/json_document.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "util/quote.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

// Runs `parse`, which must fail with Error(invalid_metadata) naming the file and each fragment.
void expect_refused(const std::function<void()>& parse, std::vector<std::string> fragments) {
  try {
    parse();
    ADD_FAILURE() << "parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_metadata) << e.what();
    fragments.push_back("doc.json");
    for (const auto& fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << "\"" << fragment << "\" not in " << e.what();
  }
}

// The issue's hang: 400,000 empty objects in one object took 24 s through the callback parser
// (quadratic); parsed linearly it is a fraction of a second. Correctness is asserted, not time.
TEST(JsonDocument, ManyMembersOfOneObjectParse) {
  constexpr std::size_t kCount = 400000;
  std::string text = R"({"attributes": {)";
  for (std::size_t i = 0; i < kCount; ++i) text += (i ? ",\"" : "\"") + std::to_string(i) + "\":{}";
  text += "}, \"list\": [";
  for (std::size_t i = 0; i < kCount; ++i) text += i ? ",{}" : "{}";
  text += "]}";
  json doc = parse_json_document(text, "doc.json");
  ASSERT_EQ(doc["attributes"].size(), kCount);
  EXPECT_EQ(doc["attributes"]["399999"], json::object());
  EXPECT_EQ(doc["list"].size(), kCount);
}

TEST(JsonDocument, ParsesWhatNlohmannParses) {
  const char* text = R"({"a": [1, -2, 3.5, 1e300, true, false, null, "s\"t\\u00e9", {"b": {}}, []], "a": 7, "c": {"d": [[[]]]}})";
  json doc = parse_json_document(text, "doc.json");
  json expected = json::parse(text);
  EXPECT_EQ(doc, expected);
  EXPECT_EQ(doc["a"], 7);  // a repeated key keeps its last value, as nlohmann's parser does
  EXPECT_TRUE(parse_json_document(R"({"u": 18446744073709551615, "i": -9223372036854775808})", "doc.json")["u"]
                  .is_number_unsigned());
}

TEST(JsonDocument, DepthAndSizeLimitsStillRefuse) {
  std::string deep = "{\"a\": " + std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']') + "}";
  expect_refused([&] { parse_json_document(deep, "doc.json"); }, {"nests deeper than 512 levels"});
  std::string bomb = "{\"a\": " + std::string(20u << 20, '[');
  expect_refused([&] { parse_json_document(bomb, "doc.json"); }, {"nests deeper"});
  std::string fits = "{\"a\": " + std::string(kMaxJsonDepth - 1, '[') + std::string(kMaxJsonDepth - 1, ']') + "}";
  EXPECT_NO_THROW(parse_json_document(fits, "doc.json"));
  std::string big(kMaxMetadataBytes + 1, ' ');
  big.front() = '{';
  big.back() = '}';
  expect_refused([&] { parse_json_document(big, "doc.json"); }, {"67108865 bytes", "more than the 67108864 allowed"});
}

TEST(JsonDocument, SyntaxErrorsAreInvalidMetadataWithPrintableMessages) {
  expect_refused([] { parse_json_document(R"({"a": 1)", "doc.json"); }, {"not valid JSON"});
  expect_refused([] { parse_json_document("[1, 2]", "doc.json"); }, {"not a JSON object"});
  expect_refused([] { parse_json_document("", "doc.json"); }, {"not valid JSON"});
  // nlohmann's message quotes the last token read, raw: invalid UTF-8 and long strings must not
  // come through as they are.
  try {
    parse_json_document("{\"a\": \"" + std::string(100000, 'x') + "\xff\"}", "doc.json");
    ADD_FAILURE() << "parsed";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_TRUE(is_printable(message)) << message;
    EXPECT_LT(message.size(), 1000u) << message;
  }
}

TEST(JsonDocument, BareNonFiniteNumbersInAttributes) {
  // What zarr-python 2 writes into .zattrs (json.dumps with allow_nan).
  const char* zattrs = "{\n    \"hi\": Infinity,\n    \"lo\": [\n        -Infinity,\n        1.5\n    ],\n    \"scale\": NaN\n}";
  json doc = parse_json_document(zattrs, "doc.json", NonFiniteTokens::anywhere);
  EXPECT_TRUE(doc["scale"].is_number_float());
  EXPECT_TRUE(std::isnan(doc["scale"].get<double>()));
  EXPECT_EQ(doc["hi"].get<double>(), INFINITY);
  EXPECT_EQ(doc["lo"][0].get<double>(), -INFINITY);
  EXPECT_EQ(doc["lo"][1].get<double>(), 1.5);

  // Numbers around the tokens keep their values: the replacement is matched by position.
  json mixed = parse_json_document(R"({"v": [1, NaN, -2, 3.5, Infinity, 0, -Infinity, 7]})", "doc.json",
                                   NonFiniteTokens::anywhere);
  ASSERT_EQ(mixed["v"].size(), 8u);
  EXPECT_EQ(mixed["v"][0], 1);
  EXPECT_TRUE(std::isnan(mixed["v"][1].get<double>()));
  EXPECT_EQ(mixed["v"][2], -2);
  EXPECT_EQ(mixed["v"][3], 3.5);
  EXPECT_EQ(mixed["v"][4].get<double>(), INFINITY);
  EXPECT_EQ(mixed["v"][5], 0);
  EXPECT_TRUE(mixed["v"][5].is_number_unsigned());
  EXPECT_EQ(mixed["v"][6].get<double>(), -INFINITY);
  EXPECT_EQ(mixed["v"][7], 7);

  // Inside strings and keys they are text.
  json strings = parse_json_document(R"({"NaN": "NaN", "q": "a\"NaN", "e": "\\", "after": NaN})", "doc.json",
                                     NonFiniteTokens::anywhere);
  EXPECT_EQ(strings["NaN"], "NaN");
  EXPECT_EQ(strings["q"], "a\"NaN");
  EXPECT_EQ(strings["e"], "\\");
  EXPECT_TRUE(std::isnan(strings["after"].get<double>()));
}

TEST(JsonDocument, BareNonFiniteNumbersOnlyWhereAllowed) {
  // zarr.json and .zmetadata: inside attributes only.
  json v3 = parse_json_document(R"({"fill_value": "NaN", "attributes": {"a": NaN, "b": {"c": [Infinity]}},
                                   "consolidated_metadata": {"metadata": {"x": {"attributes": {"d": -Infinity}}}}})",
                                "doc.json", NonFiniteTokens::in_attributes);
  EXPECT_TRUE(std::isnan(v3["attributes"]["a"].get<double>()));
  EXPECT_EQ(v3["attributes"]["b"]["c"][0].get<double>(), INFINITY);
  json v2 = parse_json_document(R"({"metadata": {".zattrs": {"a": NaN}, "x/y/.zattrs": {"b": [NaN]}}})", "doc.json",
                                NonFiniteTokens::in_attributes);
  EXPECT_TRUE(std::isnan(v2["metadata"]["x/y/.zattrs"]["b"][0].get<double>()));
  expect_refused([] { parse_json_document(R"({"fill_value": NaN, "attributes": {}})", "doc.json",
                                          NonFiniteTokens::in_attributes); },
                 {"NaN at byte 15 is not JSON", "attributes"});
  expect_refused([] { parse_json_document(R"({"metadata": {"a/.zarray": {"fill_value": Infinity}}})", "doc.json",
                                          NonFiniteTokens::in_attributes); },
                 {"Infinity at byte"});
  // Strict documents: nowhere.
  expect_refused([] { parse_json_document(R"({"attributes": {"a": -Infinity}})", "doc.json"); },
                 {"-Infinity at byte 21 is not JSON"});
}

TEST(JsonDocument, OnlyTheExactTokensStandingAloneAreAccepted) {
  for (const char* text : {R"({"a": nan})", R"({"a": NAN})", R"({"a": -NaN})", R"({"a": +Infinity})",
                           R"({"a": [1NaN]})", R"({"a": NaNa})", R"({"a": [NaN NaN]})", R"({"a": [1 NaN]})",
                           R"({"a": Inf})", R"({"a": infinity})", R"({NaN: 1})", R"({"a": "NaN})"}) {
    SCOPED_TRACE(text);
    expect_refused([&] { parse_json_document(text, "doc.json", NonFiniteTokens::anywhere); }, {});
  }
}

// dump_json_document is dump(2) except for non-finite floats, written as Python's bare tokens
// (nlohmann writes null, which lost zarr-python 2's NaN attributes), and read back in attributes.
TEST(JsonDocument, DumpKeepsNonFiniteFloatsAsPythonsTokens) {
  const json finite = json::parse(R"({"a": [1, -2.5, "x\n\u00e9", {}, [], null, true], "b": {"c": {"d": 18446744073709551615}}, "e": {}})");
  EXPECT_EQ(dump_json_document(finite), finite.dump(2, ' ', true));
  EXPECT_NE(dump_json_document(finite).find(R"("x\n\u00e9")"), std::string::npos) << dump_json_document(finite);
  EXPECT_EQ(dump_json_document(json::object()), "{}");
  json doc = {{"attributes", {{"nan", std::nan("")}, {"list", {std::numeric_limits<double>::infinity(),
                                                                   -std::numeric_limits<double>::infinity(), 1}}}}};
  const std::string text = dump_json_document(doc);
  EXPECT_EQ(text, "{\n  \"attributes\": {\n    \"list\": [\n      Infinity,\n      -Infinity,\n      1\n    ],\n"
                  "    \"nan\": NaN\n  }\n}");
  json back = parse_json_document(text, "doc.json", NonFiniteTokens::in_attributes);
  EXPECT_TRUE(std::isnan(back["attributes"]["nan"].get<double>()));
  EXPECT_EQ(back["attributes"]["list"][1].get<double>(), -std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace zarrdirect
