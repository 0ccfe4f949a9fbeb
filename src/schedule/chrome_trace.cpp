#include "strata/schedule/chrome_trace.h"

#include <sstream>

#include "escape.h"
#include "strata/schedule/error.h"

namespace strata::schedule {

std::string toChromeTrace(const Timeline& timeline, double microsecondsPerUnit) {
  timeline.check();
  if (!(microsecondsPerUnit > 0)) {
    throw ScheduleError("microseconds per time unit must be > 0, got " +
                        std::to_string(microsecondsPerUnit));
  }
  std::ostringstream out;
  out.precision(15);
  out << "{\"traceEvents\":[";
  const char* separator = "\n";
  for (int rank = 0; rank < timeline.ranks; ++rank) {
    out << separator << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" << rank
        << ",\"args\":{\"name\":\"rank " << rank << "\"}}";
    separator = ",\n";
  }
  for (const TimelineItem& item : timeline.items) {
    out << separator << "{\"name\":\"" << escapeJson(item.label) << "\",\"cat\":\""
        << escapeJson(item.kind) << "\",\"ph\":\"X\",\"ts\":" << item.start * microsecondsPerUnit
        << ",\"dur\":" << (item.end - item.start) * microsecondsPerUnit
        << ",\"pid\":0,\"tid\":" << item.rank << "}";
    separator = ",\n";
  }
  out << "\n],\"displayTimeUnit\":\"ms\"}\n";
  return out.str();
}

}  // namespace strata::schedule
