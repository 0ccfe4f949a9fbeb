#include "strata/runtime/rendezvous.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <torch/torch.h>
#include <unistd.h>

#include <mutex>
#include <thread>

#include "multiprocess.h"
#include "strata/error.h"
#include "strata/runtime/world.h"
#include "strata/util/log.h"

namespace strata {
namespace {

using testing::RankContext;

testing::MultiProcessOptions withTokens(std::string rank0, std::string rank1) {
  testing::MultiProcessOptions options;
  options.commTimeoutSeconds = 3;
  options.rankEnv = [=](int rank) {
    return std::map<std::string, std::string>{{"STRATA_JOB_TOKEN", rank == 0 ? rank0 : rank1}};
  };
  return options;
}

TEST(Rendezvous, MatchingTokensJoin) {
  testing::runInProcesses(
      2,
      [](const RankContext&) {
        auto world = World::init();
        torch::Tensor t = torch::ones({1});
        world->comm().allReduce(t);
        EXPECT_EQ(t.item<float>(), 2.0f);
      },
      withTokens("s3cret", "s3cret"));
}

void expectRefused(const RankContext& ctx, const char* why) {
  if (ctx.rank == 0) {
    // The job never gets its second member: it must fail at its timeout.
    EXPECT_THROW(World::init(), TimeoutError);
    return;
  }
  try {
    World::init();
    ADD_FAILURE() << "a process with the wrong token joined";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(Rendezvous, WrongTokenIsRefused) {
  testing::runInProcesses(
      2, [](const RankContext& ctx) { expectRefused(ctx, "does not match the job's"); },
      withTokens("s3cret", "guess"));
}

TEST(Rendezvous, MissingTokenIsRefused) {
  testing::runInProcesses(
      2, [](const RankContext& ctx) { expectRefused(ctx, "this process has none"); },
      withTokens("s3cret", ""));
}

TEST(Rendezvous, WrongTokenCannotSeeTheJobsKeys) {
  testing::ReservedPort reserved;
  int port = reserved.number();
  auto server = serveStore("127.0.0.1", port, "right", std::chrono::seconds(5));
  ProcessEnv right;
  right.worldSize = 2;
  right.rank = 1;
  right.masterPort = port;
  right.storeHostedByLauncher = true;
  right.jobToken = "right";
  auto store = rendezvous(right, Timeouts::fromSeconds(5));
  store->set("peer-address", std::vector<uint8_t>{1, 2, 3});
  EXPECT_FALSE(server->check({"peer-address"}));  // stored under the token's hidden prefix
  ProcessEnv wrong = right;
  wrong.jobToken = "wrong";
  EXPECT_THROW(rendezvous(wrong, Timeouts::fromSeconds(5)), ConfigError);
}

TEST(Rendezvous, PortInUseIsAClearError) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = 0;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t length = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  ProcessEnv env;
  env.worldSize = 2;
  env.masterPort = ntohs(addr.sin_port);
  try {
    World::init(env, Timeouts::fromSeconds(5));
    ADD_FAILURE() << "served a store on a port that is in use";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("port " + std::to_string(env.masterPort)),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("already in use"), std::string::npos) << e.what();
  }
  close(fd);
}

TEST(Rendezvous, UnreachableStoreTimesOut) {
  ProcessEnv env;
  env.worldSize = 2;
  env.rank = 1;
  testing::ReservedPort nobodyListens;
  env.masterPort = nobodyListens.number();
  EXPECT_THROW(World::init(env, Timeouts::fromSeconds(1)), TimeoutError);
}

// Collects the lines Strata logs while it lives.
class CapturedLog {
 public:
  CapturedLog() {
    previous_ = setLogSink([this](LogLevel, const std::string& line) {
      std::lock_guard<std::mutex> lock(mutex_);
      lines_.push_back(line);
    });
  }
  ~CapturedLog() { setLogSink(previous_); }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
  LogSink previous_;
};

// A pod whose master's DNS name never appears: it says what it waits for
// every few seconds, then fails naming the name.
TEST(Rendezvous, NameThatNeverResolvesIsReportedWhileWaitingThenTimesOut) {
  CapturedLog log;
  try {
    connectStore("strata-master.invalid", 29500, std::chrono::seconds(7));
    ADD_FAILURE() << "connected to a name that cannot resolve";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("'strata-master.invalid' does not resolve"),
              std::string::npos)
        << e.what();
  }
  std::vector<std::string> lines = log.lines();
  ASSERT_FALSE(lines.empty()) << "no progress line while waiting";
  EXPECT_NE(lines.front().find("waiting for the rendezvous store at strata-master.invalid:29500"),
            std::string::npos)
      << lines.front();
}

// Pods start in any order: a worker that comes up before node 0 waits for
// the store to listen instead of failing at once.
TEST(Rendezvous, ClientWaitsForAStoreThatStartsLater) {
  testing::ReservedPort reserved;
  int port = reserved.number();
  c10::intrusive_ptr<c10d::TCPStore> server;
  std::thread lateServer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    server = serveStore("127.0.0.1", port, "t", std::chrono::seconds(30));
  });
  c10::intrusive_ptr<c10d::TCPStore> client;
  EXPECT_NO_THROW(client = connectStore("127.0.0.1", port, std::chrono::seconds(30)));
  lateServer.join();
  ASSERT_TRUE(client);
  EXPECT_NO_THROW(jobScope(client, "t", "attempt-0", std::chrono::seconds(30)));
}

}  // namespace
}  // namespace strata
