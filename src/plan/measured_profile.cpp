#include "strata/plan/measured_profile.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "plan_toml.h"
#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

// A numeric key: where its value goes, and whether it must be a whole number.
struct NumericKey {
  std::function<void(MeasuredProfile&, double)> set;
  bool whole;
  bool required = true;
};

void setMs(double& seconds, double ms) { seconds = ms * 1e-3; }
int whole(double v) { return static_cast<int>(v); }

const std::map<std::string, NumericKey>& numericProfileKeys() {
  static const std::map<std::string, NumericKey> keys = {
      {"layers", {[](MeasuredProfile& p, double v) { p.model.layers = whole(v); }, true}},
      {"hidden", {[](MeasuredProfile& p, double v) { p.model.hidden = whole(v); }, true}},
      {"heads", {[](MeasuredProfile& p, double v) { p.model.heads = whole(v); }, true}},
      {"ffn", {[](MeasuredProfile& p, double v) { p.model.ffn = whole(v); }, true}},
      {"vocab", {[](MeasuredProfile& p, double v) { p.model.vocab = whole(v); }, true}},
      {"seq_len", {[](MeasuredProfile& p, double v) { p.model.seqLen = whole(v); }, true}},
      {"micro_batch", {[](MeasuredProfile& p, double v) { p.microBatch = whole(v); }, true}},
      {"embedding_forward_ms",
       {[](MeasuredProfile& p, double v) { setMs(p.embedding.forward, v); }, false}},
      {"embedding_backward_ms",
       {[](MeasuredProfile& p, double v) { setMs(p.embedding.backward, v); }, false}},
      {"block_forward_ms",
       {[](MeasuredProfile& p, double v) { setMs(p.block.forward, v); }, false}},
      {"block_backward_ms",
       {[](MeasuredProfile& p, double v) { setMs(p.block.backward, v); }, false}},
      {"head_forward_ms", {[](MeasuredProfile& p, double v) { setMs(p.head.forward, v); }, false}},
      {"head_backward_ms",
       {[](MeasuredProfile& p, double v) { setMs(p.head.backward, v); }, false}},
      {"concurrent_slowdown",
       {[](MeasuredProfile& p, double v) { p.concurrentSlowdown = v; }, false}},
      {"block_tp2_forward_ms",
       {[](MeasuredProfile& p, double v) { setMs(p.blockTp2.forward, v); }, false, false}},
      {"block_tp2_backward_ms",
       {[](MeasuredProfile& p, double v) { setMs(p.blockTp2.backward, v); }, false, false}},
      {"block_half_forward_ms",
       {[](MeasuredProfile& p, double v) { setMs(p.blockHalf.forward, v); }, false, false}},
      {"block_half_backward_ms",
       {[](MeasuredProfile& p, double v) { setMs(p.blockHalf.backward, v); }, false, false}},
  };
  return keys;
}

std::string knownProfileKeys() {
  std::string out = "name, precision";
  for (const auto& entry : numericProfileKeys()) out += ", " + entry.first;
  return out;
}

double parseValue(const util::TomlEntry& entry, bool wholeNumber) {
  double value = numberOf(entry, "a positive number");
  if (value <= 0) wrongValue(entry, "a positive number");
  if (wholeNumber && value != std::floor(value)) wrongValue(entry, "a whole number");
  if (entry.key == "concurrent_slowdown" && value < 1) wrongValue(entry, "a time factor >= 1");
  return value;
}

Dtype parseDtype(const util::TomlEntry& entry) {
  std::string text = stringOf(entry);
  if (text == "fp32") return Dtype::Fp32;
  if (text == "bf16") return Dtype::Bf16;
  wrongValue(entry, "\"fp32\" or \"bf16\"");
}

void requireAll(const std::set<std::string>& seen, const std::string& source) {
  std::string missing;
  for (const auto& entry : numericProfileKeys())
    if (entry.second.required && !seen.count(entry.first))
      missing += (missing.empty() ? "" : ", ") + entry.first;
  if (!seen.count("precision")) missing += (missing.empty() ? "" : ", ") + std::string("precision");
  if (!missing.empty()) throw PlanError(source + ": missing profile keys: " + missing);
  for (const char* pair : {"block_tp2", "block_half"}) {
    std::string forward = std::string(pair) + "_forward_ms",
                backward = std::string(pair) + "_backward_ms";
    if (seen.count(forward) != seen.count(backward))
      throw PlanError(source + ": " + forward + " and " + backward + " come together");
  }
}

double ms(double seconds) { return seconds * 1e3; }

}  // namespace

MeasuredProfile parseProfileText(const std::string& text, const std::string& source) {
  MeasuredProfile profile;
  profile.model.name = source;
  std::set<std::string> seen;
  for (const util::TomlEntry& entry : readPlanToml(text, source)) {
    std::string key = entry.name();
    if (key == "name") {
      profile.model.name = stringOf(entry);
    } else if (key == "precision") {
      profile.dtype = parseDtype(entry);
    } else if (auto it = numericProfileKeys().find(key); it != numericProfileKeys().end()) {
      it->second.set(profile, parseValue(entry, it->second.whole));
    } else {
      throw PlanError(entry.where + ": unknown key '" + key +
                      "'; known keys: " + knownProfileKeys());
    }
    seen.insert(key);
  }
  requireAll(seen, source);
  profile.model.validate();
  return profile;
}

MeasuredProfile loadProfileFile(const std::string& path) {
  return parseProfileText(readTextFile(path, "profile"), path);
}

std::string formatProfile(const MeasuredProfile& p) {
  const ModelDesc& m = p.model;
  util::TomlPairs pairs = {
      {"name", m.name},
      {"layers", int64_t{m.layers}},
      {"hidden", int64_t{m.hidden}},
      {"heads", int64_t{m.heads}},
      {"ffn", int64_t{m.ffn}},
      {"vocab", int64_t{m.vocab}},
      {"seq_len", int64_t{m.seqLen}},
      {"micro_batch", int64_t{p.microBatch}},
      {"precision", std::string(p.dtype == Dtype::Fp32 ? "fp32" : "bf16")},
      {"embedding_forward_ms", ms(p.embedding.forward)},
      {"embedding_backward_ms", ms(p.embedding.backward)},
      {"block_forward_ms", ms(p.block.forward)},
      {"block_backward_ms", ms(p.block.backward)},
      {"head_forward_ms", ms(p.head.forward)},
      {"head_backward_ms", ms(p.head.backward)},
      {"concurrent_slowdown", p.concurrentSlowdown},
  };
  if (p.blockTp2.forward > 0) {
    pairs.emplace_back("block_tp2_forward_ms", ms(p.blockTp2.forward));
    pairs.emplace_back("block_tp2_backward_ms", ms(p.blockTp2.backward));
  }
  if (p.blockHalf.forward > 0) {
    pairs.emplace_back("block_half_forward_ms", ms(p.blockHalf.forward));
    pairs.emplace_back("block_half_backward_ms", ms(p.blockHalf.backward));
  }
  return util::tomlTable("", pairs);
}

Precision precisionOf(const MeasuredProfile& profile) {
  if (profile.dtype == Dtype::Fp32) return {4, 4, 8, 4};
  return Precision{};
}

double activationValueBytes(const MeasuredProfile& profile) {
  return profile.dtype == Dtype::Fp32 ? 4 : 2;
}

}  // namespace strata::plan
