#include "peer_rows.h"

namespace strata::bench {

train::TrainConfig peerBaseConfig(bool smoke) {
  train::TrainConfig c;
  c.model.architecture = train::kLlamaArchitecture;
  c.model.layers = 8;  // pp 4 with two stages a rank needs 8 blocks
  c.model.hidden = smoke ? 64 : 256;
  c.model.heads = smoke ? 4 : 8;
  c.model.kvHeads = smoke ? 2 : 4;
  c.model.ffn = smoke ? 128 : 768;
  c.model.vocab = smoke ? 256 : 2048;
  c.model.context = smoke ? 32 : 128;
  c.model.ropeTheta = 500000;
  c.model.tiedEmbeddings = false;
  c.model.dropout = 0;
  c.train.steps = 1000;  // the schedule's length; the rows run a few
  c.train.globalBatch = 16;
  c.train.seqLen = c.model.context;
  c.train.lr = c.train.minLr = 1e-3;  // constant after a one-step warmup at the peak
  c.train.warmupSteps = 1;
  c.train.gradClip = 0;
  c.train.threads = 1;
  c.train.evalEvery = 0;
  c.train.logEvery = 1000000;
  c.train.stragglerEvery = 0;
  c.train.spikeZscore = 0;
  c.data.corpusBytes = 400000;
  return c;
}

namespace {

PeerRow dataParallel(const train::TrainConfig& base, int zero) {
  PeerRow row{
      zero == 3 ? "zero3" : "dp",  2,
      zero == 3 ? "fsdp2" : "ddp", zero == 3 ? "FSDP2 fully_shard" : "DistributedDataParallel",
      zero == 3 ? 1.3 : 1.5,       base};
  row.config.parallel.dp = 2;
  row.config.parallel.zero = zero;
  row.config.train.microBatch = base.train.globalBatch / 2;  // one pass a replica, as DDP's
  return row;
}

// Data parallel on a model of about `millions` parameters (2 or 17, the
// sizes bench_dp_vs_pytorch's MLPs have): the base Llama narrowed or widened.
PeerRow dataParallelOfSize(const train::TrainConfig& base, int millions) {
  train::TrainConfig sized = base;
  bool small = millions == 2;
  sized.model.hidden = small ? 128 : 384;
  sized.model.heads = small ? 4 : 6;
  sized.model.kvHeads = 2;
  sized.model.ffn = small ? 384 : 1280;
  PeerRow row = dataParallel(sized, 0);
  row.name = "dp-" + std::to_string(millions) + "m";
  return row;
}

// DeepSpeed's ZeRO (stage 2 or 3) around the same AdamW; the deepspeed
// package may be missing or its CPU accelerator fail to start: the row then
// says why.
PeerRow deepSpeed(const train::TrainConfig& base, int zero) {
  PeerRow row = dataParallel(base, zero);
  row.name = "deepspeed-zero" + std::to_string(zero);
  row.pytorchForm = row.name;
  row.pytorchName = "DeepSpeed ZeRO-" + std::to_string(zero);
  row.goal = 1.5;
  row.pytorchMayFail = true;
  return row;
}

PeerRow tensorParallel(const train::TrainConfig& base) {
  PeerRow row{"tp", 2, "tp", "DTensor parallelize_module", 1.2, base};
  row.config.parallel.tp = 2;
  row.config.parallel.sequenceParallel = true;
  row.config.train.microBatch = base.train.globalBatch;
  return row;
}

PeerRow contextParallel(const train::TrainConfig& base) {
  PeerRow row{"cp", 2, "cp", "context_parallel", 1.2, base};
  row.config.parallel.cp = 2;
  row.config.train.microBatch = base.train.globalBatch;
  row.pytorchMayFail = true;
  return row;
}

PeerRow pipeline(const train::TrainConfig& base, int pp, const std::string& schedule,
                 const std::string& pytorchSchedule) {
  PeerRow row{
      "pp" + std::to_string(pp) + "-" + schedule, pp, "pp-" + schedule, pytorchSchedule, 1.2, base};
  row.config.parallel.pp = pp;
  row.config.parallel.schedule = schedule;
  if (schedule == "interleaved-1f1b") row.config.parallel.virtualStages = 2;
  row.config.train.microBatch = 2;  // 8 micro-batches
  return row;
}

}  // namespace

std::vector<PeerRow> peerRows(const train::TrainConfig& base, bool smoke) {
  std::vector<PeerRow> rows;
  if (!smoke) rows.push_back(dataParallelOfSize(base, 2));
  rows.push_back(dataParallel(base, 0));
  if (!smoke) rows.push_back(dataParallelOfSize(base, 17));
  for (PeerRow row : {dataParallel(base, 3), tensorParallel(base), deepSpeed(base, 2),
                      deepSpeed(base, 3), contextParallel(base)})
    rows.push_back(std::move(row));
  for (int pp : {2, 4}) {
    rows.push_back(pipeline(base, pp, "1f1b", "Schedule1F1B"));
    rows.push_back(pipeline(base, pp, "interleaved-1f1b", "ScheduleInterleaved1F1B"));
    rows.push_back(pipeline(base, pp, "zb-v", "ScheduleZBVZeroBubble"));
    rows.push_back(pipeline(base, pp, "dualpipe-v", "ScheduleDualPipeV"));
  }
  return rows;
}

}  // namespace strata::bench
