// The one main of the GPU tests' host code (gpu_host_tests): the mask predicates, the decode
// plan and the fragment maps, each file a ctest test of its own through doctest's
// --source-file filter (tests/cuda/CMakeLists.txt).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
