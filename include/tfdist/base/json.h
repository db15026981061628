// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// JSON as tfdist writes it (its JSON output, the trace's request) and reads
// it (the trace's answer): names that are not UTF-8 survive both ways as
// Python's surrogate escapes, and nesting is bounded before a parse.

#ifndef TFDIST_BASE_JSON_H_
#define TFDIST_BASE_JSON_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "tfdist/base/status.h"

namespace tfdist {

// `j` on one line, as nlohmann::json dumps it, except that a string that is
// not valid UTF-8 (a file name) carries each stray byte as Python's
// surrogate escape \udcXX (AppendJsonString; the manual's JSON OUTPUT).
// `ascii`: non-ASCII characters as \u escapes too.
std::string DumpJson(const nlohmann::ordered_json& j, bool ascii = false);
std::string DumpJson(const nlohmann::json& j, bool ascii = false);

// The most levels of arrays and objects ParseJson reads: nlohmann::json
// copies and compares a value recursively, so deeper nesting could overflow
// the stack. No JSON tfdist or its trace writes comes near it (Python's json
// module stops at about 1000 levels).
inline constexpr size_t kMaxJsonDepth = 1000;

// Whether the arrays and objects of JSON `text` nest more than `limit` levels
// (brackets inside strings do not count); a scan, no parse, no recursion.
bool JsonNestsDeeperThan(std::string_view text, size_t limit);

// The JSON `text`, reading a lone surrogate escape \udc80..\udcff (Python's
// json module writes a byte of a name that is not UTF-8 so) as that byte;
// discarded (is_discarded()) when it is not JSON, or when it nests deeper
// than kMaxJsonDepth.
nlohmann::json ParseJson(std::string text);

// A Status as JSON and back, whole (code, message, position, advice): for
// processes that tell each other their errors (the ranks of a job). Not the
// JSON of tfdist's output (the manual's error objects).
nlohmann::json StatusToJson(const Status& status);
// Error: nullopt for JSON that StatusToJson did not write.
std::optional<Status> StatusFromJson(const nlohmann::json& j);

}  // namespace tfdist

#endif  // TFDIST_BASE_JSON_H_
