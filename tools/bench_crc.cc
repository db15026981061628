// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// CRC-32C throughput: tfdist's own (SSE4.2, three interleaved streams)
// against ISA-L's crc32_iscsi, on buffers of the sizes a record's payload
// has (tools/bench-crc). Alternating runs, the best of
// each; both must agree on every buffer.

#include <isa-l/crc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tfdist/base/random.h"
#include "tfdist/io/crc32c.h"

namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// tfdist's own CRC-32C, whatever the length (crc32c::Extend hands long
// buffers to ISA-L).
uint32_t Own(const char* data, size_t n) {
  namespace crc32c = tfdist::io::crc32c;
  return crc32c::HaveHardwareCrc() ? crc32c::ExtendHardware(0, data, n)
                                   : crc32c::ExtendPortable(0, data, n);
}

// CRC-32C with TensorFlow's conventions (initial and final inversion).
uint32_t Isal(const char* data, size_t n) {
  return ~crc32_iscsi(reinterpret_cast<unsigned char*>(const_cast<char*>(data)),
                      static_cast<int>(n), ~0u);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeat = argc > 1 ? std::atoi(argv[1]) : 5;
  const size_t total = size_t{256} << 20;  // bytes checked per run
  tfdist::Rng rng(1);
  std::vector<char> data(total + 64);
  for (char& c : data) c = static_cast<char>(rng.Next());
  std::printf("%-8s %12s %12s %8s\n", "bytes", "tfdist GB/s", "ISA-L GB/s", "ratio");
  for (size_t size : {size_t{100}, size_t{256}, size_t{512}, size_t{1} << 10, size_t{4} << 10,
                      size_t{10} << 10, size_t{1} << 20}) {
    const size_t count = total / size;
    uint32_t sink_a = 0, sink_b = 0;
    for (size_t i = 0; i < count; i += 997) {
      const char* p = data.data() + i * size;
      if (Own(p, size) != Isal(p, size)) {
        std::fprintf(stderr, "bench_crc: the two CRCs differ at record %zu\n", i);
        return 1;
      }
    }
    double best_a = 1e9, best_b = 1e9;
    for (int r = 0; r < repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      for (size_t i = 0; i < count; ++i) sink_a ^= Own(data.data() + i * size, size);
      auto t1 = std::chrono::steady_clock::now();
      for (size_t i = 0; i < count; ++i) sink_b ^= Isal(data.data() + i * size, size);
      auto t2 = std::chrono::steady_clock::now();
      best_a = std::min(best_a, Seconds(t1 - t0));
      best_b = std::min(best_b, Seconds(t2 - t1));
    }
    if (sink_a != sink_b) return 1;
    const double bytes = static_cast<double>(count * size);
    std::printf("%-8zu %12.2f %12.2f %8.2f\n", size, bytes / best_a / 1e9, bytes / best_b / 1e9,
                best_a / best_b);
  }
  std::printf("(ratio = tfdist's time / ISA-L's: above 1, ISA-L is faster)\n");
  return 0;
}
