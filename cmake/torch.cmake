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

add_library(strata_pch STATIC ${PROJECT_SOURCE_DIR}/cmake/pch_anchor.cpp)
target_link_libraries(strata_pch PUBLIC ${TORCH_LIBRARIES} Threads::Threads)
target_include_directories(strata_pch PUBLIC ${PROJECT_SOURCE_DIR}/include
                                             ${PROJECT_SOURCE_DIR}/src)
target_precompile_headers(strata_pch PUBLIC ${PROJECT_SOURCE_DIR}/cmake/pch.h)

# strata_torch_target(NAME) makes NAME reuse the shared precompiled header.
function(strata_torch_target name)
  target_precompile_headers(${name} REUSE_FROM strata_pch)
  target_link_libraries(${name} PUBLIC strata_pch)
endfunction()
