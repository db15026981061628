// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Transport: how one replica's batches travel from its host ring to its device.

#ifndef TFDIST_DEVICE_TRANSPORT_H_
#define TFDIST_DEVICE_TRANSPORT_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "device_config.h"
#include "tfdist/base/result.h"
#include "tfdist/base/status.h"

namespace tfdist::device {

struct CopyResult {
  const void* device_data = nullptr;
  double copy_seconds = 0;
  uint64_t checksum = 0;  // replica-side, when asked for
};

// The buffers and copies of one replica's ring slots. Staging serializes the
// calls for each slot (producer: Reserve, StartCopy; consumer: WaitCopy,
// CopyToHost), so a transport needs no lock of its own, except for pinned().
class Transport {
 public:
  virtual ~Transport() = default;

  virtual std::string device() const = 0;  // "cpu", "cuda:N"
  virtual bool pinned() const = 0;         // may be called from any thread

  // Gives slot `slot` (which holds no batch) buffers for at least `bytes`
  // bytes and sets `*data` and `*capacity` to its host buffer. Sets `*note`
  // when it had to settle for less (pageable instead of pinned memory).
  virtual Status Reserve(int slot, size_t bytes, char** data, size_t* capacity,
                         std::string* note) = 0;

  // Starts carrying the first `bytes` of the slot's host buffer to its device
  // buffer, and the replica-side checksum when `checksum`.
  virtual Status StartCopy(int slot, size_t bytes, bool checksum) = 0;

  // Waits for StartCopy's work on the slot.
  virtual Status WaitCopy(int slot, size_t bytes, bool checksum, CopyResult* out) = 0;

  // Copies the slot's device buffer back to host memory.
  virtual Status CopyToHost(int slot, size_t bytes, void* dst) = 0;

  // Staging::FailPinnedForTesting. Not thread-safe: before the first Reserve.
  virtual void FailPinnedForTesting() {}
};

// Host memory aligned to 64 bytes, released with std::free.
struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using HostMemory = std::unique_ptr<char, FreeDeleter>;

// Error: Internal when the allocation fails.
Result<HostMemory> AllocateHost(size_t bytes);

std::unique_ptr<Transport> MakeHostTransport(int depth);

#ifdef TFDIST_HAVE_CUDA
// cuda_staging.cc. Errors name the failed CUDA call.
Result<std::unique_ptr<Transport>> MakeCudaTransport(int gpu, int depth);
#endif

}  // namespace tfdist::device

#endif  // TFDIST_DEVICE_TRANSPORT_H_
