// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The entry points of a libFuzzer target, defined by each fuzz_*.cc and
// called by libFuzzer or by replay_main.cc (the corpus replay of the suite).

#ifndef TFDIST_TESTS_FUZZ_FUZZ_TARGET_H_
#define TFDIST_TESTS_FUZZ_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>

// Runs one input; returns 0.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Optional set-up before the first input (weak: a target may leave it out).
extern "C" [[gnu::weak]] int LLVMFuzzerInitialize(int* argc, char*** argv);

#endif  // TFDIST_TESTS_FUZZ_FUZZ_TARGET_H_
