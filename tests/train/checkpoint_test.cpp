#include "strata/checkpoint/checkpoint.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "checkpoint/checkpoint_shard.h"
#include "checkpoint/file_digest.h"
#include "formats/atomic_file.h"
#include "multiprocess.h"
#include "runtime/sha256.h"
#include "strata/config/config_file.h"
#include "strata/config/optimizer.h"
#include "strata/runtime/world.h"
#include "strata/version.h"
#include "test_util.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

// A small model with an optimizer and a noisy loss, so the parameters, the
// AdamW moments and the CPU generator all change every step.
struct Trainee {
  torch::nn::Sequential model;
  std::unique_ptr<torch::optim::AdamW> optimizer;
  LrState lr;
  DataPosition data;

  explicit Trainee(uint64_t seed) {
    torch::manual_seed(seed);
    model =
        torch::nn::Sequential(torch::nn::Linear(4, 8), torch::nn::Tanh(), torch::nn::Linear(8, 2));
    optimizer = makeAdamW(model->parameters(), OptimConfig{});
  }
  RankState state() { return {model.ptr().get(), optimizer.get(), lr, data}; }
  void adopt(const RankState& restored) {
    lr = restored.lr;
    data = restored.data;
  }
  // One step on fixed inputs plus fresh noise from the default generator.
  float step() {
    torch::Tensor x = torch::linspace(-1, 1, 12).reshape({3, 4}) + 0.1 * torch::randn({3, 4});
    torch::Tensor loss = model->forward(x).pow(2).mean();
    optimizer->zero_grad();
    loss.backward();
    optimizer->step();
    lr.step += 1;
    data.batch += 1;
    return loss.item<float>();
  }
};

fs::path freshCheckpointDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("strata_ckpt_" + name + std::to_string(getpid()));
  fs::remove_all(dir);
  return dir;
}

ParallelLayout oneRank() { return ParallelLayout(1, ParallelDegrees{}); }

// What saveCheckpoint does on one rank, without a communicator.
std::string saveSingle(const fs::path& dir, int64_t step, Trainee& trainee,
                       const std::string& configToml = "[train]\nsteps = 9\n") {
  std::string stepDir = stepDirectory(dir.string(), step);
  fs::create_directories(stepDir);
  ShardRecord shard = writeShard(stepDir, 0, trainee.state());
  writeMetadataAndMarker(stepDir, {step, 1, ParallelDegrees{}, configToml, {shard}});
  return stepDir;
}

void expectSameParameters(torch::nn::Module& a, torch::nn::Module& b) {
  auto pa = a.parameters(), pb = b.parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(torch::equal(pa[i], pb[i])) << i;
}

TEST(Checkpoint, ResumedTrainingEqualsUninterrupted) {
  fs::path dir = freshCheckpointDir("roundtrip");
  Trainee original(1);
  for (int i = 0; i < 3; ++i) original.step();
  std::string stepDir = saveSingle(dir, 3, original);
  std::vector<float> uninterrupted;
  for (int i = 0; i < 4; ++i) uninterrupted.push_back(original.step());

  Trainee resumed(2);      // different initial weights, fresh optimizer
  torch::manual_seed(99);  // and a different random stream
  RankState state = resumed.state();
  CheckpointInfo info = loadCheckpoint(stepDir, oneRank(), 0, state);
  resumed.adopt(state);
  EXPECT_EQ(info.step, 3);
  EXPECT_EQ(info.configToml, "[train]\nsteps = 9\n");
  EXPECT_EQ(resumed.lr.step, 3);
  EXPECT_EQ(resumed.data, (DataPosition{0, 3}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(resumed.step(), uninterrupted[i]) << "step " << 3 + i;
  expectSameParameters(*original.model, *resumed.model);
  fs::remove_all(dir);
}

// A pipeline rank's shard holds only the layers it keeps (RankState::
// heldLayers). It loads into a whole model (generation assembles so), leaving
// the layers it lacks as they were; a whole-model shard (written before ranks
// released the other stages) loads into a rank whose other layers are
// released, reading only the layers the rank holds.
TEST(Checkpoint, ShardsOfHeldLayersLoadIntoWholeModelsAndBack) {
  fs::path dir = freshCheckpointDir("held");
  Trainee trained(1);
  for (int i = 0; i < 2; ++i) trained.step();
  std::string stepDir = stepDirectory(dir.string(), 2);
  fs::create_directories(stepDir);
  RankState partial = trained.state();
  partial.heldLayers = {true, true, false};  // Linear, Tanh; not the last Linear
  ShardRecord shard = writeShard(stepDir, 0, partial);
  writeMetadataAndMarker(stepDir, {2, 1, ParallelDegrees{}, "", {shard}});

  Trainee whole(2);
  at::Tensor untouched = whole.model[2]->as<torch::nn::Linear>()->weight.clone();
  RankState wholeState = whole.state();
  loadCheckpoint(stepDir, oneRank(), 0, wholeState);
  EXPECT_TRUE(torch::equal(whole.model[0]->as<torch::nn::Linear>()->weight,
                           trained.model[0]->as<torch::nn::Linear>()->weight));
  EXPECT_TRUE(torch::equal(whole.model[2]->as<torch::nn::Linear>()->weight, untouched));

  std::string wholeDir = saveSingle(dir, 3, trained);
  Trainee rank(3);
  {
    torch::NoGradGuard noGrad;
    for (at::Tensor t : rank.model[2]->parameters()) t.set_();  // released
  }
  RankState rankState = rank.state();
  rankState.optimizer = nullptr;  // the model only: a trainer's holds its own layers' state
  rankState.heldLayers = {true, true, false};
  loadCheckpoint(wholeDir, oneRank(), 0, rankState);
  EXPECT_TRUE(torch::equal(rank.model[0]->as<torch::nn::Linear>()->weight,
                           trained.model[0]->as<torch::nn::Linear>()->weight));
  EXPECT_EQ(rank.model[2]->as<torch::nn::Linear>()->weight.numel(), 0);
  fs::remove_all(dir);
}

void flipByte(const std::string& path, size_t offset) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(static_cast<std::streamoff>(offset));
  char byte = 0;
  file.read(&byte, 1);
  file.seekp(static_cast<std::streamoff>(offset));
  byte = static_cast<char>(byte ^ 0x5a);
  file.write(&byte, 1);
}

TEST(Checkpoint, CorruptedShardIsNamed) {
  fs::path dir = freshCheckpointDir("corrupt");
  Trainee trainee(1);
  std::string stepDir = saveSingle(dir, 5, trainee);
  std::string shard = (fs::path(stepDir) / "rank-00000.pt").string();
  flipByte(shard, fs::file_size(shard) / 2);
  RankState state = trainee.state();
  expectErrorNaming<CheckpointError>([&] { loadCheckpoint(stepDir, oneRank(), 0, state); },
                                     {shard, "corrupt", "sha256 expected", "actual"});
  fs::remove_all(dir);
}

TEST(Checkpoint, TruncatedShardIsNamed) {
  fs::path dir = freshCheckpointDir("truncated");
  Trainee trainee(1);
  std::string stepDir = saveSingle(dir, 5, trainee);
  std::string shard = (fs::path(stepDir) / "rank-00000.pt").string();
  auto size = fs::file_size(shard);
  fs::resize_file(shard, size - 100);
  RankState state = trainee.state();
  expectErrorNaming<CheckpointError>(
      [&] { loadCheckpoint(stepDir, oneRank(), 0, state); },
      {shard, "truncated", "expected " + std::to_string(size) + " bytes",
       "found " + std::to_string(size - 100)});
  fs::remove_all(dir);
}

TEST(Checkpoint, TamperedMetadataIsNamed) {
  fs::path dir = freshCheckpointDir("metadata");
  Trainee trainee(1);
  std::string stepDir = saveSingle(dir, 5, trainee);
  std::string metadata = (fs::path(stepDir) / "metadata.toml").string();
  std::ofstream(metadata, std::ios::app) << "# edited\n";
  expectErrorNaming<CheckpointError>([&] { readCheckpointInfo(stepDir); },
                                     {metadata, "sha256 expected"});
  fs::remove_all(dir);
}

std::string readText(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Replaces metadata.toml and vouches for it in COMPLETE, as a save by another
// Strata would have left them.
void rewriteMetadata(const std::string& stepDir, const std::string& metadata) {
  std::ofstream(fs::path(stepDir) / "metadata.toml", std::ios::trunc) << metadata;
  std::ofstream(fs::path(stepDir) / "COMPLETE", std::ios::trunc)
      << "metadata_sha256 = \"" << sha256Hex(metadata) << "\"\n";
}

TEST(Checkpoint, MetadataRecordsTheWritingVersion) {
  fs::path dir = freshCheckpointDir("version");
  Trainee trainee(1);
  std::string stepDir = saveSingle(dir, 5, trainee);
  std::string metadata = readText(fs::path(stepDir) / "metadata.toml");
  EXPECT_NE(metadata.find("\nstrata_version = \"" STRATA_VERSION "\"\n"), std::string::npos)
      << metadata;
  EXPECT_EQ(readCheckpointInfo(stepDir).strataVersion, STRATA_VERSION);
  fs::remove_all(dir);
}

// A checkpoint of another version loads and says which; one from before
// Strata recorded versions (no key) loads with an empty version.
TEST(Checkpoint, CheckpointsOfOtherVersionsLoad) {
  fs::path dir = freshCheckpointDir("otherversion");
  Trainee trainee(1);
  std::string stepDir = saveSingle(dir, 5, trainee);
  std::string metadata = readText(fs::path(stepDir) / "metadata.toml");
  std::string ours = "strata_version = \"" STRATA_VERSION "\"\n";
  size_t at = metadata.find(ours);
  ASSERT_NE(at, std::string::npos) << metadata;
  for (std::string recorded : {"0.9.1", ""}) {
    std::string line = recorded.empty() ? "" : "strata_version = \"" + recorded + "\"\n";
    rewriteMetadata(stepDir, std::string(metadata).replace(at, ours.size(), line));
    Trainee restored(2);
    RankState state = restored.state();
    CheckpointInfo info = loadCheckpoint(stepDir, oneRank(), 0, state);
    EXPECT_EQ(info.strataVersion, recorded);
    EXPECT_EQ(info.step, 5);
    expectSameParameters(*trainee.model, *restored.model);
  }
  fs::remove_all(dir);
}

// The record is hashed while the shard streams to disk; it must describe the
// bytes that landed in the file.
TEST(Checkpoint, ShardRecordDescribesTheWrittenFile) {
  fs::path dir = freshCheckpointDir("record");
  Trainee trainee(1);
  std::string stepDir = stepDirectory(dir.string(), 1);
  fs::create_directories(stepDir);
  ShardRecord record = writeShard(stepDir, 0, trainee.state());
  std::string bytes = readText(fs::path(stepDir) / record.file);
  EXPECT_EQ(record.bytes, static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(record.sha256, sha256Hex(bytes));
  fs::remove_all(dir);
}

// A sink that fails mid-archive (a full disk) surfaces its own error, and
// LibTorch does not call it again.
TEST(Checkpoint, FailingShardSinkSurfacesItsOwnError) {
  Trainee trainee(1);
  int calls = 0;
  auto failOnSecond = [&](const void*, size_t) {
    if (++calls == 2) throw CheckpointError("disk full");
  };
  expectErrorNaming<CheckpointError>([&] { serializeShard(trainee.state(), failOnSecond); },
                                     {"disk full"});
  EXPECT_EQ(calls, 2);
}

TEST(Checkpoint, AbandonedAtomicWriteLeavesNoFile) {
  fs::path dir = freshCheckpointDir("abandoned");
  fs::create_directories(dir);
  {
    formats::AtomicFileWriter file((dir / "shard").string());
    file.write("partial", 7);
  }
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

// 2.5 MiB: two whole pieces of the digest's 1 MiB reads and a partial one.
TEST(Checkpoint, FileDigestCoversEveryPiece) {
  fs::path dir = freshCheckpointDir("digest");
  fs::create_directories(dir);
  std::string bytes;
  for (size_t i = 0; i < (size_t{5} << 19); ++i) bytes += static_cast<char>(i * 31 % 251);
  std::string path = (dir / "big").string();
  std::ofstream(path, std::ios::binary) << bytes;
  FileDigest digest = digestFile(path);
  EXPECT_EQ(digest.bytes, static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(digest.sha256, sha256Hex(bytes));
  std::string missing = (dir / "missing").string();
  expectErrorNaming<CheckpointError>([&] { digestFile(missing); }, {missing});
  fs::remove_all(dir);
}

// The metadata is TOML 1.0, where nan and inf are numbers like any other: a
// run's configuration with non-finite values (and strings that need escapes)
// reads back from it unchanged.
TEST(Checkpoint, MetadataKeepsNonFiniteNumbers) {
  fs::path dir = freshCheckpointDir("nonfinite");
  Trainee trainee(1);
  TrainConfig config;
  config.train.gradClip = HUGE_VAL;  // never clip
  config.model.dropout = std::nan("");
  config.data.files = {"a \"b\".txt", "tab\there.txt"};
  std::string stepDir = saveSingle(dir, 5, trainee, configToToml(config));
  CheckpointInfo info = readCheckpointInfo(stepDir);
  EXPECT_EQ(info.configToml, configToToml(config));
  TrainConfig back;
  applyConfigToml(info.configToml, "the checkpoint's config", back);
  EXPECT_EQ(back.train.gradClip, HUGE_VAL);
  EXPECT_TRUE(std::isnan(back.model.dropout));
  EXPECT_EQ(back.data.files, config.data.files);
  fs::remove_all(dir);
}

TEST(Checkpoint, UnfinishedSavesAreNeverPicked) {
  fs::path dir = freshCheckpointDir("unfinished");
  EXPECT_EQ(findLatestComplete(dir.string()), std::nullopt);  // no directory at all
  Trainee trainee(1);
  std::string complete = saveSingle(dir, 10, trainee);
  // Killed after the metadata but before the marker.
  std::string noMarker = saveSingle(dir, 20, trainee);
  fs::remove(fs::path(noMarker) / "COMPLETE");
  // Killed while ranks were still writing shards: no metadata, no marker, a
  // temporary file left behind.
  std::string midway = stepDirectory(dir.string(), 30);
  fs::create_directories(midway);
  writeShard(midway, 0, trainee.state());
  std::ofstream(fs::path(midway) / "rank-00001.pt.tmp-12345") << "partial";
  // Not checkpoints at all.
  fs::create_directories(dir / "step-abc");
  std::ofstream(dir / "step-000040") << "a file";

  EXPECT_EQ(findLatestComplete(dir.string()), complete);
  expectErrorNaming<CheckpointError>([&] { readCheckpointInfo(noMarker); },
                                     {noMarker, "incomplete", "COMPLETE"});
  fs::remove_all(dir);
}

TEST(Checkpoint, LatestCompleteStepWins) {
  fs::path dir = freshCheckpointDir("latest");
  Trainee trainee(1);
  saveSingle(dir, 9, trainee);
  std::string newest = saveSingle(dir, 1000000, trainee);  // seven digits
  saveSingle(dir, 99, trainee);
  EXPECT_EQ(findLatestComplete(dir.string()), newest);
  EXPECT_EQ(fs::path(newest).filename(), "step-1000000");
  fs::remove_all(dir);
}

TEST(Checkpoint, LayoutMismatchIsNamed) {
  fs::path dir = freshCheckpointDir("layout");
  Trainee trainee(1);
  std::string stepDir = saveSingle(dir, 5, trainee);
  RankState state = trainee.state();
  ParallelDegrees twoWay;
  twoWay.tp = 2;
  expectErrorNaming<CheckpointError>(
      [&] { loadCheckpoint(stepDir, ParallelLayout(2, twoWay), 0, state); },
      {stepDir, "1 ranks", "tp 2"});
  fs::remove_all(dir);
}

TEST(Checkpoint, ModelMismatchIsNamed) {
  fs::path dir = freshCheckpointDir("model");
  Trainee trainee(1);
  std::string stepDir = saveSingle(dir, 5, trainee);
  torch::nn::Sequential other(torch::nn::Linear(4, 3));
  auto optimizer = makeAdamW(other->parameters(), OptimConfig{});
  RankState state{other.ptr().get(), optimizer.get(), {}, {}};
  expectErrorNaming<CheckpointError>(
      [&] { loadCheckpoint(stepDir, oneRank(), 0, state); },
      {"rank-00000.pt", "does not fit", "'0.weight' has shape [8, 4]", "[3, 4] here"});
  fs::remove_all(dir);
}

// Two ranks with different models save collectively, then each restores its
// own shard; a second save of the same step replaces the first.
void collectiveSave(const testing::RankContext& ctx, const std::string& dir) {
  auto world = World::init();
  ParallelDegrees degrees;
  degrees.pp = 2;
  ParallelLayout layout(2, degrees);
  Trainee trainee(static_cast<uint64_t>(10 + ctx.rank));
  trainee.step();
  saveCheckpoint(dir, 7, layout, "config", trainee.state(), world->comm());
  trainee.step();
  saveCheckpoint(dir, 7, layout, "config", trainee.state(), world->comm());
  std::optional<std::string> latest = findLatestComplete(dir);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(*latest, stepDirectory(dir, 7));

  Trainee restored(99);
  RankState state = restored.state();
  CheckpointInfo info = loadCheckpoint(*latest, layout, ctx.rank, state);
  EXPECT_EQ(info.shards.size(), 2u);
  EXPECT_EQ(info.degrees.pp, 2);
  EXPECT_EQ(state.lr.step, 2);
  expectSameParameters(*trainee.model, *restored.model);
}

TEST(Checkpoint, CollectiveSaveOnTwoRanks) {
  // Ranks are re-executed processes: the parent picks the folder and passes it down.
  const char* inherited = std::getenv("STRATA_TEST_CKPT_DIR");
  std::string dir = inherited ? inherited : freshCheckpointDir("collective").string();
  testing::MultiProcessOptions options;
  options.env["STRATA_TEST_CKPT_DIR"] = dir;
  testing::runInProcesses(
      2, [&](const testing::RankContext& ctx) { collectiveSave(ctx, dir); }, options);
  if (!inherited) fs::remove_all(dir);
}

// Rank 1 joins saveCheckpoint's first collective (an all-gather of "no
// problem creating the step directory" flags) and writes its shard like a
// real save, then dies before the next one: rank 0 must fail with a
// communication error, and the half-written step must stay invisible.
void dieDuringSave(const testing::RankContext& ctx, const std::string& dir) {
  auto world = World::init();
  ParallelDegrees degrees;
  degrees.dp = 2;
  ParallelLayout layout(2, degrees);
  Trainee trainee(1);
  if (ctx.rank == 1) {
    at::Tensor problems = torch::empty({2}, torch::kInt);
    world->comm().allGather(problems, torch::zeros({1}, torch::kInt));
    fs::create_directories(stepDirectory(dir, 5));
    writeShard(stepDirectory(dir, 5), 1, trainee.state());
    std::_Exit(3);
  }
  EXPECT_THROW(saveCheckpoint(dir, 5, layout, "", trainee.state(), world->comm()), Error);
}

TEST(Checkpoint, SaveKilledMidwayIsNeverPicked) {
  const char* inherited = std::getenv("STRATA_TEST_CKPT_DIR");
  std::string dir = inherited ? inherited : freshCheckpointDir("killed").string();
  testing::MultiProcessOptions options;
  options.env["STRATA_TEST_CKPT_DIR"] = dir;
  options.killOthersOnFailure = false;
  options.commTimeoutSeconds = 20;
  std::vector<testing::RankResult> results = testing::runInProcessesRaw(
      2, [&](const testing::RankContext& ctx) { dieDuringSave(ctx, dir); }, options);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].exit.success()) << results[0].output;
  EXPECT_EQ(results[1].exit.code, 3) << results[1].output;
  EXPECT_TRUE(fs::exists(fs::path(stepDirectory(dir, 5)) / "rank-00000.pt"));
  EXPECT_TRUE(fs::exists(fs::path(stepDirectory(dir, 5)) / "rank-00001.pt"));
  EXPECT_EQ(findLatestComplete(dir), std::nullopt);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace strata::train
