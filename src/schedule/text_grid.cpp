#include "strata/schedule/text_grid.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace strata::schedule {
namespace {

std::string padded(const std::string& text, std::size_t width) {
  return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
}

bool isMarked(const std::vector<GridMark>& marks, int rank, int step) {
  return std::any_of(marks.begin(), marks.end(),
                     [&](const GridMark& m) { return m.rank == rank && m.step == step; });
}

bool rowVisible(const std::vector<GridMark>& marks, int context, int step) {
  if (context < 0 || marks.empty()) return true;
  return std::any_of(marks.begin(), marks.end(),
                     [&](const GridMark& m) { return std::abs(m.step - step) <= context; });
}

// The action's text, with a '+' on the side of its overlapped partner.
std::string stepLabel(const Schedule& schedule, int rank, int step) {
  return (schedule.overlapsPrevious(rank, step) ? "+" : "") +
         toString(schedule.actions(rank)[step]) + (schedule.overlapsNext(rank, step) ? "+" : "");
}

std::string cellText(const Schedule& schedule, const std::vector<GridMark>& marks, int rank,
                     int step) {
  if (step >= static_cast<int>(schedule.actions(rank).size())) return "";
  const std::string label = stepLabel(schedule, rank, step);
  return isMarked(marks, rank, step) ? ">" + label + "<" : " " + label;
}

}  // namespace

std::string renderStepGrid(const Schedule& schedule, const std::vector<GridMark>& marks,
                           int context) {
  int steps = 0;
  std::size_t width = 0;
  for (int rank = 0; rank < schedule.ranks(); ++rank) {
    steps = std::max(steps, static_cast<int>(schedule.actions(rank).size()));
    width = std::max(width, ("rank " + std::to_string(rank)).size());
    for (int step = 0; step < static_cast<int>(schedule.actions(rank).size()); ++step) {
      width = std::max(width, stepLabel(schedule, rank, step).size() + 2);
    }
  }
  const std::size_t stepWidth = std::max<std::size_t>(4, std::to_string(steps).size());
  std::ostringstream out;
  out << padded("step", stepWidth);
  for (int rank = 0; rank < schedule.ranks(); ++rank) {
    out << " | " << padded("rank " + std::to_string(rank), width);
  }
  out << "\n";
  bool folded = false;
  for (int step = 0; step < steps; ++step) {
    if (!rowVisible(marks, context, step)) {
      if (!folded) out << padded("...", stepWidth) << "\n";
      folded = true;
      continue;
    }
    folded = false;
    out << padded(std::to_string(step), stepWidth);
    for (int rank = 0; rank < schedule.ranks(); ++rank) {
      out << " | " << padded(cellText(schedule, marks, rank, step), width);
    }
    out << "\n";
  }
  return out.str();
}

std::string renderTimeGrid(const Timeline& timeline, int maxColumns) {
  timeline.check();
  const double end = timeline.end();
  double slice = end;
  std::size_t width = 1;
  for (const TimelineItem& item : timeline.items) {
    if (item.end > item.start) slice = std::min(slice, item.end - item.start);
    width = std::max(width, item.label.size());
  }
  if (end <= 0) return "(empty timeline)\n";
  const int limit = std::max(1, maxColumns);
  if (end / slice > limit) slice = end / limit;
  const int columns = static_cast<int>(std::ceil(end / slice - 1e-9));
  std::vector<std::vector<std::string>> cells(timeline.ranks,
                                              std::vector<std::string>(columns, "."));
  for (const TimelineItem& item : timeline.items) {
    const int first = std::min(columns - 1, static_cast<int>(std::lround(item.start / slice)));
    const int last = std::max(first + 1, static_cast<int>(std::lround(item.end / slice)));
    for (int column = first; column < std::min(last, columns); ++column) {
      cells[item.rank][column] = column == first ? item.label : std::string(item.label.size(), '-');
    }
  }
  std::ostringstream out;
  const std::size_t nameWidth = ("rank " + std::to_string(timeline.ranks - 1)).size();
  for (int rank = 0; rank < timeline.ranks; ++rank) {
    out << padded("rank " + std::to_string(rank), nameWidth) << " |";
    for (const std::string& cell : cells[rank]) out << " " << padded(cell, width);
    out << "\n";
  }
  out << "one column = " << slice << (timeline.timeUnit.empty() ? "" : " " + timeline.timeUnit)
      << "\n";
  return out.str();
}

}  // namespace strata::schedule
