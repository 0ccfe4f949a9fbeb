// Endpoints as flags spell them: HOST:PORT, bracketed IPv6, and etcd's
// comma-separated client lists.
#include "strata/util/endpoint.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

using Endpoint = std::pair<std::string, int64_t>;

TEST(Endpoint, ReadsHostAndPortAndUnbracketsIpv6) {
  EXPECT_EQ(parseEndpoint("node0:29500"), Endpoint("node0", 29500));
  EXPECT_EQ(parseEndpoint("[fd00::1]:80"), Endpoint("fd00::1", 80));
  EXPECT_EQ(parseEndpoint("h:0"), Endpoint("h", 0));
}

TEST(Endpoint, RefusesAMissingHostOrAPortOutOfRange) {
  for (const char* bad : {"node0", ":29500", "node0:", "node0:65536", "node0:-1", "node0:2x"})
    EXPECT_FALSE(parseEndpoint(bad).has_value()) << bad;
}

TEST(Endpoint, SplitsOnCommasDroppingBlanks) {
  EXPECT_EQ(splitEndpoints(" a:1, b:2,,"), (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_TRUE(splitEndpoints(" , ").empty());
}

TEST(Endpoint, EtcdListsTakePlainHttpOnly) {
  EXPECT_EQ(etcdEndpointsIn("a:1,http://b:2"), (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_FALSE(etcdEndpointsIn("https://a:1").has_value());
  EXPECT_FALSE(etcdEndpointsIn("a:1,b").has_value());
  EXPECT_FALSE(etcdEndpointsIn(" , ").has_value());
}

}  // namespace
}  // namespace strata
