// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Staging: per-replica rings of host buffers feeding device memory (CUDA) or host replicas.

#ifndef TFDIST_DEVICE_STAGING_H_
#define TFDIST_DEVICE_STAGING_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"

namespace tfdist::device {

// Where the replicas of a worker live.
enum class DeviceKind {
  kAuto,  // CUDA when a usable GPU is there, else host replicas (Staging::notes() says why)
  kCpu,   // host replicas: the batch is read in place from the host buffer
  kCuda,  // GPUs; an error when none is usable
};

// "auto", "cpu" or "cuda". Error: InvalidArgument naming the accepted values.
Result<DeviceKind> ParseDeviceKind(std::string_view text);
std::string_view DeviceKindName(DeviceKind kind);  // "auto", "cpu", "cuda"

// The number of CUDA devices this process can use (0 or more).
// Error: FailedPrecondition when the CUDA runtime cannot be used, naming the
// call and its error text ("cudaGetDeviceCount: CUDA driver version is
// insufficient for CUDA runtime version"), or when tfdist was built without CUDA.
Result<int> CudaDeviceCount();

// The checksum of a batch, the same on host and device:
//   (sum over i of w_i * (2*i + 1) + n) mod 2^64
// where w_i is the i-th little-endian 64-bit word of the n bytes (the last word
// zero-padded). The sum reduces in any order (a GPU adds per-thread partial
// sums), the odd weights make it position-sensitive (swapped words change
// it), and since every weight is odd, a change of any single byte always
// changes it. `data` may be null when n is 0. Runs at several GB/s per core.
uint64_t Checksum(const void* data, size_t n);

struct StagingOptions {
  // Default: kAuto.
  DeviceKind device = DeviceKind::kAuto;
  // Local replicas of this worker (R). Default: 1.
  int64_t replicas = 1;
  // Visible GPU ordinals to use; replica r runs on gpus[r % gpus.size()], so
  // several replicas may share a GPU (one stream each). Empty: all visible
  // GPUs. Ignored for host replicas. Default: empty.
  std::vector<int> gpus;
  // Ring slots per replica: how many batches may be in flight (acquired,
  // copying or delivered but not released). Default: 2 (double buffering).
  int64_t depth = 2;
  // Checksum every batch on the host before the copy and again on the replica
  // side after it; a mismatch is DataLoss. Default: false.
  bool verify = false;
};

// The staging of all local replicas of one worker. Each replica owns a ring of
// `depth` slots: a host buffer (pinned with CUDA, where the batch is written),
// its device buffer (cudaMalloc'ed; a host replica reads the host buffer in
// place, as a CPU device does) and, with CUDA, events on the replica's own
// stream.
//
// A batch goes through Acquire -> Submit (producer) -> Receive -> Release
// (consumer), in FIFO order per replica: Receive returns batches in the order
// their slots were acquired. Memory is bounded: at most `depth` slots per
// replica, each grown to the largest batch it carried (x1.5 headroom).
//
// Thread-safety: for each replica, one producer thread (Acquire, Submit,
// Finish) and one consumer thread (Receive, Release, CopyToHost) at a time;
// one thread may serve several replicas. Shutdown, stats, notes and
// CorruptNextForTesting may be called from any thread. Destruction requires
// that no call is in progress.
//
// No exceptions leave the API. CUDA failures come back as Status naming the
// CUDA call; the destructor frees every CUDA handle and logs (does not throw)
// failures.
class Staging {
 public:
  // A ring slot handed to the producer: write up to `capacity` bytes at `data`.
  // `data` is null while `capacity` is 0.
  struct Slot {
    char* data = nullptr;
    size_t capacity = 0;
    int64_t replica = 0;  // the replica that owns the slot
    int index = 0;        // its position in the replica's ring
  };

  // A batch on the replica's device; valid until Release.
  struct Delivery {
    Slot* slot = nullptr;
    // The device copy: device memory for CUDA replicas, host memory for host
    // replicas; null for an empty batch.
    const void* device_data = nullptr;
    size_t bytes = 0;
    uint64_t batch = 0;     // 0-based number of the batch on its replica
    bool verified = false;  // checksums were compared (options.verify)
    uint64_t checksum = 0;  // the replica-side checksum when verified
  };

  struct ReplicaStats {
    uint64_t batches = 0;  // delivered
    uint64_t bytes = 0;    // delivered
    // Time of the copies: with CUDA cudaEventElapsedTime between events around
    // each cudaMemcpyAsync (it includes waits for a copy engine shared with
    // other replicas); 0 for host replicas, which copy nothing.
    double copy_seconds = 0;
    bool pinned = false;  // every host buffer of the ring is page-locked
  };

  // Sets up `options.replicas` replicas on the chosen device.
  // Errors:
  //  * InvalidArgument - replicas < 1, depth < 1, or a GPU ordinal in `gpus`
  //                      that is not visible or is repeated
  //  * FailedPrecondition - kCuda without a usable GPU (names the CUDA call and
  //                      its error), or a CUDA setup call failed
  // kAuto without a usable GPU falls back to host replicas and adds a note.
  static Result<std::unique_ptr<Staging>> Create(const StagingOptions& options);

  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  DeviceKind kind() const { return kind_; }  // kCpu or kCuda: what was picked
  int64_t replicas() const { return static_cast<int64_t>(replicas_.size()); }
  int64_t depth() const { return depth_; }
  bool verify() const { return verify_; }

  // What the staging decided and why, in order, e.g.
  //   "no usable CUDA device (cudaGetDeviceCount: ...); using host replicas"
  //   "replica 1: pinned allocation of 67108864 bytes failed (cudaHostAlloc: ...); using pageable
  //   memory"
  // A copy, since producers may add notes while it is read.
  std::vector<std::string> notes() const;

  // "cpu" or "cuda:N". REQUIRES: 0 <= replica < replicas().
  std::string ReplicaDevice(int64_t replica) const;

  // ---- Producer side (one thread per replica at a time) ----

  // The next slot of the replica's ring, with capacity >= bytes (grown when
  // needed: pinned with cudaHostAlloc, else pageable memory with a note).
  // Blocks while the slot is still in use (the ring is full).
  // Every acquired slot must be submitted (bytes may be 0), or the consumer
  // waits for it until Shutdown.
  // Errors: Cancelled after Shutdown; FailedPrecondition after Finish;
  // Internal when growing the buffers fails (the error is also what Receive
  // returns for this slot).
  Result<Slot*> Acquire(int64_t replica, size_t bytes);

  // Sends the first `bytes` of `slot` to the replica's device: with verify the
  // host checksum first, then on CUDA the asynchronous copy (and the device
  // checksum) on the replica's stream; Submit does not wait for the copy
  // (except from pageable memory, which CUDA copies synchronously). Host
  // replicas take the slot as it is; with verify their replica-side
  // checksum is computed by Receive, on the consumer's thread.
  // Errors: Cancelled after Shutdown; InvalidArgument for a slot that is not
  // this replica's acquired slot or bytes > capacity; Internal naming a
  // failed CUDA call. Except for Cancelled, Receive returns the same error for
  // this slot.
  Status Submit(int64_t replica, Slot* slot, size_t bytes);

  // No more batches for `replica`: once the submitted ones are received,
  // Receive returns OutOfRange.
  void Finish(int64_t replica);

  // ---- Consumer side (one thread per replica at a time) ----

  // The oldest submitted batch of `replica`, once its copy is complete
  // (cudaEventSynchronize). With verify, the replica-side checksum (a kernel
  // on the replica's stream over the device buffer, or a host computation
  // over the host replica's buffer) is compared with the host checksum.
  // Blocks until a batch is submitted.
  // Errors:
  //  * DataLoss - checksum mismatch, naming replica, batch and both checksums
  //  * OutOfRange - Finish was called and every batch was received
  //  * Cancelled - after Shutdown
  //  * the error of a failed Acquire/Submit of this slot, or Internal naming
  //    a failed CUDA call
  // After an error other than Cancelled and OutOfRange the slot is released.
  Result<Delivery> Receive(int64_t replica);

  // Returns the delivered slot to the ring; `delivery` is invalid after.
  void Release(int64_t replica, const Delivery& delivery);

  // Copies a delivered batch back from the device into `dst` (delivery.bytes
  // bytes): the read-back check of StagingOptions::verify and of tests.
  // Error: Internal naming a failed CUDA call.
  Status CopyToHost(int64_t replica, const Delivery& delivery, void* dst) const;

  // ---- Any thread ----

  // Wakes every blocked Acquire and Receive; they and later calls return
  // Cancelled. Batches in flight are dropped (the destructor waits for them).
  void Shutdown();

  ReplicaStats stats(int64_t replica) const;

  // Tests: flips one byte of the replica's next non-empty submitted batch,
  // after the host checksum is taken and before the copy.
  void CorruptNextForTesting(int64_t replica);

  // Tests: the replica's pinned allocations fail from now on, as when the
  // system has no more memory to pin, so that it falls back to pageable
  // memory (and says so in notes()). No effect on host replicas, which pin
  // nothing. Call before the replica's first Acquire.
  void FailPinnedForTesting(int64_t replica);

 private:
  struct Replica;  // staging.cc

  Staging(DeviceKind kind, int64_t depth, bool verify);
  Replica& Get(int64_t replica) const;  // REQUIRES: 0 <= replica < replicas()
  void AddNote(std::string note);

  DeviceKind kind_;
  int64_t depth_;
  bool verify_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  mutable std::mutex notes_mu_;
  std::vector<std::string> notes_;
};

// Benchmark baseline: seconds to copy `batches` x `batch_bytes` from one
// pinned host buffer into one device buffer on GPU `gpu` with back-to-back
// cudaMemcpyAsync calls on one stream (after one warm-up copy).
// Error: FailedPrecondition without CUDA; Internal naming a failed CUDA call.
Result<double> PlainPinnedCopySeconds(int gpu, size_t batch_bytes, int64_t batches);

}  // namespace tfdist::device

#endif  // TFDIST_DEVICE_STAGING_H_
