// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Checks of integer and floating-point options.

#ifndef TFDIST_CLI_VALIDATORS_H_
#define TFDIST_CLI_VALIDATORS_H_

#include <CLI/CLI.hpp>
#include <cstdint>

namespace tfdist::cli {

// Checks for integer options, added with ->check(). CLI11 2.1 wraps "-1" into
// an unsigned option (2^64 - 1) and saturates a value too large for the type;
// these reject both, and a value below `min`, with the option's name first:
// "--files: must be at least 1; got 0". A value that is no integer at all is
// left to CLI11's conversion error.
// Every unsigned (uint32/uint64/size_t) option takes UintAtLeast.
CLI::Validator UintAtLeast(uint64_t min);
CLI::Validator IntAtLeast(int64_t min);

// Rejects NaN and the infinities, which CLI11 reads as numbers ("nan",
// "inf", "-Infinity") and every comparison of a range check lets through:
// "--step-time-ms: must be a finite number; got nan". Every floating-point
// option takes it, before any range check.
CLI::Validator Finite();

// Rejects a number that is not above 0 ("--target-steps-per-s: must be above
// 0; got 0"), where CLI::PositiveNumber printed the double's whole range.
CLI::Validator Positive();

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_VALIDATORS_H_
