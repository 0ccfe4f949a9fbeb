# GoogleTest built from Debian's sources (the googletest package) inside the
# build that asks for it, with the targets Debian's GTest package exports.
if(NOT TARGET GTest::gtest)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(BUILD_GMOCK ON CACHE BOOL "" FORCE)
  add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/../googletest ${CMAKE_BINARY_DIR}/_googletest
                   EXCLUDE_FROM_ALL)
  # googletest 1.12 defines the GTest:: aliases itself; older ones do not.
  foreach(name gtest gtest_main gmock gmock_main)
    if(NOT TARGET GTest::${name})
      add_library(GTest::${name} ALIAS ${name})
    endif()
  endforeach()
endif()
