// The flight recorder's files and its cross-rank diagnosis, on records
// written here as four ranks of a pp 2 x dp 2 job would leave them.
#include "strata/runtime/flight_recorder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "strata/error.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

class FlightRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("strata_flight_" + std::to_string(getpid()))).string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::shared_ptr<FlightRecorder> rank(int r, int64_t capacity = 64) {
    return FlightRecorder::open(dir_, r, 4, capacity);
  }
  std::string diagnosis() { return diagnoseFlight(readFlightRecords(dir_)); }

  std::string dir_;
};

constexpr uint8_t kFloat = 6;  // c10::ScalarType::Float

// `count` completed all-reduces of `group` (numbers from 1).
void completedAllReduces(FlightRecorder& r, const std::string& group, int groupRank, int count) {
  for (int n = 1; n <= count; ++n)
    FlightRecorder::finish(r.issue(group, groupRank, 2, n, FlightOp::kAllReduce, 1024, kFloat, -1),
                           FlightState::kCompleted);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(FlightRecorderTest, FilesReadBackWithEveryField) {
  {
    auto r = rank(1);
    FlightRecord* send = r->issue("pp[dp=0]", 1, 2, 7, FlightOp::kSend, 96, kFloat, 0);
    FlightRecorder::finish(send, FlightState::kCompleted);
    r->issue("dp[pp=0]", 0, 2, 3, FlightOp::kAllReduce, 4096, kFloat, -1);
  }
  std::vector<RankFlight> ranks = readFlightRecords(dir_);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].rank, 1);
  EXPECT_EQ(ranks[0].worldSize, 4);
  EXPECT_EQ(ranks[0].pid, getpid());
  ASSERT_EQ(ranks[0].entries.size(), 2u);
  const RankFlight::Entry& send = ranks[0].entries[0];
  EXPECT_EQ(send.group, "pp[dp=0]");
  EXPECT_EQ(send.sequence, 7u);
  EXPECT_EQ(send.op, FlightOp::kSend);
  EXPECT_EQ(send.state, FlightState::kCompleted);
  EXPECT_EQ(send.numel, 96);
  EXPECT_EQ(send.peer, 0);
  EXPECT_GE(send.endNs, send.startNs);
  EXPECT_EQ(ranks[0].entries[1].state, FlightState::kIssued);
  EXPECT_EQ(ranks[0].entries[1].endNs, 0);
}

// The ring keeps the newest `capacity` records, oldest first.
TEST_F(FlightRecorderTest, TheRingKeepsTheNewestRecords) {
  {
    auto r = rank(0, 8);
    completedAllReduces(*r, "dp[pp=0]", 0, 20);
  }
  std::vector<RankFlight> ranks = readFlightRecords(dir_);
  ASSERT_EQ(ranks[0].entries.size(), 8u);
  EXPECT_EQ(ranks[0].entries.front().sequence, 13u);
  EXPECT_EQ(ranks[0].entries.back().sequence, 20u);
}

// Rank 3 (dp rank 1 of pp stage 1) waits in a recv from stage 0 that rank 1
// never sent, so it never enters all-reduce #3 of dp[pp=1], in which rank 2
// timed out.
TEST_F(FlightRecorderTest, NamesTheRankThatNeverEnteredAndWhatItWasDoing) {
  std::vector<std::shared_ptr<FlightRecorder>> r;
  for (int i = 0; i < 4; ++i) r.push_back(rank(i));
  completedAllReduces(*r[0], "dp[pp=0]", 0, 3);
  completedAllReduces(*r[1], "dp[pp=0]", 1, 3);
  completedAllReduces(*r[2], "dp[pp=1]", 0, 2);
  FlightRecorder::finish(r[2]->issue("dp[pp=1]", 0, 2, 3, FlightOp::kAllReduce, 1024, kFloat, -1),
                         FlightState::kTimedOut);
  completedAllReduces(*r[3], "dp[pp=1]", 1, 2);
  for (int n = 1; n <= 4; ++n)  // rank 1 sent 4 messages to rank 3 (pp rank 1 of pp[dp=1])
    FlightRecorder::finish(r[1]->issue("pp[dp=1]", 0, 2, n, FlightOp::kSend, 96, kFloat, 1),
                           FlightState::kCompleted);
  for (int n = 1; n <= 4; ++n)
    FlightRecorder::finish(r[3]->issue("pp[dp=1]", 1, 2, n, FlightOp::kRecv, 96, kFloat, 0),
                           FlightState::kCompleted);
  r[3]->issue("pp[dp=1]", 1, 2, 5, FlightOp::kRecv, 96, kFloat, 0);
  std::string text = diagnosis();
  EXPECT_TRUE(contains(text, "flight records of ranks 0-3:")) << text;
  EXPECT_TRUE(contains(text,
                       "dp[pp=1]: rank 2 entered all-reduce #3 and did not complete it "
                       "(timed out); rank 3 never entered it (last completed #2; it was in "
                       "recv from rank 0 of pp[dp=1] #5, issued "))
      << text;
  EXPECT_TRUE(contains(text,
                       "pp[dp=1]: rank 3 waits in recv #5 from rank 0 of the group (global "
                       "1), which issued 4 sends to it (its last operation, send to rank 1 "
                       "of pp[dp=1] #4, completed)"))
      << text;
  EXPECT_FALSE(contains(text, "dp[pp=0]")) << "a group whose ranks agree is not named:\n" << text;
}

TEST_F(FlightRecorderTest, RanksThatEnteredAnOperationDifferentlyAreNamed) {
  auto r0 = rank(0), r1 = rank(1);
  r0->issue("tp[pp=0]", 0, 2, 1, FlightOp::kAllReduce, 1024, kFloat, -1);
  r1->issue("tp[pp=0]", 1, 2, 1, FlightOp::kBroadcast, 512, kFloat, -1);
  std::string text = diagnosis();
  EXPECT_TRUE(contains(text,
                       "rank 1 entered #1 as broadcast of 512 elements, where another "
                       "entered it as all-reduce of 1024"))
      << text;
}

TEST_F(FlightRecorderTest, AgreeingGroupsAndMissingRanksAreSaid) {
  auto r0 = rank(0), r1 = rank(1);
  completedAllReduces(*r0, "dp[pp=0]", 0, 5);
  completedAllReduces(*r1, "dp[pp=0]", 1, 5);
  std::string text = diagnosis();
  EXPECT_TRUE(contains(text,
                       "flight records of ranks 0-1 (of 4; the others left none here): the "
                       "ranks of every group (1) agree"))
      << text;
}

TEST_F(FlightRecorderTest, AFolderWithoutRecordsOrWithABadFileIsNamed) {
  fs::create_directories(dir_);
  EXPECT_THROW(
      {
        try {
          readFlightRecords(dir_);
        } catch (const Error& e) {
          EXPECT_TRUE(contains(e.what(), "no rank-*.flight files in '" + dir_ + "'")) << e.what();
          throw;
        }
      },
      Error);
  std::ofstream(dir_ + "/rank-00000.flight") << "not a record";
  try {
    readFlightRecords(dir_);
    ADD_FAILURE() << "a malformed file was read";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "rank-00000.flight' is not a flight record file")) << e.what();
  }
}

}  // namespace
}  // namespace strata
