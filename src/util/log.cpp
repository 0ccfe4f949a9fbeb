#include "strata/util/log.h"

#include <iostream>
#include <mutex>

namespace strata {
namespace {

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::Info:
      return "info";
    case LogLevel::Warning:
      return "warning";
    case LogLevel::Error:
      return "error";
  }
  return "message";
}

// One insertion per line, so lines from concurrent threads do not interleave.
void writeToStderr(LogLevel level, const std::string& message) {
  std::cerr << std::string("strata: ") + levelName(level) + ": " + message + "\n";
}

std::mutex& sinkMutex() {
  static std::mutex mutex;
  return mutex;
}

LogSink& currentSink() {
  static LogSink sink = writeToStderr;
  return sink;
}

}  // namespace

LogSink setLogSink(LogSink sink) {
  if (!sink) sink = writeToStderr;
  std::lock_guard<std::mutex> lock(sinkMutex());
  std::swap(currentSink(), sink);
  return sink;
}

void logMessage(LogLevel level, const std::string& message) {
  LogSink sink;
  {
    std::lock_guard<std::mutex> lock(sinkMutex());
    sink = currentSink();
  }
  sink(level, message);
}

void logWarning(const std::string& message) { logMessage(LogLevel::Warning, message); }

}  // namespace strata
