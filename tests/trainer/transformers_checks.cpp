#include "transformers_checks.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <set>

#include "independent_gpt2.h"
#include "project_python.h"
#include "strata/formats/safetensors.h"
#include "strata/models/model_family.h"
#include "strata/pipeline/pipeline.h"
#include "trainer_test_util.h"

namespace strata::train::testing {

// reference/transformers_reference.py with `args`; its output when it fails.
void runReference(const std::vector<std::string>& args) {
  runPythonScript(STRATA_TRANSFORMERS_REFERENCE, args);
}

nlohmann::json readJson(const std::string& path) {
  nlohmann::json json;
  std::ifstream(path) >> json;
  return json;
}

// Within kTolerance everywhere; the largest difference is printed, for the
// record of how close the two are.
void expectSameLogits(const torch::Tensor& strata, const torch::Tensor& transformers,
                      const std::string& what) {
  ASSERT_EQ(strata.sizes(), transformers.sizes()) << what;
  double largest = (strata - transformers).abs().max().item<double>();
  std::cout << what << ": largest |Strata - transformers| logit difference " << largest
            << " (logits up to " << transformers.abs().max().item<double>() << ")" << std::endl;
  EXPECT_LE(largest, kTolerance) << what;
}

torch::Tensor logitsAt(const std::string& path) {
  return readSafetensorsIndependently(path).tensors.at("logits").value;
}

void writeIds(const std::string& path, const torch::Tensor& ids) {
  std::vector<std::vector<int64_t>> rows;
  for (int64_t b = 0; b < ids.size(0); ++b) {
    torch::Tensor row = ids[b].contiguous();
    rows.emplace_back(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel());
  }
  std::ofstream(path) << nlohmann::json(rows).dump();
}

// Strata's logits of `ids` [b, s] in the trainer's layout, on the ranks of
// the last pipeline stage: this tp rank's share of the (padded) vocabulary,
// [s, b, Vp / tp]; undefined on the other ranks. The trainer's own model
// takes the head's product inside the loss, so a model of the same spec with
// a logits head is built over the trainer's tp group, cut into the stages
// the trainer's pipeline has, given the trainer's parameters by name (every
// one it runs), and run forward by a pipeline over the trainer's groups,
// whose loss function keeps what the last stage returns.
torch::Tensor pipelineLogits(const Trainer& trainer, const torch::Tensor& ids) {
  const TrainConfig& config = trainer.config();
  const ParallelGroups& groups = trainer.groups();
  models::ModelSpec spec = modelSpecOf(config);
  pipeline::PipelineOptions options;
  options.layersPerStage.assign(config.parallel.stageLayers.begin(),
                                config.parallel.stageLayers.end());
  std::vector<bool> held = pipeline::layersHeldBy(static_cast<int>(spec.layers) + 2,
                                                  groups.pp->size(), groups.coord.pp, options);
  torch::nn::Sequential model =
      models::modelFamily(spec.architecture).build(spec, groups.tp, nullptr, nullptr, held);
  pipeline::Pipeline pipe(model, groups, options);
  std::set<c10::TensorImpl*> runs;
  for (const at::Tensor& t : pipe.parameters()) runs.insert(t.unsafeGetTensorImpl());
  std::map<std::string, at::Tensor> loaded;
  for (const ParameterShard& shard : trainer.parameterShards()) loaded[shard.name] = shard.tensor;
  {
    torch::NoGradGuard noGrad;
    std::set<c10::TensorImpl*> filled;
    for (const auto& item : model->named_parameters()) {
      if (!runs.count(item.value().unsafeGetTensorImpl())) continue;
      // A tied head's weight is the embedding's, which the trainer names.
      std::string name =
          item.key() == models::kTiedHeadName ? models::kTiedEmbeddingName : item.key();
      auto found = loaded.find(name);
      if (found == loaded.end() || !found->second.sizes().equals(item.value().sizes()))
        throw std::runtime_error("the trainer holds no " + name + " of this rank's shape");
      item.value().copy_(found->second);
      filled.insert(item.value().unsafeGetTensorImpl());
    }
    if (filled.size() != runs.size()) throw std::runtime_error("a parameter was not filled");
  }
  model->eval();
  torch::Tensor logits;
  pipe.evaluate(ids, ids, [&](const at::Tensor& output, const at::Tensor&) {
    logits = output.detach().clone();
    return output.new_zeros({});  // the loss is not what is measured here
  });
  return logits;
}

// The last stage's ranks write their tp share of pipelineLogits' logits
// into `dir` (the other stages have none), for joinedLogits.
void writeLogitsShare(const std::string& dir, const Trainer& trainer, const torch::Tensor& logits) {
  if (!logits.defined()) return;
  formats::writeSafetensors(
      dir + "/strata-tp" + std::to_string(trainer.groups().coord.tp) + ".safetensors",
      {{"logits", logits}}, {});
}

// Each tp rank's share of the last stage's logits, joined: [b, s, vocab].
torch::Tensor joinedLogits(const std::string& dir, int64_t vocab) {
  std::vector<torch::Tensor> shares;
  for (int tp = 0; tp < 2; ++tp)
    shares.push_back(logitsAt(dir + "/strata-tp" + std::to_string(tp) + ".safetensors"));
  return torch::cat(shares, 2).narrow(2, 0, vocab).transpose(0, 1);
}

torch::Tensor idsOf(const nlohmann::json& report) {
  std::vector<torch::Tensor> rows;
  for (const auto& row : report["ids"])
    rows.push_back(torch::tensor(row.get<std::vector<int64_t>>(), torch::kLong));
  return torch::stack(rows);  // [b, s]
}

// `greedy` (weights, maybe an adapter) at temperature 0 with the byte
// tokenizer continues report.json's prompt with its "generated" ids, what
// `by` (transformers or PEFT) generated greedily.
void expectGreedyContinuation(GenerateOptions greedy, const nlohmann::json& report,
                              const std::string& by) {
  greedy.tokenizer = "byte";
  greedy.prompt = report["prompt"].get<std::string>();
  std::vector<int64_t> expected = report["generated"].get<std::vector<int64_t>>();
  greedy.tokens = static_cast<int64_t>(expected.size());
  std::string text = generateText(greedy);
  std::vector<int64_t> generated;
  for (size_t i = greedy.prompt.size(); i < text.size(); ++i)
    generated.push_back(static_cast<unsigned char>(text[i]));
  std::cout << "greedy after '" << greedy.prompt << "': Strata " << nlohmann::json(generated)
            << ", " << by << " " << nlohmann::json(expected) << std::endl;
  EXPECT_EQ(text.substr(0, greedy.prompt.size()), greedy.prompt);
  EXPECT_EQ(generated, expected);
}

}  // namespace strata::train::testing
