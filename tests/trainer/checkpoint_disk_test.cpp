// Checkpoints on disks that fill up or refuse writes, pruning of old
// checkpoints, and the metrics of a run that crashed and resumed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "strata/checkpoint/checkpoint.h"
#include "strata/train/train_loop.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

namespace fs = std::filesystem;
using strata::testing::RankContext;

TrainConfig runConfig(const std::string& dir, int64_t steps) {
  TrainConfig c = tinyConfig();
  c.train.steps = steps;
  c.train.evalEvery = 0;
  c.train.outDir = dir + "/run";
  c.checkpoint.dir = dir + "/checkpoints";
  c.checkpoint.every = 2;
  return c;
}

uintmax_t bytesUnder(const fs::path& dir) {
  uintmax_t total = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) total += entry.file_size();
  return total;
}

std::string fileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The points of the SVG's longest polyline: the training curve.
size_t trainCurvePoints(const std::string& svg) {
  size_t most = 0;
  for (size_t at = svg.find("points='"); at != std::string::npos; at = svg.find("points='", at)) {
    at += 8;
    std::string points = svg.substr(at, svg.find('\'', at) - at);
    most = std::max<size_t>(most, std::count(points.begin(), points.end(), ','));
  }
  return most;
}

// Trains `config` on two processes (dp 2); each rank writes what
// runTraining threw (or "") and its log to files in `dir`.
void trainOnTwoRanks(const std::string& dir, const std::string& name, const TrainConfig& config) {
  strata::testing::runInProcesses(
      2,
      [&](const RankContext& ctx) {
        std::ostringstream log;
        std::string error;
        try {
          Trainer trainer(config, World::init());
          runTraining(trainer, log);
        } catch (const CheckpointError& e) {
          error = e.what();
        }
        std::string suffix = "-" + name + "-" + std::to_string(ctx.rank) + ".txt";
        std::ofstream(dir + "/error" + suffix) << error;
        std::ofstream(dir + "/log" + suffix) << log.str();
      },
      sharedDirOptions(dir));
}

// The checkpoint folder is a tmpfs with room for one checkpoint and a bit:
// the save of step 4 fails on every rank alike, naming the full disk, and the
// checkpoint of step 2 stays intact. Resumed with on_save_error = continue,
// the run loads it, warns at each failed save and finishes. The same with
// saves written in the background, whose failure surfaces at completion.
void expectAFullDiskFailsTheSaveEverywhere(bool async) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  std::string dir = sharedDir(async ? "fulldisk-async" : "fulldisk");
  TrainConfig config = runConfig(dir, 4);
  config.parallel.dp = 2;
  config.checkpoint.async = async;

  TrainConfig sizing = config;  // one checkpoint's size, on an ordinary disk
  sizing.train.steps = 2;
  sizing.checkpoint.dir = dir + "/sizing";
  trainOnTwoRanks(dir, "sizing", sizing);
  uintmax_t oneCheckpoint = bytesUnder(stepDirectory(sizing.checkpoint.dir, 2));
  ASSERT_GT(oneCheckpoint, 0u);

  // Only the parent mounts: the ranks re-run this body up to their part.
  bool parent = !strata::testing::inRankProcess();
  fs::create_directories(config.checkpoint.dir);
  std::string mount = "mount -t tmpfs -o size=" + std::to_string(oneCheckpoint * 13 / 10) +
                      " strata-full " + config.checkpoint.dir;
  if (parent && std::system(mount.c_str()) != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << mount;
  std::shared_ptr<void> unmount(nullptr, [&](void*) {
    if (parent) std::system(("umount " + config.checkpoint.dir).c_str());
  });
  trainOnTwoRanks(dir, "stop", config);
  std::string error = fileText(dir + "/error-stop-0.txt");
  EXPECT_EQ(fileText(dir + "/error-stop-1.txt"), error) << "every rank reports the same";
  EXPECT_NE(error.find("the checkpoint of step 4 in '" + config.checkpoint.dir +
                       "' was not saved: rank "),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
  EXPECT_NE(error.find("its partial files are removed, and the latest complete checkpoint, '" +
                       stepDirectory(config.checkpoint.dir, 2) + "', is intact"),
            std::string::npos)
      << error;
  EXPECT_FALSE(fs::exists(stepDirectory(config.checkpoint.dir, 4)));

  TrainConfig resumed = config;
  resumed.train.steps = 6;
  resumed.checkpoint.resume = true;
  resumed.checkpoint.onSaveError = "continue";
  trainOnTwoRanks(dir, "continue", resumed);
  std::string log = fileText(dir + "/log-continue-0.txt");
  EXPECT_EQ(fileText(dir + "/error-continue-0.txt"), "") << log;
  EXPECT_NE(log.find("resumed at step 2"), std::string::npos) << log;
  EXPECT_NE(log.find("warning: the checkpoint of step 4"), std::string::npos) << log;
  EXPECT_NE(log.find("warning: the checkpoint of step 6"), std::string::npos) << log;
  EXPECT_NE(log.find("step 6/6"), std::string::npos) << log;
  unmount.reset();
  removeSharedDir(dir);
}

TEST(CheckpointDisk, AFullDiskFailsTheSaveEverywhereAndKeepsTheLastCheckpoint) {
  expectAFullDiskFailsTheSaveEverywhere(false);
}

TEST(CheckpointDisk, AFullDiskFailsABackgroundSaveEverywhereAndKeepsTheLastCheckpoint) {
  expectAFullDiskFailsTheSaveEverywhere(true);
}

TEST(CheckpointDisk, AnUnwritableFolderIsReportedBeforeTheFirstStep) {
  std::string dir = sharedDir("unwritable");
  TrainConfig config = runConfig(dir, 2);
  std::ofstream(dir + "/file") << "not a folder";
  config.checkpoint.dir = dir + "/file/checkpoints";
  Trainer trainer(config, singleProcessWorld());
  std::ostringstream log;
  try {
    runTraining(trainer, log);
    ADD_FAILURE() << "training ran with an unwritable checkpoint folder";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("the checkpoint directory '" + config.checkpoint.dir +
                                         "' is not writable: rank 0: cannot create it: "),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(trainer.stepsDone(), 0);
  removeSharedDir(dir);
}

// keep 2 of a save every step: only the newest two remain, and an older
// unfinished save goes with the checkpoints before it.
TEST(CheckpointDisk, OnlyTheNewestCheckpointsAreKept) {
  std::string dir = sharedDir("keep");
  TrainConfig config = runConfig(dir, 5);
  config.checkpoint.every = 1;
  config.checkpoint.keep = 2;
  fs::create_directories(stepDirectory(config.checkpoint.dir, 0));  // a save that never finished
  Trainer trainer(config, singleProcessWorld());
  std::ostringstream log;
  runTraining(trainer, log);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(config.checkpoint.dir))
    left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"step-000004", "step-000005"})) << log.str();
  EXPECT_NE(log.str().find("removed old checkpoint " + stepDirectory(config.checkpoint.dir, 3) +
                           " (keep 2)"),
            std::string::npos)
      << log.str();
  removeSharedDir(dir);
}

// Steps 1-3 are logged, the crash loses the checkpoint of step 3: the
// resumed run logs steps 3-5 again, and metrics.jsonl holds each step once
// and loss.svg all five.
TEST(CheckpointDisk, AResumedRunLogsEveryStepOnce) {
  std::string dir = sharedDir("metrics");
  TrainConfig config = runConfig(dir, 3);
  config.train.logEvery = 1;
  {
    Trainer trainer(config, singleProcessWorld());
    std::ostringstream log;
    runTraining(trainer, log);
  }
  fs::remove_all(stepDirectory(config.checkpoint.dir, 3));
  config.train.steps = 5;
  config.checkpoint.resume = true;
  {
    Trainer trainer(config, singleProcessWorld());
    std::ostringstream log;
    runTraining(trainer, log);
    EXPECT_NE(log.str().find("resumed at step 2"), std::string::npos) << log.str();
  }
  std::ifstream metrics(config.train.outDir + "/metrics.jsonl");
  std::vector<int64_t> steps;
  for (std::string line; std::getline(metrics, line);)
    steps.push_back(nlohmann::json::parse(line)["step"].get<int64_t>());
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(trainCurvePoints(fileText(config.train.outDir + "/loss.svg")), 5u);
  removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train::testing
