#include "strata/plan/cluster.h"

#include <gtest/gtest.h>

#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

std::string errorOf(const std::string& text) {
  try {
    parseClusterText(text, "c.txt");
  } catch (const PlanError& e) {
    return e.what();
  }
  return "";
}

TEST(Cluster, PresetsCarryDatasheetFigures) {
  Cluster a100 = clusterPreset("dgx-a100-80gb-ib200");
  EXPECT_EQ(a100.devicesPerNode, 8);
  EXPECT_DOUBLE_EQ(a100.peakFlops(Dtype::Bf16), 312e12);
  EXPECT_DOUBLE_EQ(a100.intraNode.bandwidth, 300e9);  // 600 GB/s bidirectional
  EXPECT_DOUBLE_EQ(a100.interNode.bandwidth, 25e9);   // 200 Gb/s per GPU
  EXPECT_DOUBLE_EQ(clusterPreset("dgx-a100-80gb-ib400").interNode.bandwidth, 50e9);
  Cluster h100 = clusterPreset("dgx-h100-80gb");
  EXPECT_DOUBLE_EQ(h100.peakFlops(Dtype::Bf16), 989e12);
  EXPECT_DOUBLE_EQ(h100.intraNode.bandwidth, 450e9);
  Cluster p4d = clusterPreset("p4d.24xlarge");
  EXPECT_DOUBLE_EQ(p4d.device.memoryBytes, 40.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(p4d.interNode.bandwidth * 8, 50e9);  // 400 Gb/s per node
  EXPECT_EQ(clusterPreset("cpu-local").devicesPerNode, 2);
}

TEST(Cluster, FileOverridesAPreset) {
  Cluster c = parseClusterText(
      "preset = cpu-local  # start from the placeholder\n"
      "\n"
      "name = measured\n"
      "peak_fp32_tflops = 0.05\n"
      "matmul_efficiency = 0.8\n"
      "intra_node_gbytes_per_s = 3.5\n"
      "intra_node_latency_us = 40\n",
      "c.txt");
  EXPECT_EQ(c.name, "measured");
  EXPECT_DOUBLE_EQ(c.peakFlops(Dtype::Fp32), 0.05e12);
  EXPECT_DOUBLE_EQ(c.achievedFlops(Dtype::Fp32), 0.04e12);
  EXPECT_DOUBLE_EQ(c.intraNode.bandwidth, 3.5e9);
  EXPECT_DOUBLE_EQ(c.intraNode.latency, 40e-6);
  EXPECT_EQ(c.devicesPerNode, 2);  // kept from the preset
}

TEST(Cluster, FileErrorsNameLineAndKey) {
  EXPECT_NE(errorOf("nodes = 2\nbandwidth = 3\n").find("c.txt:2: unknown key 'bandwidth'"),
            std::string::npos);
  EXPECT_NE(errorOf("nodes = two\n").find("c.txt:1: nodes expects a positive number, got 'two'"),
            std::string::npos);
  EXPECT_NE(errorOf("nodes = 1.5\n").find("whole number"), std::string::npos);
  EXPECT_NE(errorOf("memory_gib = -1\n").find("memory_gib"), std::string::npos);
  EXPECT_NE(errorOf("matmul_efficiency = 1.5\n").find("(0, 1]"), std::string::npos);
  EXPECT_NE(errorOf("just words\n").find("expected 'key = value'"), std::string::npos);
  EXPECT_NE(errorOf("nodes = 2\npreset = cpu-local\n").find("before every other key"),
            std::string::npos);
  EXPECT_NE(errorOf("preset = dgx-z\n").find("known presets: "), std::string::npos);
  EXPECT_THROW(loadClusterFile("/nonexistent/cluster.txt"), PlanError);
}

}  // namespace
}  // namespace strata::plan
