// The handle pool: a set given back is the next one taken (its connections with it), easy
// handles are kept by their set, and the pool keeps at most kKeptSets sets.
#include "store/http_handle_pool.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace zarrdirect {
namespace {

TEST(HttpHandlePool, ASetGivenBackIsTakenNextWithItsEasyHandles) {
  auto& pool = HttpHandlePool::instance();
  ASSERT_NE(pool.share(), nullptr);
  auto set = pool.take();
  ASSERT_NE(set->multi(), nullptr);
  CURL* easy = set->take_easy();
  ASSERT_NE(easy, nullptr);
  set->give_easy(easy);
  EXPECT_EQ(set->idle(), 1u);
  const CURLM* multi = set->multi();
  pool.give(std::move(set));
  auto again = pool.take();
  EXPECT_EQ(again->multi(), multi);
  EXPECT_EQ(again->take_easy(), easy);  // the same handle, its connection cache with it
  again->give_easy(easy);
  pool.give(std::move(again));
}

TEST(HttpHandlePool, KeepsAtMostItsBoundOfSets) {
  auto& pool = HttpHandlePool::instance();
  std::vector<std::unique_ptr<HttpHandleSet>> sets;
  for (std::size_t i = 0; i < HttpHandlePool::kKeptSets + 3; ++i) sets.push_back(pool.take());
  EXPECT_EQ(pool.kept(), 0u);
  for (auto& set : sets) pool.give(std::move(set));
  EXPECT_EQ(pool.kept(), HttpHandlePool::kKeptSets);
}

}  // namespace
}  // namespace zarrdirect
