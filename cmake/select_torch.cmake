# Which LibTorch Strata builds against (STRATA_TORCH):
#
#   python  the LibTorch inside STRATA_PYTHON's torch package:
#           the project's .venv, which scripts/python-env.sh fills with PyPI's
#           torch 2.11.0 for CUDA 13.0, else python3. Found through
#           torch.utils.cmake_prefix_path.
#   prefix  the LibTorch find_package(Torch) finds by itself or through
#           CMAKE_PREFIX_PATH: an unpacked archive from pytorch.org (CPU or
#           CUDA).
#   auto    python when the project's .venv exists (the default: what
#           `make test` and CI build against), else prefix.
#
# LibTorch 2.4 or later; older ones stop the configure.
#
# STRATA_TORCH_CUDA (ON by default) uses CUDA and NCCL where that LibTorch has
# them; OFF builds as against a LibTorch without CUDA (pytorch.org's CPU
# archive): no CUDA paths compiled, only LibTorch's CPU libraries linked, no
# CUDA toolkit needed. A LibTorch with CUDA needs the CUDA toolkit of the same
# major version (nvcc on PATH, or CMAKE_CUDA_COMPILER).
#
# Sets what find_package(Torch) sets (TORCH_LIBRARIES, TORCH_INSTALL_PREFIX,
# Torch_VERSION, TORCH_LIBRARY), plus STRATA_TORCH_HAS_CUDA. Every problem
# stops the configure with one line naming what was found and what is needed.

set(STRATA_TORCH auto CACHE STRING "LibTorch to build against: auto, python or prefix")
set_property(CACHE STRATA_TORCH PROPERTY STRINGS auto python prefix)
set(strata_default_python python3)
if(EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
  set(strata_default_python ${PROJECT_SOURCE_DIR}/.venv/bin/python)
endif()
set(STRATA_PYTHON ${strata_default_python} CACHE STRING
                                                 "Interpreter whose torch package STRATA_TORCH=python uses")
option(STRATA_TORCH_CUDA "Use CUDA and NCCL where LibTorch has them" ON)

# strata_python_torch(OUT CODE): OUT = what STRATA_PYTHON prints running CODE
# after `import torch`; stops naming the interpreter when it has no torch.
function(strata_python_torch out code)
  execute_process(COMMAND ${STRATA_PYTHON} -c "import torch, torch.utils; ${code}"
                  OUTPUT_VARIABLE value ERROR_VARIABLE error RESULT_VARIABLE status
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(status STREQUAL "No such file or directory" OR status MATCHES "^[^0-9]")
    message(FATAL_ERROR "STRATA_PYTHON '${STRATA_PYTHON}' cannot be run (${status}): run "
                        "scripts/python-env.sh (make test does) or name a python with torch")
  elseif(NOT status EQUAL 0)
    string(REGEX MATCH "[A-Za-z]*Error: [^\n]*" reason "${error}")
    message(FATAL_ERROR "STRATA_PYTHON '${STRATA_PYTHON}' has no usable torch (${reason}): run "
                        "scripts/python-env.sh (make test does), or use -DSTRATA_TORCH=prefix "
                        "with CMAKE_PREFIX_PATH naming an unpacked LibTorch")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# A wheel's LibTorch has CUDA but leaves NCCL's header and library in the
# nvidia-nccl package beside it (ProcessGroupNCCL.hpp includes <nccl.h>):
# looked for there when STRATA_PYTHON has torch, then in the CUDA toolkit.
function(strata_find_nccl site)
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

# Stops unless the CUDA toolkit's major version is `wanted` (LibTorch's).
function(strata_check_cuda_toolkit wanted)
  find_program(strata_nvcc nvcc HINTS ${CMAKE_CUDA_COMPILER} /usr/local/cuda/bin)
  if(NOT strata_nvcc)
    message(FATAL_ERROR "LibTorch was built for CUDA ${wanted} and needs the CUDA toolkit to "
                        "build against, but nvcc was not found (PATH, /usr/local/cuda/bin): "
                        "install CUDA ${wanted}, or configure with -DSTRATA_TORCH_CUDA=OFF")
  endif()
  execute_process(COMMAND ${strata_nvcc} --version OUTPUT_VARIABLE text)
  string(REGEX MATCH "^[0-9]+" wanted_major "${wanted}")
  string(REGEX MATCH "release ([0-9]+)\\.([0-9]+)" found "${text}")
  if(NOT CMAKE_MATCH_1 STREQUAL wanted_major)
    message(FATAL_ERROR "LibTorch was built for CUDA ${wanted} but ${strata_nvcc} is CUDA "
                        "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}: the majors must agree; point "
                        "CMAKE_CUDA_COMPILER at a CUDA ${wanted_major} nvcc, or configure with "
                        "-DSTRATA_TORCH_CUDA=OFF")
  endif()
  set(CMAKE_CUDA_COMPILER ${strata_nvcc} CACHE FILEPATH "nvcc" FORCE)
endfunction()

# LibTorch's CPU libraries as one imported target, as a CPU-only archive
# offers them: what STRATA_TORCH_CUDA=OFF links instead of Torch's config,
# which insists on the CUDA toolkit when the LibTorch has CUDA.
function(strata_cpu_torch root)
  add_library(strata_torch_cpu INTERFACE IMPORTED)
  foreach(name torch torch_cpu c10)
    find_library(strata_${name}_library ${name} PATHS ${root}/lib NO_DEFAULT_PATH REQUIRED)
    target_link_libraries(strata_torch_cpu INTERFACE ${strata_${name}_library})
  endforeach()
  target_include_directories(strata_torch_cpu SYSTEM INTERFACE
                             ${root}/include ${root}/include/torch/csrc/api/include)
  target_compile_definitions(strata_torch_cpu INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
  set(STRATA_TORCH_CPU_LIBRARIES
      "${strata_torch_library};${strata_torch_cpu_library};${strata_c10_library}" PARENT_SCOPE)
  set(TORCH_LIBRARIES strata_torch_cpu PARENT_SCOPE)
  set(TORCH_INCLUDE_DIRS ${root}/include ${root}/include/torch/csrc/api/include PARENT_SCOPE)
  set(TORCH_LIBRARY ${strata_torch_library} PARENT_SCOPE)
endfunction()

set(strata_site "")
set(strata_torch_mode ${STRATA_TORCH})
if(STRATA_TORCH STREQUAL "auto")
  if(EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
    set(strata_torch_mode python)
  else()
    message(STATUS "No .venv (scripts/python-env.sh): the LibTorch CMake finds "
                   "(STRATA_TORCH=prefix)")
    set(strata_torch_mode prefix)
  endif()
endif()

if(strata_torch_mode STREQUAL "python")
  strata_python_torch(probe "import os, sys; print(torch.__version__.split('+')[0]); \
print(torch.version.cuda or ''); print(torch.utils.cmake_prefix_path); \
print(os.path.dirname(os.path.dirname(torch.__file__)))")
  string(REPLACE "\n" ";" probe "${probe}")
  list(GET probe 0 Torch_VERSION)
  list(GET probe 1 torch_cuda)
  list(GET probe 2 torch_prefix)
  list(GET probe 3 strata_site)
  get_filename_component(TORCH_INSTALL_PREFIX ${torch_prefix}/../.. ABSOLUTE)
  if(NOT EXISTS ${torch_prefix}/Torch/TorchConfig.cmake)
    message(FATAL_ERROR "The torch ${Torch_VERSION} of '${STRATA_PYTHON}' has no CMake files "
                        "(${torch_prefix}/Torch/TorchConfig.cmake): LibTorch's C++ parts come "
                        "with PyPI's torch wheels; run scripts/python-env.sh")
  endif()
  if(NOT STRATA_TORCH_CUDA)
    strata_cpu_torch(${TORCH_INSTALL_PREFIX})
  else()
    if(torch_cuda)
      strata_check_cuda_toolkit(${torch_cuda})
      # Strata compiles no CUDA kernels of its own: one architecture (the
      # H100's and H200's) spares Torch's config detecting and listing them.
      if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
        set(ENV{TORCH_CUDA_ARCH_LIST} 9.0)
      endif()
    endif()
    # Only the wheel's package: a LibTorch elsewhere on the system must not
    # be picked up half-way. Torch's config finds Caffe2's config and its
    # libraries with CMake's default search, which looks in the system's
    # folders before its own hints: the wheel's torch folder goes first.
    list(PREPEND CMAKE_PREFIX_PATH ${TORCH_INSTALL_PREFIX})
    find_package(Torch REQUIRED PATHS ${torch_prefix}/Torch NO_DEFAULT_PATH)
  endif()
elseif(strata_torch_mode STREQUAL "prefix")
  find_package(Torch QUIET)
  if(NOT Torch_FOUND)
    message(FATAL_ERROR "STRATA_TORCH=prefix: no LibTorch found through CMAKE_PREFIX_PATH "
                        "('${CMAKE_PREFIX_PATH}'): name an unpacked LibTorch "
                        "(-DCMAKE_PREFIX_PATH=/path/to/libtorch), or use STRATA_TORCH=python")
  endif()
else()
  message(FATAL_ERROR "STRATA_TORCH is '${STRATA_TORCH}' (known: auto, python, prefix)")
endif()

if(Torch_VERSION VERSION_LESS 2.4)
  message(FATAL_ERROR "LibTorch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX} is too old: Strata "
                      "needs 2.4 or later (tested on 2.11); point CMAKE_PREFIX_PATH at a newer "
                      "one, or run scripts/python-env.sh for the project's .venv")
endif()

# What an installed Strata's CMake package finds again (StrataConfig.cmake).
if(TARGET strata_torch_cpu)
  set(STRATA_TORCH_CPU_TARGET ON)
else()
  set(STRATA_TORCH_CPU_TARGET OFF)
  get_filename_component(STRATA_TORCH_CONFIG_DIR ${TORCH_INSTALL_PREFIX}/share/cmake/Torch ABSOLUTE)
  if(Torch_DIR)
    set(STRATA_TORCH_CONFIG_DIR ${Torch_DIR})
  endif()
endif()

# CUDA builds ship libtorch_cuda.so beside libtorch.so.
get_filename_component(STRATA_TORCH_LIBDIR ${TORCH_LIBRARY} DIRECTORY)
find_library(STRATA_TORCH_CUDA_LIBRARY torch_cuda PATHS ${STRATA_TORCH_LIBDIR} NO_DEFAULT_PATH)
if(STRATA_TORCH_CUDA_LIBRARY AND STRATA_TORCH_CUDA)
  set(STRATA_TORCH_HAS_CUDA ON)
else()
  set(STRATA_TORCH_HAS_CUDA OFF)
endif()
if(STRATA_TORCH_HAS_CUDA AND NOT (STRATA_NCCL_INCLUDE_DIR AND STRATA_NCCL_LIBRARY))
  strata_find_nccl("${strata_site}")
endif()
set(strata_nccl OFF)
if(STRATA_TORCH_HAS_CUDA AND STRATA_NCCL_INCLUDE_DIR AND STRATA_NCCL_LIBRARY)
  set(strata_nccl ON)
endif()
message(STATUS "LibTorch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX} (${strata_torch_mode}): "
               "CUDA ${STRATA_TORCH_HAS_CUDA}, NCCL ${strata_nccl}")
