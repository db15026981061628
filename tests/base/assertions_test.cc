// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The tests run with assertions on (tools/test builds build-test/ so), so
// that every REQUIRES the code asserts is checked while they run.

#include <doctest/doctest.h>

#include <cassert>

namespace {

TEST_CASE("the tests are built with assertions on") {
#ifdef NDEBUG
  FAIL("NDEBUG is defined: run the tests with tools/test, whose build-test/ has assertions on");
#else
  bool evaluated = false;
  assert((evaluated = true));
  CHECK(evaluated);
#endif
}

}  // namespace
