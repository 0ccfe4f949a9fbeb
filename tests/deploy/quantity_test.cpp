// Kubernetes quantities: read, and multiplied by a pod's workers exactly.
#include "deploy/quantity.h"

#include <gtest/gtest.h>

#include "k8s_test_util.h"

namespace strata::deploy {
namespace {

TEST(Quantity, ReadsDigitsPointAndSuffix) {
  Quantity q = parseQuantity("--memory", "1.25Gi");
  EXPECT_EQ(q.digits, 125);
  EXPECT_EQ(q.fractionDigits, 2);
  EXPECT_EQ(q.suffix, "Gi");
  EXPECT_EQ(parseQuantity("--cpu", "500m").suffix, "m");
  EXPECT_EQ(parseQuantity("--cpu", "2").digits, 2);
}

TEST(Quantity, ScalesExactlyKeepingTheSuffix) {
  EXPECT_EQ(scaledQuantity("--memory", "1.5Gi", 3), "4.5Gi");
  EXPECT_EQ(scaledQuantity("--cpu", "500m", 3), "1500m");
  EXPECT_EQ(scaledQuantity("--cpu", "0.5", 4), "2");
  EXPECT_EQ(scaledQuantity("--cpu", "0.05", 3), "0.15");
  EXPECT_EQ(scaledQuantity("--memory", "8Gi", 1), "8Gi");
}

TEST(Quantity, RefusesWhatIsNotAQuantityNamingTheFlag) {
  for (const char* bad : {"", "Gi", "1.", ".5", "1..5", "-1", "1e3", "8GB", "8 Gi", "0x10"}) {
    expectErrorNaming([&] { parseQuantity("--memory", bad); },
                      {"--memory expects a Kubernetes quantity", "'" + std::string(bad) + "'"});
  }
}

TEST(Quantity, RefusesAProductOutOfRange) {
  expectErrorNaming([] { scaledQuantity("--memory", "999999999999999", 100000); },
                    {"--memory", "out of range"});
}

}  // namespace
}  // namespace strata::deploy
