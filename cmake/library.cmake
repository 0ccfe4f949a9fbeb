# The libraries built from the src/ folders' OBJECT libraries.
#
# strata (target strata_lib, exported as Strata::strata): every folder in one
# archive — the library users link, and the one every LibTorch test, benchmark
# and example links.
# strata_core: the LibTorch-free folders (util, schedule, plan) alone, so their
# tests build and link without LibTorch. Internal; never installed.
#
# The folder libraries are linked through $<BUILD_INTERFACE:...>: CMake then
# archives their objects into strata_lib and applies their usage requirements
# while building, but leaves them out of the exported interface, which states
# what an installed consumer needs explicitly below.

set(STRATA_CORE_PARTS strata_util strata_schedule strata_plan)
set(STRATA_TORCH_PARTS strata_runtime strata_optim strata_ops strata_launch strata_pipeline strata_context_parallel
                       strata_tensor_parallel strata_expert_parallel
                       strata_data_parallel strata_formats strata_models strata_data strata_report
                       strata_config strata_checkpoint strata_inference strata_train strata_deploy)

# Folders left out with STRATA_SKIP have no target.
set(strata_parts "")
foreach(part ${STRATA_CORE_PARTS} ${STRATA_TORCH_PARTS})
  if(TARGET ${part})
    list(APPEND strata_parts ${part})
  endif()
endforeach()

add_library(strata_core STATIC)
target_link_libraries(strata_core PUBLIC ${STRATA_CORE_PARTS})

add_library(strata_lib STATIC)
add_library(Strata::strata ALIAS strata_lib)
set_target_properties(strata_lib PROPERTIES OUTPUT_NAME strata EXPORT_NAME strata)
foreach(part ${strata_parts})
  target_link_libraries(strata_lib PRIVATE $<BUILD_INTERFACE:${part}>)
endforeach()
# Whatever links the library can open the SentencePiece plugin, built with it.
if(TARGET strata_sentencepiece)
  add_dependencies(strata_lib strata_sentencepiece)
endif()
target_compile_features(strata_lib PUBLIC cxx_std_17)
target_include_directories(
  strata_lib PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include> $<INSTALL_INTERFACE:include>)
target_compile_definitions(strata_lib PUBLIC USE_C10D_GLOO)
# strata/util/json.h declares nlohmann types, strata/util/cli_flags.h CLI11
# ones. toml++ (Debian ships it
# compiled), OpenSSL's libcrypto, libcurl (the etcd rendezvous) and ICU (the GPT-2 and tokenizer.json
# tokenizers) are used inside, but a static library leaves their linking to
# its user.
target_link_libraries(
  strata_lib PUBLIC ${STRATA_STDCXX_FIRST} ${TORCH_LIBRARIES} nlohmann_json::nlohmann_json CLI11::CLI11
                    tomlplusplus::tomlplusplus ICU::i18n ICU::uc
                    OpenSSL::Crypto CURL::libcurl Threads::Threads ${CMAKE_DL_LIBS} rt)
