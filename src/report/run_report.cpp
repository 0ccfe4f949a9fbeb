#include "strata/report/run_report.h"

#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "formats/atomic_file.h"
#include "report/report_template.h"
#include "strata/error.h"

namespace strata::train {
namespace {

using nlohmann::json;

// The page's marker that the data replaces (report.html).
constexpr char kDataMarker[] = "STRATA_REPORT_DATA";

// The measured fields of StepMetrics under their metrics.jsonl keys, so the
// page and the metrics file name every series alike.
struct MetricField {
  const char* key;
  double StepMetrics::*member;
};
constexpr MetricField kMetricFields[] = {
    {"loss", &StepMetrics::loss},
    {"val_loss", &StepMetrics::validationLoss},
    {"lr", &StepMetrics::lr},
    {"grad_norm", &StepMetrics::gradNorm},
    {"tokens_per_s", &StepMetrics::tokensPerSecond},
    {"mfu", &StepMetrics::mfu},
    {"peak_memory_bytes", &StepMetrics::peakMemoryBytes},
    {"bubble", &StepMetrics::bubble},
    {"compute_median_s", &StepMetrics::computeMedianSeconds},
    {"moe_tokens_min", &StepMetrics::moeTokensMin},
    {"moe_tokens_mean", &StepMetrics::moeTokensMean},
    {"moe_tokens_max", &StepMetrics::moeTokensMax},
    {"moe_dropped", &StepMetrics::moeDropped},
    {"moe_aux_loss", &StepMetrics::moeAuxLoss},
};

// Column by column ({"step":[...],"loss":[...],...}): the page plots columns.
json metricsColumns(const std::vector<StepMetrics>& history) {
  json columns = {{"step", json::array()}};
  for (const MetricField& field : kMetricFields) columns[field.key] = json::array();
  for (const StepMetrics& m : history) {
    columns["step"].push_back(m.step);
    for (const MetricField& field : kMetricFields) columns[field.key].push_back(m.*field.member);
  }
  return columns;
}

json layoutMap(const ParallelLayout& layout, const std::vector<StageLayers>& stages) {
  const ParallelDegrees& d = layout.degrees();
  json map = {{"describe", layout.describe()},
              {"degrees", {{"pp", d.pp}, {"dp", d.dp}, {"cp", d.cp}, {"tp", d.tp}}},
              {"ranks", json::array()},
              {"stages", json::array()}};
  for (int rank = 0; rank < layout.worldSize(); ++rank) {
    Coord c = layout.coordOf(rank);
    map["ranks"].push_back(
        {{"rank", rank}, {"pp", c.pp}, {"dp", c.dp}, {"cp", c.cp}, {"tp", c.tp}});
  }
  for (const StageLayers& s : stages) {
    map["stages"].push_back({{"stage", s.stage},
                             {"pp_rank", s.ppRank},
                             {"first_layer", s.firstLayer},
                             {"layers", s.layers}});
  }
  return map;
}

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

json timelines(const RunReportData& data) {
  if (data.measuredTimelineSvg.empty()) return nullptr;
  return {{"measured", data.measuredTimelineSvg}, {"simulated", data.simulatedTimelineSvg}};
}

// The JSON sits inside a <script> element, which a "</script>" or "<!--" in
// any string would end or derail; as \u003c, '<' means the same to JSON.parse.
std::string escapeLessThan(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

StepMetrics metricsFromJson(const json& line) {
  StepMetrics m;
  m.step = line.at("step").get<int64_t>();
  for (const MetricField& field : kMetricFields) {
    auto value = line.find(field.key);
    if (value != line.end() && value->is_number()) m.*field.member = value->get<double>();
  }
  auto stragglers = line.find("stragglers");
  if (stragglers != line.end() && stragglers->is_array()) {
    for (const json& s : *stragglers)
      m.stragglers.push_back(
          {s.value("rank", 0), s.value("host", std::string()), s.value("compute_s", kNotMeasured)});
  }
  auto ranks = line.find("rank_compute_s");
  if (ranks != line.end() && ranks->is_array())
    for (const json& seconds : *ranks)
      m.rankComputeSeconds.push_back(seconds.is_number() ? seconds.get<double>() : kNotMeasured);
  return m;
}

// Every rank's compute at the run's last comparison; empty when none was made.
json lastRankCompute(const std::vector<StepMetrics>& history) {
  for (auto m = history.rbegin(); m != history.rend(); ++m)
    if (!m->rankComputeSeconds.empty())
      return {{"step", m->step}, {"seconds", m->rankComputeSeconds}};
  return json::object();
}

// Every straggler of the run, in step order, with the median it was above.
json stragglerRows(const std::vector<StepMetrics>& history) {
  json rows = json::array();
  for (const StepMetrics& m : history) {
    for (const Straggler& s : m.stragglers) {
      rows.push_back({{"step", m.step},
                      {"rank", s.rank},
                      {"host", s.host},
                      {"compute_s", s.computeSeconds},
                      {"median_s", m.computeMedianSeconds}});
    }
  }
  return rows;
}

}  // namespace

std::string reportDataJson(const RunReportData& data) {
  json status = {{"steps", data.stepsPlanned},
                 {"finished", data.finished},
                 {"schedule", data.schedule},
                 {"final_val_loss", data.finalValidationLoss},
                 {"updated", utcNow()}};
  json object = {{"title", data.title},
                 {"status", status},
                 {"metrics", metricsColumns(data.history)},
                 {"stragglers", stragglerRows(data.history)},
                 {"rank_compute", lastRankCompute(data.history)},
                 {"timelines", timelines(data)},
                 {"layout", layoutMap(data.layout, data.stages)},
                 {"config", data.configToml}};
  // JSON has no NaN or infinity: dump() writes them as null, which the page
  // draws as a gap. A path in the config need not be UTF-8; the page shows
  // U+FFFD for bytes that are not.
  return escapeLessThan(object.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string renderRunReport(const RunReportData& data) {
  std::string page = kReportTemplate;
  size_t marker = page.find(kDataMarker);
  if (marker == std::string::npos) throw Error("the run report template has no data marker");
  return page.replace(marker, sizeof(kDataMarker) - 1, reportDataJson(data));
}

void writeRunReport(const std::string& path, const RunReportData& data) {
  formats::writeFileAtomically(path, renderRunReport(data));
}

std::vector<StepMetrics> readMetricsHistory(const std::string& path, int64_t lastStep) {
  std::vector<StepMetrics> history;
  if (!std::filesystem::exists(path)) return history;
  std::ifstream in(path);
  if (!in) throw Error("cannot read metrics file '" + path + "'");
  for (std::string text; std::getline(in, text);) {
    json line = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!line.is_object() || !line.contains("step") || !line["step"].is_number_integer()) continue;
    StepMetrics m = metricsFromJson(line);
    if (m.step <= lastStep) history.push_back(m);
  }
  return history;
}

}  // namespace strata::train
