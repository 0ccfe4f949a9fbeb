// Where Strata's library code sends the messages it does not throw: a
// warning that a fallback was taken (Gloo instead of shared memory, a cache
// that could not be written), never an error the caller must handle.
//
// By default each message goes to stderr as one line, "strata: warning: ...".
// A program that embeds Strata installs its own sink to route them into its
// logging. setLogSink and logMessage may be called from any thread; a sink is
// called on the thread that logs, outside any lock held here, so it may log
// or replace the sink itself. Nothing here throws (a throwing sink aside) or
// blocks beyond the sink's own work.
#pragma once

#include <functional>
#include <string>

namespace strata {

enum class LogLevel { Info, Warning, Error };

using LogSink = std::function<void(LogLevel, const std::string&)>;

// Installs `sink` and returns the one it replaces, so a caller can restore
// it. An empty sink restores the default (stderr).
LogSink setLogSink(LogSink sink);

void logMessage(LogLevel level, const std::string& message);
void logWarning(const std::string& message);

}  // namespace strata
