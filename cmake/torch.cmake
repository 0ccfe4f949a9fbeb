# Shared settings for every target that uses LibTorch.
#
# All LibTorch targets compile with identical flags so they can reuse one
# precompiled header (`strata_pch`): a translation unit that parses
# <torch/torch.h> from scratch takes ~20 s on the development machines.
# strata_pch is internal to this build; users get the same usage requirements
# from Strata::strata (cmake/library.cmake).

# Directory-scoped: the definitions reach Strata's own targets only, never a
# project that adds Strata as a subdirectory (Strata::strata carries
# USE_C10D_GLOO to its users itself). USE_C10D_GLOO makes c10d's headers
# declare the Gloo process group.
add_compile_definitions(USE_C10D_GLOO _GLIBCXX_USE_CXX11_ABI=1)

# Where LibTorch has CUDA (the 2.x wheels on GPU machines): STRATA_WITH_CUDA
# compiles the CUDA paths (streams, events, autocast on CUDA, the CUDA tests),
# and with NCCL found, USE_C10D_NCCL makes c10d's headers declare
# ProcessGroupNCCL and STRATA_WITH_NCCL compiles Strata's NCCL communicator.
if(STRATA_TORCH_HAS_CUDA)
  add_compile_definitions(STRATA_WITH_CUDA)
  if(STRATA_NCCL_INCLUDE_DIR AND STRATA_NCCL_LIBRARY)
    add_compile_definitions(USE_C10D_NCCL STRATA_WITH_NCCL)
  endif()
endif()

# PyPI's libtorch.so carries and exports its own copies of std::filesystem
# functions (its toolchain links part of a newer libstdc++ statically): a
# program that names libtorch before libstdc++ calls those, and remove_all
# crashes there. libstdc++ first in the program's needed libraries makes the
# system's copy win. Strata::strata and strata.pc carry the same flag.
set(STRATA_STDCXX_FIRST "-Wl,--push-state,--no-as-needed,-lstdc++,--pop-state")

add_library(strata_pch STATIC ${PROJECT_SOURCE_DIR}/cmake/pch_anchor.cpp)
target_link_libraries(strata_pch PUBLIC ${STRATA_STDCXX_FIRST} ${TORCH_LIBRARIES} Threads::Threads)
target_include_directories(strata_pch PUBLIC ${PROJECT_SOURCE_DIR}/include
                                             ${PROJECT_SOURCE_DIR}/src)
target_precompile_headers(strata_pch PUBLIC ${PROJECT_SOURCE_DIR}/cmake/pch.h)
# An installed program finds libtorch_cuda.so, linked below as a flag that
# CMAKE_INSTALL_RPATH_USE_LINK_PATH does not see, where it was built.
list(APPEND CMAKE_INSTALL_RPATH ${STRATA_TORCH_LIBDIR})
if(STRATA_TORCH_HAS_CUDA)
  # A program that calls no libtorch_cuda function directly would otherwise
  # lose it to --as-needed (the default of Ubuntu's linker), and CUDA would
  # look absent at run time.
  target_link_libraries(strata_pch PUBLIC "-Wl,--no-as-needed,${STRATA_TORCH_CUDA_LIBRARY}")
  if(STRATA_NCCL_INCLUDE_DIR AND STRATA_NCCL_LIBRARY)
    target_include_directories(strata_pch SYSTEM PUBLIC ${STRATA_NCCL_INCLUDE_DIR})
    target_link_libraries(strata_pch PUBLIC ${STRATA_NCCL_LIBRARY})
  endif()
endif()
# c10d's ProcessGroupGloo.hpp includes Gloo's headers, which PyPI's torch
# wheels do not ship: Debian's libgloo-dev supplies them (the process group
# itself is LibTorch's; Strata only passes Gloo's devices to it).
# STRATA_GLOO_INCLUDE_DIR names other ones.
set(STRATA_GLOO_INCLUDE_DIR "" CACHE PATH "Gloo headers for a LibTorch that ships none")
if(NOT EXISTS ${TORCH_INSTALL_PREFIX}/include/gloo/algorithm.h)
  find_path(strata_gloo_headers gloo/algorithm.h HINTS ${STRATA_GLOO_INCLUDE_DIR})
  if(NOT strata_gloo_headers)
    message(FATAL_ERROR "LibTorch at ${TORCH_INSTALL_PREFIX} ships no Gloo headers and none were "
                        "found: install libgloo-dev (scripts/setup.sh does) or name them with "
                        "-DSTRATA_GLOO_INCLUDE_DIR")
  endif()
  message(STATUS "Gloo headers: ${strata_gloo_headers} (LibTorch ships none)")
  if(NOT strata_gloo_headers IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    target_include_directories(strata_pch SYSTEM PUBLIC ${strata_gloo_headers})
  endif()
endif()

# strata_torch_target(NAME) makes NAME reuse the shared precompiled header.
function(strata_torch_target name)
  target_precompile_headers(${name} REUSE_FROM strata_pch)
  target_link_libraries(${name} PUBLIC strata_pch)
endfunction()
