// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist: the subcommand table, argument parsing and exit codes.

#include <fmt/format.h>
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "commands.h"
#include "job.h"
#include "report.h"
#include "tfdist/base/interrupt.h"
#include "version.h"
#include "vocabulary.h"

namespace {

// Whether the command line asks for JSON output: --json, or --format json.
// Read from argv, since parsing is what failed.
bool WantsJson(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;  // positionals from here
    if (arg == "--json" || arg == "--format=json") return true;
    if (arg == "--format" && i + 1 < argc && std::string_view(argv[i + 1]) == "json") return true;
  }
  return false;
}

constexpr std::string_view kOutOfMemory =
    "out of memory (a buffer, a batch or a record needs more memory than this process may "
    "have)";
bool json_errors = false;  // WantsJson, for OnOutOfMemory

// An allocation failed, in whichever thread: unwinding that thread would
// end in std::terminate (an abort, read as a bug) for all but the main one,
// so the error is reported here, with write(2) only (stdio may be locked or
// need memory), the temporary files removed, and the process ended.
void OnOutOfMemory() {
  const std::string_view text[] = {"tfdist: error: ", kOutOfMemory, "\n"};
  for (std::string_view t : text) (void)!write(STDERR_FILENO, t.data(), t.size());
  if (json_errors) {
    const std::string_view json[] = {R"({"error":{"code":"RESOURCE_EXHAUSTED","message":")",
                                     kOutOfMemory, "\"}}\n"};
    for (std::string_view t : json) (void)!write(STDOUT_FILENO, t.data(), t.size());
  }
  tfdist::ExitRemovingTempFiles(
      tfdist::ExitCodeFor(tfdist::Status::ResourceExhausted(std::string())));
}

// "tfdist: internal error: ..." on standard error, written whatever standard
// error is (a full disk there must not throw again from a handler).
void ReportInternalError(std::string_view what) {
  tfdist::cli::PrintMessage("internal error", what);
}

bool stdout_failure_handled = false;  // by StdoutFailed

// A write of standard output failed with `err`, while the command would
// have exited with `rc`: a closed pipe (tfdist cat | head) ends quietly as
// SIGPIPE would have ended the process, had it not been ignored; a full
// disk or quota is exit 5, any other failure exit 1, with the reason. An
// error the command already reported keeps its exit status.
int StdoutFailed(int err, int rc) {
  stdout_failure_handled = true;
  if (err == EPIPE) return 128 + SIGPIPE;
  const tfdist::Status status =
      tfdist::ErrnoError(err, tfdist::StatusCode::kInternal, "cannot write to standard output");
  // No JSON: the standard output it would go to is what failed.
  const int code = tfdist::cli::ReportError(status, false);
  return rc != 0 ? rc : code;
}

// Writes out what standard output still buffers, and tells whether any
// write of it failed (a short write too): the last lines of a command are
// written only here, at its end, and a failure would go unnoticed.
int FinishStdout(int rc) {
  const int err = tfdist::cli::StdoutError();
  if (err == 0 || stdout_failure_handled) return rc;
  return StdoutFailed(err, rc);
}

// The command line's command, run; its exit status.
int Run(int argc, char** argv) {
  // First of all: a signal from here on is an interrupt (exit 128 + its
  // number), never the default action that kills the process by the signal.
  tfdist::InstallInterruptHandlers();
  json_errors = WantsJson(argc, argv);
  std::set_new_handler(OnOutOfMemory);
  // Reader threads allocate what the consumer frees: without these, glibc
  // trims and regrows its per-thread heaps thousands of times a second.
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // reused read buffers, not mmap'd afresh
  CLI::App app{
      "tfdist: read TFRecord datasets and distribute them as tf.data + tf.distribute do.\n"
      "Exit status: 0 success, 1 internal error (a bug) or a failed write of standard output, "
      "2 invalid usage or argument, 3 data error (corrupt or truncated record, unreadable "
      "file), 4 run --target-steps-per-s missed, 5 out of a resource (disk space, memory, "
      "open files, ulimit -f), 6 check found an error (the job would fail, hang, or feed "
      "records twice or never), 7 an object store (s3://, gs://) unreachable or failing after "
      "every retry, 128 + the signal's number when a signal stops it (130 SIGINT, "
      "143 SIGTERM, 129 SIGHUP).",
      "tfdist"};
  app.set_version_flag("--version", TFDIST_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);

  tfdist::cli::Action action;
  tfdist::cli::AddCountCommand(app, &action);
  tfdist::cli::AddVerifyCommand(app, &action);
  tfdist::cli::AddDigestCommand(app, &action);
  tfdist::cli::AddCatCommand(app, &action);
  tfdist::cli::AddGenCommand(app, &action);
  tfdist::cli::AddIndexCommand(app, &action);
  tfdist::cli::AddReshardCommand(app, &action);
  tfdist::cli::AddConvertCommand(app, &action);
  tfdist::cli::AddLayoutCommand(app, &action);
  tfdist::cli::AddCheckCommand(app, &action);
  tfdist::cli::AddRunCommand(app, &action);
  tfdist::cli::AddResumeCommand(app, &action);
  tfdist::cli::AddTakeCommand(app, &action);

  // CLI11 words an unknown command as "A subcommand is required"; say it plainly.
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    std::vector<std::string> commands;
    for (const CLI::App* sub : app.get_subcommands({})) {
      names += fmt::format("{}{}", names.empty() ? "" : ", ", sub->get_name());
      commands.push_back(sub->get_name());
    }
    if (std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
      const std::string near = tfdist::cli::NearestName(argv[1], commands);
      return tfdist::cli::ReportError(
          tfdist::Status::InvalidArgument(
              fmt::format("unknown command '{}'{}; the commands are {}", argv[1],
                          near.empty() ? "" : fmt::format(" (did you mean {}?)", near), names)),
          WantsJson(argc, argv));
    }
  }
  // The spellings of the last release, as today's, each with a note.
  const CLI::App* command = argc > 1 && argv[1][0] != '-' ? app.get_subcommand(argv[1]) : nullptr;
  std::vector<std::string> command_args(argv + (command ? 2 : 1), argv + argc);
  if (command) command_args = tfdist::cli::ReplaceDeprecated(*command, std::move(command_args));
  std::vector<std::string> args(command_args.rbegin(), command_args.rend());  // CLI11's order
  if (command) args.push_back(argv[1]);
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version
      // Through stdio, which FinishStdout checks: CLI11's std::endl would
      // flush std::cout itself, and a failure's errno would be lost.
      std::ostringstream out;
      const int rc = app.exit(e, out);
      fmt::print("{}", out.str());
      return rc;
    }
    // Worded as every other error, with the hint CLI11 adds. A script that
    // asked for JSON reads the error from stdout too (the manual's JSON OUTPUT),
    // also when the arguments themselves are wrong. A mistyped option is
    // named, with the command's nearest one, rather than CLI11's "arguments
    // were not expected", which blames the positionals as well.
    std::string message = e.what();
    if (command) {
      const std::vector<std::string_view> given(command_args.begin(), command_args.end());
      if (std::optional<std::string> unknown = tfdist::cli::UnknownOptionMessage(*command, given)) {
        message = *unknown;
      }
    }
    const int rc =
        tfdist::cli::ReportError(tfdist::Status::InvalidArgument(message), WantsJson(argc, argv));
    // Not fmt::print, which throws when standard error is full.
    std::fputs("Run with --help for more information.\n", stderr);
    return rc;
  }
  std::string command_name;
  for (const CLI::App* sub : app.get_subcommands()) command_name = sub->get_name();
  tfdist::cli::SetCommand(command_name);
  // Interrupted while starting up: stop before the command does anything.
  if (tfdist::Interrupted()) {
    return tfdist::cli::ReportError(tfdist::Status::Interrupted(), WantsJson(argc, argv));
  }
  // Started by mpirun or srun: the ranks that do not run this command wait
  // for rank 0's exit status (main's EndJob).
  tfdist::Result<bool> runs = tfdist::cli::StartJob(command_name);
  if (!runs.ok()) return tfdist::cli::ReportError(runs.status(), WantsJson(argc, argv));
  if (!*runs) return 0;
  try {
    const int rc = action ? action() : 2;
    // A store first used by a pipeline or --python (not by file arguments)
    // has its warnings said here, after the command's output.
    tfdist::cli::PrintRemoteWarnings();
    return rc;
  } catch (const std::bad_alloc&) {
    return tfdist::cli::ReportError(tfdist::Status::ResourceExhausted(std::string(kOutOfMemory)),
                                    WantsJson(argc, argv));
  } catch (const std::system_error& e) {
    // A write that fails (fmt throws): of standard output, or of standard
    // error. A full disk is the user's to free, not a bug.
    const std::error_code code = e.code();
    const bool errno_code =
        code.category() == std::generic_category() || code.category() == std::system_category();
    if (errno_code && std::ferror(stdout)) return StdoutFailed(code.value(), 0);
    // EAGAIN: a thread that cannot be made (std::thread throws it) at the
    // process or thread limit (ulimit -u), or without the memory for it.
    if (errno_code && (tfdist::IsResourceErrno(code.value()) || code.value() == EAGAIN)) {
      // No JSON: the standard output it would go to may be what failed.
      return tfdist::cli::ReportError(tfdist::Status::ResourceExhausted(e.what()), false);
    }
    ReportInternalError(e.what());
    return 1;
  } catch (const std::exception& e) {
    ReportInternalError(e.what());
    return 1;
  }
}

}  // namespace

// A rank of a job exits as rank 0 does where they share a command
// (tfdist::cli::EndJob).
int main(int argc, char** argv) { return tfdist::cli::EndJob(FinishStdout(Run(argc, argv))); }
