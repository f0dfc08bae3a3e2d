// `zarrdirect pyramid`: from an array and from a level of an OME-Zarr image, through the built
// executable.
#include <cstring>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/downsample.hpp"
#include "test_support.hpp"
#include "zarrdirect/codec_spec.hpp"
#include "zarrdirect/group.hpp"
#include "zarrdirect/multiscale_write.hpp"

namespace zarrdirect {
namespace {

test::CommandResult cli(const std::string& arguments) {
  return test::run_command(fmt::format("'{}' {} 2>&1", test::cli_path(), arguments));
}

TEST(CliPyramid, WritesLevelsFromAnArrayAndFromAnOmeZarrLevel) {
  test::TempDir dir;
  const std::vector<std::uint64_t> shape = {21, 40, 34};
  std::vector<std::uint16_t> values(21 * 40 * 34);
  std::mt19937 random(4);
  for (auto& v : values) v = static_cast<std::uint16_t>(random());
  ArrayLayout layout;
  layout.shape = shape;
  layout.dtype = DataType{ScalarKind::unsigned_int, 2};
  layout.chunks = {8, 40, 34};
  Array source = Array::create(dir / "src.zarr", make_array_metadata(layout));
  source.write({}, Source{values.data(), {}, Device::cpu, nullptr, {}, {}});

  auto result = cli(fmt::format("pyramid '{}' '{}' --levels 3 --downsample zyx --chunks 8,16,16 --unit micrometer "
                                "--slab-mb 1 --codec zstd:1 -q",
                                (dir / "src.zarr").string(), (dir / "out.zarr").string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("pyramid of 3 levels"), std::string::npos) << result.output;
  auto image = Multiscale::open(dir / "out.zarr");
  ASSERT_EQ(image.levels().size(), 3u);
  EXPECT_EQ(image.version(), "0.4");
  EXPECT_EQ(image.axes()[0].unit, "micrometer");
  EXPECT_EQ(image.levels()[2].scale, (std::vector<double>{4, 4, 4}));
  std::vector<std::uint16_t> expected(10 * 20 * 17);
  downsample_host(values.data(), expected.data(), downsample_geometry(shape, 3), DataType{ScalarKind::unsigned_int, 2},
                  DownsampleMethod::mean, 1);
  auto level1 = image.open_level(1).read();
  ASSERT_EQ(level1.shape(), (std::vector<std::uint64_t>{10, 20, 17}));
  EXPECT_EQ(std::memcmp(level1.data(), expected.data(), level1.nbytes()), 0);

  // From level 1 of that image: its scale and translation carry over, NGFF 0.5 this time.
  result = cli(fmt::format("pyramid '{}' '{}' --multiscale-level 1 --levels 2 --downsample zyx --ngff 0.5 -q",
                           (dir / "out.zarr").string(), (dir / "again.zarr").string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  auto again = Multiscale::open(dir / "again.zarr");
  EXPECT_EQ(again.version(), "0.5");
  EXPECT_EQ(again.levels()[0].scale, image.levels()[1].scale);
  EXPECT_EQ(again.levels()[1].scale, image.levels()[2].scale);
  EXPECT_EQ(again.levels()[1].translation, image.levels()[2].translation);

  // Refusals: an existing destination, a level count the shape cannot take, a bad method.
  result = cli(fmt::format("pyramid '{}' '{}' -q", (dir / "src.zarr").string(), (dir / "out.zarr").string()));
  EXPECT_NE(result.exit_code, 0);
  result = cli(fmt::format("pyramid '{}' '{}' --levels 7 --overwrite -q", (dir / "src.zarr").string(),
                           (dir / "big.zarr").string()));
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("levels"), std::string::npos) << result.output;
  result = cli(fmt::format("pyramid '{}' '{}' --method median", (dir / "src.zarr").string(), (dir / "m.zarr").string()));
  EXPECT_EQ(result.exit_code, 2) << result.output;
}

}  // namespace
}  // namespace zarrdirect
