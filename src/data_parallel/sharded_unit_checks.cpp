#include "data_parallel/sharded_unit_checks.h"

#include <string>
#include <unordered_set>

#include "strata/error.h"

namespace strata::data_parallel {
namespace {

// One kind of a unit's parameters: every trained one, or every frozen one.
class KindCheck {
 public:
  explicit KindCheck(bool trained) : trained_(trained) {}

  void check(const NamedTensor& p, const ShardedUnit& unit, std::unordered_set<const void*>& seen) {
    std::string kind = trained_ ? "parameter" : "frozen parameter";
    std::string where = kind + " '" + p.name + "' of fully sharded unit '" + unit.name + "'";
    if (!p.tensor.defined()) throw ConfigError(where + " is undefined");
    if (trained_ && !p.tensor.requires_grad()) {
      throw ConfigError(where + " does not require grad (list it among the unit's frozen ones)");
    }
    if (!trained_ && p.tensor.requires_grad()) {
      throw ConfigError(where + " requires grad (list it among the unit's trained ones)");
    }
    if (!p.tensor.is_leaf()) throw ConfigError(where + " is not a leaf tensor");
    if (!seen.insert(p.tensor.unsafeGetTensorImpl()).second) {
      throw ConfigError(where + " appears twice (list a shared weight in one unit only)");
    }
    if (first_ == nullptr) first_ = &p;
    // Frozen parameters take a flat buffer per dtype; trained ones share one
    // with their gradients and optimizer state.
    if (trained_ && p.tensor.scalar_type() != first_->tensor.scalar_type()) {
      throw ConfigError("fully sharded data parallelism needs one dtype for every " + kind + ": '" +
                        first_->name + "' is " + c10::toString(first_->tensor.scalar_type()) +
                        " but " + where + " is " + c10::toString(p.tensor.scalar_type()));
    }
    if (p.tensor.device() != first_->tensor.device()) {
      throw ConfigError("fully sharded data parallelism needs one device for every " + kind +
                        ": '" + first_->name + "' is on " + first_->tensor.device().str() +
                        " but " + where + " is on " + p.tensor.device().str());
    }
  }

 private:
  bool trained_;
  const NamedTensor* first_ = nullptr;
};

}  // namespace

void checkUnits(const std::vector<ShardedUnit>& units, const Communicator& comm) {
  if (units.empty()) throw ConfigError("fully sharded data parallelism needs at least one unit");
  std::unordered_set<const void*> seen;
  KindCheck trained(true);
  KindCheck frozen(false);
  for (const ShardedUnit& unit : units) {
    if (unit.parameters.empty() && unit.frozen.empty()) {
      throw ConfigError("fully sharded unit '" + unit.name + "' on group " + comm.name() +
                        " has no parameters");
    }
    for (const NamedTensor& p : unit.parameters) trained.check(p, unit, seen);
    for (const NamedTensor& p : unit.frozen) frozen.check(p, unit, seen);
  }
}

}  // namespace strata::data_parallel
