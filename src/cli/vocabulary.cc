// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The shared vocabulary: --format and --json, deprecated spellings, and
// the nearest option to a mistyped one.

#include "vocabulary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <set>

#include "report.h"

namespace tfdist::cli {

Status FormatArgs::CheckHtml() const {
  if (html() && json_flag) return Status::InvalidArgument("--json and --format html: choose one");
  return Status::OK();
}

void AddFormatOptions(CLI::App& cmd, FormatArgs* args, std::string_view text_help,
                      std::string_view json_help, std::string_view summary_help,
                      std::string_view text_alias, std::string_view html_help) {
  std::vector<std::string> names = {"text", "json"};
  std::string help = fmt::format(
      "text (default{}): {}; json: {}",
      text_alias.empty() ? std::string() : fmt::format(", or {}", text_alias), text_help,
      json_help.empty() ? std::string_view("one JSON object (see the manual)") : json_help);
  if (!summary_help.empty()) {
    names.push_back("summary");
    help += fmt::format("; summary: {}", summary_help);
  }
  if (!html_help.empty()) {
    names.push_back("html");
    help += fmt::format("; html: {}", html_help);
  }
  CLI::Option* format = cmd.add_option("--format", args->format, help);
  if (!text_alias.empty()) {
    format->transform(CLI::Transformer({{std::string(text_alias), "text"}}).description(""));
  }
  format->check(CLI::IsMember(names))->default_str("text");
  cmd.add_flag("--json", args->json_flag,
               summary_help.empty()
                   ? "Same as --format json"
                   : "Same as --format json; with --format summary, the summary as JSON");
}

void NoteDeprecated(std::string_view old_name, std::string_view current) {
  static std::mutex mu;
  static std::set<std::string, std::less<>> told;
  std::lock_guard lock(mu);
  if (!told.insert(std::string(old_name)).second) return;
  PrintMessage("note", fmt::format("{} is deprecated here; it means {} (the old spelling goes in "
                                   "the next release)",
                                   old_name, current));
}

std::vector<std::string> ReplaceDeprecated(const CLI::App& command, std::vector<std::string> args) {
  const auto has = [&command](const char* name) {
    return command.get_option_no_throw(name) != nullptr;
  };
  // Each old spelling, and today's where the command has it.
  struct Spelling {
    std::string old, current;
    std::string shown;  // current, as the note shows it
  };
  std::vector<Spelling> table;
  if (has("--output-compression")) {
    table.push_back({"--compression", "--output-compression", "--output-compression"});
  } else if (has("--input-compression")) {
    table.push_back({"--compression", "--input-compression", "--input-compression"});
  }
  if (has("--num-shards") && !has("-n")) table.push_back({"-n", "--num-shards", "--num-shards"});
  if (command.get_name() == "take" && !has("--summary")) {
    table.push_back({"--summary", "--format=summary", "--format summary"});
  }
  std::vector<std::string> out;
  out.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    std::string& arg = args[i];
    if (arg == "--") {
      out.insert(out.end(), std::make_move_iterator(args.begin() + i),
                 std::make_move_iterator(args.end()));
      break;
    }
    for (const Spelling& s : table) {
      std::string rest;  // "=gzip" of --compression=gzip, "4" of -n4
      if (arg == s.old) {
      } else if (s.old.starts_with("--") && arg.starts_with(s.old + "=")) {
        rest = arg.substr(s.old.size());
      } else if (s.old.size() == 2 && arg.starts_with(s.old)) {
        rest = "=" + arg.substr(2);
      } else {
        continue;
      }
      NoteDeprecated(s.old, s.shown);
      arg = s.current + rest;
      break;
    }
    out.push_back(std::move(arg));
  }
  return out;
}

namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The options --help shows: "--name" and "-n" spellings.
std::vector<std::string> VisibleNames(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* o : command.get_options()) {
    if (o->get_group().empty()) continue;
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

}  // namespace

std::string NearestName(std::string_view typed, const std::vector<std::string>& names) {
  const auto bare = [](std::string_view n) {
    const size_t start = n.find_first_not_of('-');
    return start == std::string_view::npos ? std::string_view() : n.substr(start);
  };
  const std::string_view t = bare(typed);
  if (t.empty()) return {};
  // What the user began (--replica, --step-time), the shortest of them;
  // else a slip of a key or two (--wokers, --replcias).
  const size_t limit = std::max<size_t>(1, std::min<size_t>(3, t.size() / 3));
  std::string begun, near;
  size_t near_distance = limit + 1;
  for (const std::string& n : names) {
    const std::string_view b = bare(n);
    if (b.size() > t.size() && b.starts_with(t) &&
        (begun.empty() || b.size() < bare(begun).size())) {
      begun = n;
    }
    if (b.size() < 2) continue;  // -n is near anything short
    if (const size_t d = EditDistance(t, b); d < near_distance) {
      near_distance = d;
      near = n;
    }
  }
  return begun.empty() ? near : begun;
}

std::optional<std::string> UnknownOptionMessage(const CLI::App& command,
                                                const std::vector<std::string_view>& args) {
  for (std::string_view arg : args) {
    if (arg == "--") break;  // positionals from here
    std::string name;
    if (arg.size() > 2 && arg.starts_with("--")) {
      name = std::string(arg.substr(0, arg.find('=')));
    } else if (arg.size() >= 2 && arg[0] == '-' &&
               std::isalpha(static_cast<unsigned char>(arg[1]))) {
      name = std::string(arg.substr(0, 2));
    } else {
      continue;
    }
    if (command.get_option_no_throw(name) != nullptr) continue;
    const std::string near = NearestName(name, VisibleNames(command));
    if (near.empty()) {
      return fmt::format("{} has no option {} (tfdist {} --help lists them)", command.get_name(),
                         name, command.get_name());
    }
    return fmt::format("{} has no option {}; did you mean {}?", command.get_name(), name, near);
  }
  return std::nullopt;
}

}  // namespace tfdist::cli
