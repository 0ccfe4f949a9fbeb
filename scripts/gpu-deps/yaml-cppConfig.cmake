# yaml-cpp, Debian's static library and headers (libyaml-cpp-dev); only the
# `strata k8s` command uses it.
if(NOT TARGET yaml-cpp)
  add_library(yaml-cpp STATIC IMPORTED)
  set_target_properties(yaml-cpp PROPERTIES
    IMPORTED_LOCATION "${CMAKE_CURRENT_LIST_DIR}/../lib/libyaml-cpp.a"
    INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR}/../include")
endif()
