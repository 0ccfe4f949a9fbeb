// A pipeline rank builds only its own blocks (ModelFamily::build's `held`):
// the blocks it keeps have the whole model's values, the others are empty
// under the same names, and the build never holds more than one block it
// does not keep. Under ZeRO-3 the kept layers are shells, each filled later
// from buildLayer.
#include "models/held_layers.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/shape_communicator.h"
#include "strata/error.h"
#include "strata/models/model_family.h"
#include "strata/report/tensor_memory.h"

namespace strata::models {
namespace {

ModelSpec smallSpec(const std::string& architecture) {
  ModelSpec spec;
  spec.architecture = architecture;
  spec.layers = 6;
  spec.hidden = 64;
  spec.heads = 4;
  spec.ffn = 256;
  spec.vocab = 64;
  spec.context = 16;
  return spec;
}

std::shared_ptr<Communicator> oneRank() { return std::make_shared<ShapeCommunicator>(0, 1); }

torch::nn::Sequential build(const ModelSpec& spec, const std::vector<bool>& held = {},
                            HeldAs heldAs = HeldAs::kWhole) {
  return modelFamily(spec.architecture).build(spec, oneRank(), nullptr, nullptr, held, heldAs);
}

// The GPT and Llama specs, each also with mixture-of-experts blocks.
std::vector<ModelSpec> everyKind() {
  std::vector<ModelSpec> specs;
  for (const char* architecture : {"strata", "llama"}) {
    ModelSpec dense = smallSpec(architecture), moe = dense;
    moe.moe.experts = 4;
    moe.moe.expertFfn = 64;
    moe.moe.every = 2;
    specs.push_back(dense);
    specs.push_back(moe);
  }
  return specs;
}

std::string kindOf(const ModelSpec& spec) {
  return spec.architecture + (spec.moe.enabled() ? " moe" : "");
}

int64_t bytesOf(const torch::nn::Module& module) {
  int64_t bytes = 0;
  for (const at::Tensor& p : module.parameters()) bytes += p.numel() * p.element_size();
  return bytes;
}

TEST(HeldLayers, KeptBlocksHaveTheWholeModelsValuesTheOthersAreEmpty) {
  for (const char* architecture : {"strata", "llama"}) {
    ModelSpec spec = smallSpec(architecture);
    // The embedding, blocks 0 and 4, the head; a V-placed rank holds such.
    std::vector<bool> held = {true, true, false, false, false, true, false, true};
    torch::nn::Sequential whole = build(spec), part = build(spec, held);
    auto wholeLayers = whole->named_children(), partLayers = part->named_children();
    ASSERT_EQ(partLayers.size(), held.size()) << architecture;
    for (size_t i = 0; i < held.size(); ++i) {
      auto wholeTensors = wholeLayers[i].value()->named_parameters();
      auto partTensors = partLayers[i].value()->named_parameters();
      ASSERT_EQ(partTensors.keys(), wholeTensors.keys()) << architecture << " layer " << i;
      for (const auto& item : partTensors) {
        const at::Tensor& expected = wholeTensors[item.key()];
        if (held[i]) {
          EXPECT_TRUE(torch::equal(item.value(), expected)) << architecture << " " << item.key();
        } else {
          EXPECT_EQ(item.value().numel(), 0) << architecture << " " << item.key();
        }
      }
    }
  }
}

TEST(HeldLayers, BuildHoldsOneBlockBeyondTheKeptOnes) {
  train::installTensorMemoryCounter();
  ModelSpec spec = smallSpec("llama");
  std::vector<bool> held(static_cast<size_t>(spec.layers) + 2, false);
  held.front() = held[1] = held.back() = true;  // the first stage of a pp rank
  train::resetPeakTensorBytes();
  int64_t before = train::liveTensorBytes();
  torch::nn::Sequential part = build(spec, held);
  int64_t peak = train::peakTensorBytes() - before;
  torch::nn::Sequential whole = build(spec);
  int64_t kept = 0, block = bytesOf(*whole->ptr(1));
  for (size_t i = 0; i < held.size(); ++i)
    if (held[i]) kept += bytesOf(*whole->ptr(i));
  EXPECT_GT(kept, block);
  EXPECT_LE(peak, kept + block + block / 4) << "kept " << kept << " B, one block " << block << " B";
}

// ZeRO-3's shells: every layer, the embedding and the head included, keeps
// its parameters' shapes with a single float behind each, and its buffers
// whole. buildLayer gives any layer alone with the whole model's values; a
// tied head, its table as "tied_weight".
TEST(HeldLayers, ShellsKeepShapesAndBuildLayerGivesTheValues) {
  std::vector<ModelSpec> specs = everyKind();
  for (const char* architecture : {"strata", "llama"}) {
    specs.push_back(smallSpec(architecture));
    specs.back().tiedEmbeddings = true;
  }
  for (const ModelSpec& spec : specs) {
    std::string kind = kindOf(spec) + (spec.tiedEmbeddings ? " tied" : "");
    torch::nn::Sequential whole = build(spec), shells = build(spec, {}, HeldAs::kShells);
    for (int64_t i = 0; i < spec.layers + 2; ++i) {
      torch::nn::Module& wholeLayer = *whole->ptr(static_cast<size_t>(i));
      torch::nn::Module& shell = *shells->ptr(static_cast<size_t>(i));
      std::shared_ptr<torch::nn::Module> alone =
          modelFamily(spec.architecture).buildLayer(spec, i, oneRank());
      auto expected = wholeLayer.named_parameters(), fresh = alone->named_parameters();
      ASSERT_EQ(fresh.keys(), expected.keys()) << kind << " layer " << i;
      ASSERT_EQ(shell.named_parameters().keys(), expected.keys()) << kind << " layer " << i;
      for (const auto& item : shell.named_parameters()) {
        const at::Tensor& value = expected[item.key()];
        EXPECT_EQ(item.value().sizes(), value.sizes()) << kind << " " << item.key();
        EXPECT_LE(item.value().storage().nbytes(), value.element_size()) << kind << item.key();
        EXPECT_TRUE(torch::equal(fresh[item.key()], value)) << kind << " " << item.key();
      }
      for (const auto& item : shell.named_buffers())
        EXPECT_TRUE(torch::equal(item.value(), wholeLayer.named_buffers()[item.key()]));
    }
  }
}

TEST(HeldLayers, BuildLayerRefusesALayerOutsideTheModel) {
  ModelSpec spec = smallSpec("llama");
  for (int64_t layer : {int64_t{-1}, spec.layers + 2})
    EXPECT_THROW(modelFamily(spec.architecture).buildLayer(spec, layer, oneRank()), ConfigError);
}

TEST(HeldLayers, StandInsAreTheFirstBlockOfTheSameKind) {
  ModelSpec spec = smallSpec("llama");
  EXPECT_EQ(blockStandIns(spec), (std::vector<int64_t>(6, 0)));
  spec.moe.experts = 4;
  spec.moe.every = 2;  // blocks 1, 3 and 5 are mixtures of experts
  EXPECT_EQ(blockStandIns(spec), (std::vector<int64_t>{0, 1, 0, 1, 0, 1}));
}

// What is built only to be emptied or shelled skips drawing its values; the
// embedding and the head outside `held` are drawn (a tied head shares the
// embedding's table).
TEST(HeldLayers, OnlyLayersKeptWholeAndTheEndsDrawTheirValues) {
  std::vector<bool> held = {false, true, false, true};  // 2 blocks: the first stage's block 0
  std::vector<bool> expected = {true, true, false, true};
  for (int64_t layer = 0; layer < 4; ++layer) {
    EXPECT_EQ(drawsValues(held, layer, 3, HeldAs::kWhole), expected[layer]) << layer;
    bool shellOrEmptied = held[layer] || (layer != 0 && layer != 3);
    EXPECT_EQ(drawsValues(held, layer, 3, HeldAs::kShells), !shellOrEmptied) << layer;
  }
  for (int64_t layer = 0; layer < 4; ++layer) {
    EXPECT_TRUE(drawsValues({}, layer, 3, HeldAs::kWhole)) << layer;
    EXPECT_FALSE(drawsValues({}, layer, 3, HeldAs::kShells)) << layer;
  }
}

TEST(HeldLayers, AMaskOfTheWrongLengthIsAConfigError) {
  ModelSpec spec = smallSpec("strata");
  EXPECT_THROW(build(spec, std::vector<bool>(5, true)), ConfigError);
}

}  // namespace
}  // namespace strata::models
