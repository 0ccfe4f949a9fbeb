#include "strata/schedule/validator.h"

#include <string>
#include <vector>

#include "action_index.h"
#include "strata/schedule/error.h"
#include "strata/schedule/text_grid.h"

namespace strata::schedule {
namespace {

// Rows of the grid shown on either side of a marked action.
constexpr int kGridContext = 6;

[[noreturn]] void reject(const Schedule& schedule, const std::string& problem,
                         const std::vector<GridMark>& marks) {
  throw ValidationError("invalid schedule: " + problem + "\n" +
                        renderStepGrid(schedule, marks, kGridContext));
}

const Action& actionAt(const Schedule& schedule, const Slot& slot) {
  return schedule.actions(slot.rank)[slot.step];
}

std::string describe(const Schedule& schedule, const Slot& slot) {
  return toString(actionAt(schedule, slot)) + " (rank " + std::to_string(slot.rank) + ", step " +
         std::to_string(slot.step) + ")";
}

// What a rank issues at `slot`: one action, or an overlapped pair as 0F5+7B2.
std::string issuedText(const Schedule& schedule, const Slot& slot) {
  std::string text;
  for (const Slot& issued : issuedTogether(schedule, slot)) {
    text += (text.empty() ? "" : "+") + toString(actionAt(schedule, issued));
  }
  return text;
}

template <typename Check>
void forEachSlot(const Schedule& schedule, const Check& check) {
  for (int rank = 0; rank < schedule.ranks(); ++rank) {
    for (int step = 0; step < static_cast<int>(schedule.actions(rank).size()); ++step) {
      check(Slot{rank, step});
    }
  }
}

void checkRangesAndPlacement(const Schedule& schedule) {
  forEachSlot(schedule, [&](const Slot& slot) {
    const Action& action = actionAt(schedule, slot);
    const GridMark mark{slot.rank, slot.step};
    if (action.stage < 0 || action.stage >= schedule.stages()) {
      reject(schedule,
             describe(schedule, slot) + " names stage " + std::to_string(action.stage) +
                 ", but the schedule has " + std::to_string(schedule.stages()) + " stages",
             {mark});
    }
    if (action.microbatch < 0 || action.microbatch >= schedule.microbatches()) {
      reject(schedule,
             describe(schedule, slot) + " names microbatch " + std::to_string(action.microbatch) +
                 ", but the schedule has " + std::to_string(schedule.microbatches()) +
                 " microbatches",
             {mark});
    }
    const int owner = schedule.rankOf(action.stage);
    if (owner != slot.rank) {
      reject(schedule,
             describe(schedule, slot) + " is on the wrong rank: stage " +
                 std::to_string(action.stage) + " belongs to rank " + std::to_string(owner),
             {mark});
    }
  });
}

void checkDuplicates(const Schedule& schedule, const ActionIndex& index) {
  if (index.duplicates().empty()) return;
  const auto& [repeat, first] = index.duplicates().front();
  reject(schedule, describe(schedule, repeat) + " repeats " + describe(schedule, first),
         {{repeat.rank, repeat.step}, {first.rank, first.step}});
}

std::vector<GridMark> marksFor(const ActionIndex& index, const std::vector<Action>& actions) {
  std::vector<GridMark> marks;
  for (const Action& action : actions) {
    if (const auto slot = index.find(action)) marks.push_back({slot->rank, slot->step});
  }
  return marks;
}

void checkCompleteness(const Schedule& schedule, const ActionIndex& index) {
  for (int stage = 0; stage < schedule.stages(); ++stage) {
    for (int mb = 0; mb < schedule.microbatches(); ++mb) {
      const Action f{stage, ActionKind::kForward, mb}, b{stage, ActionKind::kBackward, mb},
          i{stage, ActionKind::kBackwardInput, mb}, w{stage, ActionKind::kBackwardWeight, mb};
      const std::string what =
          "stage " + std::to_string(stage) + " microbatch " + std::to_string(mb);
      const bool hasB = index.contains(b), hasI = index.contains(i), hasW = index.contains(w);
      const auto marks = marksFor(index, {f, b, i, w});
      if (!index.contains(f)) reject(schedule, what + " has no forward " + toString(f), marks);
      if (hasB && (hasI || hasW)) {
        reject(schedule, what + " has both a full backward and a split one (I/W)", marks);
      }
      if (!hasB && !hasI && !hasW) {
        reject(schedule,
               what + " has no backward: add " + toString(b) + ", or " + toString(i) + " and " +
                   toString(w),
               marks);
      }
      if (hasI != hasW) {
        reject(schedule,
               what + " has " + toString(hasI ? i : w) + " but no " + toString(hasI ? w : i),
               marks);
      }
    }
  }
}

bool dependsOn(const Action& consumer, const Action& producer, const Schedule& schedule,
               const ActionIndex& index) {
  for (const Action& input : inputsOf(consumer, schedule, index)) {
    if (input == producer) return true;
  }
  return false;
}

// The pairs DualPipe overlaps: a forward and a full backward, which must not
// wait on each other because they start together.
void checkOverlaps(const Schedule& schedule, const ActionIndex& index) {
  forEachSlot(schedule, [&](const Slot& slot) {
    if (!schedule.overlapsNext(slot.rank, slot.step)) return;
    const Slot partner{slot.rank, slot.step + 1};
    const Action& first = actionAt(schedule, slot);
    const Action& second = actionAt(schedule, partner);
    const std::vector<GridMark> marks{{slot.rank, slot.step}, {partner.rank, partner.step}};
    const std::string pair = issuedText(schedule, slot) + " (rank " + std::to_string(slot.rank) +
                             ", steps " + std::to_string(slot.step) + "-" +
                             std::to_string(partner.step) + ")";
    if (first.kind != ActionKind::kForward || second.kind != ActionKind::kBackward) {
      reject(schedule, "overlapped pair " + pair + " must be a forward and a full backward, as F+B",
             marks);
    }
    if (dependsOn(second, first, schedule, index)) {
      reject(schedule,
             "overlapped pair " + pair + " runs " + toString(second) +
                 " at the same time as its input " + toString(first),
             marks);
    }
  });
}

// An input produced on the same rank must come earlier in the rank's list;
// otherwise the rank would wait on itself.
void checkLocalOrder(const Schedule& schedule, const ActionIndex& index) {
  forEachSlot(schedule, [&](const Slot& slot) {
    for (const Action& input : inputsOf(actionAt(schedule, slot), schedule, index)) {
      const Slot source = *index.find(input);
      if (source.rank == slot.rank && source.step > slot.step) {
        reject(schedule,
               describe(schedule, slot) + " comes before its input " + describe(schedule, source),
               {{slot.rank, slot.step}, {source.rank, source.step}});
      }
    }
  });
}

// The first input not produced yet of what the rank issues next: its next
// action, or both actions of an overlapped pair.
Slot blockingInput(const Schedule& schedule, const ActionIndex& index, const BlockingRun& run,
                   int rank) {
  const Slot head{rank, run.next[rank]};
  for (const Slot& issued : issuedTogether(schedule, head)) {
    for (const Action& input : inputsOf(actionAt(schedule, issued), schedule, index)) {
      const Slot source = *index.find(input);
      if (!run.hasRun(source)) return source;
    }
  }
  return head;
}

void checkDeadlock(const Schedule& schedule, const ActionIndex& index) {
  const BlockingRun run = runBlocking(schedule, index);
  if (run.finished(schedule)) return;
  int rank = 0;
  while (run.next[rank] >= static_cast<int>(schedule.actions(rank).size())) ++rank;
  // Each stuck rank waits on an input from another stuck rank, so following
  // the waits from any stuck rank must come back around to a cycle.
  std::vector<int> seenAt(schedule.ranks(), -1);
  std::vector<int> path;
  while (seenAt[rank] < 0) {
    seenAt[rank] = static_cast<int>(path.size());
    path.push_back(rank);
    rank = blockingInput(schedule, index, run, rank).rank;
  }
  std::string cycle;
  std::vector<GridMark> marks;
  for (std::size_t i = seenAt[rank]; i < path.size(); ++i) {
    const Slot head{path[i], run.next[path[i]]};
    const Slot source = blockingInput(schedule, index, run, path[i]);
    cycle += (cycle.empty() ? "" : "; ") + std::string("rank ") + std::to_string(head.rank) +
             " waits at " + issuedText(schedule, head) + " (step " + std::to_string(head.step) +
             ") for " + toString(actionAt(schedule, source)) + " from rank " +
             std::to_string(source.rank);
    marks.push_back({head.rank, head.step});
  }
  reject(schedule, "deadlock: " + cycle, marks);
}

}  // namespace

void validate(const Schedule& schedule) {
  checkRangesAndPlacement(schedule);
  const ActionIndex index(schedule);
  checkDuplicates(schedule, index);
  checkCompleteness(schedule, index);
  checkOverlaps(schedule, index);
  checkLocalOrder(schedule, index);
  checkDeadlock(schedule, index);
}

}  // namespace strata::schedule
