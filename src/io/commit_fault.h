// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A test hook (private to src/io): TFDIST_COMMIT_FAULT=PHASE:ACTION makes
// a writer die (kill: SIGKILL), fail as a rename would (fail), or receive a
// signal (sigint, sighup) at the named phase of its commit. Phases of the
// commit (output_set.cc): prepared, old-moved-1, old-moved, new-renamed-1,
// new-renamed, committed; of a rewrite shared by a group of processes
// (reshard.cc): staged, when a member has written its outputs, before the
// group agrees.

#ifndef TFDIST_IO_COMMIT_FAULT_H_
#define TFDIST_IO_COMMIT_FAULT_H_

#include <string_view>

#include "tfdist/base/status.h"

namespace tfdist::io {

// OK unless the environment asks for a fault at `phase` (and the fault
// lets the process go on): then Internal, naming the phase.
Status CommitFault(std::string_view phase);

}  // namespace tfdist::io

#endif  // TFDIST_IO_COMMIT_FAULT_H_
