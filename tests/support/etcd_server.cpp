#include "etcd_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <utility>

namespace strata::testing {
namespace {

// etcd starts in about a second; a loaded 2-core machine may take several.
constexpr std::chrono::seconds kStartLimit{30};

std::string url(const std::string& host, int port) {
  return "http://" + host + ":" + std::to_string(port);
}

bool acceptsOnLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

// Forks and runs argv with stdout and stderr into `output` (created or
// truncated); the child's pid.
pid_t spawnInto(std::vector<std::string> argv, const std::string& output) {
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// Connects from inside the place (bash's /dev/tcp behind the prefix).
bool acceptsThrough(const std::vector<std::string>& prefix, const std::string& host, int port) {
  std::vector<std::string> argv = prefix;
  argv.insert(
      argv.end(),
      {"bash", "-c", "exec 3<>/dev/tcp/" + host + "/" + std::to_string(port) + " 2>/dev/null"});
  pid_t pid = spawnInto(argv, "/dev/null");
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

bool EtcdServer::accepts() const {
  if (place_.commandPrefix.empty()) return acceptsOnLoopback(client_.number());
  return acceptsThrough(place_.commandPrefix, place_.host, client_.number());
}

EtcdServer::EtcdServer(EtcdPlace place) : place_(std::move(place)) {
  char folder[] = "/tmp/strata-etcd-XXXXXX";
  if (!mkdtemp(folder)) throw std::runtime_error("cannot make a folder for etcd");
  dataDir_ = folder;
  std::string peer = url(place_.host, peer_.number());
  std::string client = url(place_.host, client_.number());
  std::vector<std::string> argv = place_.commandPrefix;
  argv.insert(argv.end(),
              {"etcd", "--name", "test", "--data-dir", dataDir_, "--listen-client-urls", client,
               "--advertise-client-urls", client, "--listen-peer-urls", peer,
               "--initial-advertise-peer-urls", peer, "--initial-cluster", "test=" + peer});
  std::string log = dataDir_ + "/etcd.log";
  pid_ = spawnInto(argv, log);
  auto deadline = std::chrono::steady_clock::now() + kStartLimit;
  while (!accepts()) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error(
          "etcd did not start (is etcd-server installed? make test installs it); its log: " + log);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop();
      throw std::runtime_error("etcd did not answer within 30 s; its log: " + log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

EtcdServer::~EtcdServer() {
  stop();
  std::error_code ignored;
  std::filesystem::remove_all(dataDir_, ignored);
}

void EtcdServer::stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string EtcdServer::endpoint() const {
  return place_.host + ":" + std::to_string(client_.number());
}

}  // namespace strata::testing
