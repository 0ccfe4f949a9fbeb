#include "data_parallel/sharded_unit_checks.h"

#include <string>
#include <unordered_set>

#include "strata/error.h"

namespace strata::data_parallel {

void checkUnits(const std::vector<ShardedUnit>& units, const Communicator& comm) {
  if (units.empty()) throw ConfigError("fully sharded data parallelism needs at least one unit");
  std::unordered_set<const void*> seen;
  const NamedTensor* first = nullptr;
  for (const ShardedUnit& unit : units) {
    if (unit.parameters.empty()) {
      throw ConfigError("fully sharded unit '" + unit.name + "' on group " + comm.name() +
                        " has no parameters");
    }
    for (const NamedTensor& p : unit.parameters) {
      std::string where = "parameter '" + p.name + "' of fully sharded unit '" + unit.name + "'";
      if (!p.tensor.defined()) throw ConfigError(where + " is undefined");
      if (!p.tensor.requires_grad()) throw ConfigError(where + " does not require grad");
      if (!p.tensor.is_leaf()) throw ConfigError(where + " is not a leaf tensor");
      if (!seen.insert(p.tensor.unsafeGetTensorImpl()).second) {
        throw ConfigError(where + " appears twice (list a shared weight in one unit only)");
      }
      if (first == nullptr) first = &p;
      if (p.tensor.scalar_type() != first->tensor.scalar_type() ||
          p.tensor.device() != first->tensor.device()) {
        throw ConfigError("fully sharded data parallelism needs one dtype and device: '" +
                          first->name + "' is " + c10::toString(first->tensor.scalar_type()) +
                          " but " + where + " is " + c10::toString(p.tensor.scalar_type()));
      }
    }
  }
}

}  // namespace strata::data_parallel
