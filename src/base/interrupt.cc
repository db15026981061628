// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Signal flag and temp-file registry; the handler only uses async-signal-safe calls.

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

void OnSignal(int) {
  if (signals_seen.fetch_add(1) == 0) return;
  ExitRemovingTempFiles(130);
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

// What SIGINT and SIGTERM do from now on.
void HandleInterrupts(void (*handler)(int)) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace

void InstallInterruptHandlers() {
  HandleInterrupts(OnSignal);
  sigset_t both;
  sigemptyset(&both);
  sigaddset(&both, SIGINT);
  sigaddset(&both, SIGTERM);
  sigprocmask(SIG_UNBLOCK, &both, nullptr);  // one that is pending arrives now
}

void ExitRemovingTempFiles(int exit_code) {
  for (Chunk* c = &first_chunk; c != nullptr; c = c->next.load()) {
    for (auto& slot : c->slots) {
      if (char* p = slot.load()) unlink(p);
    }
  }
  _exit(exit_code);
}

void IgnoreInterrupts() { HandleInterrupts(SIG_IGN); }

bool Interrupted() { return signals_seen.load(std::memory_order_relaxed) != 0; }

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
