// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// SIGINT/SIGTERM handling: a flag long loops poll, and temp-file clean-up.

#ifndef TFDIST_BASE_INTERRUPT_H_
#define TFDIST_BASE_INTERRUPT_H_

#include <string>

namespace tfdist {

// Installs handlers for SIGINT and SIGTERM. The first signal sets the flag
// that Interrupted() reads, so loops stop and return Status::Cancelled, and
// writers remove their temporary files on the way out. A second signal removes
// the registered temporary files at once and exits with status 130.
// Then unblocks both signals: a parent that blocks them across exec() (the
// mask is inherited) holds a signal sent before the handlers were installed,
// which would otherwise kill the process, until they are.
void InstallInterruptHandlers();

// Removes the registered temporary files and ends the process at once with
// `exit_code` (for when unwinding cannot be relied on, as out of memory in
// any thread). Async-signal-safe.
[[noreturn]] void ExitRemovingTempFiles(int exit_code);

// From now on SIGINT and SIGTERM are ignored, process-wide: for a command
// whose outputs are all in place, which an interrupt could only make exit
// 130 over complete files. Interrupted() keeps what arrived before.
void IgnoreInterrupts();

// True once SIGINT or SIGTERM arrived. Thread-safe, cheap (one atomic load).
bool Interrupted();

// Temporary files to delete if a second signal forces an exit. Thread-safe.
void RegisterTempFile(const std::string& path);
void UnregisterTempFile(const std::string& path);

}  // namespace tfdist

#endif  // TFDIST_BASE_INTERRUPT_H_
