// OME-Zarr coordinateTransformations: composing a dataset's with the multiscale's, in 0.4 (v2
// .zattrs) and 0.5 (v3 zarr.json attributes.ome) images, and refusing malformed ones by field.
#include "metadata/ome_transforms.hpp"

#include <gtest/gtest.h>

#include <functional>

#include <fmt/format.h>

#include "test_support.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;
using test::TempDir;
using test::write_text;

LevelPlacement placed(const std::vector<json>& lists, std::size_t axes = 0) {
  LevelPlacement placement;
  TransformRank rank{axes, axes > 0};
  for (const auto& list : lists) apply_coordinate_transformations(placement, rank, list, "img/.zattrs", "ct");
  return placement;
}

// The error `body` throws: its kind and message.
std::pair<ErrorKind, std::string> failure(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  ADD_FAILURE() << "no zarrdirect::Error thrown";
  return {ErrorKind::io, ""};
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST(OmeTransforms, ScaleThenTranslationOfOneList) {
  auto p = placed({json::parse(R"([{"type": "scale", "scale": [2, 0.5]}, {"type": "translation", "translation": [1, 3]}])")});
  EXPECT_EQ(p.scale, (std::vector<double>{2, 0.5}));
  EXPECT_EQ(p.translation, (std::vector<double>{1, 3}));
}

TEST(OmeTransforms, MultiscaleListIsAppliedAfterTheDatasets) {
  // dataset: scale s_ds, translation t_ds; multiscale: scale s_ms, translation t_ms.
  // physical = s_ms * (s_ds * i + t_ds) + t_ms  ->  scale s_ds*s_ms, translation t_ds*s_ms + t_ms.
  auto dataset = json::parse(R"([{"type": "scale", "scale": [1, 0.5, 0.25]},
                                 {"type": "translation", "translation": [0, 2, 4]}])");
  auto multiscale = json::parse(R"([{"type": "scale", "scale": [10, 2, 4]},
                                    {"type": "translation", "translation": [5, 1, -1]}])");
  auto p = placed({dataset, multiscale}, 3);
  EXPECT_EQ(p.scale, (std::vector<double>{10, 1, 1}));
  EXPECT_EQ(p.translation, (std::vector<double>{5, 5, 15}));
}

TEST(OmeTransforms, MissingPartsAreIdentity) {
  // Only a multiscale scale: the dataset's translation (none) stays none.
  auto p = placed({json::parse(R"([{"type": "scale", "scale": [2, 2]}])"), json::parse(R"([{"type": "scale", "scale": [3, 5]}])")});
  EXPECT_EQ(p.scale, (std::vector<double>{6, 10}));
  EXPECT_TRUE(p.translation.empty());
  // A dataset translation with a multiscale scale is scaled by it.
  p = placed({json::parse(R"([{"type": "translation", "translation": [1, 2]}])"),
              json::parse(R"([{"type": "identity"}, {"type": "scale", "scale": [3, 5]}])")});
  EXPECT_EQ(p.scale, (std::vector<double>{3, 5}));
  EXPECT_EQ(p.translation, (std::vector<double>{3, 10}));
  // Only a multiscale translation.
  p = placed({json::parse("[]"), json::parse(R"([{"type": "translation", "translation": [7, 8]}])")});
  EXPECT_TRUE(p.scale.empty());
  EXPECT_EQ(p.translation, (std::vector<double>{7, 8}));
}

TEST(OmeTransforms, MalformedListsNameTheField) {
  struct Case {
    const char* list;
    const char* field;
    const char* why;
  };
  const Case cases[] = {
      {R"({"type": "scale"})", "field \"ct\"", "must be a list of transformations"},
      {R"([3])", "field \"ct[0]\"", "must be an object"},
      {R"([{"scale": [1, 1]}])", "field \"ct[0].type\"", "is missing"},
      {R"([{"type": 5, "scale": [1, 1]}])", "field \"ct[0].type\"", "must be a string"},
      {R"([{"type": "scale"}])", "field \"ct[0].scale\"", "is missing"},
      {R"([{"type": "scale", "scale": 2}])", "field \"ct[0].scale\"", "non-empty list of numbers"},
      {R"([{"type": "scale", "scale": []}])", "field \"ct[0].scale\"", "non-empty list of numbers"},
      {R"([{"type": "scale", "scale": [1, "2"]}])", "field \"ct[0].scale\"", "numbers, has a string"},
      {R"([{"type": "translation", "translation": [1, null]}])", "field \"ct[0].translation\"", "has a null"},
      {R"([{"type": "scale", "scale": [1, 1, 1]}])", "field \"ct[0].scale\"", "has 3 values, the image has 2 axes"},
      {R"([{"type": "identity"}, {"type": "translation", "translation": [1]}])", "field \"ct[1].translation\"",
       "has 1 values, the image has 2 axes"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.list);
    auto [kind, text] = failure([&] { placed({json::parse(c.list)}, 2); });
    EXPECT_EQ(kind, ErrorKind::invalid_metadata);
    EXPECT_TRUE(contains(text, "img/.zattrs: ")) << text;
    EXPECT_TRUE(contains(text, c.field)) << text;
    EXPECT_TRUE(contains(text, c.why)) << text;
  }
  // Without axes the first vector sets the length.
  auto [kind, text] = failure([&] {
    placed({json::parse(R"([{"type": "scale", "scale": [1, 2]}])"),
            json::parse(R"([{"type": "translation", "translation": [1, 2, 3]}])")});
  });
  EXPECT_EQ(kind, ErrorKind::invalid_metadata);
  EXPECT_TRUE(contains(text, "has 3 values, the image's other transformations have 2")) << text;
  // Non-finite values only come from lenient parsing, but must not place anything.
  json nan_list = json::array({{{"type", "scale"}, {"scale", {1.0, std::nan("")}}}});
  EXPECT_TRUE(contains(failure([&] { placed({nan_list}); }).second, "finite numbers"));
}

TEST(OmeTransforms, TypesBeyondScaleAndTranslationAreUnsupported) {
  auto [kind, text] = failure([&] { placed({json::parse(R"([{"type": "affine", "affine": [[1, 0], [0, 1]]}])")}); });
  EXPECT_EQ(kind, ErrorKind::unsupported);
  EXPECT_TRUE(contains(text, "field \"ct[0].type\": transformation \"affine\" is not supported")) << text;
  // A long, hostile type name is shortened and escaped in the message.
  json hostile = json::array({{{"type", std::string(500, 'x') + "\n\x1b[31m"}}});
  text = failure([&] { placed({hostile}); }).second;
  EXPECT_LT(text.size(), 400u);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  std::tie(kind, text) = failure([&] { placed({json::parse(R"([{"type": "scale", "path": "scales/0"}])")}); });
  EXPECT_EQ(kind, ErrorKind::unsupported);
  EXPECT_TRUE(contains(text, "binary data")) << text;
}

// An image whose levels are declared but not written: Multiscale::open reads only the group.
std::string multiscale_json(const std::string& multiscale_transforms) {
  return fmt::format(R"({{"name": "m", "axes": [{{"name": "y", "type": "space"}}, {{"name": "x", "type": "space"}}],
      "datasets": [
        {{"path": "0", "coordinateTransformations": [{{"type": "scale", "scale": [0.5, 0.25]}}]}},
        {{"path": "1", "coordinateTransformations": [{{"type": "scale", "scale": [1, 0.5]}},
                                                    {{"type": "translation", "translation": [0.25, 0.125]}}]}}]
      {}}})",
                     multiscale_transforms);
}

void write_ome04(const std::filesystem::path& dir, const std::string& transforms) {
  write_text(dir / ".zgroup", R"({"zarr_format": 2})");
  write_text(dir / ".zattrs", fmt::format(R"({{"multiscales": [{}]}})", multiscale_json(transforms)));
}

void write_ome05(const std::filesystem::path& dir, const std::string& transforms) {
  write_text(dir / "zarr.json", fmt::format(R"({{"zarr_format": 3, "node_type": "group",
      "attributes": {{"ome": {{"version": "0.5", "multiscales": [{}]}}}}}})",
                                            multiscale_json(transforms)));
}

TEST(OmeTransforms, MultiscaleLevelTransformsInBothVersions) {
  const std::string whole = R"(, "coordinateTransformations": [{"type": "scale", "scale": [2, 4]},
                                                               {"type": "translation", "translation": [10, 20]}])";
  for (auto write : {write_ome04, write_ome05}) {
    TempDir dir;
    write(dir.path(), whole);
    Multiscale image = Multiscale::open(dir.path());
    ASSERT_EQ(image.levels().size(), 2u);
    EXPECT_EQ(image.levels()[0].scale, (std::vector<double>{1, 1}));
    EXPECT_EQ(image.levels()[0].translation, (std::vector<double>{10, 20}));
    EXPECT_EQ(image.levels()[1].scale, (std::vector<double>{2, 2}));
    EXPECT_EQ(image.levels()[1].translation, (std::vector<double>{10.5, 20.5}));
    // Without the multiscale's list a level reports its own transformations.
    write(dir.path(), "");
    Multiscale plain = Multiscale::open(dir.path());
    EXPECT_EQ(plain.levels()[1].scale, (std::vector<double>{1, 0.5}));
    EXPECT_EQ(plain.levels()[1].translation, (std::vector<double>{0.25, 0.125}));
    EXPECT_TRUE(plain.levels()[0].translation.empty());
  }
}

TEST(OmeTransforms, BadMultiscaleLevelTransformsAreRefusedByField) {
  for (auto write : {write_ome04, write_ome05}) {
    TempDir dir;
    write(dir.path(), R"(, "coordinateTransformations": [{"type": "scale", "scale": [2, 4, 8]}])");
    auto [kind, text] = failure([&] { Multiscale::open(dir.path()); });
    EXPECT_EQ(kind, ErrorKind::invalid_metadata);
    EXPECT_TRUE(contains(text, "multiscales[0].coordinateTransformations[0].scale\" has 3 values, the image has 2 axes"))
        << text;
    EXPECT_TRUE(contains(text, (dir / (write == write_ome04 ? ".zattrs" : "zarr.json")).string())) << text;
    write(dir.path(), R"(, "coordinateTransformations": [{"type": "translation", "translation": ["a", 1]}])");
    std::tie(kind, text) = failure([&] { Multiscale::open(dir.path()); });
    EXPECT_EQ(kind, ErrorKind::invalid_metadata);
    EXPECT_TRUE(contains(text, "multiscales[0].coordinateTransformations[0].translation\" must be a list of numbers"))
        << text;
    write(dir.path(), R"(, "coordinateTransformations": {"type": "scale", "scale": [1, 1]})");
    std::tie(kind, text) = failure([&] { Multiscale::open(dir.path()); });
    EXPECT_TRUE(contains(text, "\"multiscales[0].coordinateTransformations\" must be a list")) << text;
  }
  // A dataset's own bad list names the dataset.
  TempDir dir;
  write_text(dir / ".zgroup", R"({"zarr_format": 2})");
  write_text(dir / ".zattrs", R"({"multiscales": [{"axes": ["y", "x"], "datasets": [{"path": "0"},
      {"path": "1", "coordinateTransformations": [{"type": "scale", "scale": [1, true]}]}]}]})");
  auto text = failure([&] { Multiscale::open(dir.path()); }).second;
  EXPECT_TRUE(contains(text, "multiscales[0].datasets[1].coordinateTransformations[0].scale\" must be a list of numbers"))
      << text;
}

}  // namespace
}  // namespace zarrdirect
