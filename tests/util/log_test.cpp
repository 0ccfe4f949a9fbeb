#include "strata/util/log.h"

#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <utility>
#include <vector>

namespace strata {
namespace {

// Points std::cerr at a string for the lifetime of the object.
class CapturedStderr {
 public:
  CapturedStderr() : previous_(std::cerr.rdbuf(text_.rdbuf())) {}
  ~CapturedStderr() { std::cerr.rdbuf(previous_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* previous_;
};

TEST(Log, DefaultSinkWritesOneLabelledLineToStderr) {
  CapturedStderr captured;
  logWarning("cache not written");
  logMessage(LogLevel::Info, "hello");
  logMessage(LogLevel::Error, "lost");
  EXPECT_EQ(captured.text(),
            "strata: warning: cache not written\nstrata: info: hello\nstrata: error: lost\n");
}

TEST(Log, InstalledSinkReceivesMessagesAndRestoringTheDefaultWorks) {
  std::vector<std::pair<LogLevel, std::string>> received;
  LogSink previous = setLogSink(
      [&](LogLevel level, const std::string& message) { received.emplace_back(level, message); });
  CapturedStderr captured;
  logWarning("first");
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].first, LogLevel::Warning);
  EXPECT_EQ(received[0].second, "first");
  EXPECT_EQ(captured.text(), "");

  setLogSink(previous);
  logWarning("second");
  EXPECT_EQ(received.size(), 1u);
  EXPECT_EQ(captured.text(), "strata: warning: second\n");
}

TEST(Log, EmptySinkRestoresTheDefault) {
  setLogSink([](LogLevel, const std::string&) {});
  setLogSink(nullptr);
  CapturedStderr captured;
  logWarning("back on stderr");
  EXPECT_EQ(captured.text(), "strata: warning: back on stderr\n");
}

}  // namespace
}  // namespace strata
