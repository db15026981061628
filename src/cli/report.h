// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Errors and JSON as the commands print them: the one place where the
// library's remedies become flags.

#ifndef TFDIST_CLI_REPORT_H_
#define TFDIST_CLI_REPORT_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/json.h"  // DumpJson, ParseJson: the JSON the commands print
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
// From now on PrintMessage drops warnings: for the ranks of a job but
// rank 0, which says them once.
void QuietWarnings();
// From now on PrintMessage keeps its lines ("KIND: MESSAGE") for
// TakeCapturedMessages rather than printing them: for the ranks of a job
// whose messages rank 0 prints.
// ReportError's JSON error object is kept too (TakeCapturedErrorJson),
// not printed. CaptureMessages(false) prints again.
void CaptureMessages(bool on = true);
std::vector<std::string> TakeCapturedMessages();
// The error object of the last ReportError while capturing, or null.
nlohmann::ordered_json TakeCapturedErrorJson();

// Prints the object stores' warnings not printed yet (io::TakeRemoteWarnings)
// as "tfdist: warning: ...", each once, and adds them to `kept` (a command's
// JSON "warnings") when given. ReportError and the end of every command call
// it too, so that none is lost.
void PrintRemoteWarnings(std::vector<std::string>* kept = nullptr);

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

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_REPORT_H_
