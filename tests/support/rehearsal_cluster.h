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
// Needs root and iproute2; unavailableReason() says why not. The constructor
// throws std::runtime_error naming the command that failed; the destructor
// removes everything it made.
#pragma once

#include <string>
#include <vector>

namespace strata::testing {

struct RehearsalOptions {
  int nodes = 2;
  double linkGbitPerSecond = 0;  // 0: unshaped
  bool namesResolve = true;      // false: node names appear only on publishNames()
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
  // `ip netns exec <namespace>`: prefix a command with it to run it on node i.
  std::vector<std::string> commandPrefix(int node) const;
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
