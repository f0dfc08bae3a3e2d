// Array::update_attributes / set_attributes and the Group ones: saved at once, v3 zarr.json
// rewritten with every other member kept, v2 .zattrs, concurrent edits of different keys kept.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "test_support.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json read_json(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

json v3_doc() {
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", {4, 6}},
          {"data_type", "int16"},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {2, 3}}}}}},
          {"chunk_key_encoding", {{"name", "default"}}},
          {"fill_value", 0},
          {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})},
          {"attributes", {{"unit", "nm"}, {"keep", {1, 2}}}},
          {"dimension_names", {"y", "x"}},
          {"storage_transformers", json::array()}};
}

json v2_doc() {
  return {{"zarr_format", 2}, {"shape", {4, 6}},  {"chunks", {2, 3}},   {"dtype", "<i2"},
          {"compressor", nullptr}, {"fill_value", 0}, {"order", "C"}, {"filters", nullptr}};
}

TEST(Attributes, V3SavesZarrJsonWholeWithEveryOtherMemberKept) {
  test::TempDir dir;
  Array array = Array::create(dir / "a", v3_doc());
  json before = read_json(dir / "a/zarr.json");
  json saved = array.update_attributes({{"unit", "um"}, {"scale", {0.5, 0.25}}});
  EXPECT_EQ(saved, json({{"unit", "um"}, {"keep", {1, 2}}, {"scale", {0.5, 0.25}}}));
  EXPECT_EQ(array.metadata().attributes, saved);
  json after = read_json(dir / "a/zarr.json");
  EXPECT_EQ(after["attributes"], saved);
  after.erase("attributes");
  before.erase("attributes");
  EXPECT_EQ(after, before);
  EXPECT_EQ(Array::open(dir / "a").metadata().attributes, saved);

  array.update_attributes(json::object(), {"keep"});
  EXPECT_FALSE(Array::open(dir / "a").metadata().attributes.contains("keep"));
  // Removing what is not there is no error.
  array.update_attributes({{"new", 1}}, {"missing"});
  EXPECT_EQ(Array::open(dir / "a").metadata().attributes, json({{"unit", "um"}, {"scale", {0.5, 0.25}}, {"new", 1}}));
  array.set_attributes(json::object());
  EXPECT_EQ(read_json(dir / "a/zarr.json")["attributes"], json::object());
  EXPECT_THROW(array.set_attributes(json::array()), Error);
  EXPECT_THROW(array.update_attributes(json(3)), Error);
  // No lock or temporary file is left beside the metadata.
  for (const auto& entry : fs::directory_iterator(dir / "a"))
    EXPECT_EQ(entry.path().filename(), "zarr.json") << entry.path();
}

TEST(Attributes, V2SavesZattrsAndZarrPythonsLayout) {
  test::TempDir dir;
  Array array = Array::create(dir / "a", v2_doc());
  EXPECT_FALSE(fs::exists(dir / "a/.zattrs"));
  array.update_attributes({{"k", "v"}});
  EXPECT_EQ(read_json(dir / "a/.zattrs"), json({{"k", "v"}}));
  EXPECT_EQ(Array::open(dir / "a").metadata().attributes, json({{"k", "v"}}));
  const json zarray = read_json(dir / "a/.zarray");
  array.update_attributes({{"n", 2}}, {"k"});
  EXPECT_EQ(read_json(dir / "a/.zattrs"), json({{"n", 2}}));
  EXPECT_EQ(read_json(dir / "a/.zarray"), zarray);
}

TEST(Attributes, ABrokenStoredDocumentIsAnErrorNamingItAndStaysAsItWas) {
  test::TempDir dir;
  Array array = Array::create(dir / "a", v3_doc());
  json doc = read_json(dir / "a/zarr.json");
  doc["attributes"] = json::array({1});
  test::write_text(dir / "a/zarr.json", doc.dump());
  try {
    array.update_attributes({{"x", 1}});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_metadata);
    EXPECT_NE(std::string(e.what()).find("zarr.json"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_json(dir / "a/zarr.json"), doc);
}

TEST(Attributes, ThreadsEditingDifferentKeysLoseNothing) {
  test::TempDir dir;
  Array::create(dir / "a", v3_doc());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Array mine = Array::open(dir / "a");  // each with its own (soon stale) copy
      for (int i = 0; i < 10; ++i) mine.update_attributes({{fmt::format("t{}_{}", t, i), i}});
    });
  for (auto& thread : threads) thread.join();
  json attributes = Array::open(dir / "a").metadata().attributes;
  EXPECT_EQ(attributes.size(), 2u + 40u) << attributes.dump();
}

TEST(Attributes, GroupsOfBothFormats) {
  test::TempDir dir;
  for (int format : {2, 3}) {
    const fs::path path = dir / ("g" + std::to_string(format));
    Group group = Group::create(path, format, {{"a", 1}});
    group.update_attributes({{"b", {{"c", true}}}}, {"a"});
    EXPECT_EQ(group.attributes(), json({{"b", {{"c", true}}}}));
    EXPECT_EQ(Group::open(path).attributes(), group.attributes());
    group.set_attributes({{"z", nullptr}});
    EXPECT_EQ(Group::open(path).attributes(), json({{"z", nullptr}}));
  }
  EXPECT_EQ(read_json(dir / "g3/zarr.json")["node_type"], "group");
  EXPECT_EQ(read_json(dir / "g2/.zattrs"), json({{"z", nullptr}}));
}

// zarr-python 2 writes NaN, Infinity and -Infinity bare in .zattrs (xarray's _FillValue: NaN).
// Updating another key refused the whole file as "not valid JSON", and copying such attributes
// into a new array (Array::create, as `zarrdirect convert` does) wrote them as null.
TEST(Attributes, NonFiniteValuesWrittenByZarrPythonSurviveUpdatesAndCopies) {
  test::TempDir dir;
  Array v2 = Array::create(dir / "a", v2_doc());
  test::write_text(dir / "a/.zattrs", "{\"_FillValue\": NaN, \"hi\": Infinity, \"lo\": [-Infinity, 1.5]}");
  v2.update_attributes({{"k", 1}});
  std::ifstream in(dir / "a/.zattrs");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"_FillValue\": NaN"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"hi\": Infinity"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("-Infinity,"), std::string::npos) << text.str();
  const json reread = Array::open(dir / "a").metadata().attributes;
  EXPECT_TRUE(std::isnan(reread["_FillValue"].get<double>())) << reread.dump();
  EXPECT_EQ(reread["hi"].get<double>(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(reread["lo"][0].get<double>(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(reread["k"], 1);

  json doc = v3_doc();
  doc["attributes"] = reread;
  Array v3 = Array::create(dir / "b", doc);
  for (const json& attributes : {Array::open(dir / "b").metadata().attributes,
                                 v3.update_attributes({{"k", 2}}), Array::open(dir / "b").metadata().attributes}) {
    EXPECT_TRUE(std::isnan(attributes["_FillValue"].get<double>())) << attributes.dump();
    EXPECT_EQ(attributes["lo"][0].get<double>(), -std::numeric_limits<double>::infinity()) << attributes.dump();
  }
  Group group = Group::create(dir / "g", 2, reread);
  EXPECT_TRUE(std::isnan(Group::open(dir / "g").attributes()["_FillValue"].get<double>()));
}

// Attributes nested deeper than the metadata reader accepts were written, and the node could not
// be opened again (v3: the whole zarr.json refused). Now refused before anything is written.
TEST(Attributes, AttributesTheReaderWouldRefuseAreNotWritten) {
  test::TempDir dir;
  json deep = 0;
  for (int i = 0; i < 600; ++i) deep = json::array({deep});
  for (const json& base : {v3_doc(), v2_doc()}) {
    const bool v3 = base["zarr_format"] == 3;
    const fs::path path = dir / (v3 ? "a3" : "a2");
    Array array = Array::create(path, base);
    try {
      array.update_attributes({{"deep", deep}});
      ADD_FAILURE() << "written";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find("512"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(Array::open(path).read({}));
    json with_deep = base;
    with_deep["attributes"] = {{"deep", deep}};
    EXPECT_THROW(Array::create(dir / (v3 ? "b3" : "b2"), with_deep), Error);
    EXPECT_FALSE(fs::exists(dir / (v3 ? "b3" : "b2") / (v3 ? "zarr.json" : ".zarray")));
    EXPECT_THROW(Group::create(dir / (v3 ? "g3" : "g2"), v3 ? 3 : 2, {{"deep", deep}}), Error);
    EXPECT_FALSE(fs::exists(dir / (v3 ? "g3" : "g2") / (v3 ? "zarr.json" : ".zgroup")));
  }
}

}  // namespace
}  // namespace zarrdirect
