#include "scheduler_env.h"

#include <map>
#include <optional>

#include "strata/error.h"
#include "strata/util/parse_number.h"

namespace strata {
namespace {

using Variables = std::map<std::string, std::string>;

std::optional<std::string> valueOf(const ProcessEnv::Lookup& lookup, const std::string& name) {
  std::optional<std::string> value = lookup(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

int64_t integer(const ProcessEnv::Lookup& lookup, const std::string& name) {
  std::optional<std::string> text = valueOf(lookup, name);
  if (!text) throw ConfigError(name + " is not set");
  std::optional<int64_t> value = parseInteger(*text);
  if (!value || *value < 0) {
    throw ConfigError(name + " must be a non-negative integer, got '" + *text + "'");
  }
  return *value;
}

// Splits at the commas outside brackets.
std::vector<std::string> topLevelItems(const std::string& list) {
  std::vector<std::string> items(1);
  int depth = 0;
  for (char c : list) {
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (depth < 0) throw ConfigError("host list '" + list + "' has an unmatched ']'");
    if (c == ',' && depth == 0) {
      items.emplace_back();
    } else {
      items.back() += c;
    }
  }
  if (depth != 0) throw ConfigError("host list '" + list + "' has an unmatched '['");
  return items;
}

// "01-04" -> 01 02 03 04 (the width of the first bound kept), "7" -> 7.
std::vector<std::string> expandRange(const std::string& range, const std::string& list) {
  size_t dash = range.find('-');
  std::string low = range.substr(0, dash);
  std::string high = dash == std::string::npos ? low : range.substr(dash + 1);
  std::optional<int64_t> from = parseInteger(low), to = parseInteger(high);
  if (low.empty() || !from || !to || *from < 0 || *to < *from) {
    throw ConfigError("host list '" + list + "' has a bad range '" + range + "'");
  }
  std::vector<std::string> names;
  for (int64_t n = *from; n <= *to; ++n) {
    std::string digits = std::to_string(n);
    if (digits.size() < low.size()) digits.insert(0, low.size() - digits.size(), '0');
    names.push_back(digits);
  }
  return names;
}

// One item, "rack[1-2]-n[01,03]": every combination of its bracket groups.
std::vector<std::string> expandItem(const std::string& item, const std::string& list) {
  size_t open = item.find('[');
  if (open == std::string::npos) return {item};
  size_t close = item.find(']', open);
  std::vector<std::string> rests = expandItem(item.substr(close + 1), list);
  std::vector<std::string> names;
  for (const std::string& range : topLevelItems(item.substr(open + 1, close - open - 1))) {
    for (const std::string& number : expandRange(range, list)) {
      for (const std::string& rest : rests) names.push_back(item.substr(0, open) + number + rest);
    }
  }
  return names;
}

Variables fromSlurm(const ProcessEnv::Lookup& lookup) {
  std::vector<int> perNode =
      expandTasksPerNode(valueOf(lookup, "SLURM_TASKS_PER_NODE")
                             .value_or(valueOf(lookup, "SLURM_NTASKS").value_or("1")));
  int64_t node = integer(lookup, "SLURM_NODEID");
  if (node >= static_cast<int64_t>(perNode.size())) {
    throw ConfigError("SLURM_NODEID " + std::to_string(node) + " is outside the " +
                      std::to_string(perNode.size()) + " nodes of SLURM_TASKS_PER_NODE");
  }
  std::optional<std::string> nodes = valueOf(lookup, "SLURM_JOB_NODELIST");
  if (!nodes) nodes = valueOf(lookup, "SLURM_STEP_NODELIST");
  if (!nodes) throw ConfigError("SLURM_PROCID is set but SLURM_JOB_NODELIST is not");
  std::string sizes;
  for (int size : perNode) sizes += (sizes.empty() ? "" : ",") + std::to_string(size);
  Variables v = {{"RANK", std::to_string(integer(lookup, "SLURM_PROCID"))},
                 {"WORLD_SIZE", std::to_string(integer(lookup, "SLURM_NTASKS"))},
                 {"LOCAL_RANK", std::to_string(integer(lookup, "SLURM_LOCALID"))},
                 {"LOCAL_WORLD_SIZE", std::to_string(perNode[node])},
                 {"STRATA_NODE_SIZES", sizes},
                 {"MASTER_ADDR", expandHostList(*nodes).front()}};
  if (!valueOf(lookup, "MASTER_PORT")) {
    v["MASTER_PORT"] =
        std::to_string(kJobPortBase + integer(lookup, "SLURM_JOB_ID") % kJobPortSpan);
  }
  return v;
}

// Open MPI 4 numbers its jobs (OMPI_MCA_ess_base_jobid); Open MPI 5 names
// them (PMIX_NAMESPACE, "prterun-host-1234@1"), so a name is hashed (FNV-1a:
// the same on every rank, unlike std::hash across builds).
int openMpiJobPort(const ProcessEnv::Lookup& lookup) {
  uint64_t id = 0;
  if (valueOf(lookup, "OMPI_MCA_ess_base_jobid")) {
    id = static_cast<uint64_t>(integer(lookup, "OMPI_MCA_ess_base_jobid"));
  } else if (std::optional<std::string> space = valueOf(lookup, "PMIX_NAMESPACE")) {
    id = 14695981039346656037ull;
    for (unsigned char c : *space) id = (id ^ c) * 1099511628211ull;
  } else {
    throw ConfigError(
        "mpirun gave this rank neither OMPI_MCA_ess_base_jobid nor PMIX_NAMESPACE to derive the "
        "rendezvous port from: export MASTER_PORT to every rank (mpirun -x MASTER_PORT=PORT ...)");
  }
  return kJobPortBase + static_cast<int>(id % kJobPortSpan);
}

Variables fromOpenMpi(const ProcessEnv::Lookup& lookup) {
  int64_t size = integer(lookup, "OMPI_COMM_WORLD_SIZE");
  int64_t localSize = integer(lookup, "OMPI_COMM_WORLD_LOCAL_SIZE");
  Variables v = {{"RANK", std::to_string(integer(lookup, "OMPI_COMM_WORLD_RANK"))},
                 {"WORLD_SIZE", std::to_string(size)},
                 {"LOCAL_RANK", std::to_string(integer(lookup, "OMPI_COMM_WORLD_LOCAL_RANK"))},
                 {"LOCAL_WORLD_SIZE", std::to_string(localSize)}};
  if (!valueOf(lookup, "MASTER_ADDR")) {
    if (localSize != size) {
      throw ConfigError(
          "mpirun started ranks on several hosts but MASTER_ADDR is not set: export rank 0's "
          "host to every rank (mpirun -x MASTER_ADDR=HOST ...)");
    }
    v["MASTER_ADDR"] = "127.0.0.1";
  }
  if (!valueOf(lookup, "MASTER_PORT")) v["MASTER_PORT"] = std::to_string(openMpiJobPort(lookup));
  return v;
}

}  // namespace

std::vector<std::string> expandHostList(const std::string& list) {
  std::vector<std::string> hosts;
  for (const std::string& item : topLevelItems(list)) {
    if (item.empty()) throw ConfigError("host list '" + list + "' has an empty entry");
    for (const std::string& host : expandItem(item, list)) hosts.push_back(host);
  }
  return hosts;
}

std::vector<int> expandTasksPerNode(const std::string& text) {
  std::vector<int> counts;
  for (const std::string& item : topLevelItems(text)) {
    size_t repeat = item.find("(x");
    std::optional<int64_t> count = parseInteger(item.substr(0, repeat));
    std::optional<int64_t> times = int64_t{1};
    if (repeat != std::string::npos) {
      times = item.back() == ')' ? parseInteger(item.substr(repeat + 2, item.size() - repeat - 3))
                                 : std::nullopt;
    }
    if (!count || !times || *count < 1 || *times < 1) {
      throw ConfigError("SLURM_TASKS_PER_NODE must look like '2(x3),1', got '" + text + "'");
    }
    counts.insert(counts.end(), static_cast<size_t>(*times), static_cast<int>(*count));
  }
  return counts;
}

ProcessEnv::Lookup withSchedulerVariables(const ProcessEnv::Lookup& lookup) {
  if (valueOf(lookup, "RANK")) return lookup;
  Variables translated;
  if (valueOf(lookup, "SLURM_PROCID")) {
    translated = fromSlurm(lookup);
  } else if (valueOf(lookup, "OMPI_COMM_WORLD_RANK")) {
    translated = fromOpenMpi(lookup);
  } else {
    return lookup;
  }
  return [lookup, translated](const std::string& name) -> std::optional<std::string> {
    auto found = translated.find(name);
    if (found != translated.end()) return found->second;
    return lookup(name);
  };
}

}  // namespace strata
