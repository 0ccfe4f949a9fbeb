#include "strata/plan/cluster.h"

#include <gtest/gtest.h>

#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

std::string clusterErrorOf(const std::string& text) {
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
      "name = \"measured\"\n"
      "\n"
      "peak_fp32_tflops = 0.05\n"
      "matmul_efficiency = 0.8\n"
      "intra_node_gbytes_per_s = 3.5\n"
      "intra_node_latency_us = 40\n"
      "preset = 'cpu-local'  # the base, wherever it is written\n",
      "c.toml");
  EXPECT_EQ(c.name, "measured");
  EXPECT_DOUBLE_EQ(c.peakFlops(Dtype::Fp32), 0.05e12);
  EXPECT_DOUBLE_EQ(c.achievedFlops(Dtype::Fp32), 0.04e12);
  EXPECT_DOUBLE_EQ(c.intraNode.bandwidth, 3.5e9);
  EXPECT_DOUBLE_EQ(c.intraNode.latency, 40e-6);
  EXPECT_EQ(c.devicesPerNode, 2);  // kept from the preset
  Cluster a100 = parseClusterText("preset = \"dgx-a100-80gb-ib200\"\nnodes = 3\n", "a.toml");
  EXPECT_EQ(a100.name, clusterPreset("dgx-a100-80gb-ib200").name);
  EXPECT_EQ(a100.nodes, 3);
  EXPECT_EQ(parseClusterText("nodes = 3\n", "plain.toml").name, "plain.toml");
  Cluster noisy = parseClusterText("compute_spread = 0.05\ncompute_jitter_ms = 2\n", "n.toml");
  EXPECT_DOUBLE_EQ(noisy.device.noise.spread, 0.05);
  EXPECT_DOUBLE_EQ(noisy.device.noise.jitter, 2e-3);
  EXPECT_EQ(parseClusterText("compute_spread = 0\n", "z.toml").device.noise.spread, 0);
}

// How often devices fail and what recovering costs: the H100 preset's from
// Llama 3's run, named; a file's own figures, named as the file's.
TEST(Cluster, ReliabilityFromAPresetOrAFile) {
  const Reliability& h100 = clusterPreset("dgx-h100-80gb").reliability;
  EXPECT_NEAR(h100.failuresPerDeviceHour * 16384 * 54 * 24, 419, 1e-9);
  EXPECT_NE(h100.failureSource.find("Llama 3"), std::string::npos);
  EXPECT_NE(clusterPreset("p4d.24xlarge").reliability.failureSource.find("assumed"),
            std::string::npos);
  EXPECT_EQ(clusterPreset("cpu-local").reliability.failuresPerDeviceHour, 0);
  Cluster c = parseClusterText(
      "preset = \"dgx-h100-80gb\"\nfailures_per_device_hour = 1e-4\n"
      "storage_gbytes_per_s_per_node = 4\nrestart_s = 120\ndetection_s = 10\nrejoin_s = 20\n",
      "r.toml");
  EXPECT_DOUBLE_EQ(c.reliability.failuresPerDeviceHour, 1e-4);
  EXPECT_EQ(c.reliability.failureSource, "the cluster file");
  EXPECT_DOUBLE_EQ(c.reliability.storageBytesPerNode, 4e9);
  EXPECT_DOUBLE_EQ(c.reliability.restartSeconds, 120);
  EXPECT_DOUBLE_EQ(c.reliability.detectionSeconds, 10);
  EXPECT_DOUBLE_EQ(c.reliability.rejoinSeconds, 20);
  EXPECT_EQ(parseClusterText("failures_per_device_hour = 0\n", "z.toml")
                .reliability.failuresPerDeviceHour,
            0);
  try {
    parseClusterText("restart_s = -5\n", "bad.toml");
    ADD_FAILURE() << "accepted";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("restart_s"), std::string::npos) << e.what();
  }
}

TEST(Cluster, FileGivesLargeMessageRatesAndPointToPointPaths) {
  Cluster c = parseClusterText(
      "intra_node_large_message_mib = 8\n"
      "intra_node_large_message_gbytes_per_s = 1.5\n"
      "intra_node_p2p_gbytes_per_s = 6\n"
      "intra_node_p2p_latency_us = 12\n"
      "intra_node_p2p_large_message_mib = 16\n"
      "intra_node_p2p_large_message_gbytes_per_s = 3\n"
      "inter_node_p2p_gbytes_per_s = 0.1\n"
      "inter_node_p2p_latency_us = 0\n",
      "c.toml");
  EXPECT_DOUBLE_EQ(c.intraNode.largeMessageBytes, 8 * 1048576.0);
  EXPECT_DOUBLE_EQ(c.intraNode.largeBandwidth, 1.5e9);
  ASSERT_TRUE(c.intraNodeP2p.has_value());
  EXPECT_DOUBLE_EQ(c.intraNodeP2p->bandwidth, 6e9);
  EXPECT_DOUBLE_EQ(c.intraNodeP2p->latency, 12e-6);
  EXPECT_DOUBLE_EQ(c.intraNodeP2p->largeMessageBytes, 16 * 1048576.0);
  EXPECT_DOUBLE_EQ(c.intraNodeP2p->largeBandwidth, 3e9);
  ASSERT_TRUE(c.interNodeP2p.has_value());
  EXPECT_DOUBLE_EQ(c.interNodeP2p->bandwidth, 0.1e9);
  EXPECT_EQ(c.interNode.largeMessageBytes, 0);  // one rate unless the file says otherwise
  Cluster plain = parseClusterText("nodes = 2\n", "p.toml");
  EXPECT_FALSE(plain.intraNodeP2p.has_value());
  EXPECT_FALSE(plain.interNodeP2p.has_value());
}

// deploy/rehearsal-cluster.toml: 2 nodes of 2 CPU workers, shared memory
// inside a node, a link shaped to 1 Gbit/s between them (0.96 measured).
TEST(Cluster, TheRehearsalFileDescribesTwoNodesOfTwoWorkers) {
  Cluster c = loadClusterFile(STRATA_SOURCE_DIR "/deploy/rehearsal-cluster.toml");
  EXPECT_EQ(c.name, "rehearsal-cpu-node");
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.devicesPerNode, 2);
  EXPECT_DOUBLE_EQ(c.peakFlops(Dtype::Fp32), 0.179e12);
  EXPECT_DOUBLE_EQ(c.interNode.bandwidth * 8, 0.96e9);  // bits per second
  EXPECT_DOUBLE_EQ(c.interNode.latency, 1150e-6);
  EXPECT_GT(c.intraNode.bandwidth, 10 * c.interNode.bandwidth);
}

TEST(Cluster, FileErrorsNameLineAndKey) {
  EXPECT_EQ(clusterErrorOf("nodes = 2\nbandwidth = 3\n").substr(0, 33),
            "c.txt:2: unknown key 'bandwidth';");
  EXPECT_EQ(clusterErrorOf("nodes = \"two\"\n"),
            "c.txt:1: nodes expects a positive number, got string \"two\"");
  EXPECT_EQ(clusterErrorOf("nodes = 1.5\n"),
            "c.txt:1: nodes expects a whole number, got float 1.5");
  EXPECT_EQ(clusterErrorOf("memory_gib = -1\n"),
            "c.txt:1: memory_gib expects a positive number, got integer -1");
  EXPECT_EQ(clusterErrorOf("memory_gib = inf\n"),
            "c.txt:1: memory_gib expects a positive number, got float inf");
  EXPECT_EQ(clusterErrorOf("intra_node_latency_us = nan\n"),
            "c.txt:1: intra_node_latency_us expects a non-negative number, got float nan");
  EXPECT_EQ(clusterErrorOf("compute_spread = -0.1\n"),
            "c.txt:1: compute_spread expects a non-negative number, got float -0.1");
  EXPECT_NE(clusterErrorOf("matmul_efficiency = 1.5\n").find("(0, 1], got float 1.5"),
            std::string::npos);
  EXPECT_EQ(clusterErrorOf("device = 4\n"), "c.txt:1: device expects a string, got integer 4");
  EXPECT_EQ(clusterErrorOf("[link]\nbandwidth = 3\n").substr(0, 38),
            "c.txt:2: unknown key 'link.bandwidth';");
  EXPECT_NE(clusterErrorOf("\npreset = \"dgx-z\"\n").find("c.txt:2: "), std::string::npos);
  EXPECT_NE(clusterErrorOf("preset = \"dgx-z\"\n").find("known presets: "), std::string::npos);
  EXPECT_THROW(loadClusterFile("/nonexistent/cluster.toml"), PlanError);
  // Keys that mean nothing alone name the key they need.
  EXPECT_EQ(clusterErrorOf("nodes = 2\nintra_node_large_message_mib = 8\n"),
            "c.txt:2: intra_node_large_message_mib needs intra_node_large_message_gbytes_per_s "
            "as well");
  EXPECT_EQ(clusterErrorOf("inter_node_large_message_gbytes_per_s = 1\n"),
            "c.txt:1: inter_node_large_message_gbytes_per_s needs inter_node_large_message_mib "
            "as well");
  EXPECT_EQ(clusterErrorOf("intra_node_p2p_latency_us = 5\n"),
            "c.txt:1: intra_node_p2p_latency_us needs intra_node_p2p_gbytes_per_s as well");
  EXPECT_EQ(clusterErrorOf("inter_node_p2p_gbytes_per_s = 5\n"),
            "c.txt:1: inter_node_p2p_gbytes_per_s needs inter_node_p2p_latency_us as well");
  EXPECT_EQ(clusterErrorOf("intra_node_p2p_large_message_mib = 0\n"),
            "c.txt:1: intra_node_p2p_large_message_mib expects a positive number, got integer 0");
}

// The old `key = value` form without quotes is a TOML syntax error, reported
// with its line and column.
TEST(Cluster, SyntaxErrorsNameLineAndColumn) {
  std::string error = clusterErrorOf("nodes = 2\nname = measured\n");
  EXPECT_EQ(error.substr(0, 11), "c.txt:2:8: ") << error;
  EXPECT_EQ(clusterErrorOf("just words\n").substr(0, 9), "c.txt:1:6");
}

}  // namespace
}  // namespace strata::plan
