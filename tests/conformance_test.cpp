// Every case of the conformance corpus (tests/data/conformance): the whole array, a region and
// the CLI's --output must equal expected.npy. A case refused as unsupported fails unless
// expected_refusals.json lists it (and a listed case that reads fails too).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "conformance_cases.hpp"
#include "test_support.hpp"
#include "util/npy.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect {
namespace {

namespace fs = std::filesystem;

// Element-wise equality where NaN equals NaN (floats and each half of complex numbers).
bool same_values(const std::vector<std::byte>& got, const std::vector<std::byte>& expected, const DataType& type,
                 std::string& first_difference) {
  if (got.size() != expected.size()) {
    first_difference = fmt::format("size {} vs {}", got.size(), expected.size());
    return false;
  }
  const std::size_t unit = type.kind == ScalarKind::complex ? type.size / 2u : type.size;
  const bool floating = type.kind == ScalarKind::floating || type.kind == ScalarKind::complex;
  auto is_nan = [&](const std::byte* p) {
    if (unit == 2) {
      std::uint16_t bits;
      std::memcpy(&bits, p, 2);
      return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0;
    }
    if (unit == 4) {
      float v;
      std::memcpy(&v, p, 4);
      return std::isnan(v);
    }
    double v;
    std::memcpy(&v, p, 8);
    return std::isnan(v);
  };
  for (std::size_t i = 0; i < got.size(); i += unit) {
    if (std::memcmp(got.data() + i, expected.data() + i, unit) == 0) continue;
    if (floating && is_nan(got.data() + i) && is_nan(expected.data() + i)) continue;
    first_difference = fmt::format("first difference at element {}", i / type.size);
    return false;
  }
  return true;
}

// The C-order slice `region` of a C-order array of `shape`.
std::vector<std::byte> slice(const std::vector<std::byte>& data, const std::vector<std::uint64_t>& shape,
                             const Region& region, std::size_t element) {
  std::vector<std::byte> out;
  std::size_t rank = shape.size();
  std::uint64_t count = 1;
  for (const auto& r : region) count *= r.size();
  out.reserve(count * element);
  std::vector<std::uint64_t> index(rank);
  for (std::uint64_t n = 0; n < count; ++n) {
    std::uint64_t rest = n, offset = 0, stride = 1;
    for (std::size_t d = rank; d-- > 0;) {
      index[d] = region[d].start + rest % region[d].size();
      rest /= region[d].size();
    }
    for (std::size_t d = rank; d-- > 0;) {
      offset += index[d] * stride;
      stride *= shape[d];
    }
    out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(offset * element),
               data.begin() + static_cast<std::ptrdiff_t>((offset + 1) * element));
  }
  return out;
}

// A region that cuts through chunk boundaries: the middle half of each dimension.
Region middle_region(const std::vector<std::uint64_t>& shape) {
  Region region;
  for (auto extent : shape) region.push_back({extent / 4, extent - extent / 4});
  return region;
}

TEST(Conformance, EveryCaseReadsBackAsExpected) {
  const auto cases = test::conformance_cases();
  std::size_t passed = 0, refused = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    NpyArray expected_npy = read_npy(c.expected);
    std::vector<std::byte> expected = expected_npy.native_c_order();
    const auto listed_refusal = test::expected_refusal(c.listed_name);
    std::optional<Array> opened;
    try {
      opened = Array::open(c.array);
      (void)opened->read();
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unsupported) throw;
      EXPECT_TRUE(listed_refusal.has_value()) << "refused as unsupported, and not an expected refusal: " << e.what();
      ++refused;
      continue;
    }
    EXPECT_FALSE(listed_refusal.has_value())
        << "listed in expected_refusals.json (" << listed_refusal.value_or("") << ") but reads: take it off the list";
    const Array& array = *opened;
    ASSERT_EQ(array.metadata().shape, expected_npy.shape);
    ASSERT_EQ(array.metadata().dtype, expected_npy.dtype);

    NDArray whole = array.read();
    std::vector<std::byte> got(static_cast<const std::byte*>(whole.data()),
                               static_cast<const std::byte*>(whole.data()) + whole.nbytes());
    std::string why;
    EXPECT_TRUE(same_values(got, expected, expected_npy.dtype, why)) << "whole array: " << why;

    Region region = middle_region(expected_npy.shape);
    NDArray part = array.read(region);
    std::vector<std::byte> got_part(static_cast<const std::byte*>(part.data()),
                                    static_cast<const std::byte*>(part.data()) + part.nbytes());
    EXPECT_TRUE(same_values(got_part, slice(expected, expected_npy.shape, region, expected_npy.dtype.size),
                            expected_npy.dtype, why))
        << "region " << to_string(region) << ": " << why;

    test::TempDir dir;
    auto output = dir / "out.npy";
    auto result = test::run_command(fmt::format("'{}' read -q '{}' --output '{}'", test::cli_path(), c.array.string(),
                                                output.string()));
    ASSERT_EQ(result.exit_code, 0) << result.output;
    NpyArray written = read_npy(output);
    EXPECT_EQ(written.shape, expected_npy.shape);
    EXPECT_TRUE(same_values(written.native_c_order(), expected, expected_npy.dtype, why)) << "CLI --output: " << why;
    ++passed;
  }
  std::printf("conformance (host memory): %zu cases, %zu read back equal, %zu refused as listed in "
              "expected_refusals.json\n",
              cases.size(), passed, refused);
  EXPECT_EQ(passed + refused, cases.size());
}

}  // namespace
}  // namespace zarrdirect
