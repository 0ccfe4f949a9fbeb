#include "strata/plan/measured_profile.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "key_value_text.h"
#include "strata/plan/errors.h"
#include "strata/util/parse_number.h"

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

const std::map<std::string, NumericKey>& numericKeys() {
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
  };
  return keys;
}

std::string knownKeys() {
  std::string out = "name, precision";
  for (const auto& entry : numericKeys()) out += ", " + entry.first;
  return out;
}

double parseValue(const std::string& where, const std::string& key, const std::string& text,
                  bool wholeNumber) {
  std::optional<double> parsed = parseReal(text);
  if (!parsed || *parsed <= 0)
    throw PlanError(where + ": " + key + " expects a positive number, got '" + text + "'");
  double value = *parsed;
  if (wholeNumber && value != std::floor(value))
    throw PlanError(where + ": " + key + " expects a whole number, got '" + text + "'");
  if (key == "concurrent_slowdown" && value < 1)
    throw PlanError(where + ": concurrent_slowdown is a time factor >= 1, got '" + text + "'");
  return value;
}

Dtype parseDtype(const std::string& where, const std::string& text) {
  if (text == "fp32") return Dtype::Fp32;
  if (text == "bf16") return Dtype::Bf16;
  throw PlanError(where + ": precision expects fp32 or bf16, got '" + text + "'");
}

void requireAll(const std::set<std::string>& seen, const std::string& source) {
  std::string missing;
  for (const auto& entry : numericKeys())
    if (entry.second.required && !seen.count(entry.first))
      missing += (missing.empty() ? "" : ", ") + entry.first;
  if (!seen.count("precision")) missing += (missing.empty() ? "" : ", ") + std::string("precision");
  if (!missing.empty()) throw PlanError(source + ": missing profile keys: " + missing);
  if (seen.count("block_tp2_forward_ms") != seen.count("block_tp2_backward_ms"))
    throw PlanError(source + ": block_tp2_forward_ms and block_tp2_backward_ms come together");
}

std::string ms(double seconds) {
  std::ostringstream out;
  out.precision(6);
  out << seconds * 1e3;
  return out.str();
}

}  // namespace

MeasuredProfile parseProfileText(const std::string& text, const std::string& source) {
  MeasuredProfile profile;
  profile.model.name = source;
  std::set<std::string> seen;
  for (const auto& [where, key, value] : readKeyValueLines(text, source)) {
    if (key == "name") {
      profile.model.name = value;
    } else if (key == "precision") {
      profile.dtype = parseDtype(where, value);
    } else if (auto it = numericKeys().find(key); it != numericKeys().end()) {
      it->second.set(profile, parseValue(where, key, value, it->second.whole));
    } else {
      throw PlanError(where + ": unknown key '" + key + "'; known keys: " + knownKeys());
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
  std::ostringstream out;
  out << "name = " << m.name << "\nlayers = " << m.layers << "\nhidden = " << m.hidden
      << "\nheads = " << m.heads << "\nffn = " << m.ffn << "\nvocab = " << m.vocab
      << "\nseq_len = " << m.seqLen << "\nmicro_batch = " << p.microBatch
      << "\nprecision = " << (p.dtype == Dtype::Fp32 ? "fp32" : "bf16")
      << "\nembedding_forward_ms = " << ms(p.embedding.forward)
      << "\nembedding_backward_ms = " << ms(p.embedding.backward)
      << "\nblock_forward_ms = " << ms(p.block.forward)
      << "\nblock_backward_ms = " << ms(p.block.backward)
      << "\nhead_forward_ms = " << ms(p.head.forward)
      << "\nhead_backward_ms = " << ms(p.head.backward)
      << "\nconcurrent_slowdown = " << p.concurrentSlowdown << "\n";
  if (p.blockTp2.forward > 0) {
    out << "block_tp2_forward_ms = " << ms(p.blockTp2.forward)
        << "\nblock_tp2_backward_ms = " << ms(p.blockTp2.backward) << "\n";
  }
  return out.str();
}

Precision precisionOf(const MeasuredProfile& profile) {
  if (profile.dtype == Dtype::Fp32) return {4, 4, 8};
  return Precision{};
}

double activationValueBytes(const MeasuredProfile& profile) {
  return profile.dtype == Dtype::Fp32 ? 4 : 2;
}

}  // namespace strata::plan
