#include "strata/schedule/validator.h"

#include <gtest/gtest.h>

#include <string>

#include "strata/schedule/error.h"
#include "strata/schedule/schedule_text.h"

namespace strata::schedule {
namespace {

// Validates `text` and returns the error message, failing if it is accepted.
std::string rejection(const std::string& text) {
  try {
    validate(parseSchedule(text));
  } catch (const ValidationError& error) {
    return error.what();
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return "";
}

void expectContains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "missing '" << part << "' in:\n" << message;
}

TEST(Validator, AcceptsHandWrittenSchedule) {
  EXPECT_NO_THROW(
      validate(parseSchedule("ranks 2 stages 2 microbatches 2\n"
                             "rank 0: 0F0 0F1 0B0 0B1\n"
                             "rank 1: 1F0 1B0 1F1 1B1\n")));
}

TEST(Validator, ReportsDeadlockCycleOnGrid) {
  // The ranks disagree on the microbatch order: rank 1 waits for microbatch
  // 1's activation while rank 0 waits for microbatch 0's gradient.
  const std::string message = rejection(
      "ranks 2 stages 2 microbatches 2\n"
      "rank 0: 0F0 0B0 0F1 0B1\n"
      "rank 1: 1F1 1F0 1B0 1B1\n");
  expectContains(message, "deadlock");
  expectContains(message, "rank 0 waits at 0B0 (step 1) for 1B0 from rank 1");
  expectContains(message, "rank 1 waits at 1F1 (step 0) for 0F1 from rank 0");
  expectContains(message, "step | rank 0 | rank 1");
  expectContains(message, "0    |  0F0   | >1F1<");
  expectContains(message, "1    | >0B0<  |  1F0");
}

TEST(Validator, AcceptsAnOverlappedForwardAndBackward) {
  EXPECT_NO_THROW(
      validate(parseSchedule("ranks 2 stages 2 microbatches 2\n"
                             "rank 0: 0F0 0F1+0B0 0B1\n"
                             "rank 1: 1F0 1B0 1F1 1B1\n")));
}

TEST(Validator, OverlappedPairWaitsForBothInputs) {
  // One after the other, 0F1 would feed 1F1 before 0B0 waits; issued
  // together, 0F1 waits with 0B0 for 1B0, which rank 1 runs after 1F1.
  const std::string message = rejection(
      "ranks 2 stages 2 microbatches 2\n"
      "rank 0: 0F0 0F1+0B0 0B1\n"
      "rank 1: 1F0 1F1 1B0 1B1\n");
  expectContains(message, "rank 0 waits at 0F1+0B0 (step 1) for 1B0 from rank 1");
  expectContains(message, "rank 1 waits at 1F1 (step 1) for 0F1 from rank 0");
  expectContains(message, ">0F1+<");
}

TEST(Validator, RejectsOverlappedPairsThatAreNotForwardThenBackward) {
  expectContains(rejection("ranks 1 stages 2 microbatches 2\n"
                           "rank 0: 0F0 1F0 1B0+0F1 1F1 0B0 1B1 0B1\n"),
                 "overlapped pair 1B0+0F1 (rank 0, steps 2-3) must be a forward and a full "
                 "backward, as F+B");
  expectContains(rejection("ranks 1 stages 1 microbatches 1\n"
                           "rank 0: 0F0+0B0\n"),
                 "overlapped pair 0F0+0B0 (rank 0, steps 0-1) runs 0B0 at the same time as its "
                 "input 0F0");
}

TEST(Validator, RejectsBackwardBeforeForwardOnARank) {
  const std::string message = rejection(
      "ranks 2 stages 2 microbatches 1\n"
      "rank 0: 0F0 0B0\n"
      "rank 1: 1B0 1F0\n");
  expectContains(message, "1B0 (rank 1, step 0) comes before its input 1F0 (rank 1, step 1)");
  expectContains(message, ">1B0<");
  expectContains(message, ">1F0<");
}

TEST(Validator, RejectsWeightGradientBeforeInputGradient) {
  const std::string message = rejection(
      "ranks 1 stages 1 microbatches 1\n"
      "rank 0: 0F0 0W0 0I0\n");
  expectContains(message, "0W0 (rank 0, step 1) comes before its input 0I0");
}

TEST(Validator, RejectsStagesOutOfOrderOnOneRank) {
  const std::string message = rejection(
      "ranks 1 stages 2 microbatches 1\n"
      "rank 0: 1F0 0F0 1B0 0B0\n");
  expectContains(message, "1F0 (rank 0, step 0) comes before its input 0F0");
}

TEST(Validator, RejectsActionOnWrongRank) {
  const std::string message = rejection(
      "ranks 2 stages 2 microbatches 1\n"
      "rank 0: 0F0 1F0 1B0 0B0\n");
  expectContains(message, "1F0 (rank 0, step 1) is on the wrong rank: stage 1 belongs to rank 1");
}

TEST(Validator, RejectsOutOfRangeActions) {
  expectContains(rejection("ranks 1 stages 1 microbatches 1\nrank 0: 0F0 0B0 3F0\n"),
                 "names stage 3, but the schedule has 1 stages");
  expectContains(rejection("ranks 1 stages 1 microbatches 1\nrank 0: 0F0 0B0 0F2\n"),
                 "names microbatch 2, but the schedule has 1 microbatches");
}

TEST(Validator, RejectsMissingDuplicatedAndMixedActions) {
  expectContains(rejection("ranks 1 stages 1 microbatches 2\nrank 0: 0F0 0B0 0F1\n"),
                 "stage 0 microbatch 1 has no backward: add 0B1, or 0I1 and 0W1");
  expectContains(rejection("ranks 1 stages 1 microbatches 1\nrank 0: 0B0\n"),
                 "stage 0 microbatch 0 has no forward 0F0");
  expectContains(rejection("ranks 1 stages 1 microbatches 1\nrank 0: 0F0 0F0 0B0\n"),
                 "0F0 (rank 0, step 1) repeats 0F0 (rank 0, step 0)");
  expectContains(rejection("ranks 1 stages 1 microbatches 1\nrank 0: 0F0 0I0 0B0 0W0\n"),
                 "has both a full backward and a split one");
  expectContains(rejection("ranks 1 stages 1 microbatches 1\nrank 0: 0F0 0I0\n"),
                 "has 0I0 but no 0W0");
}

TEST(Validator, FoldsLongGridsAroundTheMark) {
  std::string rank0 = "rank 0:", rank1 = "rank 1:";
  for (int mb = 0; mb < 40; ++mb) {
    rank0 += " 0F" + std::to_string(mb);
    rank1 += " 1F" + std::to_string(mb) + " 1B" + std::to_string(mb);
  }
  for (int mb = 0; mb < 39; ++mb) rank0 += " 0B" + std::to_string(mb);
  const std::string message =
      rejection("ranks 2 stages 2 microbatches 40\n" + rank0 + "\n" + rank1 + "\n");
  expectContains(message, "stage 0 microbatch 39 has no backward");
  expectContains(message, "...");
  EXPECT_EQ(message.find("0F1 "), std::string::npos) << "rows far from the mark are folded";
}

}  // namespace
}  // namespace strata::schedule
