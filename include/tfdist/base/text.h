// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Small text helpers shared by record labels, cat and the reports.

#ifndef TFDIST_BASE_TEXT_H_
#define TFDIST_BASE_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace tfdist {

// True when `s` is valid UTF-8 (no overlong forms or surrogates).
bool IsValidUtf8(std::string_view s);

// True when `s` is valid UTF-8 without control characters (tab excepted):
// safe to print as a label.
bool IsPrintableUtf8(std::string_view s);

// `s` between double quotes with C escapes (\n, \", \\, \xNN for bytes that
// are not printable UTF-8).
std::string QuoteBytes(std::string_view s);

// `s` when it has at most `max_chars` characters (UTF-8 lead bytes), else
// its first `max_chars` characters and "...": a name or a number a message
// quotes from input of any length.
std::string Abbreviate(std::string_view s, size_t max_chars);

// Lower-case hex of `s`, bytes separated by spaces.
std::string HexBytes(std::string_view s);

// Standard base64 with padding.
std::string Base64(std::string_view s);

}  // namespace tfdist

#endif  // TFDIST_BASE_TEXT_H_
