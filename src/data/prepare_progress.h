// The progress of `strata data prepare` on stderr. On a terminal one bar
// redrawn in place:
//   [########............]  12/30 files  48.0/120.0 MB  15.2 MB/s  ETA 4s
// otherwise one plain line at most every 5 seconds and after the last file.
// finish() prints the summary line. A null stream prints nothing. Reads the
// clock; never throws.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace strata::train {

class PrepareProgress {
 public:
  PrepareProgress(std::ostream* out, bool terminal, int64_t files, int64_t bytes);

  void fileDone(const std::string& path);
  void finish(int64_t documents, int64_t tokens, int width, const std::string& prefix);
  int64_t bytesDone() const { return bytesDone_; }

 private:
  double seconds() const;
  void draw();

  std::ostream* out_;
  bool terminal_;
  int64_t files_, bytes_;
  int64_t filesDone_ = 0, bytesDone_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double lastLine_ = 0;
};

}  // namespace strata::train
