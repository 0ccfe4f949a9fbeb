// EtcdStore against a real etcd server: what the launchers rely on — set,
// get, check, delete, add and compareSet as transactions that racing
// launchers agree on, bounded waits, runs kept apart, and an unreachable
// etcd named within the timeout.
#include "etcd_store.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "etcd_server.h"
#include "strata/error.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kTimeout{20};

std::vector<uint8_t> bytes(const std::string& text) { return {text.begin(), text.end()}; }
std::string text(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

TEST(EtcdStore, SetGetCheckAndDeleteRoundTripEveryByte) {
  testing::EtcdServer etcd;
  EtcdStore store({etcd.endpoint()}, "run-a", kTimeout);
  std::vector<uint8_t> all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<uint8_t>(b));
  store.set("all", all);
  store.set("empty", {});
  EXPECT_EQ(store.get("all"), all);
  EXPECT_TRUE(store.get("empty").empty());
  EXPECT_TRUE(store.check({"all", "empty"}));
  EXPECT_FALSE(store.check({"all", "missing"}));
  EXPECT_EQ(store.getNumKeys(), 2);
  EXPECT_TRUE(store.deleteKey("all"));
  EXPECT_FALSE(store.deleteKey("all"));
  EXPECT_FALSE(store.check({"all"}));
}

TEST(EtcdStore, RacingAddsEachGetTheirOwnCount) {
  testing::EtcdServer etcd;
  constexpr int kPerThread = 15;
  std::vector<std::vector<int64_t>> seen(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      EtcdStore store({etcd.endpoint()}, "run-a", kTimeout);  // a launcher of its own
      for (int i = 0; i < kPerThread; ++i) seen[t].push_back(store.add("count", 1));
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<int64_t> all(seen[0].begin(), seen[0].end());
  all.insert(seen[1].begin(), seen[1].end());
  EXPECT_EQ(all.size(), 2u * kPerThread);
  EXPECT_EQ(*all.begin(), 1);
  EXPECT_EQ(*all.rbegin(), 2 * kPerThread);
}

TEST(EtcdStore, CompareSetCreatesOnceAndSwapsOnlyOnAMatch) {
  testing::EtcdServer etcd;
  EtcdStore first({etcd.endpoint()}, "run-a", kTimeout);
  EtcdStore second({etcd.endpoint()}, "run-a", kTimeout);
  EXPECT_EQ(text(first.compareSet("decision", {}, bytes("mine"))), "mine");
  EXPECT_EQ(text(second.compareSet("decision", {}, bytes("theirs"))), "mine");
  EXPECT_EQ(text(second.compareSet("decision", bytes("other"), bytes("x"))), "mine");
  EXPECT_EQ(text(second.compareSet("decision", bytes("mine"), bytes("swapped"))), "swapped");
  EXPECT_EQ(text(first.get("decision")), "swapped");
  EXPECT_EQ(text(first.compareSet("absent", bytes("old"), bytes("new"))), "old");
  EXPECT_FALSE(first.check({"absent"}));
}

TEST(EtcdStore, ACloneWorksOnTheSameRunsKeys) {
  testing::EtcdServer etcd;
  EtcdStore store({etcd.endpoint()}, "run-a", kTimeout);
  store.set("k", bytes("before"));
  c10::intrusive_ptr<c10d::Store> clone = store.clone();
  EXPECT_EQ(text(clone->get("k")), "before");
  clone->set("k", bytes("from the clone"));
  EXPECT_EQ(text(store.get("k")), "from the clone");
  EXPECT_EQ(clone->add("n", 2), 2);
  EXPECT_EQ(store.add("n", 3), 5);
}

TEST(EtcdStore, RunsDoNotSeeEachOthersKeys) {
  testing::EtcdServer etcd;
  EtcdStore a({etcd.endpoint()}, "run-a", kTimeout);
  EtcdStore b({etcd.endpoint()}, "run-b", kTimeout);
  a.set("k", bytes("a"));
  EXPECT_FALSE(b.check({"k"}));
  EXPECT_EQ(b.add("k", 5), 5);
  EXPECT_EQ(text(a.get("k")), "a");
}

TEST(EtcdStore, AWaitForAKeyNobodyWritesEndsNamingIt) {
  testing::EtcdServer etcd;
  EtcdStore store({etcd.endpoint()}, "run-a", kTimeout);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EtcdStore other({etcd.endpoint()}, "run-a", kTimeout);
    other.set("late", bytes("here"));
  });
  EXPECT_EQ(text(store.get("late")), "here");
  writer.join();
  try {
    store.wait({"never"}, std::chrono::milliseconds(500));
    FAIL() << "the wait returned";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("'never'"), std::string::npos) << e.what();
  }
}

// A dead first endpoint costs a retry, not the job; with every endpoint dead
// the store says which it tried, within its timeout.
TEST(EtcdStore, ADeadEndpointIsSkippedAndAllDeadIsNamedInTime) {
  testing::EtcdServer etcd;
  testing::ReservedPort nothing;  // bound, never listening
  std::string dead = "127.0.0.1:" + std::to_string(nothing.number());
  EtcdStore store({dead, etcd.endpoint()}, "run-a", kTimeout);
  store.set("k", bytes("v"));
  EXPECT_EQ(text(store.get("k")), "v");
  etcd.stop();
  Clock::time_point start = Clock::now();
  try {
    EtcdStore lost({dead}, "run-a", std::chrono::seconds(2));
    FAIL() << "connected to nothing";
  } catch (const PeerError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot reach etcd at " + dead), std::string::npos)
        << e.what();
  }
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(15));
}

}  // namespace
}  // namespace strata
