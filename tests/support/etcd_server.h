// A real etcd server on loopback for one test: its own data folder and two
// reserved ports (clients, peers), ready once it answers a range request;
// stopped (SIGKILL) and its folder removed when the object goes. `make test`
// installs etcd (Debian's etcd-server); without it the constructor throws.
#pragma once

#include <sys/types.h>

#include <string>

#include "multiprocess.h"

namespace strata::testing {

class EtcdServer {
 public:
  EtcdServer();
  ~EtcdServer();
  EtcdServer(const EtcdServer&) = delete;
  EtcdServer& operator=(const EtcdServer&) = delete;

  // "127.0.0.1:PORT": the client endpoint, as --rdzv-endpoint takes it.
  std::string endpoint() const;
  void stop();

 private:
  ReservedPort client_, peer_;
  std::string dataDir_;
  pid_t pid_ = -1;
};

}  // namespace strata::testing
