// The key of a parameter in a LibTorch optimizer's state map: the address of
// the parameter's TensorImpl, as the map's key type spells it.
#pragma once

#include <ATen/core/Tensor.h>

#include <type_traits>

namespace strata::optim {

template <typename StateMap>
auto optimizerStateKey(const StateMap&, const at::Tensor& parameter) {
  using Key = typename std::decay_t<StateMap>::key_type;
  return static_cast<Key>(parameter.unsafeGetTensorImpl());
}

}  // namespace strata::optim
