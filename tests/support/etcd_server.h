// A real etcd server for one test: its own data folder and two reserved
// ports (clients, peers), ready once its client port accepts a connection;
// stopped (SIGKILL) and its folder removed when the object goes. `make test`
// installs etcd (Debian's etcd-server); without it the constructor throws.
//
// By default it listens on loopback. EtcdPlace puts it elsewhere: its
// command behind a prefix (a rehearsed node's `ip netns exec NS`) and
// listening on that node's address, its readiness probed through the same
// prefix.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "multiprocess.h"

namespace strata::testing {

struct EtcdPlace {
  std::vector<std::string> commandPrefix;  // empty: this process's own network
  std::string host = "127.0.0.1";          // the address it listens on
};

class EtcdServer {
 public:
  explicit EtcdServer(EtcdPlace place = {});
  ~EtcdServer();
  EtcdServer(const EtcdServer&) = delete;
  EtcdServer& operator=(const EtcdServer&) = delete;

  // "HOST:PORT": the client endpoint, as --rdzv-endpoint takes it.
  std::string endpoint() const;
  void stop();

 private:
  bool accepts() const;

  EtcdPlace place_;
  ReservedPort client_, peer_;
  std::string dataDir_;
  pid_t pid_ = -1;
};

}  // namespace strata::testing
