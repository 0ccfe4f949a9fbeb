// Releasing and restoring the memory behind a tensor while every tensor that
// shares its storage (parameters set onto it, views autograd saved for
// backward) stays valid as an object: FSDP's storage resize. The storage keeps
// its identity, so a parameter set onto it sees the memory again once it is
// restored. Nothing blocks; restoreStorage throws what the allocator throws.
#pragma once

#include <ATen/core/Tensor.h>

namespace strata::data_parallel {

// Frees the memory of `tensor`'s storage; its contents are lost.
void releaseStorage(const at::Tensor& tensor);
// Allocates `bytes` of fresh, uninitialised memory for `tensor`'s storage
// with the allocator it was created with.
void restoreStorage(const at::Tensor& tensor, size_t bytes);

}  // namespace strata::data_parallel
