// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The subcommands, each adding itself to the program.

#ifndef TFDIST_CLI_COMMANDS_H_
#define TFDIST_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <functional>

namespace tfdist::cli {

// What a subcommand runs once its arguments are parsed; returns the exit code.
using Action = std::function<int()>;

// Each subcommand adds itself to `app` and, when chosen, sets *action.
void AddCountCommand(CLI::App& app, Action* action);
void AddVerifyCommand(CLI::App& app, Action* action);
void AddDigestCommand(CLI::App& app, Action* action);
void AddCatCommand(CLI::App& app, Action* action);
void AddGenCommand(CLI::App& app, Action* action);
void AddTakeCommand(CLI::App& app, Action* action);
void AddLayoutCommand(CLI::App& app, Action* action);
void AddCheckCommand(CLI::App& app, Action* action);
void AddIndexCommand(CLI::App& app, Action* action);
void AddRunCommand(CLI::App& app, Action* action);
void AddReshardCommand(CLI::App& app, Action* action);
void AddConvertCommand(CLI::App& app, Action* action);
void AddResumeCommand(CLI::App& app, Action* action);

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_COMMANDS_H_
