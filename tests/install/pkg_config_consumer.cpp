// Built by consumer_test.sh with nothing but `pkg-config --cflags --libs
// strata`: Strata's headers, its library and LibTorch's must all be found
// through the .pc file. It includes every public header (strata/strata.h), so
// a public header that needs a private one fails here.
#include <torch/torch.h>

#include <iostream>

#include "strata/strata.h"

int main() {
  strata::ParallelLayout layout(8, {2, 2, 1, 2});
  torch::Tensor ranks = torch::arange(layout.worldSize());
  std::cout << "strata " << strata::kVersion << ": " << layout.describe() << ", "
            << ranks.sum().item<int64_t>() << "\n";
  return layout.worldSize() == 8 ? 0 : 1;
}
