# The test files build as a unity build (tests/CMakeLists.txt): 8 files share a translation unit, so
# a helper in an anonymous namespace of one file can collide with a same-named helper of another
# (two `Scenario Parse(const std::string&)` are a redefinition). Each file therefore keeps its
# helpers in a namespace named after itself: tests/core/api_test.cpp opens `namespace api_test {`.
# Run by ctest (test_file_namespaces):
#   cmake -DTESTS=tests/core -P tests/test_namespaces.cmake
# A file with an anonymous namespace, or without its own, fails with the list of both.
file(GLOB test_files ${TESTS}/*_test.cpp)
set(anonymous "")
set(unnamed "")
foreach(path IN LISTS test_files)
  get_filename_component(stem ${path} NAME_WE)
  file(STRINGS ${path} anonymous_lines REGEX "^[ \t]*namespace[ \t]*{")
  if(anonymous_lines)
    list(APPEND anonymous ${stem})
  endif()
  file(STRINGS ${path} own_lines REGEX "^namespace ${stem} {")
  if(NOT own_lines)
    list(APPEND unnamed ${stem})
  endif()
endforeach()
if(anonymous OR unnamed)
  message(FATAL_ERROR "test files with an anonymous namespace: ${anonymous}\n"
                      "test files without `namespace <file stem> {` for their helpers: ${unnamed}\n"
                      "(the tests build as a unity build; see tests/CMakeLists.txt)")
endif()
list(LENGTH test_files n)
message(STATUS "${n} test files, each with its own namespace")
