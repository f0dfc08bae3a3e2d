#include "codec/registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;
using nlohmann::json;

// A configuration each codec accepts for an int32 chunk (the array->array filters need their
// dtype fields; everything else has defaults).
json minimal_configuration(std::string_view name) {
  if (name == "transpose") return {{"order", {1, 0}}};
  if (name == "numcodecs.delta") return {{"dtype", "<i4"}};
  if (name == "numcodecs.fixedscaleoffset") return {{"dtype", "<i4"}, {"scale", 1}, {"offset", 0}};
  if (name == "numcodecs.astype") return {{"encode_dtype", "<i4"}, {"decode_dtype", "<i4"}};
  if (name == "numcodecs.quantize") return {{"dtype", "<f4"}, {"digits", 2}};  // float only
  if (name == "numcodecs.bitround") return {{"keepbits", 10}};                  // float only
  if (name == "sharding_indexed")
    return {{"chunk_shape", {2, 2}}, {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})}};
  if (name == "bytes") return {{"endian", "little"}};
  return json::object();
}

// Float filters are made for a float32 chunk, packbits (booleans) for a bool one, the others for
// int32.
ArraySpec spec_for(std::string_view name) {
  const bool float_only = name == "numcodecs.quantize" || name == "numcodecs.bitround";
  if (name == "numcodecs.packbits") return make_spec({4, 6}, dtype("bool"));
  return make_spec({4, 6}, dtype(float_only ? "float32" : "int32"));
}

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(CodecRegistry, NamesAreSortedUniqueAndCoverV3AndNumcodecsSpellings) {
  const auto names = supported_codec_names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << "a name listed twice";
  // numcodecs.shuffle is registered under two kinds but listed once.
  EXPECT_EQ(std::count(names.begin(), names.end(), "numcodecs.shuffle"), 1);
  for (const char* name : {"bytes", "sharding_indexed", "transpose", "crc32c", "zstd", "gzip", "blosc",
                           "numcodecs.zstd", "numcodecs.gzip", "numcodecs.zlib", "numcodecs.bz2", "numcodecs.lz4",
                           "numcodecs.blosc", "numcodecs.delta", "numcodecs.fixedscaleoffset", "numcodecs.astype",
                           "numcodecs.quantize", "numcodecs.bitround", "numcodecs.shuffle"})
    EXPECT_TRUE(contains(names, name)) << name;
  // Refused codecs are known by name but never listed as supported.
  for (const char* name : {"numcodecs.pickle", "numcodecs.json2", "numcodecs.vlen-utf8", "numcodecs.categorize"})
    EXPECT_FALSE(contains(names, name)) << name;
}

TEST(CodecRegistry, EveryListedNameHasAKindAndItsFactoryMakesACodecOfThatName) {
  for (const auto& name : supported_codec_names()) {
    SCOPED_TRACE(name);
    const json configuration = minimal_configuration(name);
    const ArraySpec spec = spec_for(name);
    switch (codec_kind(name)) {
      case CodecKind::array_to_array: {
        auto codec = make_array_to_array(name, configuration, spec);
        ASSERT_NE(codec, nullptr);
        EXPECT_EQ(codec->name(), name);
        // The other factories do not know an array->array name.
        expect_error(ErrorKind::unsupported, {name}, [&] { make_array_to_bytes(name, configuration, spec); });
        break;
      }
      case CodecKind::array_to_bytes: {
        auto codec = make_array_to_bytes(name, configuration, spec);
        ASSERT_NE(codec, nullptr);
        EXPECT_EQ(codec->name(), name);
        expect_error(ErrorKind::unsupported, {name}, [&] { make_array_to_array(name, configuration, spec); });
        expect_error(ErrorKind::unsupported, {name}, [&] { make_bytes_to_bytes(name, configuration, spec); });
        break;
      }
      case CodecKind::bytes_to_bytes: {
        auto codec = make_bytes_to_bytes(name, configuration, spec);
        ASSERT_NE(codec, nullptr);
        EXPECT_EQ(codec->name(), name);
        expect_error(ErrorKind::unsupported, {name}, [&] { make_array_to_array(name, configuration, spec); });
        expect_error(ErrorKind::unsupported, {name}, [&] { make_array_to_bytes(name, configuration, spec); });
        // Each compressor round trips a chunk under its own name.
        const auto data = sample_data(spec);
        ByteBuffer encoded;
        codec->encode(data, encoded);
        EXPECT_LE(encoded.size(), codec->max_encoded_size(data.size()));
        ByteBuffer decoded;
        codec->decode(encoded, decoded, data.size());
        // zfp is lossy in every mode numcodecs offers: its own tests bound the error.
        if (name == "numcodecs.zfpy") EXPECT_EQ(decoded.size(), data.size());
        else EXPECT_EQ(decoded, data);
        break;
      }
    }
  }
}

TEST(CodecRegistry, ShuffleIsAnArrayFilterBeforeTheBytesCodecAndABytesCodecAfterIt) {
  EXPECT_EQ(codec_kind("numcodecs.shuffle"), CodecKind::array_to_array);
  EXPECT_EQ(codec_kind("numcodecs.shuffle", true), CodecKind::bytes_to_bytes);
  // Names of one kind keep it wherever they stand, so the chain can say they are misplaced.
  EXPECT_EQ(codec_kind("transpose", true), CodecKind::array_to_array);
  EXPECT_EQ(codec_kind("bytes", true), CodecKind::array_to_bytes);
  EXPECT_EQ(codec_kind("zstd", false), CodecKind::bytes_to_bytes);
  EXPECT_EQ(codec_kind("numcodecs.delta", true), CodecKind::array_to_array);

  // Both factories exist and agree on the layout: the array filter's output equals the bytes
  // codec's output for the same native-order bytes.
  const ArraySpec spec = make_spec({3, 5}, dtype("int32"));
  const auto data = sample_data(spec);
  auto filter = make_array_to_array("numcodecs.shuffle", json{{"elementsize", 4}}, spec);
  auto bytes_codec = make_bytes_to_bytes("numcodecs.shuffle", json{{"elementsize", 4}}, spec);
  std::vector<std::byte> filtered(spec.nbytes());
  filter->encode(data, filtered);
  ByteBuffer encoded;
  bytes_codec->encode(data, encoded);
  EXPECT_EQ(encoded, filtered);
  EXPECT_NE(encoded, data);  // it did shuffle
}

TEST(CodecRegistry, UnknownNamesAreUnsupportedAndNamed) {
  const ArraySpec spec = make_spec({4}, dtype("uint8"));
  for (const char* name : {"no-such-codec", "numcodecs.pcodec", "ZSTD", "", "pickle"}) {
    SCOPED_TRACE(name);
    const std::string expected = std::string("unsupported codec ") + name;
    expect_error(ErrorKind::unsupported, {expected}, [&] { codec_kind(name); });
    expect_error(ErrorKind::unsupported, {expected}, [&] { codec_kind(name, true); });
    expect_error(ErrorKind::unsupported, {expected}, [&] { make_array_to_array(name, json::object(), spec); });
    expect_error(ErrorKind::unsupported, {expected}, [&] { make_array_to_bytes(name, json::object(), spec); });
    expect_error(ErrorKind::unsupported, {expected}, [&] { make_bytes_to_bytes(name, json::object(), spec); });
  }
}

TEST(CodecRegistry, CodecsDecodingToPythonObjectsAreRefusedWithTheReason) {
  const ArraySpec spec = make_spec({4}, dtype("uint8"));
  for (const char* name : {"numcodecs.pickle", "numcodecs.json", "numcodecs.json2", "numcodecs.msgpack",
                           "numcodecs.msgpack2", "numcodecs.categorize", "numcodecs.vlen-utf8", "numcodecs.vlen-bytes",
                           "numcodecs.vlen-array"}) {
    SCOPED_TRACE(name);
    expect_error(ErrorKind::unsupported, {name, "refused", "Python objects"}, [&] { codec_kind(name); });
    expect_error(ErrorKind::unsupported, {name, "refused"},
                 [&] { make_array_to_array(name, json::object(), spec); });
    expect_error(ErrorKind::unsupported, {name, "refused"},
                 [&] { make_bytes_to_bytes(name, json::object(), spec); });
  }
  // Only those exact names (and the vlen family): a lookalike is merely unknown.
  try {
    codec_kind("numcodecs.pickle5");
    ADD_FAILURE() << "accepted numcodecs.pickle5";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("refused"), std::string::npos) << e.what();
  }
}

TEST(CodecRegistry, FactoriesPrepareForTheDecodedSpecTheyAreGiven) {
  // transpose computes its encoded shape from the decoded one.
  auto transpose = make_array_to_array("transpose", json{{"order", {1, 0}}}, make_spec({2, 7}, dtype("int16")));
  EXPECT_EQ(transpose->encoded_spec().shape, (std::vector<std::uint64_t>{7, 2}));
  EXPECT_EQ(transpose->encoded_spec().dtype, dtype("int16"));
  // bytes bounds its encoding by the spec's size.
  auto bytes_codec = make_array_to_bytes("bytes", json{{"endian", "big"}}, make_spec({3, 5}, dtype("float64")));
  EXPECT_EQ(bytes_codec->max_encoded_size(), 3u * 5u * 8u);
  // A configuration the codec refuses surfaces as that codec's error, not as "unsupported".
  expect_error(ErrorKind::invalid_metadata, {"transpose", "order"},
               [&] { make_array_to_array("transpose", json::object(), make_spec({2, 2}, dtype("int8"))); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.delta", "dtype"}, [&] {
    make_array_to_array("numcodecs.delta", json{{"dtype", "<i2"}}, make_spec({4}, dtype("int32")));
  });
}

TEST(CodecRegistry, V3AndNumcodecsSpellingsShareOneImplementationWithTheirOwnDialects) {
  const ArraySpec spec = make_spec({64}, dtype("int32"));
  const auto data = sample_data(spec);
  auto round_trip = [&](std::string_view encoder, const json& encoder_config, std::string_view decoder,
                        const json& decoder_config) {
    SCOPED_TRACE(std::string(encoder) + " -> " + std::string(decoder));
    auto a = make_bytes_to_bytes(encoder, encoder_config, spec);
    auto b = make_bytes_to_bytes(decoder, decoder_config, spec);
    ByteBuffer encoded;
    a->encode(data, encoded);
    ByteBuffer decoded;
    b->decode(encoded, decoded, data.size());
    EXPECT_EQ(decoded, data);
  };
  round_trip("zstd", json{{"level", 3}, {"checksum", true}}, "numcodecs.zstd", json::object());
  round_trip("numcodecs.zstd", json::object(), "zstd", json::object());
  round_trip("gzip", json{{"level", 5}}, "numcodecs.gzip", json::object());
  round_trip("blosc", json{{"clevel", 9}, {"shuffle", "bitshuffle"}}, "numcodecs.blosc", json::object());
  round_trip("numcodecs.blosc", json{{"shuffle", 2}}, "blosc", json::object());

  // The blosc dialects differ: v3 names the shuffle, numcodecs numbers it.
  EXPECT_NO_THROW(make_bytes_to_bytes("blosc", json{{"shuffle", "shuffle"}}, spec));
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.blosc", "shuffle"},
               [&] { make_bytes_to_bytes("numcodecs.blosc", json{{"shuffle", "shuffle"}}, spec); });
  expect_error(ErrorKind::invalid_metadata, {"blosc", "shuffle"},
               [&] { make_bytes_to_bytes("blosc", json{{"shuffle", 1}}, spec); });

  // gzip and zlib are both deflate, but each name writes its own wrapper.
  ByteBuffer gzip;
  make_bytes_to_bytes("numcodecs.gzip", json::object(), spec)->encode(data, gzip);
  ASSERT_GE(gzip.size(), 2u);
  EXPECT_EQ(gzip[0], std::byte{0x1f});
  EXPECT_EQ(gzip[1], std::byte{0x8b});
  ByteBuffer zlib;
  make_bytes_to_bytes("numcodecs.zlib", json::object(), spec)->encode(data, zlib);
  ASSERT_GE(zlib.size(), 2u);
  EXPECT_EQ(static_cast<unsigned>(zlib[0]) & 0x0fu, 8u);  // CM = deflate
  EXPECT_EQ(((static_cast<unsigned>(zlib[0]) << 8) | static_cast<unsigned>(zlib[1])) % 31u, 0u);  // FCHECK
}

}  // namespace
}  // namespace zarrdirect::codec
