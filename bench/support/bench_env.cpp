#include "bench_env.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace strata::bench {

std::string sourceDir() { return STRATA_SOURCE_DIR; }

std::string peerPython() {
  const char* python = std::getenv("STRATA_PYTHON");
  return python && *python ? python : STRATA_PEER_PYTHON;
}

int freeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(addr);
  bool ok = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
            getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) == 0;
  if (fd >= 0) close(fd);
  if (!ok) throw std::runtime_error("no free loopback port");
  return ntohs(addr.sin_port);
}

std::shared_ptr<World> singleProcessWorld() {
  ProcessEnv env;
  env.masterAddr = "127.0.0.1";
  env.masterPort = freeLoopbackPort();
  return World::init(env, Timeouts{});
}

}  // namespace strata::bench
