#include "strata/context_parallel/all_to_all_attention.h"

#include <torch/torch.h>

#include <string>

#include "all_to_all.h"
#include "block_attention.h"
#include "context_parallel/causal_attention.h"
#include "strata/context_parallel/sequence_layout.h"
#include "strata/error.h"

namespace strata::context_parallel {

void checkAllToAllHeads(int64_t heads, int64_t kvHeads, int cp) {
  if (heads % cp == 0 && kvHeads % cp == 0) return;
  throw ConfigError("cp_algorithm all-to-all gives each of the cp " + std::to_string(cp) +
                    " ranks whole heads, but the attention has " + std::to_string(heads) +
                    " query heads and " + std::to_string(kvHeads) +
                    " kv heads on each tp rank; cp must divide both (or use cp_algorithm ring)");
}

at::Tensor allToAllAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             Communicator& cp, const at::Tensor& segments) {
  int size = cp.size();
  int64_t heads = q.size(1), s = q.size(2);
  checkAllToAllHeads(heads, k.size(1), size);
  // Where the concatenated shards' tokens belong, and back.
  std::vector<int64_t> order = concatenatedPositions(s * size, size);
  at::Tensor toLayout = at::tensor(order, q.options().dtype(at::kLong));  // [S]
  at::Tensor toNatural = at::argsort(toLayout);                           // [S]
  auto gather = [&](const at::Tensor& x) {  // [b, n, s, d] -> [b, n / cp, S, d], natural order
    return detail::allToAllFunction(x, 1, 2, cp).index_select(2, toNatural);
  };
  at::Tensor query = gather(q);                                       // [b, H/cp, S, d]
  at::Tensor key = detail::repeatKvHeads(gather(k), heads / size);    // [b, H/cp, S, d]
  at::Tensor value = detail::repeatKvHeads(gather(v), heads / size);  // [b, H/cp, S, d]
  at::Tensor out = segments.defined()                                 // [b, H/cp, S, d]
                       ? detail::documentAttention(query, key, value, segments)
                       : detail::causalAttention(query, key, value);
  return detail::allToAllFunction(out.index_select(2, toLayout), 2, 1, cp);  // [b, H, s, d]
}

}  // namespace strata::context_parallel
