// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// h2d_bench: throughput of Staging (tfdist/staging.h) against plain copies; see tools/bench-h2d.
//
// Usage: h2d_bench host|gpu [--replicas R] [--batch-mib N] [--total-mib N] [--depth D]
//                           [--gpu G] [--repeat K]
//   host  Checksum and memcpy GB/s on one core; host replicas (Submit/Receive): batches handed
//         over without verify, GB/s against one-core Checksum with it
//   gpu   CUDA replicas on GPU G against back-to-back pinned cudaMemcpyAsync of the same bytes;
//         exits 77 when no GPU is usable
// Bytes are moved, not generated: batches keep whatever their slots hold.

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tfdist/device/staging.h"

namespace tfdist::device {
namespace {

struct Args {
  std::string mode;
  int64_t replicas = 1;
  size_t batch_bytes = size_t{64} << 20;
  size_t total_bytes = 0;  // 0: a default per mode
  int64_t depth = 2;
  int gpu = 0;
  int repeat = 3;
};

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double GBps(double bytes, double seconds) { return bytes / seconds / 1e9; }

// Pushes `batches` batches of `batch_bytes` through every replica (a producer
// thread each, this thread the consumer) and returns the wall time. With
// `fill` the producers write their slots first: never-written memory reads as
// the shared zero page, which would flatter the copy.
Result<double> RunStaging(Staging& staging, int64_t batches, size_t batch_bytes, bool fill) {
  std::vector<std::thread> producers;
  std::vector<Status> errors(static_cast<size_t>(staging.replicas()));
  const auto start = std::chrono::steady_clock::now();
  for (int64_t r = 0; r < staging.replicas(); ++r) {
    producers.emplace_back([&, r] {
      for (int64_t b = 0; b < batches; ++b) {
        Result<Staging::Slot*> slot = staging.Acquire(r, batch_bytes);
        if (fill && slot.ok())
          std::memset((*slot)->data, static_cast<int>(r + b + 1), (*slot)->capacity);
        Status s = slot.ok() ? staging.Submit(r, *slot, batch_bytes) : slot.status();
        if (!s.ok()) {
          errors[static_cast<size_t>(r)] = s;
          return;
        }
      }
    });
  }
  Status failure;
  for (int64_t b = 0; b < batches && failure.ok(); ++b) {
    for (int64_t r = 0; r < staging.replicas(); ++r) {
      Result<Staging::Delivery> d = staging.Receive(r);
      if (!d.ok()) {
        failure = d.status();
        staging.Shutdown();
        break;
      }
      staging.Release(r, *d);
    }
  }
  for (std::thread& t : producers) t.join();
  const double seconds = Seconds(start);
  for (const Status& s : errors) {
    if (!s.ok() && s.code() != StatusCode::kCancelled) return s;
  }
  if (!failure.ok()) return failure;
  return seconds;
}

int Host(const Args& args) {
  const size_t total = args.total_bytes != 0 ? args.total_bytes : size_t{4} << 30;
  const size_t batch = std::min(args.batch_bytes, total);
  const auto rounds = static_cast<int64_t>(std::max<size_t>(1, total / batch));
  const double moved = static_cast<double>(batch) * static_cast<double>(rounds);

  std::vector<char> src(batch), dst(batch);
  for (size_t i = 0; i < batch; ++i) src[i] = static_cast<char>(i * 131 + (i >> 12));
  std::memcpy(dst.data(), src.data(), batch);  // fault the pages in

  double best_sum = 1e300, best_copy = 1e300;
  uint64_t sink = 0;
  for (int k = 0; k < args.repeat; ++k) {
    auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < rounds; ++i) sink += Checksum(src.data(), batch);
    best_sum = std::min(best_sum, Seconds(start));
    start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < rounds; ++i) {
      std::memcpy(dst.data(), src.data(), batch);
      sink += static_cast<unsigned char>(dst[i % batch]);
    }
    best_copy = std::min(best_copy, Seconds(start));
  }
  fmt::print("host: {:.0f} MiB in {} MiB batches (sink {:x})\n", moved / (1 << 20), batch >> 20,
             sink & 0xf);
  fmt::print("  Checksum, one core:             {:6.2f} GB/s\n", GBps(moved, best_sum));
  fmt::print("  memcpy, one core:               {:6.2f} GB/s\n", GBps(moved, best_copy));

  for (bool verify : {false, true}) {
    StagingOptions o;
    o.device = DeviceKind::kCpu;
    o.replicas = args.replicas;
    o.depth = args.depth;
    o.verify = verify;
    Result<std::unique_ptr<Staging>> staging = Staging::Create(o);
    if (!staging.ok()) {
      fmt::print(stderr, "h2d_bench: {}\n", staging.status());
      return 1;
    }
    const int64_t per_replica = std::max<int64_t>(1, rounds / args.replicas);
    // Warm-up: the first batches allocate and fault in the slots.
    if (Result<double> w = RunStaging(**staging, args.depth, batch, true); !w.ok()) {
      fmt::print(stderr, "h2d_bench: {}\n", w.status());
      return 1;
    }
    double best = 1e300;
    for (int k = 0; k < args.repeat; ++k) {
      Result<double> s = RunStaging(**staging, per_replica, batch, false);
      if (!s.ok()) {
        fmt::print(stderr, "h2d_bench: {}\n", s.status());
        return 1;
      }
      best = std::min(best, *s);
    }
    const double bytes =
        static_cast<double>(batch) * static_cast<double>(per_replica * args.replicas);
    // Host replicas read their slots in place: without verify nothing is
    // copied or read, and only the hand-off is timed.
    if (verify) {
      fmt::print(
          "  Staging cpu, {} replica(s), depth {}, verify on:  {:6.2f} GB/s ({:.2f} x one-core "
          "Checksum)\n",
          args.replicas, args.depth, GBps(bytes, best), GBps(bytes, best) / GBps(moved, best_sum));
    } else {
      fmt::print(
          "  Staging cpu, {} replica(s), depth {}, verify off: {:.0f} batches/s handed over "
          "(slots read in place: no copy)\n",
          args.replicas, args.depth, static_cast<double>(per_replica * args.replicas) / best);
    }
  }
  return 0;
}

int Gpu(const Args& args) {
  StagingOptions o;
  o.device = DeviceKind::kCuda;
  o.replicas = args.replicas;
  o.gpus = {args.gpu};
  o.depth = args.depth;
  Result<std::unique_ptr<Staging>> staging = Staging::Create(o);
  if (!staging.ok()) {
    if (staging.status().code() == StatusCode::kFailedPrecondition) {
      fmt::print("h2d_bench: gpu mode needs a GPU: {}\n", staging.status().message());
      return 77;
    }
    fmt::print(stderr, "h2d_bench: {}\n", staging.status());
    return 1;
  }
  const size_t batch = args.batch_bytes;
  const size_t total = args.total_bytes != 0 ? args.total_bytes : size_t{8} << 30;
  const auto per_replica =
      static_cast<int64_t>(std::max<size_t>(1, total / batch / static_cast<size_t>(args.replicas)));
  const int64_t batches = per_replica * args.replicas;
  const double bytes = static_cast<double>(batch) * static_cast<double>(batches);

  if (Result<double> w = RunStaging(**staging, args.depth, batch, true); !w.ok()) {
    fmt::print(stderr, "h2d_bench: {}\n", w.status());
    return 1;
  }
  double best_staging = 1e300, best_plain = 1e300;
  for (int k = 0; k < args.repeat; ++k) {
    Result<double> plain = PlainPinnedCopySeconds(args.gpu, batch, batches);
    Result<double> staged = RunStaging(**staging, per_replica, batch, false);
    if (!plain.ok() || !staged.ok()) {
      fmt::print(stderr, "h2d_bench: {}\n", plain.ok() ? staged.status() : plain.status());
      return 1;
    }
    best_plain = std::min(best_plain, *plain);
    best_staging = std::min(best_staging, *staged);
  }
  const double ratio = GBps(bytes, best_staging) / GBps(bytes, best_plain);
  fmt::print(
      "gpu {}: {} replica(s), {} MiB batches, depth {}, {:.0f} MiB: Staging {:.2f} GB/s, "
      "plain pinned cudaMemcpyAsync {:.2f} GB/s, ratio {:.3f}\n",
      args.gpu, args.replicas, batch >> 20, args.depth, bytes / (1 << 20),
      GBps(bytes, best_staging), GBps(bytes, best_plain), ratio);
  for (int64_t r = 0; r < args.replicas; ++r) {
    const Staging::ReplicaStats st = (*staging)->stats(r);
    fmt::print("  replica {} ({}): {:.2f} GB/s in its copies, pinned {}\n", r,
               (*staging)->ReplicaDevice(r), GBps(static_cast<double>(st.bytes), st.copy_seconds),
               st.pinned ? "yes" : "no");
  }
  for (const std::string& note : (*staging)->notes()) fmt::print("  note: {}\n", note);
  return 0;
}

int Usage(std::string_view why) {
  fmt::print(stderr,
             "h2d_bench: {}\nusage: h2d_bench host|gpu [--replicas R] [--batch-mib N] "
             "[--total-mib N] [--depth D] [--gpu G] [--repeat K]\n",
             why);
  return 2;
}

}  // namespace
}  // namespace tfdist::device

int main(int argc, char** argv) {
  using tfdist::device::Usage;
  if (argc < 2) return Usage("missing mode");
  tfdist::device::Args args;
  args.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) return Usage(fmt::format("{} needs a value", flag));
    char* end = nullptr;
    const long long v = std::strtoll(argv[++i], &end, 10);
    if (*end != '\0' || v < 0) return Usage(fmt::format("bad value for {}", flag));
    if (flag == "--replicas" && v > 0) {
      args.replicas = v;
    } else if (flag == "--batch-mib" && v > 0) {
      args.batch_bytes = static_cast<size_t>(v) << 20;
    } else if (flag == "--total-mib" && v > 0) {
      args.total_bytes = static_cast<size_t>(v) << 20;
    } else if (flag == "--depth" && v > 0) {
      args.depth = v;
    } else if (flag == "--gpu") {
      args.gpu = static_cast<int>(v);
    } else if (flag == "--repeat" && v > 0) {
      args.repeat = static_cast<int>(v);
    } else {
      return Usage(fmt::format("unknown flag or bad value: {} {}", flag, v));
    }
  }
  if (args.mode == "host") return tfdist::device::Host(args);
  if (args.mode == "gpu") return tfdist::device::Gpu(args);
  return Usage(fmt::format("unknown mode '{}'", args.mode));
}
