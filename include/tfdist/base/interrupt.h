// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Signals that end a command: a flag long loops poll, temp-file clean-up,
// the exit status a shell expects, and sections a signal may not cut.

#ifndef TFDIST_BASE_INTERRUPT_H_
#define TFDIST_BASE_INTERRUPT_H_

#include <string>

namespace tfdist {

// Installs handlers for every catchable signal whose default action would
// end tfdist: SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU
// and SIGXFSZ (SIGQUIT keeps its core dump; SIGPIPE keeps its default, a
// quiet end, since the writes that raise it are to standard output, after
// every output file is in place). The first signal sets the flag that
// Interrupted() reads, so loops stop and return Status::Cancelled, and
// writers remove their temporary files on the way out. A second signal
// removes the registered temporary files at once and exits with
// InterruptExitCode(), unless a DeferInterrupts section is open: then it
// waits for the section's end.
// Then unblocks those signals: a parent that blocks them across exec() (the
// mask is inherited) holds a signal sent before the handlers were
// installed, which would otherwise kill the process, until they are.
void InstallInterruptHandlers();

// Removes the registered temporary files and ends the process at once with
// `exit_code` (for when unwinding cannot be relied on, as out of memory in
// any thread). Async-signal-safe.
[[noreturn]] void ExitRemovingTempFiles(int exit_code);

// From now on the handled signals are ignored, process-wide: for a command
// whose outputs are all in place, which a signal could only make exit
// non-zero over complete files. Interrupted() keeps what arrived before.
void IgnoreInterrupts();

// True once a handled signal arrived. Thread-safe, cheap (one atomic load).
bool Interrupted();

// The first handled signal that arrived, or 0.
int InterruptSignal();

// The exit status for an interrupted command, as a shell reports a process
// killed by the signal: 128 + its number (SIGINT 130, SIGHUP 129, SIGTERM
// 143), except SIGXFSZ (a write past `ulimit -f`), which is 5, out of a
// resource. 130 when no signal arrived.
int InterruptExitCode();

// While an object of this class lives, a second signal does not force the
// exit: it is held until the last such object is destroyed, and then acted
// on. For the few steps that must not be cut (the renames of a commit).
// Thread-safe; sections nest.
class DeferInterrupts {
 public:
  DeferInterrupts();
  ~DeferInterrupts();
  DeferInterrupts(const DeferInterrupts&) = delete;
  DeferInterrupts& operator=(const DeferInterrupts&) = delete;
};

// Temporary files (and folders, removed after the files) to delete if a
// second signal forces an exit. Thread-safe.
void RegisterTempFile(const std::string& path);
void UnregisterTempFile(const std::string& path);

}  // namespace tfdist

#endif  // TFDIST_BASE_INTERRUPT_H_
