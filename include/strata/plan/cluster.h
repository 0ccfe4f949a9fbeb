// The machines a plan runs on: nodes of identical devices joined by two kinds
// of link (inside a node, between nodes).
//
// Bandwidths are bytes per second that ONE device can push in ONE direction
// while every other device of its node does the same; that is the figure a
// ring collective or a point-to-point transfer sees when all groups of a
// parallel dimension communicate at once. clusterPreset() and
// loadClusterFile() throw PlanError for an unknown preset (listing the known
// ones), an unreadable file, a TOML syntax error (file, line and column), an
// unknown key, or a value that is not a positive number (host_memory: not
// true or false), naming the file, line and key.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace strata::plan {

enum class Dtype { Fp32, Bf16 };  // Bf16 also stands for fp16: same peak on these devices

// How the time of the same work varies across devices, which makes every
// collective wait for its slowest member (comm.h's syncWaitSeconds). Over t
// seconds of compute since the last synchronisation, a device's time has the
// standard deviation sqrt((spread t)^2 + jitter^2 t): `spread` for lasting
// differences between devices (clocks, neighbours on shared cores), which grow
// with the work; `jitter` for short independent disturbances (interrupts,
// preemption), which add up like a random walk. Measured by
// bench_planner_calibration.
struct ComputeNoise {
  double spread = 0;  // a fraction of the work's time
  double jitter = 0;  // seconds^(1/2): the deviation of one second of work, in seconds
  double deviationSeconds(double computeSeconds) const;
};

struct DeviceSpec {
  std::string name;
  double peakFp32Flops = 0;     // dense, no sparsity
  double peakBf16Flops = 0;     // dense tensor-core peak, no sparsity
  double memoryBytes = 0;       // usable device memory
  double memoryBandwidth = 0;   // bytes/s, bounds the optimizer step
  double matmulEfficiency = 0;  // achieved / peak for transformer layers
  ComputeNoise noise;           // 0 in the presets, whose machines nobody here measured
  // The device's memory is the host's (a CPU worker): the norm and AdamW
  // run in one pass over host memory, with no temporaries (rank_memory.cpp).
  bool hostMemory = false;
  // SwiGLU's backward runs as one kernel (ops::swiglu's own, on a CPU with
  // AVX-512), holding three [tokens, ffn/t] tensors rather than the six of
  // tensor operations (stage_memory.cpp).
  bool fusedSwigluBackward = false;
};

// A link's rate may fall for large messages: a shared-memory transport's
// copies outgrow the caches. Past `largeMessageBytes` of one message, the
// message's further bytes move at `largeBandwidth`; either at 0 keeps one
// rate for every size.
struct Link {
  double bandwidth = 0;          // bytes/s per device, one direction
  double latency = 0;            // seconds per message (the alpha of alpha-beta)
  double largeMessageBytes = 0;  // where largeBandwidth takes over; 0: never
  double largeBandwidth = 0;     // bytes/s beyond largeMessageBytes
  // The seconds one message of `bytes` takes at these rates, latency aside.
  double transferSeconds(double bytes) const;
};

// How often the devices fail and what recovering costs (failures.h). The
// presets name their sources; what nobody published is an assumption, and
// says so.
struct Reliability {
  double failuresPerDeviceHour = 0;  // unexpected job interruptions per device-hour
  std::string failureSource;
  // Checkpoint writes a node can sustain to shared storage, bytes/s: the
  // save's stall is the node's model state over it.
  double storageBytesPerNode = 0;
  std::string storageSource;
  double restartSeconds = 0;    // a failure to training again from a checkpoint
  double detectionSeconds = 0;  // a failed rank noticed by the others
  double rejoinSeconds = 0;     // a replaced replica training again (in-job recovery)
};

struct Cluster {
  std::string name;
  int nodes = 1;
  int devicesPerNode = 1;
  DeviceSpec device;
  Link intraNode;
  Link interNode;
  // Point-to-point transfers (the pipeline's hand-offs) where they take
  // another path than the collectives, as a transport's own send and
  // receive do; unset, they cross the collectives' link.
  std::optional<Link> intraNodeP2p;
  std::optional<Link> interNodeP2p;
  Reliability reliability;

  int totalDevices() const { return nodes * devicesPerNode; }
  double peakFlops(Dtype dtype) const;
  // FLOP/s a device achieves on transformer layers: peak x efficiency.
  double achievedFlops(Dtype dtype) const;
};

std::vector<std::string> clusterPresetNames();
Cluster clusterPreset(const std::string& name);

// A TOML document of top-level keys (strata/util/toml.h), for example
//   preset = "dgx-a100-80gb-ib200"
//   nodes = 16
// `preset` names the cluster the other keys override, wherever it is written
// (without it, cpu-local). Keys and units:
//   name, preset, device                                   (strings)
//   nodes, devices_per_node                                (whole numbers)
//   peak_fp32_tflops, peak_bf16_tflops, memory_gib, memory_bandwidth_gbytes_per_s,
//   matmul_efficiency (0..1], compute_spread (a fraction, >= 0),
//   compute_jitter_ms (>= 0, the deviation of one second of compute),
//   intra_node_gbytes_per_s, intra_node_latency_us,
//   inter_node_gbytes_per_s, inter_node_latency_us        (numbers, integer or float)
// and, each pair given together or not at all (the error names the missing
// key), the rate of large messages and the point-to-point path:
//   intra_node_large_message_mib, intra_node_large_message_gbytes_per_s,
//   intra_node_p2p_gbytes_per_s, intra_node_p2p_latency_us,
//   intra_node_p2p_large_message_mib, intra_node_p2p_large_message_gbytes_per_s,
// and the same with inter_node_.
Cluster parseClusterText(const std::string& text, const std::string& source);
Cluster loadClusterFile(const std::string& path);

}  // namespace strata::plan
