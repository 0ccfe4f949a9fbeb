#include "report/stragglers.h"

#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <sstream>

namespace strata::train {
namespace {

constexpr int64_t kHostBytes = 64;

// This host's name as kHostBytes bytes, zero-padded.
at::Tensor hostNameBytes() {
  char name[kHostBytes] = {};
  gethostname(name, kHostBytes - 1);
  at::Tensor bytes = torch::zeros({kHostBytes}, torch::kUInt8);
  std::copy(name, name + kHostBytes, bytes.data_ptr<uint8_t>());
  return bytes;
}

double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

StragglerWatch::StragglerWatch(Communicator& world, double factor)
    : world_(world), factor_(factor) {
  at::Tensor all = torch::zeros({world.size() * kHostBytes}, torch::kUInt8);
  world.allGather(all, hostNameBytes());
  const auto* bytes = all.data_ptr<uint8_t>();
  for (int r = 0; r < world.size(); ++r) {
    const char* name = reinterpret_cast<const char*>(bytes + r * kHostBytes);
    hosts_.emplace_back(name, strnlen(name, kHostBytes));
  }
}

StragglerWatch::Comparison StragglerWatch::compare(double computeSeconds) {
  at::Tensor all = torch::zeros({world_.size()}, torch::kDouble);
  world_.allGather(all, torch::full({1}, computeSeconds, torch::kDouble));
  std::vector<double> seconds(all.data_ptr<double>(), all.data_ptr<double>() + world_.size());
  Comparison result;
  result.seconds = seconds;
  result.medianSeconds = medianOf(seconds);
  if (result.medianSeconds <= 0) return result;  // nothing traced: nothing to compare
  for (int r = 0; r < world_.size(); ++r) {
    if (seconds[r] > factor_ * result.medianSeconds)
      result.stragglers.push_back({r, hosts_[r], seconds[r]});
  }
  return result;
}

std::string stragglerLine(int64_t step, const Straggler& s, double medianSeconds, int ranks,
                          double factor) {
  std::ostringstream line;
  line.precision(3);
  line << "strata train: straggler at step " << step << ": rank " << s.rank << " (" << s.host
       << ") computed " << s.computeSeconds << " s, " << s.computeSeconds / medianSeconds
       << " x the median " << medianSeconds << " s of the " << ranks << " ranks (straggler factor "
       << factor << ")";
  return line.str();
}

}  // namespace strata::train
