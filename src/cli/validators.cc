// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Checks of integer and floating-point options.

#include "validators.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace tfdist::cli {

namespace {

// `text` read as CLI11 reads integers (strtoll/strtoull, base 0), checked
// against [min, max]. The message is empty when the value is in range or is
// not an integer (CLI11's conversion reports that).
std::string CheckInteger(const std::string& text, int64_t min, uint64_t max) {
  const char* begin = text.c_str();
  while (*begin == ' ' || *begin == '\t') ++begin;
  char* end = nullptr;
  errno = 0;
  bool below = false, above = false;
  if (*begin == '-') {
    const long long v = std::strtoll(begin, &end, 0);
    below = errno == ERANGE || v < min;
  } else {
    const unsigned long long v = std::strtoull(begin, &end, 0);
    above = errno == ERANGE || v > max;
    below = min > 0 && v < static_cast<uint64_t>(min);
  }
  if (end == begin || end != text.c_str() + text.size()) return {};
  if (below) return fmt::format("must be at least {}; got {}", min, text);
  if (above) return fmt::format("must be at most {}; got {}", max, text);
  return {};
}

// `text` read as CLI11 reads a double (strtold, then a cast): "nan", "inf"
// and "infinity" in any case and sign are numbers to it, and 1e400 becomes
// an infinity. The message is empty for a finite number, and for text that
// is no number at all (CLI11's conversion reports that).
std::string CheckFinite(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const auto v = static_cast<double>(std::strtold(begin, &end));
  if (end == begin || end != text.c_str() + text.size() || std::isfinite(v)) return {};
  return fmt::format("must be a finite number; got {}", text);
}

// Empty for a number above 0, and for text that is no number (as above).
std::string CheckPositive(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const auto v = static_cast<double>(std::strtold(begin, &end));
  if (end == begin || end != text.c_str() + text.size() || v > 0) return {};
  return fmt::format("must be above 0; got {}", text);
}

}  // namespace

CLI::Validator Positive() { return CLI::Validator(CheckPositive, "POSITIVE"); }

CLI::Validator Finite() { return CLI::Validator(CheckFinite, ""); }

CLI::Validator UintAtLeast(uint64_t min) {
  const auto low = static_cast<int64_t>(std::min<uint64_t>(min, INT64_MAX));
  return CLI::Validator([low](std::string& text) { return CheckInteger(text, low, UINT64_MAX); },
                        "");
}

CLI::Validator IntAtLeast(int64_t min) {
  return CLI::Validator([min](std::string& text) { return CheckInteger(text, min, INT64_MAX); },
                        "");
}

}  // namespace tfdist::cli
