// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// CUDA transport: pinned host rings, device buffers, events and one stream per replica.

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

#include "checksum_kernel.h"
#include "tfdist/device/staging.h"
#include "transport.h"

namespace tfdist::device {
namespace {

// "cudaMalloc(&p, n)" -> "cudaMalloc": errors name the call.
constexpr std::string_view CallName(std::string_view expr) {
  return expr.substr(0, expr.find('('));
}

std::string CudaErrorText(std::string_view call, cudaError_t error) {
  return fmt::format("{}: {} ({})", call, cudaGetErrorString(error), cudaGetErrorName(error));
}

Status CudaStatus(std::string_view call, cudaError_t error) {
  cudaGetLastError();  // clear the error, so that it does not resurface in later calls
  // Device or pinned host memory that is not there is the user's to free.
  if (error == cudaErrorMemoryAllocation)
    return Status::ResourceExhausted(CudaErrorText(call, error));
  return Status::Internal(CudaErrorText(call, error));
}

void LogIfError(std::string_view call, cudaError_t error) {
  if (error == cudaSuccess) return;
  cudaGetLastError();
  fmt::print(stderr, "tfdist: warning: {}\n", CudaErrorText(call, error));
}

}  // namespace

// Maps a failed cudaError_t to Internal("cudaCall: text (cudaErrorName)").
#define TFDIST_CUDA_RETURN_IF_ERROR(expr)                                                          \
  do {                                                                                             \
    const cudaError_t tfdist_cuda_error_ = (expr);                                                 \
    if (tfdist_cuda_error_ != cudaSuccess) return CudaStatus(CallName(#expr), tfdist_cuda_error_); \
  } while (0)
#define TFDIST_CUDA_LOG_IF_ERROR(expr) LogIfError(CallName(#expr), (expr))

namespace {

struct DeviceFree {
  void operator()(void* p) const { TFDIST_CUDA_LOG_IF_ERROR(cudaFree(p)); }
};
struct PinnedFree {
  void operator()(void* p) const { TFDIST_CUDA_LOG_IF_ERROR(cudaFreeHost(p)); }
};
struct EventDestroy {
  void operator()(cudaEvent_t e) const { TFDIST_CUDA_LOG_IF_ERROR(cudaEventDestroy(e)); }
};
struct StreamDestroy {
  void operator()(cudaStream_t s) const { TFDIST_CUDA_LOG_IF_ERROR(cudaStreamDestroy(s)); }
};
using DeviceMemory = std::unique_ptr<void, DeviceFree>;
using PinnedMemory = std::unique_ptr<void, PinnedFree>;
using Event = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, EventDestroy>;
using Stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamDestroy>;

Result<Event> MakeEvent(unsigned flags) {
  cudaEvent_t e = nullptr;
  TFDIST_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e, flags));
  return Event(e);
}

class CudaTransport final : public Transport {
 public:
  static Result<std::unique_ptr<Transport>> Create(int gpu, int depth) {
    std::unique_ptr<CudaTransport> t(new CudaTransport(gpu, depth));
    TFDIST_CUDA_RETURN_IF_ERROR(cudaSetDevice(gpu));
    int sms = 0;
    TFDIST_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu));
    t->max_blocks_ = std::max(1, 4 * sms);
    cudaStream_t stream = nullptr;
    // Non-blocking: the replica's copies never wait for work on the legacy default stream.
    TFDIST_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    t->stream_.reset(stream);
    for (SlotBuffers& b : t->slots_) {
      TFDIST_ASSIGN_OR_RETURN(b.start, MakeEvent(cudaEventDefault));
      TFDIST_ASSIGN_OR_RETURN(b.stop, MakeEvent(cudaEventDefault));
      // The consumer sleeps on this one instead of spinning a core the pipeline needs.
      TFDIST_ASSIGN_OR_RETURN(b.done, MakeEvent(cudaEventBlockingSync | cudaEventDisableTiming));
    }
    const size_t sum_bytes = sizeof(unsigned long long) * static_cast<size_t>(depth);
    void* p = nullptr;
    TFDIST_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, sum_bytes));
    t->sums_.reset(p);
    p = nullptr;
    TFDIST_CUDA_RETURN_IF_ERROR(cudaHostAlloc(&p, sum_bytes, cudaHostAllocDefault));
    t->host_sums_.reset(p);
    return std::unique_ptr<Transport>(std::move(t));
  }

  ~CudaTransport() override {
    // The members free buffers that queued copies may still use: wait first.
    if (!stream_) return;  // Create failed before anything was queued or allocated
    TFDIST_CUDA_LOG_IF_ERROR(cudaSetDevice(gpu_));
    TFDIST_CUDA_LOG_IF_ERROR(cudaStreamSynchronize(stream_.get()));
  }

  std::string device() const override { return fmt::format("cuda:{}", gpu_); }
  void FailPinnedForTesting() override { fail_pinned_ = true; }
  bool pinned() const override { return !pageable_.load(); }

  Status Reserve(int slot, size_t bytes, char** data, size_t* capacity,
                 std::string* note) override {
    TFDIST_CUDA_RETURN_IF_ERROR(cudaSetDevice(gpu_));
    SlotBuffers& b = slots_[static_cast<size_t>(slot)];
    *data = nullptr;
    *capacity = 0;
    b.host = nullptr;
    b.pinned.reset();
    b.pageable.reset();
    // After one failure the replica stays with pageable memory rather than
    // retrying (and failing) at every growth.
    if (!pageable_.load()) {
      void* p = nullptr;
      const cudaError_t e =
          fail_pinned_ ? cudaErrorMemoryAllocation : cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
      if (e == cudaSuccess) {
        b.pinned.reset(p);
        b.host = static_cast<char*>(p);
      } else {
        cudaGetLastError();
        pageable_ = true;
        *note = fmt::format("pinned allocation of {} bytes failed ({}); using pageable memory",
                            bytes, CudaErrorText("cudaHostAlloc", e));
      }
    }
    if (b.host == nullptr) {
      TFDIST_ASSIGN_OR_RETURN(b.pageable, AllocateHost(bytes));
      b.host = b.pageable.get();
    }
    if (b.device_capacity < bytes) {
      b.device.reset();
      b.device_capacity = 0;
      void* p = nullptr;
      TFDIST_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, bytes));
      b.device.reset(p);
      b.device_capacity = bytes;
    }
    *data = b.host;
    *capacity = bytes;
    return Status::OK();
  }

  Status StartCopy(int slot, size_t bytes, bool checksum) override {
    TFDIST_CUDA_RETURN_IF_ERROR(cudaSetDevice(gpu_));
    Status s = Enqueue(slot, bytes, checksum);
    // Leave no queued work on buffers that the slot's next user may free.
    if (!s.ok()) TFDIST_CUDA_LOG_IF_ERROR(cudaStreamSynchronize(stream_.get()));
    return s;
  }

  Status WaitCopy(int slot, size_t, bool checksum, CopyResult* out) override {
    TFDIST_CUDA_RETURN_IF_ERROR(cudaSetDevice(gpu_));
    SlotBuffers& b = slots_[static_cast<size_t>(slot)];
    TFDIST_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(b.done.get()));
    float ms = 0;
    TFDIST_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, b.start.get(), b.stop.get()));
    out->device_data = b.device.get();
    out->copy_seconds = static_cast<double>(ms) / 1e3;
    out->checksum = checksum ? HostSums()[slot] : 0;
    return Status::OK();
  }

  Status CopyToHost(int slot, size_t bytes, void* dst) override {
    if (bytes == 0) return Status::OK();
    TFDIST_CUDA_RETURN_IF_ERROR(cudaSetDevice(gpu_));
    TFDIST_CUDA_RETURN_IF_ERROR(cudaMemcpy(dst, slots_[static_cast<size_t>(slot)].device.get(),
                                           bytes, cudaMemcpyDeviceToHost));
    return Status::OK();
  }

 private:
  struct SlotBuffers {
    char* host = nullptr;  // pinned.get() or pageable.get()
    PinnedMemory pinned;
    HostMemory pageable;
    DeviceMemory device;
    size_t device_capacity = 0;
    Event start, stop, done;  // start/stop time the copy; done follows the checksum
  };

  CudaTransport(int gpu, int depth) : gpu_(gpu), slots_(static_cast<size_t>(depth)) {}

  unsigned long long* DeviceSums() { return static_cast<unsigned long long*>(sums_.get()); }
  unsigned long long* HostSums() { return static_cast<unsigned long long*>(host_sums_.get()); }

  Status Enqueue(int slot, size_t bytes, bool checksum) {
    SlotBuffers& b = slots_[static_cast<size_t>(slot)];
    cudaStream_t stream = stream_.get();
    TFDIST_CUDA_RETURN_IF_ERROR(cudaEventRecord(b.start.get(), stream));
    if (bytes > 0) {
      TFDIST_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(b.device.get(), b.host, bytes, cudaMemcpyHostToDevice, stream));
    }
    TFDIST_CUDA_RETURN_IF_ERROR(cudaEventRecord(b.stop.get(), stream));
    if (checksum) {
      unsigned long long* sum = DeviceSums() + slot;
      TFDIST_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(sum, 0, sizeof *sum, stream));
      TFDIST_CUDA_RETURN_IF_ERROR(LaunchChecksum(b.device.get(), bytes, sum, max_blocks_, stream));
      TFDIST_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(HostSums() + slot, sum, sizeof *sum, cudaMemcpyDeviceToHost, stream));
    }
    TFDIST_CUDA_RETURN_IF_ERROR(cudaEventRecord(b.done.get(), stream));
    return Status::OK();
  }

  // Declaration order matters: members are destroyed bottom-up, so the stream
  // outlives the events and buffers used on it.
  const int gpu_;
  int max_blocks_ = 1;
  std::atomic<bool> pageable_{false};
  bool fail_pinned_ = false;  // FailPinnedForTesting
  Stream stream_;
  DeviceMemory sums_;       // one checksum per slot
  PinnedMemory host_sums_;  // their copies on the host
  std::vector<SlotBuffers> slots_;
};

}  // namespace

Result<std::unique_ptr<Transport>> MakeCudaTransport(int gpu, int depth) {
  return CudaTransport::Create(gpu, depth);
}

Result<int> CudaDeviceCount() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Status::FailedPrecondition(CudaErrorText("cudaGetDeviceCount", e));
  }
  return count;
}

Result<double> PlainPinnedCopySeconds(int gpu, size_t batch_bytes, int64_t batches) {
  if (batch_bytes == 0 || batches < 1) {
    return Status::InvalidArgument("PlainPinnedCopySeconds needs batch_bytes > 0 and batches > 0");
  }
  TFDIST_ASSIGN_OR_RETURN(const int count, CudaDeviceCount());
  if (gpu < 0 || gpu >= count) {
    return Status::FailedPrecondition(
        fmt::format("GPU {} is not visible ({} CUDA devices)", gpu, count));
  }
  TFDIST_CUDA_RETURN_IF_ERROR(cudaSetDevice(gpu));
  void* p = nullptr;
  TFDIST_CUDA_RETURN_IF_ERROR(cudaHostAlloc(&p, batch_bytes, cudaHostAllocDefault));
  PinnedMemory host(p);
  std::memset(p, 0x5a, batch_bytes);
  p = nullptr;
  TFDIST_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, batch_bytes));
  DeviceMemory device(p);
  cudaStream_t s = nullptr;
  TFDIST_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Stream stream(s);
  // Destroyed first: no copy is queued on the buffers when they are freed.
  struct Drain {
    cudaStream_t stream;
    ~Drain() { TFDIST_CUDA_LOG_IF_ERROR(cudaStreamSynchronize(stream)); }
  } drain{s};

  TFDIST_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(device.get(), host.get(), batch_bytes, cudaMemcpyHostToDevice, s));
  TFDIST_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < batches; ++i) {
    TFDIST_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(device.get(), host.get(), batch_bytes, cudaMemcpyHostToDevice, s));
  }
  TFDIST_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tfdist::device
