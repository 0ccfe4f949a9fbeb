# Which LibTorch Strata builds against (STRATA_TORCH):
#
#   debian  the LibTorch CMake finds by itself: Debian's libtorch-dev (1.13,
#           CPU only) on the development machines and CI, or one named by
#           CMAKE_PREFIX_PATH.
#   python  the LibTorch inside python3's torch package (2.x; with CUDA and
#           NCCL on GPU machines), found through torch.utils.cmake_prefix_path.
#   auto    debian when CMake finds one, else python (the default).
#
# STRATA_PYTHON names the interpreter whose torch is used. Sets what
# find_package(Torch) sets, plus STRATA_TORCH_SOURCE (debian or python).

set(STRATA_TORCH auto CACHE STRING "LibTorch to build against: auto, debian or python")
set_property(CACHE STRATA_TORCH PROPERTY STRINGS auto debian python)
set(STRATA_PYTHON python3 CACHE STRING "Interpreter whose torch package STRATA_TORCH=python uses")

# strata_python_eval(OUT CODE): OUT = what `STRATA_PYTHON -c CODE` prints;
# a failure stops the configure with the interpreter's own error.
function(strata_python_eval out code)
  execute_process(COMMAND ${STRATA_PYTHON} -c "${code}" OUTPUT_VARIABLE value
                  ERROR_VARIABLE error RESULT_VARIABLE status OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "STRATA_TORCH=python: '${STRATA_PYTHON} -c \"${code}\"' failed "
                        "(${status}): ${error}")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# A wheel's LibTorch has CUDA but leaves NCCL's header and library in the
# nvidia-nccl package beside it (ProcessGroupNCCL.hpp includes <nccl.h>):
# looked for there when STRATA_PYTHON has torch, then in the CUDA toolkit.
function(strata_find_nccl)
  execute_process(COMMAND ${STRATA_PYTHON} -c
                          "import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))"
                  OUTPUT_VARIABLE site OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  set(headers "")
  set(libraries "")
  if(site)
    file(GLOB_RECURSE headers "${site}/nvidia/*/nccl.h")
    file(GLOB_RECURSE libraries "${site}/nvidia/*/libnccl.so*")
  endif()
  find_path(system_nccl_include nccl.h PATHS /usr/local/cuda/include)
  find_library(system_nccl_library nccl PATHS /usr/local/cuda/lib64)
  if(system_nccl_include AND system_nccl_library)
    list(APPEND headers ${system_nccl_include}/nccl.h)
    list(APPEND libraries ${system_nccl_library})
  endif()
  if(NOT headers OR NOT libraries)
    message(WARNING "LibTorch has CUDA but nccl.h or libnccl.so was not found (python's "
                    "nvidia packages, the CUDA toolkit): Strata is built without NCCL")
    return()
  endif()
  list(GET headers 0 header)
  list(GET libraries 0 library)
  get_filename_component(include_dir ${header} DIRECTORY)
  set(STRATA_NCCL_INCLUDE_DIR ${include_dir} CACHE PATH "Where nccl.h is")
  set(STRATA_NCCL_LIBRARY ${library} CACHE FILEPATH "libnccl.so")
  message(STATUS "NCCL: ${library}")
endfunction()

set(STRATA_TORCH_SOURCE ${STRATA_TORCH})
if(STRATA_TORCH STREQUAL "auto")
  find_package(Torch QUIET)
  if(Torch_FOUND)
    set(STRATA_TORCH_SOURCE debian)
  else()
    message(STATUS "Debian's LibTorch not found: using python's (STRATA_TORCH=python)")
    set(STRATA_TORCH_SOURCE python)
  endif()
elseif(STRATA_TORCH STREQUAL "debian")
  find_package(Torch REQUIRED)
elseif(NOT STRATA_TORCH STREQUAL "python")
  message(FATAL_ERROR "STRATA_TORCH is '${STRATA_TORCH}' (known: auto, debian, python)")
endif()

if(STRATA_TORCH_SOURCE STREQUAL "python")
  strata_python_eval(torch_prefix "import torch.utils; print(torch.utils.cmake_prefix_path)")
  # Only the wheel's package: a Debian LibTorch elsewhere on the system must
  # not be picked up half-way.
  find_package(Torch REQUIRED PATHS ${torch_prefix}/Torch NO_DEFAULT_PATH)
endif()

# CUDA builds ship libtorch_cuda.so beside libtorch.so.
get_filename_component(STRATA_TORCH_LIBDIR ${TORCH_LIBRARY} DIRECTORY)
find_library(STRATA_TORCH_CUDA_LIBRARY torch_cuda PATHS ${STRATA_TORCH_LIBDIR} NO_DEFAULT_PATH)
if(STRATA_TORCH_CUDA_LIBRARY)
  set(STRATA_TORCH_HAS_CUDA ON)
else()
  set(STRATA_TORCH_HAS_CUDA OFF)
endif()
message(STATUS "LibTorch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX} (${STRATA_TORCH_SOURCE}), "
               "CUDA ${STRATA_TORCH_HAS_CUDA}")
if(STRATA_TORCH_HAS_CUDA AND NOT (STRATA_NCCL_INCLUDE_DIR AND STRATA_NCCL_LIBRARY))
  strata_find_nccl()
endif()
