// Cross-checks against the reference implementation: Debian's python3-numcodecs encodes and
// decodes the same data, zarrdirect must read its output and numcodecs must read zarrdirect's.
// Skipped where /usr/bin/python3 has no numcodecs.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "codec/codec_test_support.hpp"
#include "test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;
namespace fs = std::filesystem;

constexpr const char* kPython = "/usr/bin/python3";

// Phase "make" writes, per case, the input (raw), numcodecs' encoding (enc) and numcodecs'
// decoding of it (dec); phase "check" decodes zarrdirect's encodings (ours) with numcodecs.
constexpr const char* kScript = R"PY(
import json, sys
import numpy as np
import numcodecs
from numcodecs.compat import ensure_bytes

folder, phase = sys.argv[1], sys.argv[2]
cases = json.load(open(f"{folder}/cases.json"))
failures = 0
for i, case in enumerate(cases):
    codec = numcodecs.get_codec(dict(case["config"]))
    dtype = np.dtype(case["dtype"])
    if phase == "make":
        n = int(np.prod(case["shape"]))
        rng = np.random.default_rng(i)
        t = np.linspace(0.0, 1.0, n)
        smooth = 0.5 + 0.4 * np.sin(t * 20.0) + 0.1 * rng.random(n)
        values = (case["low"] + (case["high"] - case["low"]) * smooth).astype(dtype)
        encoded = codec.encode(values.copy())  # some filters round in place
        open(f"{folder}/raw{i}", "wb").write(values.tobytes())
        open(f"{folder}/enc{i}", "wb").write(ensure_bytes(encoded))
        # The decoded memory as is: shuffle hands back bytes, the other filters arrays of dtype.
        open(f"{folder}/dec{i}", "wb").write(ensure_bytes(codec.decode(encoded)))
    elif not case["filter"]:
        ours = open(f"{folder}/ours{i}", "rb").read()
        if ensure_bytes(codec.decode(ours)) != open(f"{folder}/raw{i}", "rb").read():
            print(f"numcodecs decodes zarrdirect's {case['config']} output differently")
            failures += 1
sys.exit(1 if failures else 0)
)PY";

struct CrossCase {
  nlohmann::json config;  // numcodecs get_config(): {"id": ..., ...}
  std::string dtype;      // the array's typestring
  std::vector<std::uint64_t> shape;
  double low, high;       // range of the generated values
  bool filter;
};

std::vector<CrossCase> cross_cases() {
  auto json = [](const char* text) { return nlohmann::json::parse(text); };
  return {
      {json(R"({"id":"zlib","level":1})"), "<i4", {40, 30}, -5000, 5000, false},
      {json(R"({"id":"gzip","level":5})"), "<f8", {17, 19}, -1, 1, false},
      {json(R"({"id":"bz2","level":9})"), "<u2", {1000}, 0, 60000, false},
      {json(R"({"id":"lz4","acceleration":1})"), "<f4", {8, 8, 8}, 0, 1, false},
      {json(R"({"id":"zstd","level":3})"), "<i8", {500}, -1e12, 1e12, false},
      {json(R"({"id":"blosc","cname":"lz4","clevel":5,"shuffle":1,"blocksize":0})"), "<u2", {64, 48}, 0, 4000, false},
      {json(R"({"id":"blosc","cname":"zstd","clevel":3,"shuffle":2,"blocksize":0})"), "<f4", {32, 32}, -3, 3, false},
      {json(R"({"id":"blosc","cname":"blosclz","clevel":9,"shuffle":0,"blocksize":0})"), "|u1", {3000}, 0, 250, false},
      {json(R"({"id":"blosc","cname":"zlib","clevel":1,"shuffle":-1,"blocksize":0})"), "|u1", {3000}, 0, 250, false},
      {json(R"({"id":"blosc","cname":"lz4hc","clevel":5,"shuffle":1,"blocksize":256})"), ">f8", {300}, -9, 9, false},
      {json(R"({"id":"delta","dtype":"<i4","astype":"<i2"})"), "<i4", {40, 30}, -1000, 1000, true},
      {json(R"({"id":"delta","dtype":">i8","astype":">i8"})"), ">i8", {400}, -1e15, 1e15, true},
      {json(R"({"id":"delta","dtype":"<f8","astype":"<f4"})"), "<f8", {400}, -50, 50, true},
      {json(R"({"id":"fixedscaleoffset","offset":1000,"scale":10,"dtype":"<f8","astype":"<u2"})"), "<f8", {20, 20},
       1000, 1500, true},
      {json(R"({"id":"fixedscaleoffset","offset":0,"scale":100,"dtype":"<f4","astype":"<i4"})"), "<f4", {16, 16},
       -40, 40, true},
      {json(R"({"id":"fixedscaleoffset","offset":0.5,"scale":3.25,"dtype":"<f2","astype":"<f2"})"), "<f2", {100},
       -40, 40, true},
      {json(R"({"id":"astype","encode_dtype":"<f4","decode_dtype":"<f8"})"), "<f8", {300}, -1e6, 1e6, true},
      {json(R"({"id":"astype","encode_dtype":"|u1","decode_dtype":"<i4"})"), "<i4", {300}, -1000, 1000, true},
      {json(R"({"id":"quantize","digits":2,"dtype":"<f8","astype":"<f8"})"), "<f8", {300}, -10, 10, true},
      {json(R"({"id":"quantize","digits":1,"dtype":"<f4","astype":"<f2"})"), "<f4", {300}, -10, 10, true},
      {json(R"({"id":"bitround","keepbits":5})"), "<f4", {300}, -1e3, 1e3, true},
      {json(R"({"id":"shuffle","elementsize":4})"), "<f8", {300}, -1, 1, true},
  };
}

std::vector<std::byte> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

void write_file(const fs::path& path, ByteSpan bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// The chain zarrdirect builds for this numcodecs filter or compressor (as the v2 reader does).
nlohmann::json chain_for(const CrossCase& c, const TypestrParts& array_type) {
  nlohmann::json configuration = c.config;
  configuration.erase("id");
  nlohmann::json entry = {{"name", "numcodecs." + c.config["id"].get<std::string>()}, {"configuration", configuration}};
  ByteOrder stored = array_type.order;
  for (const char* key : {"astype", "encode_dtype"})
    if (c.config.contains(key)) stored = parse_numpy_typestr(c.config[key].get<std::string>()).order;
  nlohmann::json bytes = {{"name", "bytes"}, {"configuration", nlohmann::json::object()}};
  if (stored != ByteOrder::not_applicable) bytes["configuration"]["endian"] = stored == ByteOrder::big ? "big" : "little";
  return c.filter ? nlohmann::json{entry, bytes} : nlohmann::json{bytes, entry};
}

std::vector<std::byte> to_native(std::vector<std::byte> bytes, const TypestrParts& type) {
  if (type.order != ByteOrder::not_applicable && type.order != native_byte_order())
    byteswap_in_place(bytes.data(), bytes.size() / type.type.size, type.type);
  return bytes;
}

TEST(NumcodecsCrossCheck, ZarrdirectAndNumcodecsReadEachOthersChunks) {
  if (!fs::exists(kPython) ||
      zarrdirect::test::run_command(fmt::format("{} -c 'import numcodecs'", kPython)).exit_code != 0)
    GTEST_SKIP() << "python3-numcodecs is not installed";
  zarrdirect::test::TempDir dir;
  const auto cases = cross_cases();
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& c : cases)
    listed.push_back({{"config", c.config}, {"dtype", c.dtype}, {"shape", c.shape}, {"low", c.low},
                      {"high", c.high}, {"filter", c.filter}});
  zarrdirect::test::write_text(dir / "cases.json", listed.dump());
  zarrdirect::test::write_text(dir / "crosscheck.py", kScript);
  auto run_phase = [&](const char* phase) {
    return zarrdirect::test::run_command(
        fmt::format("{} '{}' '{}' {}", kPython, (dir / "crosscheck.py").string(), dir.path().string(), phase));
  };
  auto made = run_phase("make");
  ASSERT_EQ(made.exit_code, 0) << made.output;

  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CrossCase& c = cases[i];
    SCOPED_TRACE(fmt::format("{} on {}", c.config.dump(), c.dtype));
    const TypestrParts type = parse_numpy_typestr(c.dtype);
    CodecChain chain = CodecChain::create(chain_for(c, type), make_spec(c.shape, type.type), "crosscheck");
    const auto raw = to_native(read_file(dir / fmt::format("raw{}", i)), type);
    const auto theirs = read_file(dir / fmt::format("enc{}", i));
    EXPECT_EQ(decode_chunk(chain, theirs), to_native(read_file(dir / fmt::format("dec{}", i)), type));
    const ByteBuffer ours = chain.encode(raw);
    // Filters are deterministic: the same stored bytes. Compressors are checked by numcodecs below.
    if (c.filter) {
      EXPECT_EQ(ours, theirs);
    }
    write_file(dir / fmt::format("ours{}", i), ours);
  }
  auto checked = run_phase("check");
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
}

}  // namespace
}  // namespace zarrdirect::codec
