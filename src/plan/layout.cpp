#include "strata/plan/layout.h"

#include <cctype>
#include <sstream>
#include <vector>

#include "strata/plan/errors.h"
#include "strata/schedule/registry.h"
#include "strata/schedule/schedule.h"
#include "strata/util/parse_number.h"

namespace strata::plan {
namespace {

// Reads the digits after `prefix` in `item`, e.g. "pp8" -> 8; false when
// `item` is not `prefix` and digits only (a sign is no digit: "zero-1" is no
// ZeRO stage). Digits too many for an int are an error, not another item.
bool numberAfter(const std::string& item, const std::string& prefix, int* out) {
  if (item.rfind(prefix, 0) != 0 || item.size() == prefix.size()) return false;
  std::string digits = item.substr(prefix.size());
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  std::optional<int> value = parseInt(digits);
  if (!value) throw PlanError("layout item '" + item + "' is too large");
  *out = *value;
  return true;
}

// The schedule generators' names (strata/schedule/registry.h), so that a
// layout names every schedule the simulator can time.
std::string scheduleList() {
  std::string list;
  for (const std::string& name : schedule::generatorNames()) list += ", " + name;
  return list;
}

void applyItem(Layout& layout, const std::string& item) {
  int value = 0;
  if (numberAfter(item, "pp", &value)) {
    layout.pp = value;
  } else if (numberAfter(item, "tp", &value)) {
    layout.tp = value;
  } else if (numberAfter(item, "dp", &value)) {
    layout.dp = value;
  } else if (numberAfter(item, "cp", &value)) {
    layout.cp = value;
  } else if (numberAfter(item, "ep", &value)) {
    layout.ep = value;
  } else if (item == "cp-ring" || item == "cp-a2a") {
    layout.cpAlgorithm = item == "cp-a2a" ? CpAlgorithm::kAllToAll : CpAlgorithm::kRing;
    return;
  } else if (numberAfter(item, "mb", &value)) {
    layout.microBatch = value;
  } else if (numberAfter(item, "v", &value)) {
    layout.virtualStages = value;
  } else if (numberAfter(item, "zero", &value) && value <= 3) {
    layout.zeroStage = value;
    return;
  } else if (item == "recompute") {
    layout.recompute = true;
    return;
  } else if (item == "sp") {
    layout.sequenceParallel = true;
    return;
  } else if (item == "pp-inner") {
    layout.ppInner = true;
    return;
  } else if (item == "no-reshard") {
    layout.reshardAfterForward = false;
    return;
  } else {
    for (const std::string& name : schedule::generatorNames()) {
      if (item == name) {
        layout.schedule = name;
        return;
      }
    }
    throw PlanError("layout item '" + item +
                    "' is not one of ppN, tpN, dpN, cpN, cp-ring, cp-a2a, epN, mbN, vN, "
                    "zero0..zero3, recompute, sp, pp-inner, no-reshard" +
                    scheduleList());
  }
  if (value < 1) throw PlanError("layout item '" + item + "' must be at least 1");
}

}  // namespace

// A V schedule is one whose generator runs two stages per rank; a name no
// generator has is none (checkLayout refuses it).
bool isVSchedule(const Layout& layout) {
  for (const schedule::GeneratorInfo& info : schedule::knownGenerators())
    if (info.name == layout.schedule) return info.stagesPerRank == 2;
  return false;
}

int pipelineStages(const Layout& layout) {
  return isVSchedule(layout) ? 2 * layout.pp : layout.pp * layout.virtualStages;
}

std::vector<int> stageRanks(const Layout& layout) {
  if (isVSchedule(layout)) return schedule::vPlacement(layout.pp);
  std::vector<int> ranks;
  for (int s = 0; s < pipelineStages(layout); ++s) ranks.push_back(s % layout.pp);
  return ranks;
}

const char* cpAlgorithmName(CpAlgorithm algorithm) {
  return algorithm == CpAlgorithm::kAllToAll ? "all-to-all" : "ring";
}

Layout parseLayout(const std::string& text) {
  Layout layout;
  std::istringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (!item.empty()) applyItem(layout, item);
  }
  return layout;
}

std::string toString(const Layout& layout) {
  std::ostringstream out;
  out << "pp" << layout.pp << ",tp" << layout.tp << ",dp" << layout.dp;
  // Only what differs from no context or expert parallelism, so that cp =
  // 1 and ep = 1 read as before.
  if (layout.cp != 1) out << ",cp" << layout.cp;
  if (layout.cpAlgorithm == CpAlgorithm::kAllToAll) out << ",cp-a2a";
  if (layout.ep != 1) out << ",ep" << layout.ep;
  out << ",mb" << layout.microBatch << ",v" << layout.virtualStages << "," << layout.schedule
      << ",zero" << layout.zeroStage;
  if (layout.recompute) out << ",recompute";
  if (layout.sequenceParallel) out << ",sp";
  if (layout.ppInner) out << ",pp-inner";
  if (!layout.reshardAfterForward) out << ",no-reshard";
  return out.str();
}

}  // namespace strata::plan
