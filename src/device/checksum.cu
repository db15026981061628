// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Checksum kernel: per-thread weighted sums of 64-bit words, reduced per block, added atomically.

#include "checksum_kernel.h"

namespace tfdist::device {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__global__ void __launch_bounds__(kThreads)
    ChecksumKernel(const unsigned long long* __restrict__ words, size_t nwords,
                   const unsigned char* __restrict__ tail, unsigned tail_bytes, size_t n,
                   unsigned long long* sum) {
  unsigned long long acc = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * kThreads;
  for (size_t i = static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x; i < nwords;
       i += stride) {
    acc += words[i] * (2 * static_cast<unsigned long long>(i) + 1);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    // The zero-padded last word, and the length.
    unsigned long long w = 0;
    for (unsigned k = 0; k < tail_bytes; ++k)
      w |= static_cast<unsigned long long>(tail[k]) << (8 * k);
    acc += w * (2 * static_cast<unsigned long long>(nwords) + 1) + n;
  }
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  __shared__ unsigned long long warp_sums[kWarps];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < kWarps ? warp_sums[lane] : 0;
    for (int offset = 16; offset > 0; offset /= 2)
      acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (lane == 0) atomicAdd(sum, acc);
  }
}

}  // namespace

cudaError_t LaunchChecksum(const void* data, size_t n, unsigned long long* sum, int max_blocks,
                           cudaStream_t stream) {
  const size_t nwords = n / 8;
  const auto* bytes = static_cast<const unsigned char*>(data);
  size_t blocks = (nwords + kThreads - 1) / kThreads;
  if (blocks > static_cast<size_t>(max_blocks)) blocks = static_cast<size_t>(max_blocks);
  if (blocks == 0) blocks = 1;
  ChecksumKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const unsigned long long*>(data), nwords,
      bytes == nullptr ? nullptr : bytes + 8 * nwords, static_cast<unsigned>(n % 8), n, sum);
  return cudaGetLastError();
}

}  // namespace tfdist::device
