#include "strata/config/validate_config.h"

#include <algorithm>
#include <set>
#include <string>

#include "strata/data/tokenizer.h"
#include "strata/error.h"
#include "strata/schedule/error.h"
#include "strata/schedule/registry.h"
#include "strata/util/toml.h"

namespace strata::train {
namespace {

using std::to_string;

class Problems {
 public:
  void check(bool ok, const std::string& problem) {
    if (!ok) list_.push_back(problem);
  }
  bool empty() const { return list_.empty(); }
  std::vector<std::string> take() { return std::move(list_); }

 private:
  std::vector<std::string> list_;
};

std::string number(double value) {
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}

// Sizes that later checks divide by; when one is below its minimum the
// divisibility checks are skipped.
void checkRanges(const TrainConfig& c, Problems& p) {
  auto atLeast = [&](const char* name, int64_t value, int64_t min) {
    p.check(value >= min,
            std::string(name) + " must be >= " + to_string(min) + ", got " + to_string(value));
  };
  atLeast("model.layers", c.model.layers, 1);
  atLeast("model.hidden", c.model.hidden, 1);
  atLeast("model.heads", c.model.heads, 1);
  atLeast("model.ffn", c.model.ffn, 1);
  atLeast("model.context", c.model.context, 1);
  atLeast("parallel.pp", c.parallel.pp, 1);
  atLeast("parallel.dp", c.parallel.dp, 1);
  atLeast("parallel.cp", c.parallel.cp, 1);
  atLeast("parallel.tp", c.parallel.tp, 1);
  atLeast("parallel.virtual_stages", c.parallel.virtualStages, 1);
  p.check(c.parallel.zero >= 0 && c.parallel.zero <= 3,
          "parallel.zero " + to_string(c.parallel.zero) + " is not a ZeRO stage (0, 1, 2 or 3)");
  atLeast("train.steps", c.train.steps, 0);
  atLeast("train.global_batch", c.train.globalBatch, 1);
  atLeast("train.micro_batch", c.train.microBatch, 1);
  atLeast("train.seq_len", c.train.seqLen, 1);
  atLeast("train.warmup_steps", c.train.warmupSteps, 0);
  p.check(c.train.warmupSteps <= c.train.steps,
          "train.warmup_steps " + to_string(c.train.warmupSteps) + " is more than train.steps " +
              to_string(c.train.steps) +
              ": the learning rate would never reach train.lr (lower --warmup-steps; its default "
              "is 30)");
  atLeast("train.max_skipped_steps", c.train.maxSkippedSteps, 0);
  atLeast("train.threads", c.train.threads, 1);
  atLeast("train.log_every", c.train.logEvery, 1);
  atLeast("train.straggler_every", c.train.stragglerEvery, 0);
  atLeast("train.eval_every", c.train.evalEvery, 0);
  atLeast("train.eval_batches", c.train.evalBatches, 1);
  atLeast("data.corpus_bytes", c.data.corpusBytes, 1);
  atLeast("checkpoint.every", c.checkpoint.every, 0);
  atLeast("checkpoint.keep", c.checkpoint.keep, 0);
}

void checkReals(const TrainConfig& c, Problems& p) {
  auto inRange = [&](const char* name, double value, bool ok, const char* range) {
    p.check(ok, std::string(name) + " must be " + range + ", got " + number(value));
  };
  const OptimConfig& t = c.train;
  inRange("model.dropout", c.model.dropout, c.model.dropout >= 0 && c.model.dropout < 1,
          "in [0, 1)");
  inRange("train.lr", t.lr, t.lr > 0, "> 0");
  inRange("train.min_lr", t.minLr, t.minLr >= 0 && t.minLr <= t.lr,
          ("in [0, lr " + number(t.lr) + "]").c_str());
  inRange("train.weight_decay", t.weightDecay, t.weightDecay >= 0, ">= 0");
  inRange("train.spike_zscore", t.spikeZscore, t.spikeZscore >= 0,
          ">= 0 (0 turns spike detection off)");
  inRange("train.beta1", t.beta1, t.beta1 >= 0 && t.beta1 < 1, "in [0, 1)");
  inRange("train.beta2", t.beta2, t.beta2 >= 0 && t.beta2 < 1, "in [0, 1)");
  inRange("train.eps", t.eps, t.eps > 0, "> 0");
  inRange("train.grad_clip", t.gradClip, t.gradClip >= 0, ">= 0 (0 turns clipping off)");
  inRange("train.straggler_factor", t.stragglerFactor, t.stragglerFactor > 1, "> 1");
  double v = c.data.validationFraction;
  inRange("data.validation_fraction", v, v > 0 && v < 1, "in (0, 1)");
}

// An explicit cut counts the pipeline's layers: the embedding, the blocks
// and the head (buildGpt's model->children()).
// A schedule of two stages per rank in a V (zb-v, dualpipe-v): 2 x pp stages.
bool placesStagesInAV(const std::string& name) {
  for (const schedule::GeneratorInfo& info : schedule::knownGenerators())
    if (info.name == name) return info.stagesPerRank > 1;
  return false;
}

void checkStageLayers(const TrainConfig& c, int64_t stages, const std::string& stageText,
                      Problems& p) {
  const std::vector<int64_t>& counts = c.parallel.stageLayers;
  if (counts.empty()) return;
  int64_t sum = 0;
  bool positive = true;
  for (int64_t count : counts) {
    sum += count;
    positive = positive && count >= 1;
  }
  std::string given =
      "parallel.stage_layers " + util::tomlLiteral(util::TomlArray(counts.begin(), counts.end()));
  int64_t layers = c.model.layers + 2;
  p.check(static_cast<int64_t>(counts.size()) == stages,
          given + " has " + to_string(counts.size()) + " counts, one a stage is " +
              to_string(stages) + " (" + stageText + ")");
  p.check(positive, given + " gives a stage no layers; every stage needs at least 1");
  p.check(sum == layers, given + " adds up to " + to_string(sum) + ", but the model has " +
                             to_string(layers) + " pipeline layers (the embedding, model.layers " +
                             to_string(c.model.layers) + " blocks, the head)");
}

// The Llama family's own keys, and how its attention splits over tp
// (models/llama.h repeats these rules for code that builds it directly).
// [finetune]: LoRA's settings, and the layouts it does not take yet.
void checkFinetune(const TrainConfig& c, Problems& p) {
  const FinetuneConfig& f = c.finetune;
  p.check(f.method == "full" || f.method == "lora",
          "finetune.method must be full or lora, got '" + f.method + "'");
  p.check(f.initAdapter.empty() || f.lora(),
          "finetune.init_adapter needs finetune.method = \"lora\" (the adapters it fills)");
  p.check(f.baseDtype == "fp32" || f.baseDtype == "bf16",
          "finetune.base_dtype must be fp32 or bf16, got '" + f.baseDtype + "'");
  if (f.baseDtype == "bf16") {
    p.check(f.lora(),
            "finetune.base_dtype = \"bf16\" keeps a frozen base: it needs "
            "finetune.method = \"lora\"");
    p.check(c.train.precision == "bf16",
            "finetune.base_dtype = \"bf16\" needs train.precision = \"bf16\" (the base's "
            "products are then computed in bf16; in fp32 they would meet bf16 weights)");
  }
  if (!f.lora()) return;
  p.check(f.rank >= 1, "finetune.rank must be >= 1, got " + to_string(f.rank));
  p.check(f.alpha > 0, "finetune.alpha must be > 0, got " + number(f.alpha));
  p.check(f.dropout >= 0 && f.dropout < 1,
          "finetune.dropout must be in [0, 1), got " + number(f.dropout));
  p.check(!f.targets.empty(), "finetune.targets is empty: name the projections to adapt");
  static const std::set<std::string> kKnown = {"q", "k", "v", "o", "gate", "up", "down"};
  for (const std::string& t : f.targets)
    p.check(kKnown.count(t) > 0, "finetune.targets: '" + t +
                                     "' is not a projection LoRA adapts (q, k, v, o, gate, up, "
                                     "down)");
  p.check(c.model.architecture == kLlamaArchitecture,
          "finetune.method = \"lora\" adapts the Llama family's projections; model.architecture "
          "= " +
              c.model.architecture + " has none (use llama, or finetune.method = \"full\")");
  bool mlpTargets = std::any_of(f.targets.begin(), f.targets.end(), [](const std::string& t) {
    return t == "gate" || t == "up" || t == "down";
  });
  p.check(!mlpTargets || !c.model.moe.enabled() || f.dropout == 0,
          "finetune.dropout " + number(f.dropout) +
              " with targets gate, up or down on a mixture-of-experts model: the experts' rows "
              "arrive in routing order, which no mask follows across layouts; set "
              "finetune.dropout = 0 or adapt q, k, v, o only");
}

void checkLlamaModel(const TrainConfig& c, Problems& p) {
  const ModelConfig& m = c.model;
  int64_t kv = m.kvHeads > 0 ? m.kvHeads : m.heads;
  int64_t tp = c.parallel.tp;
  p.check(m.kvHeads >= 0,
          "model.kv_heads must be >= 0 (0: as many as heads), got " + to_string(m.kvHeads));
  p.check(m.heads % kv == 0,
          "model.kv_heads " + to_string(kv) + " does not divide model.heads " + to_string(m.heads));
  p.check(m.hidden % m.heads == 0 && (m.hidden / m.heads) % 2 == 0,
          "llama needs an even head dimension for rotary embeddings: model.hidden " +
              to_string(m.hidden) + " / model.heads " + to_string(m.heads) + " is not one");
  p.check(kv % tp == 0 || tp % kv == 0,
          "model.kv_heads " + to_string(kv) + " can be neither split over tp " + to_string(tp) +
              " (tp does not divide it) nor replicated evenly (it does not divide tp)");
  p.check(m.ffn % tp == 0,
          "model.ffn " + to_string(m.ffn) + " is not divisible by tp " + to_string(tp));
  p.check(m.hidden % tp == 0,
          "model.hidden " + to_string(m.hidden) + " is not divisible by tp " + to_string(tp));
  p.check(m.ropeTheta > 0, "model.rope_theta must be > 0, got " + to_string(m.ropeTheta));
  p.check(m.rmsNormEps > 0, "model.rms_norm_eps must be > 0, got " + to_string(m.rmsNormEps));
  try {
    tensor_parallel::checkRopeScaling(m.ropeScaling);
  } catch (const ConfigError& e) {
    p.check(false, e.what());
  }
  p.check(m.dropout == 0,
          "the llama family has no dropout: model.dropout must be 0, got " + to_string(m.dropout));
}

// Mixture-of-experts blocks (model.moe) and the expert-parallel degree:
// the experts split evenly over ep ranks carved out of dp x cp.
void checkExperts(const TrainConfig& c, Problems& p) {
  const expert_parallel::MoeOptions& m = c.model.moe;
  const ParallelConfig& l = c.parallel;
  p.check(l.ep >= 1, "parallel.ep must be >= 1, got " + to_string(l.ep));
  if (!m.enabled()) {
    p.check(m.experts == 0, "model.moe.experts must be >= 0, got " + to_string(m.experts));
    p.check(l.ep <= 1, "parallel.ep " + to_string(l.ep) +
                           " spreads experts, but the model has none (set model.moe.experts)");
    return;
  }
  try {
    expert_parallel::checkMoe(m, static_cast<int>(std::max<int64_t>(l.tp, 1)),
                              static_cast<int>(std::max<int64_t>(l.ep, 1)));
  } catch (const ConfigError& e) {
    p.check(false, e.what());
  }
  p.check(!l.sequenceParallel,
          "model.moe blocks route whole tokens and do not take "
          "parallel.sequence_parallel; set it to false");
  if (l.ep <= 1) return;
  p.check((l.dp * l.cp) % l.ep == 0, "parallel.ep " + to_string(l.ep) +
                                         " does not divide dp x cp = " + to_string(l.dp * l.cp) +
                                         " (expert parallelism is carved out of the replicas)");
}

void checkLayout(const TrainConfig& c, int worldSize, Problems& p) {
  const ParallelConfig& l = c.parallel;
  p.check(worldSize == l.pp * l.dp * l.cp * l.tp, "world size " + to_string(worldSize) +
                                                      " != " + layoutText(l) + " = " +
                                                      to_string(l.pp * l.dp * l.cp * l.tp));
  bool inAV = placesStagesInAV(l.schedule);
  int64_t stages = l.pp * (inAV ? 2 : l.virtualStages);
  std::string stageText = inAV ? "2 x pp " + to_string(l.pp) + " in a V for " + l.schedule
                          : l.virtualStages == 1
                              ? "pp " + to_string(l.pp)
                              : "pp " + to_string(l.pp) + " x virtual stages " +
                                    to_string(l.virtualStages) + " = " + to_string(stages);
  p.check(c.model.layers >= stages, "model.layers " + to_string(c.model.layers) +
                                        " is fewer than the pipeline stages (" + stageText + ")");
  checkStageLayers(c, stages, stageText, p);
  auto divisible = [&](const char* name, int64_t value) {
    p.check(value % l.tp == 0, std::string(name) + " " + to_string(value) +
                                   " is not divisible by tp " + to_string(l.tp));
  };
  divisible("model.heads", c.model.heads);
  divisible("model.hidden", c.model.hidden);
  divisible("model.ffn", c.model.ffn);
  p.check(c.model.hidden % c.model.heads == 0, "model.hidden " + to_string(c.model.hidden) +
                                                   " is not divisible by model.heads " +
                                                   to_string(c.model.heads));
}

void checkBatch(const TrainConfig& c, Problems& p) {
  const OptimConfig& t = c.train;
  p.check(t.globalBatch % (t.microBatch * c.parallel.dp) == 0,
          "train.global_batch " + to_string(t.globalBatch) + " is not divisible by micro_batch " +
              to_string(t.microBatch) + " x dp " + to_string(c.parallel.dp) + " = " +
              to_string(t.microBatch * c.parallel.dp));
  p.check(!c.parallel.sequenceParallel || t.seqLen % c.parallel.tp == 0,
          "train.seq_len " + to_string(t.seqLen) + " is not divisible by tp " +
              to_string(c.parallel.tp) + " (parallel.sequence_parallel splits the sequence)");
  p.check(t.seqLen <= c.model.context, "train.seq_len " + to_string(t.seqLen) +
                                           " is longer than the model's context " +
                                           to_string(c.model.context));
  p.check(c.data.prepared.empty() || c.data.files.empty(),
          "data.prepared and data.files exclude each other: train on a prepared dataset or on "
          "text files");
  // Other tokenizers' vocabularies are checked when they are loaded
  // (makeDataSplit), on every rank alike too.
  p.check(c.data.tokenizer != "byte" || c.model.vocab >= kByteVocabSize,
          "model.vocab " + to_string(c.model.vocab) + " is smaller than the byte tokeniser's " +
              to_string(kByteVocabSize) + " tokens");
}

// Context parallelism: two chunks of every sequence per cp rank, sequence
// parallel splitting each rank's share again over tp, no dropout (its masks
// would not be the whole sequence's), and under all-to-all whole heads and
// kv heads of each tp rank for every cp rank.
void checkContextParallel(const TrainConfig& c, Problems& p) {
  const ParallelConfig& l = c.parallel;
  p.check(l.cpAlgorithm == "ring" || l.cpAlgorithm == "all-to-all",
          "parallel.cp_algorithm must be ring or all-to-all, got '" + l.cpAlgorithm + "'");
  if (l.cp == 1) return;
  int64_t seqLen = c.train.seqLen;
  p.check(seqLen % (2 * l.cp) == 0,
          "train.seq_len " + to_string(seqLen) +
              " is not divisible by 2 x cp = " + to_string(2 * l.cp) +
              " (context parallelism gives each cp rank two equal chunks of every sequence)");
  p.check(!l.sequenceParallel || (seqLen / l.cp) % l.tp == 0,
          "train.seq_len " + to_string(seqLen) + " / cp " + to_string(l.cp) +
              " is not divisible by tp " + to_string(l.tp) +
              " (parallel.sequence_parallel splits each cp rank's tokens)");
  p.check(c.model.dropout == 0, "model.dropout " + number(c.model.dropout) + " with cp " +
                                    to_string(l.cp) +
                                    ": dropout masks would not be the whole sequence's; set "
                                    "model.dropout = 0 under context parallelism");
  p.check(c.finetune.dropout == 0 || !c.finetune.lora(),
          "finetune.dropout " + number(c.finetune.dropout) + " with cp " + to_string(l.cp) +
              ": the adapters' dropout masks would not be the whole sequence's; set "
              "finetune.dropout = 0 under context parallelism");
  if (l.cpAlgorithm != "all-to-all") return;
  int64_t kv = c.model.kvHeads > 0 ? c.model.kvHeads : c.model.heads;
  int64_t heads = c.model.heads / l.tp, kvPerRank = kv % l.tp == 0 ? kv / l.tp : 1;
  p.check(heads % l.cp == 0 && kvPerRank % l.cp == 0,
          "parallel.cp_algorithm all-to-all gives each of the cp " + to_string(l.cp) +
              " ranks whole heads, but each tp rank has " + to_string(heads) + " query heads and " +
              to_string(kvPerRank) + " kv heads; cp must divide both (or use cp_algorithm ring)");
}

bool knownSchedule(const std::string& name) {
  std::vector<std::string> names = schedule::generatorNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string knownScheduleNames() {
  std::string known;
  for (const std::string& name : schedule::generatorNames())
    known += (known.empty() ? "" : ", ") + name;
  return known;
}

// Asks the schedule's own generator, so the rule (for example interleaved
// 1F1B's "micro-batches a multiple of pp") lives in one place.
void checkScheduleFits(const TrainConfig& c, Problems& p) {
  const ParallelConfig& l = c.parallel;
  int64_t m = c.microBatches();
  try {
    schedule::generate(l.schedule, {static_cast<int>(l.pp), static_cast<int>(m),
                                    static_cast<int>(l.virtualStages)});
  } catch (const schedule::ScheduleError& error) {
    p.check(false, "schedule " + l.schedule + " cannot run " + to_string(m) +
                       " micro-batches (global batch " + to_string(c.train.globalBatch) +
                       " / (micro_batch " + to_string(c.train.microBatch) + " x dp " +
                       to_string(l.dp) + ")) on pp " + to_string(l.pp) + ": " + error.what());
  }
}

void checkChoices(const TrainConfig& c, Problems& p) {
  const std::string& precision = c.train.precision;
  p.check(precision == "fp32" || precision == "bf16",
          "train.precision must be fp32 or bf16, got '" + precision + "'");
  const std::string& device = c.train.device;
  p.check(device == "cpu" || device == "cuda",
          "train.device must be cpu or cuda, got '" + device + "'");
  p.check(!c.checkpoint.resume || !c.checkpoint.dir.empty(),
          "checkpoint.resume needs checkpoint.dir");
  p.check(!c.train.spikeRollback || !c.checkpoint.dir.empty(),
          "train.spike_rollback needs checkpoint.dir, to roll back to");
  p.check(!c.train.spikeRollback || c.train.spikeZscore > 0,
          "train.spike_rollback needs train.spike_zscore > 0 (spike detection on)");
  p.check(c.parallel.partition == "even" || c.parallel.partition == "balanced",
          "parallel.partition must be even or balanced, got '" + c.parallel.partition + "'");
  p.check(c.parallel.elastic == "off" || c.parallel.elastic == "dp",
          "parallel.elastic must be off or dp, got '" + c.parallel.elastic + "'");
  const std::string& lossOn = c.data.lossOn;
  p.check(lossOn == "auto" || lossOn == "all" || lossOn == "assistant",
          "data.loss_on must be auto, all or assistant, got '" + lossOn + "'");
  p.check(lossOn != "assistant" || !c.data.prepared.empty(),
          "data.loss_on = \"assistant\" needs data.prepared, a dataset prepared with `strata data "
          "prepare --chat` "
          "(its PREFIX.mask says which tokens are the assistant's)");
  p.check(!c.data.pack || !c.data.prepared.empty(),
          "data.pack needs data.prepared, a dataset made by `strata data prepare`, whose index "
          "says where each document starts");
  p.check(!c.data.splitAcrossWindows || c.data.pack,
          "data.split_across_windows says how packed documents meet a window's edge: it needs "
          "data.pack = true");
  const std::string& onSaveError = c.checkpoint.onSaveError;
  p.check(onSaveError == "stop" || onSaveError == "continue",
          "checkpoint.on_save_error must be stop or continue, got '" + onSaveError + "'");
  const std::string& architecture = c.model.architecture;
  p.check(architecture == "strata" || architecture == kGpt2Architecture ||
              architecture == kLlamaArchitecture,
          "model.architecture must be strata, gpt2 or llama, got '" + architecture + "'");
  if (architecture == kLlamaArchitecture) checkLlamaModel(c, p);
  checkFinetune(c, p);
  p.check(architecture == kLlamaArchitecture || c.model.kvHeads == 0 ||
              c.model.kvHeads == c.model.heads,
          "model.kv_heads " + to_string(c.model.kvHeads) +
              " is for architecture llama: the GPT's attention has as many kv heads as heads (" +
              to_string(c.model.heads) + ")");
  p.check(architecture == kLlamaArchitecture || !c.model.ropeScaling.enabled(),
          "model.rope_scaling is for architecture llama: the GPT has learned positions");
  p.check(architecture != kGpt2Architecture || c.model.tiedEmbeddings,
          "model.architecture gpt2 needs model.tied_embeddings = true (GPT-2's head is its token "
          "embedding)");
  p.check(c.checkpoint.initFrom.empty() || architecture == kGpt2Architecture ||
              architecture == kLlamaArchitecture,
          "checkpoint.init_from needs model.architecture gpt2 or llama (the Hugging Face models "
          "Strata reads; with the weights' config.json beside them, `strata train` takes the "
          "model from it), got '" +
              architecture + "'");
  p.check(knownSchedule(c.parallel.schedule),
          "unknown schedule '" + c.parallel.schedule + "' (known: " + knownScheduleNames() + ")");
}

}  // namespace

std::vector<std::string> configProblems(const TrainConfig& config, int worldSize) {
  Problems problems;
  checkRanges(config, problems);
  bool sizesUsable = problems.empty();  // the checks below divide by these sizes
  checkReals(config, problems);
  checkChoices(config, problems);
  if (sizesUsable) {
    checkLayout(config, worldSize, problems);
    checkBatch(config, problems);
    checkContextParallel(config, problems);
    checkExperts(config, problems);
  }
  if (problems.empty()) checkScheduleFits(config, problems);
  return problems.take();
}

void validateConfig(const TrainConfig& config, int worldSize) {
  std::vector<std::string> problems = configProblems(config, worldSize);
  if (problems.empty()) return;
  std::string message = "invalid training configuration:";
  for (const std::string& problem : problems) message += "\n  - " + problem;
  throw ConfigError(message);
}

}  // namespace strata::train
