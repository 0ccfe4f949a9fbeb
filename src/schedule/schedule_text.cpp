#include "strata/schedule/schedule_text.h"

#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "strata/schedule/error.h"
#include "strata/util/parse_number.h"

namespace strata::schedule {
namespace {

std::string withoutComment(const std::string& line) { return line.substr(0, line.find('#')); }

std::vector<std::string> splitWords(const std::string& line) {
  std::istringstream stream(line);
  std::vector<std::string> words;
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

class LineParser {
 public:
  LineParser(int lineNumber, std::vector<std::string> words)
      : lineNumber_(lineNumber), words_(std::move(words)) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw ScheduleError("schedule line " + std::to_string(lineNumber_) + ": " + message);
  }

  int integerAt(std::size_t index, const std::string& what) const {
    if (index >= words_.size()) fail("missing value for " + what);
    const std::optional<int> value = parseInt(words_[index]);
    if (!value) fail("bad " + what + " '" + words_[index] + "': not an integer");
    return *value;
  }

  const std::vector<std::string>& words() const { return words_; }

  // Runs `make`, adding this line's number to any ScheduleError it throws.
  template <typename Make>
  std::optional<Schedule> build(const Make& make) const {
    try {
      return make();
    } catch (const ScheduleError& error) {
      fail(error.what());
    }
  }

 private:
  int lineNumber_;
  std::vector<std::string> words_;
};

struct Header {
  int ranks = 0, stages = 0, microbatches = 0;
};

Header parseHeader(const LineParser& line) {
  const auto& words = line.words();
  if (words.size() != 6 || words[0] != "ranks" || words[2] != "stages" ||
      words[4] != "microbatches") {
    line.fail("expected header 'ranks R stages S microbatches M' before anything else");
  }
  return {line.integerAt(1, "ranks"), line.integerAt(3, "stages"),
          line.integerAt(5, "microbatches")};
}

std::vector<int> parseStageRanks(const LineParser& line, const Header& header) {
  const auto& words = line.words();
  if (static_cast<int>(words.size()) - 1 != header.stages) {
    line.fail("stage-ranks lists " + std::to_string(words.size() - 1) +
              " ranks but the header has " + std::to_string(header.stages) + " stages");
  }
  std::vector<int> stageRanks;
  for (std::size_t i = 1; i < words.size(); ++i) {
    stageRanks.push_back(line.integerAt(i, "rank of stage " + std::to_string(i - 1)));
  }
  return stageRanks;
}

// One action, or an overlapped pair written as two joined by '+': 0F5+7B2.
void appendToken(Schedule& schedule, int rank, const std::string& token) {
  const std::size_t plus = token.find('+');
  if (plus == std::string::npos) {
    schedule.append(rank, parseAction(token));
    return;
  }
  const std::string second = token.substr(plus + 1);
  if (second.find('+') != std::string::npos) {
    throw ScheduleError("bad overlapped pair '" + token +
                        "': a pair has two actions, e.g. 0F5+7B2");
  }
  schedule.appendOverlapped(rank, parseAction(token.substr(0, plus)), parseAction(second));
}

void parseRankLine(const LineParser& line, Schedule& schedule) {
  const auto& words = line.words();
  if (words.size() < 2 || words[1].empty() || words[1].back() != ':') {
    line.fail("expected 'rank N: actions...'");
  }
  const std::string number = words[1].substr(0, words[1].size() - 1);
  const std::optional<int> rank = parseInt(number);
  if (!rank || *rank < 0 || *rank >= schedule.ranks()) {
    line.fail("bad rank '" + number + "': the header has " + std::to_string(schedule.ranks()) +
              " ranks");
  }
  for (std::size_t i = 2; i < words.size(); ++i) {
    try {
      appendToken(schedule, *rank, words[i]);
    } catch (const ScheduleError& error) {
      line.fail(error.what());
    }
  }
}

}  // namespace

Schedule parseSchedule(const std::string& text) {
  std::istringstream stream(text);
  std::optional<Header> header;
  std::optional<Schedule> schedule;
  std::string raw;
  for (int lineNumber = 1; std::getline(stream, raw); ++lineNumber) {
    LineParser line(lineNumber, splitWords(withoutComment(raw)));
    if (line.words().empty()) continue;
    const std::string& keyword = line.words()[0];
    if (!header) {
      header = parseHeader(line);
    } else if (keyword == "stage-ranks") {
      if (schedule) line.fail("stage-ranks must come before the first rank line");
      std::vector<int> stageRanks = parseStageRanks(line, *header);
      schedule = line.build(
          [&] { return Schedule(header->ranks, header->microbatches, std::move(stageRanks)); });
    } else if (keyword == "rank") {
      if (!schedule) {
        schedule = line.build(
            [&] { return Schedule(header->ranks, header->stages, header->microbatches); });
      }
      parseRankLine(line, *schedule);
    } else {
      line.fail("unknown keyword '" + keyword + "': expected 'stage-ranks' or 'rank'");
    }
  }
  if (!header) {
    throw ScheduleError("schedule text has no 'ranks R stages S microbatches M' header");
  }
  if (!schedule) return Schedule(header->ranks, header->stages, header->microbatches);
  return *schedule;
}

std::string formatSchedule(const Schedule& schedule) {
  std::ostringstream out;
  out << "ranks " << schedule.ranks() << " stages " << schedule.stages() << " microbatches "
      << schedule.microbatches() << "\n";
  if (!schedule.hasRoundRobinPlacement()) {
    out << "stage-ranks";
    for (int rank : schedule.stageRanks()) out << " " << rank;
    out << "\n";
  }
  for (int rank = 0; rank < schedule.ranks(); ++rank) {
    out << "rank " << rank << ":";
    const auto& actions = schedule.actions(rank);
    for (int step = 0; step < static_cast<int>(actions.size()); ++step) {
      out << (schedule.overlapsPrevious(rank, step) ? "+" : " ") << toString(actions[step]);
    }
    out << "\n";
  }
  return out.str();
}

Schedule readScheduleFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw ScheduleError("cannot read schedule file '" + path + "'");
  std::ostringstream text;
  text << file.rdbuf();
  try {
    return parseSchedule(text.str());
  } catch (const ScheduleError& error) {
    throw ScheduleError(path + ": " + error.what());
  }
}

}  // namespace strata::schedule
