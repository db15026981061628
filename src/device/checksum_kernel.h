// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The device side of Checksum (tfdist/staging.h), built by nvcc.

#ifndef TFDIST_DEVICE_CHECKSUM_KERNEL_H_
#define TFDIST_DEVICE_CHECKSUM_KERNEL_H_

#include <cuda_runtime.h>

#include <cstddef>

namespace tfdist::device {

// Enqueues on `stream` the addition of Checksum(data, n) to `*sum` (device
// memory; zero it first) with at most `max_blocks` blocks. `data` is device
// memory aligned to 8 bytes (cudaMalloc's 256 is enough), null when n is 0.
// Returns the launch's error (cudaGetLastError).
cudaError_t LaunchChecksum(const void* data, size_t n, unsigned long long* sum, int max_blocks,
                           cudaStream_t stream);

}  // namespace tfdist::device

#endif  // TFDIST_DEVICE_CHECKSUM_KERNEL_H_
