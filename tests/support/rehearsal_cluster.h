// A cluster of N nodes rehearsed on one machine, on a real network stack.
//
// Each node is a network namespace with one interface, eth0, joined to the
// others through a bridge in a namespace of its own, so no address or route
// of the machine itself is touched. Node i has address 10.77.0.(i+1) and the
// name `node<i>`, which resolves inside every node's namespace (through
// /etc/netns/<namespace>/hosts, which `ip netns exec` mounts over
// /etc/hosts). The links can be shaped with tc's token bucket to a rate,
// both ways (delay emulation is not available on these machines). Processes
// of one node share memory as on a real host; processes of two nodes talk
// only over the links (Strata treats another network namespace as another
// host).
//
// Each node's commands run either as plain processes in its namespace
// (`ip netns exec`), or, with an image (RehearsalImage), in a container of
// that image put into the node's namespace (`podman run --network ns:...`):
// the node then also has its own /dev/shm, pid namespace and hostname, as a
// pod does. Paths a test shares with its nodes are bind-mounted at the same
// place.
//
// Needs root and iproute2; unavailableReason() says why not. The constructor
// throws std::runtime_error naming the command that failed; the destructor
// removes everything it made.
#pragma once

#include <string>
#include <vector>

namespace strata::testing {

struct RehearsalOptions {
  int nodes = 2;
  double linkGbitPerSecond = 0;          // 0: unshaped
  bool namesResolve = true;              // false: node names appear only on publishNames()
  std::string image;                     // empty: plain processes; else containers of this image
  std::vector<std::string> sharedPaths;  // bind-mounted into containers
};

// A container image of a build tree's binaries (deploy/rehearsal-image.sh),
// removed again by the destructor. name() is empty when podman cannot run
// here; whyNot() then says why.
class RehearsalImage {
 public:
  // `binaries`: absolute paths in the build tree, besides BUILD_DIR/strata.
  RehearsalImage(const std::string& sourceDir, const std::string& buildDir,
                 const std::vector<std::string>& binaries);
  ~RehearsalImage();
  RehearsalImage(const RehearsalImage&) = delete;
  RehearsalImage& operator=(const RehearsalImage&) = delete;

  const std::string& name() const { return name_; }
  const std::string& whyNot() const { return whyNot_; }

 private:
  std::string name_, whyNot_;
};

class RehearsalCluster {
 public:
  // Empty when a rehearsal can run here, else why not.
  static std::string unavailableReason();

  explicit RehearsalCluster(RehearsalOptions options);
  ~RehearsalCluster();
  RehearsalCluster(const RehearsalCluster&) = delete;
  RehearsalCluster& operator=(const RehearsalCluster&) = delete;

  int nodes() const { return options_.nodes; }
  bool inContainers() const { return !options_.image.empty(); }
  // Prefix a command with it to run it on node i: `ip netns exec NS`, or
  // `podman run ... IMAGE`.
  std::vector<std::string> commandPrefix(int node) const;
  // How node i's commands name a binary of the build tree: its path, or in a
  // container its file name (the image has it on the PATH).
  std::string binary(const std::string& buildPath) const;
  // A node dies outright: its container killed (plain processes: nothing
  // here; the caller kills the process it started).
  void killNode(int node) const;
  std::string address(int node) const;
  static std::string hostName(int node);
  // Makes the node names resolve (they always do unless namesResolve was
  // false): DNS names of pods that appear once the pods run.
  void publishNames();
  // Takes node i's link down (or up again): a cable pulled.
  void setLinkUp(int node, bool up);

 private:
  std::string nodeNamespace(int node) const;
  void removeAll();
  void writeHosts(bool withNodes) const;
  void shape(const std::string& ns, const std::string& device) const;

  RehearsalOptions options_;
  std::string prefix_;  // unique to this cluster
  std::vector<std::string> made_;
};

}  // namespace strata::testing
