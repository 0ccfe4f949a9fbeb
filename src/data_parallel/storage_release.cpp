#include "data_parallel/storage_release.h"

#include <c10/core/StorageImpl.h>

#include "strata/error.h"

namespace strata::data_parallel {

void releaseStorage(const at::Tensor& tensor) {
  c10::StorageImpl* storage = tensor.storage().unsafeGetStorageImpl();
  // The returned old pointer frees the memory when it goes out of scope.
  storage->set_data_ptr(at::DataPtr(nullptr, tensor.device()));
  storage->set_nbytes(0);
}

void restoreStorage(const at::Tensor& tensor, size_t bytes) {
  c10::StorageImpl* storage = tensor.storage().unsafeGetStorageImpl();
  at::Allocator* allocator = storage->allocator();
  if (allocator == nullptr) {
    throw Error("cannot restore the memory of a tensor whose storage has no allocator");
  }
  storage->set_data_ptr(allocator->allocate(bytes));
  storage->set_nbytes(bytes);
}

}  // namespace strata::data_parallel
