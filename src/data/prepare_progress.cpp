#include "data/prepare_progress.h"

#include <cstdio>
#include <filesystem>

#include "strata/util/progress_text.h"

namespace strata::train {
namespace {

constexpr double kSecondsBetweenLines = 5;
constexpr int kBarWidth = 20;

std::string megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(bytes) / 1e6);
  return text;
}

}  // namespace

PrepareProgress::PrepareProgress(std::ostream* out, bool terminal, int64_t files, int64_t bytes)
    : out_(out), terminal_(terminal), files_(files), bytes_(bytes) {}

double PrepareProgress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void PrepareProgress::fileDone(const std::string& path) {
  std::error_code error;
  auto size = std::filesystem::file_size(path, error);
  bytesDone_ += error ? 0 : static_cast<int64_t>(size);
  ++filesDone_;
  if (out_ == nullptr) return;
  double now = seconds();
  if (terminal_ || filesDone_ == files_ || now - lastLine_ >= kSecondsBetweenLines) {
    lastLine_ = now;
    draw();
  }
}

void PrepareProgress::draw() {
  double elapsed = seconds();
  double rate = elapsed > 0 ? static_cast<double>(bytesDone_) / 1e6 / elapsed : 0;
  double share = bytes_ > 0 ? static_cast<double>(bytesDone_) / static_cast<double>(bytes_) : 1;
  double remaining = share > 0 ? elapsed / share * (1 - share) : -1;
  std::string line = std::to_string(filesDone_) + "/" + std::to_string(files_) + " files  " +
                     megabytes(bytesDone_) + "/" + megabytes(bytes_) + " MB  " +
                     megabytes(static_cast<int64_t>(rate * 1e6)) + " MB/s  ETA " +
                     util::formatDuration(remaining);
  if (terminal_) {
    int filled = static_cast<int>(share * kBarWidth);
    *out_ << "\r[" << std::string(filled, '#') << std::string(kBarWidth - filled, '.') << "]  "
          << line << std::flush;
  } else {
    *out_ << "prepare " << line << "\n" << std::flush;
  }
}

void PrepareProgress::finish(int64_t documents, int64_t tokens, int width,
                             const std::string& prefix) {
  if (out_ == nullptr) return;
  if (terminal_) *out_ << "\n";
  double elapsed = seconds();
  double rate = elapsed > 0 ? static_cast<double>(bytesDone_) / 1e6 / elapsed : 0;
  *out_ << "prepared " << documents << " documents, " << tokens << " tokens of " << width
        << " bytes from " << files_ << " files (" << megabytes(bytesDone_) << " MB in "
        << util::formatDuration(elapsed) << ", " << megabytes(static_cast<int64_t>(rate * 1e6))
        << " MB/s): " << prefix << ".bin, " << prefix << ".idx\n"
        << std::flush;
}

}  // namespace strata::train
