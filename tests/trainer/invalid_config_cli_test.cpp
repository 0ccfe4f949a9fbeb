// Every invalid configuration is refused with a message naming the values,
// on every rank alike, through the real command line:
//
//   strata launch --nproc-per-node 4 -- strata train FLAGS...
//
// Each worker decides alone, before any collective, and exits with 2 (a
// ConfigError); the launcher then reports the failed worker and exits with 1
// (launcher.h). Every worker's stderr reaches the launcher's output prefixed
// "[rank N] ", so the message must appear once under each of the 4 prefixes.
// A job that is still running after kLimit is killed and fails the test.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "strata/util/subprocess.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kWorkers = 4;
constexpr std::chrono::seconds kLimit{90};

struct JobResult {
  ExitStatus exit;
  std::string output;  // the launcher's stdout and stderr, workers' lines included
};

std::string readWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A valid tiny job; each case appends the flags that break it (a later flag
// wins over an earlier one).
std::vector<std::string> validTrainFlags(const std::string& outDir) {
  return {"--layers",  "4",  "--hidden",       "32",  "--heads",        "4",
          "--ffn",     "64", "--vocab",        "256", "--context",      "16",
          "--seq-len", "16", "--global-batch", "8",   "--micro-batch",  "2",
          "--steps",   "2",  "--warmup-steps", "1",   "--corpus-bytes", "20000",
          "--pp",      "2",  "--tp",           "2",   "--out-dir",      outDir};
}

JobResult launchTrain(const std::vector<std::string>& breakingFlags, const std::string& workDir) {
  std::string log = workDir + "/launch.log";
  int fd = open(log.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  SpawnSpec spec;
  spec.argv = {STRATA_BINARY,
               "launch",
               "--nproc-per-node",
               std::to_string(kWorkers),
               "--timeout",
               "30",
               "--",
               STRATA_BINARY,
               "train"};
  for (const std::string& flag : validTrainFlags(workDir + "/run")) spec.argv.push_back(flag);
  for (const std::string& flag : breakingFlags) spec.argv.push_back(flag);
  spec.stdoutFd = fd;
  spec.stderrFd = fd;
  auto deadline = Clock::now() + kLimit;
  pid_t pid = spawnProcess(spec);
  close(fd);
  JobResult result;
  for (;;) {
    if (auto status = pollExit(pid)) {
      result.exit = *status;
      break;
    }
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      result.exit = waitExit(pid);
      ADD_FAILURE() << "strata launch still ran after " << kLimit.count() << " s";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.output = readWholeFile(log);
  return result;
}

// True when some line of `output` starts with `prefix` and contains `part`.
bool someLineHas(const std::string& output, const std::string& prefix, const std::string& part) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) == 0 && line.find(part) != std::string::npos) return true;
  }
  return false;
}

struct InvalidCase {
  const char* name;
  std::vector<std::string> flags;     // appended to the valid ones
  std::string configFile;             // written and passed with --config when not empty
  std::vector<std::string> expected;  // each on a line of every rank's output
};

void PrintTo(const InvalidCase& c, std::ostream* out) { *out << c.name; }

class InvalidTrainConfig : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidTrainConfig, EveryRankRefusesItNamingTheValues) {
  const InvalidCase& c = GetParam();
  fs::path workDir = fs::temp_directory_path() /
                     ("strata_invalid_" + std::string(c.name) + "_" + std::to_string(getpid()));
  fs::remove_all(workDir);
  fs::create_directories(workDir);
  std::vector<std::string> flags = c.flags;
  if (!c.configFile.empty()) {
    std::string path = (workDir / "train.toml").string();
    std::ofstream(path) << c.configFile;
    flags.insert(flags.begin(), {"--config", path});
  }

  JobResult job = launchTrain(flags, workDir.string());
  EXPECT_EQ(job.exit.describe(), "exit code 1") << job.output;
  EXPECT_NE(job.output.find("failed with exit code 2"), std::string::npos) << job.output;
  for (int rank = 0; rank < kWorkers; ++rank) {
    std::string prefix = "[rank " + std::to_string(rank) + "] ";
    for (const std::string& part : c.expected) {
      EXPECT_TRUE(someLineHas(job.output, prefix, part))
          << "rank " << rank << " did not say '" << part << "':\n"
          << job.output;
    }
  }
  EXPECT_FALSE(fs::exists(workDir / "run" / "metrics.jsonl")) << "training started anyway";
  fs::remove_all(workDir);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InvalidTrainConfig,
    ::testing::Values(
        InvalidCase{"WorldSizeNotLayout",
                    {"--pp", "1", "--dp", "1"},
                    "",
                    {"world size 4 != pp 1 x dp 1 x tp 2"}},
        InvalidCase{"FewerLayersThanStages",
                    {"--pp", "4", "--tp", "1", "--layers", "3"},
                    "",
                    {"model.layers 3 is fewer than the pipeline stages (pp 4)"}},
        InvalidCase{"HeadsNotDivisibleByTp",
                    {"--pp", "1", "--tp", "4", "--heads", "6", "--hidden", "48"},
                    "",
                    {"model.heads 6 is not divisible by tp 4"}},
        InvalidCase{"HiddenNotDivisibleByTp",
                    {"--pp", "1", "--tp", "4", "--hidden", "34", "--heads", "2"},
                    "",
                    {"model.hidden 34 is not divisible by tp 4"}},
        InvalidCase{"GlobalBatchNotDivisible",
                    {"--pp", "1", "--tp", "1", "--dp", "4", "--global-batch", "12"},
                    "",
                    {"train.global_batch 12 is not divisible by micro_batch 2 x dp 4 = 8"}},
        InvalidCase{
            "TooFewMicroBatchesForSchedule",
            {"--schedule", "interleaved-1f1b", "--virtual-stages", "2", "--global-batch", "2"},
            "",
            {"schedule interleaved-1f1b cannot run 1 micro-batches", "on pp 2"}},
        InvalidCase{
            "UnknownSchedule", {"--schedule", "2f2b"}, "", {"unknown schedule '2f2b'", "1f1b"}},
        InvalidCase{"SequenceLongerThanContext",
                    {"--seq-len", "32"},
                    "",
                    {"train.seq_len 32 is longer than the model's context 16"}},
        InvalidCase{"UnknownKeyInConfigFile",
                    {},
                    "[model]\nlayers = 4\nheadcount = 4\n",
                    {"train.toml:3", "unknown key 'headcount' in [model]"}}),
    [](const ::testing::TestParamInfo<InvalidCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace strata::train
