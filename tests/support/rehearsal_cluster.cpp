#include "rehearsal_cluster.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace strata::testing {
namespace {

namespace fs = std::filesystem;

const char kBridgeNamespaceSuffix[] = "-sw";

// Runs a shell command; returns its exit status and, through `output`, what it printed.
int shell(const std::string& command, std::string* output = nullptr) {
  std::string text;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe)) text += buffer;
  int status = pclose(pipe);
  if (output) *output = text;
  return status;
}

void mustRun(const std::string& command) {
  std::string output;
  if (shell(command, &output) != 0) {
    throw std::runtime_error("rehearsal cluster: '" + command + "' failed: " + output);
  }
}

std::string uniquePrefix() {
  static std::atomic<int> clusters{0};
  return "strata" + std::to_string(getpid()) + "c" + std::to_string(clusters++);
}

}  // namespace

std::string RehearsalCluster::unavailableReason() {
  if (geteuid() != 0) return "needs root (network namespaces, veth pairs, tc)";
  if (shell("command -v ip && command -v tc") != 0) return "needs iproute2 (ip, tc)";
  std::string probe = uniquePrefix() + "-probe", output;
  if (shell("ip netns add " + probe, &output) != 0)
    return "cannot create network namespaces here: " + output;
  shell("ip netns del " + probe);
  return "";
}

RehearsalCluster::RehearsalCluster(RehearsalOptions options)
    : options_(options), prefix_(uniquePrefix()) {
  try {
    std::string bridgeNs = prefix_ + kBridgeNamespaceSuffix;
    mustRun("ip netns add " + bridgeNs);
    made_.push_back(bridgeNs);
    mustRun("ip -n " + bridgeNs + " link add br0 type bridge");
    mustRun("ip -n " + bridgeNs + " link set br0 up");
    for (int i = 0; i < options_.nodes; ++i) {
      std::string ns = nodeNamespace(i), port = "p" + std::to_string(i);
      fs::create_directories("/etc/netns/" + ns);
      mustRun("ip netns add " + ns);
      made_.push_back(ns);
      mustRun("ip link add eth0 netns " + ns + " type veth peer name " + port + " netns " +
              bridgeNs);
      mustRun("ip -n " + bridgeNs + " link set " + port + " master br0 up");
      mustRun("ip -n " + ns + " addr add " + address(i) + "/24 dev eth0");
      mustRun("ip -n " + ns + " link set eth0 up");
      mustRun("ip -n " + ns + " link set lo up");
      if (options_.linkGbitPerSecond > 0) {
        shape(ns, "eth0");
        shape(bridgeNs, port);
      }
    }
    writeHosts(options_.namesResolve);
  } catch (...) {
    removeAll();
    throw;
  }
}

RehearsalCluster::~RehearsalCluster() { removeAll(); }

void RehearsalCluster::removeAll() {
  for (const std::string& ns : made_) {
    shell("ip netns del " + ns);
    std::error_code ignored;
    fs::remove_all("/etc/netns/" + ns, ignored);
  }
  made_.clear();
}

std::vector<std::string> RehearsalCluster::commandPrefix(int node) const {
  if (!inContainers()) return {"ip", "netns", "exec", nodeNamespace(node)};
  std::vector<std::string> prefix = {"podman",
                                     "run",
                                     "--rm",
                                     "--name",
                                     nodeNamespace(node),
                                     "--network",
                                     "ns:/run/netns/" + nodeNamespace(node),
                                     "--hostname",
                                     hostName(node),
                                     "--shm-size",
                                     "1g"};
  for (int i = 0; i < options_.nodes; ++i) {
    prefix.insert(prefix.end(), {"--add-host", hostName(i) + ":" + address(i)});
  }
  for (const std::string& path : options_.sharedPaths) {
    prefix.insert(prefix.end(), {"-v", path + ":" + path});
  }
  prefix.push_back(options_.image);
  return prefix;
}

std::string RehearsalCluster::binary(const std::string& buildPath) const {
  return inContainers() ? fs::path(buildPath).filename().string() : buildPath;
}

void RehearsalCluster::killNode(int node) const {
  if (inContainers()) shell("podman kill --signal KILL " + nodeNamespace(node));
}

RehearsalImage::RehearsalImage(const std::string& sourceDir, const std::string& buildDir,
                               const std::vector<std::string>& binaries) {
  if (geteuid() != 0) {
    whyNot_ = "needs root: podman runs the rehearsal image rootful";
    return;
  }
  if (shell("command -v podman && command -v runc") != 0) {
    whyNot_ = "needs podman and runc (scripts/setup.sh installs them)";
    return;
  }
  setenv("CONTAINERS_CONF", (sourceDir + "/deploy/podman.conf").c_str(), 0);
  std::string image = "localhost/" + uniquePrefix() + "-rehearsal:latest";
  std::string command = sourceDir + "/deploy/rehearsal-image.sh " + buildDir + " " + image;
  for (const std::string& binary : binaries) command += " " + binary;
  std::string output;
  if (shell(command, &output) != 0) {
    whyNot_ = "deploy/rehearsal-image.sh failed: " + output;
    return;
  }
  name_ = image;
}

RehearsalImage::~RehearsalImage() {
  if (!name_.empty()) shell("podman rmi -f " + name_);
}

std::string RehearsalCluster::address(int node) const {
  return "10.77.0." + std::to_string(node + 1);
}

std::string RehearsalCluster::hostName(int node) { return "node" + std::to_string(node); }

void RehearsalCluster::publishNames() { writeHosts(true); }

void RehearsalCluster::setLinkUp(int node, bool up) {
  mustRun("ip -n " + nodeNamespace(node) + " link set eth0 " + (up ? "up" : "down"));
}

std::string RehearsalCluster::nodeNamespace(int node) const {
  return prefix_ + "-n" + std::to_string(node);
}

// Rewritten in place: `ip netns exec` bind-mounts the file, so a process
// already running sees the new names on its next lookup.
void RehearsalCluster::writeHosts(bool withNodes) const {
  std::ostringstream hosts;
  hosts << "127.0.0.1 localhost\n";
  for (int i = 0; withNodes && i < options_.nodes; ++i)
    hosts << address(i) << " " << hostName(i) << "\n";
  for (int i = 0; i < options_.nodes; ++i) {
    std::ofstream file("/etc/netns/" + nodeNamespace(i) + "/hosts", std::ios::trunc);
    file << hosts.str();
    if (!file)
      throw std::runtime_error("rehearsal cluster: cannot write the hosts file of node " +
                               std::to_string(i));
  }
}

// A token bucket at the link rate. The bucket holds a few milliseconds of
// traffic, as a switch port's buffer would.
void RehearsalCluster::shape(const std::string& ns, const std::string& device) const {
  std::ostringstream rate;
  rate << static_cast<long long>(options_.linkGbitPerSecond * 1e9) << "bit";
  mustRun("ip netns exec " + ns + " tc qdisc add dev " + device + " root tbf rate " + rate.str() +
          " burst 512kb latency 50ms");
}

}  // namespace strata::testing
