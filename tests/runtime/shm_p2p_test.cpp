// Sends and receives over the shared-memory transport (shm_p2p.h): the data
// arrives whole whatever the size and the order of receives, messages of one
// tag keep their order, and every failure is named instead of hanging.
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <torch/torch.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <thread>

#include "multiprocess.h"
#include "strata/error.h"
#include "strata/runtime/world.h"

namespace strata {
namespace {

using testing::RankContext;

// Element counts: one value, exactly the 4 KiB staged in a channel entry, one
// past it, and 4 MiB (copied from the sender's memory).
const int64_t kMessageSizes[] = {1, 1024, 1025, 1 << 20};

torch::Tensor message(int64_t numel, int tag) {
  torch::manual_seed(1000 + tag);
  return torch::randn({numel});
}

std::shared_ptr<World> shmWorld() {
  auto world = World::init();
  EXPECT_STREQ(world->comm().backend(), "gloo+shm");
  return world;
}

TEST(SharedMemoryPointToPoint, EverySizeArrivesWholeInAnyReceiveOrder) {
  testing::runInProcesses(2, [](const RankContext& ctx) {
    auto world = shmWorld();
    Communicator& comm = world->comm();
    const int n = std::size(kMessageSizes);
    if (ctx.rank == 0) {
      std::vector<WorkHandle> sends;
      for (int i = 0; i < n; ++i)
        sends.push_back(comm.sendAsync(message(kMessageSizes[i], i), 1, i));
      // A strided view is sent as its contiguous copy.
      torch::Tensor strided = message(2048, 99).view({1024, 2}).select(1, 1);
      sends.push_back(comm.sendAsync(strided, 1, 99));
      for (auto& s : sends) s->wait();
    } else {
      for (int i = n - 1; i >= 0; --i) {  // the reverse of the sending order
        torch::Tensor got = torch::empty({kMessageSizes[i]});
        comm.recv(got, 0, i);
        EXPECT_TRUE(torch::equal(got, message(kMessageSizes[i], i)))
            << "numel " << kMessageSizes[i];
      }
      torch::Tensor got = torch::empty({1024});
      comm.recv(got, 0, 99);
      EXPECT_TRUE(torch::equal(got, message(2048, 99).view({1024, 2}).select(1, 1)));
    }
    comm.barrier();
  });
}

// More messages than a channel has entries, all posted before the first is
// received, and with one tag: they arrive in sending order.
TEST(SharedMemoryPointToPoint, ManyMessagesOfOneTagArriveInOrder) {
  testing::runInProcesses(2, [](const RankContext& ctx) {
    auto world = shmWorld();
    Communicator& comm = world->comm();
    const int count = 80;
    if (ctx.rank == 0) {
      std::vector<torch::Tensor> payloads;
      std::vector<WorkHandle> sends;
      for (int i = 0; i < count; ++i) {
        payloads.push_back(torch::full({i % 2 ? 10 : 5000}, float(i)));
        sends.push_back(comm.sendAsync(payloads.back(), 1, 7));
      }
      for (auto& s : sends) s->wait();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the sender fill up
      for (int i = 0; i < count; ++i) {
        torch::Tensor got = torch::empty({i % 2 ? 10 : 5000});
        comm.recv(got, 0, 7);
        EXPECT_TRUE(torch::equal(got, torch::full_like(got, float(i)))) << "message " << i;
      }
    }
    comm.barrier();
  });
}

TEST(SharedMemoryPointToPoint, TensorsOfUnknownShapeCrossBothWays) {
  testing::runInProcesses(2, [](const RankContext& ctx) {
    auto world = shmWorld();
    Communicator& comm = world->comm();
    int peer = 1 - ctx.rank;
    torch::Tensor mine = torch::arange(3 * 500 * (ctx.rank + 1), torch::kDouble).view({3, -1});
    WorkHandle sent = comm.sendTensorAsync(mine, peer, 5);
    torch::Tensor got = comm.recvTensor(peer, 5);
    sent->wait();
    EXPECT_TRUE(
        torch::equal(got, torch::arange(3 * 500 * (peer + 1), torch::kDouble).view({3, -1})));
  });
}

TEST(SharedMemoryPointToPoint, ReceiveOfTheWrongSizeIsAProtocolError) {
  testing::runInProcesses(2, [](const RankContext& ctx) {
    auto world = shmWorld();
    Communicator& comm = world->comm();
    // A staged message and one read from the sender's memory (withdrawn
    // unreceived when its send is dropped).
    for (int64_t numel : {int64_t{100}, int64_t{100000}}) {
      int tag = numel > 1000 ? 4 : 3;
      if (ctx.rank == 0) {
        WorkHandle sent = comm.sendAsync(torch::ones({numel}), 1, tag);
        comm.barrier();
        sent.reset();
      } else {
        torch::Tensor got = torch::empty({numel + 1});
        try {
          comm.recv(got, 0, tag);
          ADD_FAILURE() << "a receive of the wrong size succeeded";
        } catch (const ProtocolError& e) {
          std::string text = e.what();
          EXPECT_NE(text.find("recv from rank 0 (global 0) of world (tag " + std::to_string(tag)),
                    std::string::npos)
              << text;
          EXPECT_NE(text.find(std::to_string(numel * 4) + " bytes but the receive expects " +
                              std::to_string((numel + 1) * 4)),
                    std::string::npos)
              << text;
        }
        comm.barrier();
      }
    }
  });
}

TEST(SharedMemoryPointToPoint, SenderThatExitsIsNamedWithinASecond) {
  testing::MultiProcessOptions options;
  options.commTimeoutSeconds = 60;
  testing::runInProcesses(
      2,
      [](const RankContext& ctx) {
        auto world = shmWorld();
        world->comm().barrier();
        if (ctx.rank == 0) std::_Exit(0);
        auto start = std::chrono::steady_clock::now();
        torch::Tensor got = torch::empty({10});
        try {
          world->comm().recv(got, 0, 1);
          ADD_FAILURE() << "recv returned although the sender exited";
        } catch (const PeerError& e) {
          EXPECT_NE(std::string(e.what()).find("recv from rank 0 (global 0) of world (tag 1"),
                    std::string::npos)
              << e.what();
        }
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
      },
      options);
}

TEST(SharedMemoryPointToPoint, UnreceivedSendTimesOutNamingThePeer) {
  testing::MultiProcessOptions options;
  options.commTimeoutSeconds = 2;
  testing::runInProcesses(
      2,
      [](const RankContext& ctx) {
        auto world = shmWorld();
        world->comm().barrier();
        if (ctx.rank == 1) {
          std::this_thread::sleep_for(std::chrono::seconds(5));
          std::_Exit(0);
        }
        try {
          world->comm().send(torch::ones({100000}), 1, 4);
          ADD_FAILURE() << "send returned although nobody received";
        } catch (const TimeoutError& e) {
          std::string text = e.what();
          EXPECT_NE(text.find("send to rank 1 (global 1) of world (tag 4, shared memory) timed "
                              "out after 2 s"),
                    std::string::npos)
              << text;
        }
      },
      options);
}

// A seccomp filter that makes process_vm_readv fail with EPERM, as container
// runtimes' default profiles may.
void refuseCrossProcessReads() {
  sock_filter program[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog filter{static_cast<unsigned short>(std::size(program)), program};
  ASSERT_EQ(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
  ASSERT_EQ(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter), 0);
}

// One member may not read the other's memory: large messages take Gloo on
// both, small ones still take the channels, and all arrive whole.
TEST(SharedMemoryPointToPoint, LargeMessagesTakeGlooWhereCrossProcessReadsAreRefused) {
  testing::runInProcesses(2, [](const RankContext& ctx) {
    if (ctx.rank == 1) refuseCrossProcessReads();
    auto world = shmWorld();
    Communicator& comm = world->comm();
    for (int i = 0; i < static_cast<int>(std::size(kMessageSizes)); ++i) {
      if (ctx.rank == 0) {
        comm.send(message(kMessageSizes[i], i), 1, i);
      } else {
        torch::Tensor got = torch::empty({kMessageSizes[i]});
        comm.recv(got, 0, i);
        EXPECT_TRUE(torch::equal(got, message(kMessageSizes[i], i)))
            << "numel " << kMessageSizes[i];
      }
    }
  });
}

}  // namespace
}  // namespace strata
