// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Errors and JSON as the commands print them: the one place where the
// library's remedies become flags.

#ifndef TFDIST_CLI_REPORT_H_
#define TFDIST_CLI_REPORT_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tfdist/base/status.h"

namespace tfdist::cli {

// A message and its advice, the remedy worded as the flags or commands that
// do it ("...: already exists (use --force to overwrite)"). The one place
// where the library's terms become flags.
std::string Describe(std::string_view message, const Advice& advice);
// Describe(status.message(), status.advice()).
std::string Describe(const Status& status);

// The subcommand running ("count", "take", ...): Describe words a remedy
// with that command's own arguments where they differ between commands.
void SetCommand(std::string_view name);

// Prints "tfdist: error: <Describe(status)>" to stderr and, when `json`, the error
// object of the manual's JSON OUTPUT to stdout. Returns the exit code for `status`.
int ReportError(const Status& status, bool json);

// Prints "tfdist: KIND: MESSAGE" to stderr ("error", "warning"), the message
// escaped for a terminal (TerminalText): every error and warning goes
// through here.
void PrintMessage(std::string_view kind, std::string_view message);

// {"code": "DATA_LOSS", "message": Describe(status)}
nlohmann::ordered_json ErrorJson(const Status& status);

// Reports an error met while parsing, building or running the pipeline
// expression `text`; when the error has a position() the line of `text` and
// a caret under it follow. Returns the exit code.
int ReportPipelineError(const Status& status, std::string_view text, bool json);

// Flushes standard output, keeping the errno of the first flush that
// failed for StdoutError: a later flush of a stream in error says nothing.
// Every command flushes standard output through it.
void FlushStdout();

// 0 when every write of standard output so far has succeeded (what it
// buffers is flushed first), else the errno of the first that failed (EIO
// when none is known).
int StdoutError();

// Prints JSON on one line (jq-friendly) followed by a newline.
void PrintJson(const nlohmann::ordered_json& j);

// "tfdist: note: TEXT" on stderr: what a writer found and did on its own
// (a lock waited for, a dead writer's commit completed or undone).
void PrintNote(std::string_view text);

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

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_REPORT_H_
