// Groups with and without consolidated metadata, and OME-Zarr multiscale images (0.4 and 0.5).
#include <gtest/gtest.h>

#include <functional>

#include <fmt/format.h>

#include "test_support.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect {
namespace {

using test::TempDir;
using test::write_text;

std::string v2_array(std::uint64_t extent) {
  return fmt::format(R"({{"zarr_format": 2, "shape": [{0}], "chunks": [{0}], "dtype": "<u2", "compressor": null,
                          "fill_value": 0, "filters": null, "order": "C"}})",
                     extent);
}

std::string v3_array(std::uint64_t extent, const std::string& attributes = "{}") {
  return fmt::format(R"({{"zarr_format": 3, "node_type": "array", "shape": [{0}, 4], "data_type": "uint8",
                          "chunk_grid": {{"name": "regular", "configuration": {{"chunk_shape": [2, 2]}}}},
                          "chunk_key_encoding": {{"name": "default"}}, "fill_value": 0,
                          "codecs": [{{"name": "bytes"}}], "attributes": {1}}})",
                     extent, attributes);
}

ErrorKind kind_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no zarrdirect::Error thrown";
  return ErrorKind::io;
}

TEST(Group, V2ListsArraysAndGroupsFromTheFolder) {
  TempDir dir;
  write_text(dir / ".zgroup", R"({"zarr_format": 2})");
  write_text(dir / ".zattrs", R"({"title": "t"})");
  write_text(dir / "b/.zarray", v2_array(5));
  write_text(dir / "a/.zgroup", R"({"zarr_format": 2})");
  write_text(dir / "notes/readme.txt", "not a node");
  Group group = Group::open(dir.path());
  EXPECT_EQ(group.zarr_format(), 2);
  EXPECT_FALSE(group.consolidated());
  EXPECT_EQ(group.attributes()["title"], "t");
  EXPECT_EQ(group.members(), (std::vector<std::string>{"a", "b"}));
  auto nodes = group.member_nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].type, NodeType::group);
  EXPECT_EQ(nodes[1].type, NodeType::array);
  EXPECT_EQ(group.node_type("b"), NodeType::array);
  EXPECT_EQ(group.node_type("notes"), std::nullopt);
  EXPECT_EQ(group.array_metadata("b").shape, (std::vector<std::uint64_t>{5}));
  EXPECT_EQ(group.open_group("a").members(), std::vector<std::string>{});
}

TEST(Group, V2ConsolidatedMetadataIsPreferredToTheFolders) {
  TempDir dir;
  write_text(dir / ".zgroup", R"({"zarr_format": 2})");
  // On disk "a" says 5 elements; the consolidated document says 7 and lists members that have
  // no folder at all: what comes back must be the consolidated view.
  write_text(dir / "a/.zarray", v2_array(5));
  write_text(dir / "late/.zarray", v2_array(3));
  write_text(dir / ".zmetadata", fmt::format(R"({{"zarr_consolidated_format": 1, "metadata": {{
      ".zgroup": {{"zarr_format": 2}},
      "a/.zarray": {0}, "a/.zattrs": {{"unit": "nm"}},
      "g/.zgroup": {{"zarr_format": 2}}, "g/.zattrs": {{"kind": "labels"}},
      "g/inner/.zarray": {1},
      "orphan/.zattrs": {{"x": 1}}}}}})",
                                             v2_array(7), v2_array(9)));
  Group group = Group::open(dir.path());
  EXPECT_TRUE(group.consolidated());
  EXPECT_EQ(group.members(), (std::vector<std::string>{"a", "g"}));
  auto a = group.array_metadata("a");
  EXPECT_EQ(a.shape, (std::vector<std::uint64_t>{7}));
  EXPECT_EQ(a.attributes["unit"], "nm");
  EXPECT_EQ(group.array_metadata("g/inner").shape, (std::vector<std::uint64_t>{9}));
  // Not in the document: read from its own files.
  EXPECT_EQ(group.array_metadata("late").shape, (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(kind_of([&] { group.array_metadata("g"); }), ErrorKind::invalid_argument);

  Group sub = group.open_group("g");
  EXPECT_TRUE(sub.consolidated());
  EXPECT_EQ(sub.path(), dir.path() / "g");
  EXPECT_EQ(sub.attributes()["kind"], "labels");
  EXPECT_EQ(sub.members(), std::vector<std::string>{"inner"});
  EXPECT_EQ(sub.array_metadata("inner").shape, (std::vector<std::uint64_t>{9}));
  EXPECT_EQ(sub.node_type("inner"), NodeType::array);
}

TEST(Group, V2ConsolidatedMetadataErrors) {
  TempDir dir;
  write_text(dir / ".zgroup", R"({"zarr_format": 2})");
  write_text(dir / ".zmetadata", R"({"zarr_consolidated_format": 2, "metadata": {}})");
  EXPECT_EQ(kind_of([&] { Group::open(dir.path()); }), ErrorKind::unsupported);
  write_text(dir / ".zmetadata", R"({"zarr_consolidated_format": 1, "metadata": [1]})");
  EXPECT_EQ(kind_of([&] { Group::open(dir.path()); }), ErrorKind::invalid_metadata);
  write_text(dir / ".zmetadata", R"({"zarr_consolidated_format": 1, "metadata": {"a/.zarray": 3}})");
  EXPECT_EQ(kind_of([&] { Group::open(dir.path()); }), ErrorKind::invalid_metadata);
  write_text(dir / ".zmetadata", "{not json");
  EXPECT_EQ(kind_of([&] { Group::open(dir.path()); }), ErrorKind::invalid_metadata);
}

TEST(Group, V3InlineConsolidatedMetadata) {
  TempDir dir;
  write_text(dir / "zarr.json", fmt::format(R"({{"zarr_format": 3, "node_type": "group", "attributes": {{"a": 1}},
      "consolidated_metadata": {{"kind": "inline", "must_understand": false, "metadata": {{
        "img": {0}, "sub": {{"zarr_format": 3, "node_type": "group", "attributes": {{"b": 2}}}},
        "sub/deep": {1}}}}}}})",
                                            v3_array(6, R"({"c": 3})"), v3_array(8)));
  Group group = Group::open(dir.path());
  EXPECT_EQ(group.zarr_format(), 3);
  EXPECT_TRUE(group.consolidated());
  EXPECT_EQ(group.attributes()["a"], 1);
  auto nodes = group.member_nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name, "img");
  EXPECT_EQ(nodes[0].type, NodeType::array);
  EXPECT_EQ(nodes[1].type, NodeType::group);
  auto img = group.array_metadata("img");
  EXPECT_EQ(img.shape, (std::vector<std::uint64_t>{6, 4}));
  EXPECT_EQ(img.attributes["c"], 3);
  Group sub = group.open_group("sub");
  EXPECT_EQ(sub.attributes()["b"], 2);
  EXPECT_EQ(sub.members(), std::vector<std::string>{"deep"});
  EXPECT_EQ(sub.array_metadata("deep").shape, (std::vector<std::uint64_t>{8, 4}));
}

TEST(Group, V3ConsolidatedMetadataOfAnUnknownKind) {
  TempDir dir;
  write_text(dir / "zarr.json", R"({"zarr_format": 3, "node_type": "group",
      "consolidated_metadata": {"kind": "remote", "must_understand": false}})");
  write_text(dir / "x/zarr.json", v3_array(2));
  Group group = Group::open(dir.path());
  EXPECT_FALSE(group.consolidated());  // optional and unknown: ignored, the folders are read
  EXPECT_EQ(group.members(), std::vector<std::string>{"x"});
  EXPECT_EQ(group.node_type("x"), NodeType::array);
  write_text(dir / "zarr.json", R"({"zarr_format": 3, "node_type": "group",
      "consolidated_metadata": {"kind": "remote"}})");
  EXPECT_EQ(kind_of([&] { Group::open(dir.path()); }), ErrorKind::unsupported);
  write_text(dir / "zarr.json", R"({"zarr_format": 3, "node_type": "group", "consolidated_metadata": null})");
  EXPECT_FALSE(Group::open(dir.path()).consolidated());
}

TEST(Group, RefusesKeysThatLeaveTheGroup) {
  TempDir dir;
  write_text(dir / ".zgroup", R"({"zarr_format": 2})");
  Group group = Group::open(dir.path());
  EXPECT_EQ(kind_of([&] { group.open_array("../x"); }), ErrorKind::invalid_argument);
  EXPECT_EQ(kind_of([&] { group.open_group("/etc"); }), ErrorKind::invalid_argument);
  EXPECT_EQ(kind_of([&] { group.array_metadata("a/../../b"); }), ErrorKind::invalid_argument);
  EXPECT_EQ(kind_of([&] { group.node_type(""); }), ErrorKind::invalid_argument);
}

TEST(Group, OpeningAnArrayOrNothingAsAGroup) {
  TempDir dir;
  write_text(dir / "v2/.zarray", v2_array(2));
  write_text(dir / "v3/zarr.json", v3_array(2));
  std::filesystem::create_directories(dir / "empty");
  EXPECT_EQ(kind_of([&] { Group::open(dir / "v2"); }), ErrorKind::invalid_argument);
  // invalid_metadata: the CLI tells "a v3 array" from "a v3 group" by this kind.
  EXPECT_EQ(kind_of([&] { Group::open(dir / "v3"); }), ErrorKind::invalid_metadata);
  EXPECT_EQ(kind_of([&] { Group::open(dir / "empty"); }), ErrorKind::invalid_argument);
}

TEST(Multiscale, Ome05InAV3GroupWithConsolidatedLevels) {
  TempDir dir;
  write_text(dir / "zarr.json", fmt::format(R"({{"zarr_format": 3, "node_type": "group", "attributes": {{"ome": {{
      "version": "0.5", "multiscales": [{{"name": "cells",
        "axes": [{{"name": "y", "type": "space", "unit": "micrometer"}}, {{"name": "x", "type": "space"}}],
        "datasets": [
          {{"path": "s0", "coordinateTransformations": [{{"type": "scale", "scale": [0.5, 0.5]}}]}},
          {{"path": "s1", "coordinateTransformations": [{{"type": "scale", "scale": [1, 1]}},
                                                       {{"type": "translation", "translation": [0.25, 0.25]}}]}}]}}]}}}},
      "consolidated_metadata": {{"kind": "inline", "must_understand": false, "metadata": {{"s0": {0}, "s1": {1}}}}}}})",
                                            v3_array(8), v3_array(4)));
  Multiscale image = Multiscale::open(dir.path());
  EXPECT_EQ(image.version(), "0.5");
  EXPECT_EQ(image.name(), "cells");
  ASSERT_EQ(image.axes().size(), 2u);
  EXPECT_EQ(image.axes()[0].unit, "micrometer");
  ASSERT_EQ(image.levels().size(), 2u);
  EXPECT_EQ(image.levels()[1].translation, (std::vector<double>{0.25, 0.25}));
  EXPECT_TRUE(image.group().consolidated());
  EXPECT_EQ(image.level_metadata(1).shape, (std::vector<std::uint64_t>{4, 4}));  // no s1 folder exists
  EXPECT_EQ(image.level_path(0), dir.path() / "s0");
  EXPECT_EQ(kind_of([&] { image.level_metadata(2); }), ErrorKind::invalid_argument);
}

TEST(Multiscale, APlainGroupIsNotAnImage) {
  TempDir dir;
  write_text(dir / ".zgroup", R"({"zarr_format": 2})");
  // invalid_metadata: `zarrdirect info` shows a plain group on this kind.
  EXPECT_EQ(kind_of([&] { Multiscale::open(dir.path()); }), ErrorKind::invalid_metadata);
  write_text(dir / ".zattrs", R"({"multiscales": [{"version": 4, "datasets": [{"path": "../up"}]}]})");
  EXPECT_EQ(kind_of([&] { Multiscale::open(dir.path()); }), ErrorKind::invalid_argument);
}

TEST(Multiscale, ConformancePyramidUsesItsConsolidatedMetadata) {
  auto path = test::conformance_dir() / "zarr-python-2/zp2_ome_pyramid/group";
  ASSERT_TRUE(std::filesystem::exists(path)) << "conformance corpus not found at " << path;
  Multiscale image = Multiscale::open(path);
  EXPECT_TRUE(image.group().consolidated());
  EXPECT_EQ(image.version(), "0.4");
  ASSERT_EQ(image.levels().size(), 3u);
  for (std::size_t level = 0; level < 3; ++level)
    EXPECT_EQ(image.level_metadata(level).shape, image.open_level(level).metadata().shape);
  EXPECT_EQ(image.level_metadata(2).shape, (std::vector<std::uint64_t>{2, 8, 16, 12}));
}

}  // namespace
}  // namespace zarrdirect
