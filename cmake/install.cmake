# Install rules: the public headers, the strata library and CLI, a CMake
# package (find_package(Strata) -> Strata::strata) and a pkg-config file.
#
#   cmake --install build --prefix /opt/strata     (or: make install PREFIX=/opt/strata)

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS strata_lib EXPORT StrataTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS strata RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The SentencePiece plugin, which the library opens at run time
# (strata/data/sentencepiece_tokenizer.h).
install(TARGETS strata_sentencepiece LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/strata)
# Public headers only: src/ holds the private ones.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/strata ${PROJECT_BINARY_DIR}/include/strata
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(STRATA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)
install(EXPORT StrataTargets NAMESPACE Strata:: DESTINATION ${STRATA_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/StrataConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/StrataConfig.cmake
                              INSTALL_DESTINATION ${STRATA_CMAKE_DIR})
# 0.x: a minor release may change the API, so a request for 0.5 takes 0.5.*.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/StrataConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/StrataConfig.cmake
              ${PROJECT_BINARY_DIR}/StrataConfigVersion.cmake DESTINATION ${STRATA_CMAKE_DIR})

# pkg-config: LibTorch ships no .pc file, so its flags are written in here from
# what find_package(Torch) found.
list(JOIN TORCH_INCLUDE_DIRS " -I" STRATA_PC_TORCH_CFLAGS)
set(STRATA_PC_TORCH_CFLAGS "-I${STRATA_PC_TORCH_CFLAGS}")
get_filename_component(STRATA_PC_TORCH_LIBDIR ${TORCH_LIBRARY} DIRECTORY)
# Built with CUDA, libstrata.a calls into libtorch_cuda (and NCCL through it):
# a program that links any object of the communicators needs them, as
# Strata::strata links them.
set(STRATA_PC_CUDA_LIBS "")
if(STRATA_TORCH_HAS_CUDA)
  set(STRATA_PC_CUDA_LIBS
      "-Wl,--push-state,--no-as-needed ${STRATA_TORCH_CUDA_LIBRARY} -Wl,--pop-state -lc10_cuda")
  if(STRATA_NCCL_INCLUDE_DIR AND STRATA_NCCL_LIBRARY)
    get_filename_component(nccl_dir ${STRATA_NCCL_LIBRARY} DIRECTORY)
    string(APPEND STRATA_PC_CUDA_LIBS " ${STRATA_NCCL_LIBRARY} -Wl,-rpath,${nccl_dir}")
  endif()
endif()
# The prefix is found from the .pc file's own place, so `--prefix` at install
# time is honoured.
file(RELATIVE_PATH STRATA_PC_PREFIX_FROM_PCDIR /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
configure_file(${PROJECT_SOURCE_DIR}/cmake/strata.pc.in ${PROJECT_BINARY_DIR}/strata.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/strata.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
