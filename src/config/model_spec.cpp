#include "strata/config/model_spec.h"

namespace strata::train {

models::ModelSpec modelSpecOf(const TrainConfig& c) {
  models::ModelSpec m;
  m.architecture = c.model.architecture;
  m.layers = c.model.layers;
  m.hidden = c.model.hidden;
  m.heads = c.model.heads;
  m.kvHeads = c.model.kvHeads;
  m.ffn = c.model.ffn;
  m.vocab = c.model.vocab;
  m.context = c.model.context;
  m.dropout = c.model.dropout;
  m.tiedEmbeddings = c.model.tiedEmbeddings;
  m.ropeTheta = c.model.ropeTheta;
  m.ropeScaling = c.model.ropeScaling;
  m.rmsNormEps = c.model.rmsNormEps;
  m.sequenceParallel = c.parallel.sequenceParallel;
  m.moe = c.model.moe;
  m.seed = static_cast<uint64_t>(c.train.seed);
  if (c.finetune.lora()) {
    m.lora.adapter = {c.finetune.rank, c.finetune.alpha};
    m.lora.adapter.dropout = c.finetune.dropout;
    m.lora.targets = {c.finetune.targets.begin(), c.finetune.targets.end()};
  }
  return m;
}

models::ModelSpec trainingModelSpecOf(const TrainConfig& c) {
  models::ModelSpec m = modelSpecOf(c);
  m.fusedHeadLoss = c.parallel.zero != 3;
  return m;
}

}  // namespace strata::train
