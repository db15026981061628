// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The command-line vocabulary every command shares (doc/cli.md): --format
// and --json, the spellings of the last release kept with a note, and the
// nearest option to a mistyped one.

#ifndef TFDIST_CLI_VOCABULARY_H_
#define TFDIST_CLI_VOCABULARY_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/status.h"

namespace tfdist::cli {

// --format FORM and --json, as every command that prints takes them.
struct FormatArgs {
  std::string format = "text";
  bool json_flag = false;  // --json

  // JSON output: --format json, or --json (which keeps a --format summary
  // a summary, printed as JSON).
  bool json() const { return json_flag || format == "json"; }
  bool summary() const { return format == "summary"; }
  bool html() const { return format == "html"; }
  // InvalidArgument for --json with --format html; else OK.
  Status CheckHtml() const;
};

// One form of --format: its name and what it prints.
struct FormatForm {
  std::string name;
  std::string help;
};

// Adds --format with text (the default, `text_help`), json (`json_help`,
// else "one JSON object") and, when `summary_help` is given, summary; and
// --json. `text_alias` is another name of text (layout's "table"); html
// (`html_help`) where given.
void AddFormatOptions(CLI::App& cmd, FormatArgs* args, std::string_view text_help,
                      std::string_view json_help = {}, std::string_view summary_help = {},
                      std::string_view text_alias = {}, std::string_view html_help = {});

// "tfdist: note: OLD is deprecated here; it means CURRENT (the old spelling
// goes in the next release)" on standard error, once per spelling.
void NoteDeprecated(std::string_view old_name, std::string_view current);

// The spellings of the last release in `args` (a command line for
// `command`, after its name) replaced by today's, each with a note
// (NoteDeprecated): --compression by --input-compression where the command
// reads files, by --output-compression where it writes them; reshard's -n
// by --num-shards (-n is a limit: cat -n, take -n); take's --summary by
// --format summary. Arguments after "--" are left alone.
std::vector<std::string> ReplaceDeprecated(const CLI::App& command, std::vector<std::string> args);

// The message for an option of `args` (a command line for `command`, from
// after its name) that `command` does not have: "unknown option --replica
// of layout; did you mean --replicas?", naming the nearest option of the
// command by prefix or edit distance. nullopt when every option is known.
std::optional<std::string> UnknownOptionMessage(const CLI::App& command,
                                                const std::vector<std::string_view>& args);

// The option of `names` nearest to `typed` ("--replica" -> "--replicas"),
// or empty when none is near: the shortest that `typed` begins, else the
// one within a small edit distance.
std::string NearestName(std::string_view typed, const std::vector<std::string>& names);

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_VOCABULARY_H_
