#include "local_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "strata/error.h"

namespace strata {

std::string localAddressToward(const std::string& masterAddr) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(masterAddr.c_str(), "9", &hints, &found); rc != 0) {
    throw ConfigError("MASTER_ADDR '" + masterAddr + "' does not resolve: " + gai_strerror(rc));
  }
  std::string address = "127.0.0.1";
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t length = sizeof(local);
    char text[INET_ADDRSTRLEN] = {0};
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0 &&
        inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text))) {
      address = text;
    }
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(found);
  return address;
}

}  // namespace strata
