// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Signal flag, exit status and temp-file registry; the handler only uses
// async-signal-safe calls.

#include "tfdist/base/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

namespace tfdist {
namespace {

std::atomic<int> signals_seen{0};
std::atomic<int> first_signal{0};
std::atomic<int> open_sections{0};  // DeferInterrupts objects alive

// The registry: chunks of slots, chained and never freed, so the handler can
// walk it at any moment. Registered paths are not freed either (a freed path
// could be read by a handler that loaded it just before): a process makes
// only as many temporary files as it writes outputs.
struct Chunk {
  static constexpr int kSlots = 1024;
  std::atomic<char*> slots[kSlots] = {};
  std::atomic<Chunk*> next{nullptr};
};
Chunk first_chunk;
std::mutex grow_mu;  // serializes adding a chunk (never taken by the handler)

void OnSignal(int signal_number) {
  int none = 0;
  first_signal.compare_exchange_strong(none, signal_number);
  // SIGXFSZ comes with each write past `ulimit -f` (one per writer thread):
  // a repeat is the same cause, not a second request to stop, and is
  // reported by the write that failed.
  if (signal_number == SIGXFSZ && signals_seen.load() > 0) return;
  if (signals_seen.fetch_add(1) == 0) return;
  // A second signal inside a section is held: the code after the section
  // sees Interrupted() and stops.
  if (open_sections.load() > 0) return;
  ExitRemovingTempFiles(InterruptExitCode());
}

// The signals handled: every catchable one whose default action ends the
// process, but SIGQUIT (its core dump is the point of sending it) and
// SIGPIPE (see the header). Real-time signals are filled in at run time.
constexpr int kHandled[] = {SIGINT,   SIGTERM, SIGHUP,  SIGUSR1,   SIGUSR2, SIGALRM,
                            SIGXCPU,  SIGXFSZ, SIGPROF, SIGVTALRM, SIGPOLL, SIGPWR,
#ifdef SIGSTKFLT
                            SIGSTKFLT
#endif
};

sigset_t HandledSet() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kHandled) sigaddset(&set, s);
  for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) sigaddset(&set, s);
  return set;
}

bool Claim(Chunk& c, char* path) {
  for (auto& slot : c.slots) {
    char* expected = nullptr;
    if (slot.load(std::memory_order_relaxed) == nullptr &&
        slot.compare_exchange_strong(expected, path)) {
      return true;
    }
  }
  return false;
}

// What the handled signals do from now on.
void HandleInterrupts(void (*handler)(int)) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  // One handler at a time: the first signal's number is recorded whole.
  sa.sa_mask = HandledSet();
  const sigset_t set = HandledSet();
  for (int s = 1; s < NSIG; ++s) {
    if (sigismember(&set, s) == 1) sigaction(s, &sa, nullptr);
  }
}

}  // namespace

void InstallInterruptHandlers() {
  HandleInterrupts(OnSignal);
  const sigset_t set = HandledSet();
  sigprocmask(SIG_UNBLOCK, &set, nullptr);  // one that is pending arrives now
}

void ExitRemovingTempFiles(int exit_code) {
  // Files first, then folders (a folder goes once it is empty; nested ones
  // take a pass each).
  for (Chunk* c = &first_chunk; c != nullptr; c = c->next.load()) {
    for (auto& slot : c->slots) {
      if (char* p = slot.load()) unlink(p);
    }
  }
  for (int pass = 0; pass < 3; ++pass) {
    for (Chunk* c = &first_chunk; c != nullptr; c = c->next.load()) {
      for (auto& slot : c->slots) {
        if (char* p = slot.load()) rmdir(p);
      }
    }
  }
  _exit(exit_code);
}

void IgnoreInterrupts() { HandleInterrupts(SIG_IGN); }

bool Interrupted() { return signals_seen.load(std::memory_order_relaxed) != 0; }

int InterruptSignal() { return first_signal.load(); }

int InterruptExitCode() {
  const int s = first_signal.load();
  if (s == 0) return 130;
  return s == SIGXFSZ ? 5 : 128 + s;
}

DeferInterrupts::DeferInterrupts() { open_sections.fetch_add(1); }
DeferInterrupts::~DeferInterrupts() { open_sections.fetch_sub(1); }

void RegisterTempFile(const std::string& path) {
  char* copy = strdup(path.c_str());
  if (copy == nullptr) throw std::bad_alloc();
  for (;;) {
    Chunk* last = &first_chunk;
    for (Chunk* c = &first_chunk; c != nullptr; c = c->next.load()) {
      if (Claim(*c, copy)) return;
      last = c;
    }
    // Every slot is taken: chain a new chunk (unless another thread did).
    std::lock_guard<std::mutex> lock(grow_mu);
    if (last->next.load() == nullptr) last->next.store(new Chunk);
  }
}

void UnregisterTempFile(const std::string& path) {
  for (Chunk* c = &first_chunk; c != nullptr; c = c->next.load()) {
    for (auto& slot : c->slots) {
      char* p = slot.load();
      if (p != nullptr && path == p && slot.compare_exchange_strong(p, nullptr)) return;
    }
  }
}

}  // namespace tfdist
