#include "zarrdirect/settings.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

// Sets an environment variable for the scope of one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

TEST(Settings, EnvironmentOverridesDefaults) {
  ScopedEnv threads("ZARRDIRECT_THREADS", "3");
  ScopedEnv staging("ZARRDIRECT_STAGING_MB", "64");
  ScopedEnv direct("ZARRDIRECT_O_DIRECT", "1");
  ScopedEnv path("ZARRDIRECT_IO_PATH", "staged");
  ScopedEnv batch("ZARRDIRECT_DEVICE_BATCH", "0");
  EXPECT_TRUE(Settings{}.device_batch);
  Settings settings = Settings::from_environment();
  EXPECT_FALSE(settings.device_batch);
  EXPECT_EQ(settings.threads, 3u);
  EXPECT_EQ(settings.effective_threads(), 3u);
  EXPECT_EQ(settings.staging_bytes, std::size_t{64} << 20);
  EXPECT_TRUE(settings.o_direct);
  EXPECT_EQ(settings.io_path, IoPath::staged);
}

TEST(Settings, PinnedPoolDefaultsToFourGiBWithinAnEighthOfMemory) {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  EXPECT_EQ(Settings::default_pinned_pool_bytes(std::size_t{128} << 30), 4096 * MiB);  // the H200 machine
  EXPECT_EQ(Settings::default_pinned_pool_bytes(std::size_t{16} << 30), 2048 * MiB);
  EXPECT_EQ(Settings::default_pinned_pool_bytes(std::size_t{1} << 30), 256 * MiB);  // the floor
  EXPECT_EQ(Settings::default_pinned_pool_bytes(0), 256 * MiB);                     // unknown memory
  const std::size_t automatic = Settings{}.effective_pinned_pool();
  EXPECT_GE(automatic, 256 * MiB);
  EXPECT_LE(automatic, 4096 * MiB);
  Settings settings;
  settings.pinned_pool_bytes = 100 * MiB;
  EXPECT_EQ(settings.effective_pinned_pool(), 100 * MiB);
  {
    ScopedEnv pool("ZARRDIRECT_PINNED_POOL_MB", "1024");
    EXPECT_EQ(Settings::from_environment().pinned_pool_bytes, 1024 * MiB);
  }
  for (const char* bad : {"lots", "-5", "99999999999999999999"}) {
    ScopedEnv pool("ZARRDIRECT_PINNED_POOL_MB", bad);
    try {
      Settings::from_environment();
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("ZARRDIRECT_PINNED_POOL_MB"), std::string::npos) << e.what();
    }
  }
}

TEST(Settings, BadEnvironmentValuesAreErrors) {
  for (const char* text : {"x", "3x", "-1", "99999999999999999999"}) {
    ScopedEnv threads("ZARRDIRECT_THREADS", text);
    try {
      Settings::from_environment();
      ADD_FAILURE() << text << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("ZARRDIRECT_THREADS"), std::string::npos);
    }
  }
  ScopedEnv path("ZARRDIRECT_IO_PATH", "warp");
  EXPECT_THROW(Settings::from_environment(), Error);
}

TEST(Settings, IoEngineNamesAndEnvironment) {
  EXPECT_EQ(Settings{}.io_engine, IoEngine::automatic);
  for (auto engine : {IoEngine::automatic, IoEngine::uring, IoEngine::threads})
    EXPECT_EQ(parse_io_engine(to_string(engine)), engine);
  EXPECT_EQ(parse_io_engine("io_uring"), IoEngine::uring);
  EXPECT_THROW(parse_io_engine("aio"), Error);
  {
    ScopedEnv engine("ZARRDIRECT_IO", "threads");
    EXPECT_EQ(Settings::from_environment().io_engine, IoEngine::threads);
  }
  {
    ScopedEnv engine("ZARRDIRECT_IO", "uring");
    EXPECT_EQ(Settings::from_environment().io_engine, IoEngine::uring);
  }
  ScopedEnv engine("ZARRDIRECT_IO", "fast");
  EXPECT_THROW(Settings::from_environment(), Error);
}

TEST(Settings, DecodeSideNamesAndEnvironment) {
  EXPECT_EQ(Settings{}.decode, DecodeSide::automatic);
  for (auto side : {DecodeSide::automatic, DecodeSide::gpu, DecodeSide::cpu, DecodeSide::share})
    EXPECT_EQ(parse_decode_side(to_string(side)), side);
  for (const char* bad : {"", "GPU", "nvcomp", "gpu "}) EXPECT_THROW(parse_decode_side(bad), Error) << bad;
  {
    ScopedEnv decode("ZARRDIRECT_DECODE", "cpu");
    EXPECT_EQ(Settings::from_environment().decode, DecodeSide::cpu);
  }
  {
    ScopedEnv decode("ZARRDIRECT_DECODE", "gpu");
    EXPECT_EQ(Settings::from_environment().decode, DecodeSide::gpu);
  }
  ScopedEnv decode("ZARRDIRECT_DECODE", "fpga");
  try {
    Settings::from_environment();
    ADD_FAILURE() << "fpga accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("ZARRDIRECT_DECODE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fpga"), std::string::npos) << e.what();
  }
}

TEST(Settings, IoPathNames) {
  EXPECT_EQ(parse_io_path("auto"), IoPath::automatic);
  EXPECT_EQ(parse_io_path("gds"), IoPath::gds);
  EXPECT_EQ(parse_io_path("posix"), IoPath::staged);
  for (auto path : {IoPath::automatic, IoPath::gds, IoPath::staged}) EXPECT_EQ(parse_io_path(to_string(path)), path);
  EXPECT_THROW(parse_io_path(""), Error);
}

TEST(Settings, ZeroThreadsMeansAtLeastFour) {
  Settings settings;
  settings.threads = 0;
  EXPECT_GE(settings.effective_threads(), 4u);
}

TEST(Settings, ThreadRequestsAboveTheCapAreClamped) {
  Settings settings;
  settings.threads = 100000;
  EXPECT_EQ(settings.effective_threads(), kMaxReaderThreads);
  settings.threads = 0;
  EXPECT_LE(settings.effective_threads(), kMaxReaderThreads);
}

TEST(Settings, MemoryLimitFromTheEnvironmentAndItsDefault) {
  Settings defaults;
  EXPECT_EQ(defaults.memory_limit_bytes, 0u);
  EXPECT_GE(defaults.effective_memory_limit(), std::size_t{256} << 20);
  {
    ScopedEnv limit("ZARRDIRECT_MEMORY_LIMIT_MB", "12");
    Settings settings = Settings::from_environment();
    EXPECT_EQ(settings.memory_limit_bytes, std::size_t{12} << 20);
    EXPECT_EQ(settings.effective_memory_limit(), std::size_t{12} << 20);
  }
  for (const char* text : {"lots", "18446744073709551615"}) {
    ScopedEnv limit("ZARRDIRECT_MEMORY_LIMIT_MB", text);
    try {
      Settings::from_environment();
      ADD_FAILURE() << text << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("ZARRDIRECT_MEMORY_LIMIT_MB"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace zarrdirect
