// MappedShard (src/checkpoint/mapped_shard.h): a LibTorch archive
// opened as a mapping reads, at every key, the tensor LibTorch's own loader
// reads; opening it and reading one small tensor holds none of the others
// in memory; and what it cannot read is named.
#include "checkpoint/mapped_shard.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <sstream>
#include <string>

#include "strata/error.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

// The archive's layout as a shard has it: tensors at the top level and in
// nested archives, of several dtypes.
void writeArchive(const std::string& path, const at::Tensor& big) {
  torch::serialize::OutputArchive top, model, block;
  block.write("weight", torch::arange(12, torch::kFloat).view({3, 4}));
  block.write("bias", torch::tensor({-1.5, 2.5}, torch::kDouble), /*is_buffer=*/true);
  model.write("block0", block);
  model.write("big", big);
  top.write("model", model);
  top.write("lr_step", torch::tensor(7, torch::kLong));
  top.write("rng_cpu", torch::arange(5, torch::kUInt8));
  top.save_to(path);
}

// LibTorch's loader at a '/'-separated key.
at::Tensor loadedAt(const std::string& path, const std::string& key) {
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  std::vector<torch::serialize::InputArchive> levels(4);
  torch::serialize::InputArchive* current = &archive;
  size_t start = 0, slash, depth = 0;
  while ((slash = key.find('/', start)) != std::string::npos) {
    current->read(key.substr(start, slash - start), levels[depth]);
    current = &levels[depth++];
    start = slash + 1;
  }
  at::Tensor value;
  current->read(key.substr(start), value);
  return value;
}

int64_t residentKiB() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

TEST(MappedShard, ReadsAtEveryKeyWhatLibTorchsLoaderReads) {
  std::string dir = sharedDir("mapped-shard-equal");
  std::string path = dir + "/rank-00000.pt";
  writeArchive(path, torch::randn({1000}));
  MappedShard shard(path);
  for (const char* key :
       {"model/block0/weight", "model/block0/bias", "model/big", "lr_step", "rng_cpu"}) {
    std::optional<at::Tensor> mapped = shard.tensor(key);
    ASSERT_TRUE(mapped.has_value()) << key;
    at::Tensor loaded = loadedAt(path, key);
    EXPECT_EQ(mapped->scalar_type(), loaded.scalar_type()) << key;
    EXPECT_TRUE(torch::equal(*mapped, loaded)) << key;
  }
  EXPECT_FALSE(shard.tensor("model/block1/weight").has_value());
  EXPECT_FALSE(shard.tensor("model/block0").has_value());  // an archive, not a tensor
  EXPECT_FALSE(shard.tensor("lr_step/more").has_value());
  removeSharedDir(dir);
}

// 64 MB in one tensor beside a small one: reading the small one reads
// (and holds) next to nothing of the big one. LibTorch's loader holds all
// of it.
TEST(MappedShard, ReadingOneTensorHoldsNoneOfTheOthers) {
  std::string dir = sharedDir("mapped-shard-lazy");
  std::string path = dir + "/rank-00000.pt";
  writeArchive(path, torch::ones({16 << 20}));
  int64_t before = residentKiB();
  MappedShard shard(path);
  at::Tensor small = shard.tensor("model/block0/weight")->clone();
  int64_t held = residentKiB() - before;
  EXPECT_EQ(small.sum().item<double>(), 66.0);
  EXPECT_LT(held, 16 * 1024) << "KiB resident after reading one small tensor";
  removeSharedDir(dir);
}

TEST(MappedShard, WhatItCannotReadIsNamed) {
  std::string dir = sharedDir("mapped-shard-errors");
  auto expectNamed = [](const std::string& path, const std::string& words) {
    try {
      MappedShard shard(path);
      ADD_FAILURE() << "read " << path;
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expectNamed(dir + "/absent.pt", "cannot open");
  std::string text = dir + "/text.pt";
  std::ofstream(text) << "not an archive\n";
  expectNamed(text, "cannot be read");
  removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train::testing
