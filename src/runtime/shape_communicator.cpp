#include "runtime/shape_communicator.h"

#include "strata/error.h"

namespace strata {

ShapeCommunicator::ShapeCommunicator(int rank, int size)
    : rank_(rank), ranks_(static_cast<size_t>(size)), name_("shapes-only") {
  for (int r = 0; r < size; ++r) ranks_[static_cast<size_t>(r)] = r;
}

void ShapeCommunicator::refuse() const {
  throw Error(
      "a shapes-only communicator cannot communicate (it builds a rank's layers in one process "
      "for generate, export and checkpoint convert)");
}

}  // namespace strata
