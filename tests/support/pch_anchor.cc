// The translation unit that builds the tests' precompiled GoogleTest header
// (tests/CMakeLists.txt, braid_test_pch). It holds no tests: gtest_main runs none.
