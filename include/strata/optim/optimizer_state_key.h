// The key of a parameter in a LibTorch optimizer's state map.
//
// LibTorch 1.13 keys the state by the parameter's TensorImpl address as
// text, 2.x by the address itself; the map's key type says which.
#pragma once

#include <ATen/core/Tensor.h>

#include <sstream>
#include <string>
#include <type_traits>

namespace strata::optim {

template <typename StateMap>
auto optimizerStateKey(const StateMap&, const at::Tensor& parameter) {
  using Key = typename std::decay_t<StateMap>::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream text;
    text << parameter.unsafeGetTensorImpl();
    return text.str();
  } else {
    return static_cast<Key>(parameter.unsafeGetTensorImpl());
  }
}

}  // namespace strata::optim
