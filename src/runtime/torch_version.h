// The oldest LibTorch Strata builds against: 2.4, whose autocast takes the
// device type and whose c10::Allocator has copy_data. Tested on 2.11.
#pragma once

#include <torch/version.h>

#if TORCH_VERSION_MAJOR < 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 4)
#error "Strata needs LibTorch 2.4 or later (see the README's 'Which LibTorch')"
#endif
