// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Staging on a real GPU: delivery, read-back, device checksums and corruption. Exits 77 without
// one.

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "batch_bytes.h"
#include "device_config.h"
#include "tfdist/device/staging.h"

namespace tfdist::device {
namespace {

std::unique_ptr<Staging> MakeCuda(int64_t replicas, int64_t depth, bool verify) {
  StagingOptions o;
  o.device = DeviceKind::kCuda;
  o.replicas = replicas;
  o.gpus = {0};
  o.depth = depth;
  o.verify = verify;
  Result<std::unique_ptr<Staging>> s = Staging::Create(o);
  if (!s.ok()) FAIL(s.status().ToString());
  return std::move(s).value();
}

// Sizes around the kernel's word and block boundaries, and an empty batch.
size_t SizeOf(int64_t r, uint64_t b) {
  static const size_t kSizes[] = {0, 1, 7, 8, 9, 2047, 2048 * 8 + 3, 1 << 20, (3 << 20) + 5, 100};
  return kSizes[(b + static_cast<uint64_t>(r)) % std::size(kSizes)];
}

TEST_CASE("replicas on one GPU deliver every byte, verified on the device") {
  for (int64_t replicas : {1, 2, 8}) {
    CAPTURE(replicas);
    constexpr uint64_t kBatches = 20;
    auto s = MakeCuda(replicas, 2, true);
    REQUIRE(s->kind() == DeviceKind::kCuda);
    for (int64_t r = 0; r < replicas; ++r) CHECK(s->ReplicaDevice(r) == "cuda:0");
    std::vector<std::thread> producers;
    for (int64_t r = 0; r < replicas; ++r) {
      producers.emplace_back([&, r] {
        for (uint64_t b = 0; b < kBatches; ++b) {
          const std::string bytes = BatchBytes(r, b, SizeOf(r, b));
          Result<Staging::Slot*> slot = s->Acquire(r, bytes.size());
          if (!slot.ok()) return;
          if (!bytes.empty()) std::memcpy((*slot)->data, bytes.data(), bytes.size());
          if (!s->Submit(r, *slot, bytes.size()).ok()) return;
        }
        s->Finish(r);
      });
    }
    for (uint64_t b = 0; b < kBatches; ++b) {
      for (int64_t r = 0; r < replicas; ++r) {
        Result<Staging::Delivery> d = s->Receive(r);
        REQUIRE(d.ok());
        const std::string want = BatchBytes(r, b, SizeOf(r, b));
        CHECK(d->batch == b);
        REQUIRE(d->bytes == want.size());
        CHECK(d->verified);
        CHECK(d->checksum == Checksum(want.data(), want.size()));
        std::string back(want.size(), '\0');
        REQUIRE(s->CopyToHost(r, *d, back.data()).ok());
        CHECK(back == want);
        s->Release(r, *d);
      }
    }
    for (std::thread& t : producers) t.join();
    for (int64_t r = 0; r < replicas; ++r) {
      CHECK(s->Receive(r).status().code() == StatusCode::kOutOfRange);
      const Staging::ReplicaStats st = s->stats(r);
      CHECK(st.batches == kBatches);
      CHECK(st.pinned);
      CHECK(st.copy_seconds > 0);
    }
    CHECK(s->notes().empty());
  }
}

TEST_CASE("the device checksum catches a byte corrupted before the copy") {
  auto s = MakeCuda(2, 2, true);
  const std::string a = BatchBytes(1, 0, 1 << 16);
  Result<Staging::Slot*> slot = s->Acquire(1, a.size());
  REQUIRE(slot.ok());
  std::memcpy((*slot)->data, a.data(), a.size());
  s->CorruptNextForTesting(1);
  REQUIRE(s->Submit(1, *slot, a.size()).ok());
  Result<Staging::Delivery> d = s->Receive(1);
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().code() == StatusCode::kDataLoss);
  CHECK(d.status().message().find("replica 1 (cuda:0), batch 0") != std::string::npos);
  // The ring goes on.
  slot = s->Acquire(1, a.size());
  REQUIRE(slot.ok());
  std::memcpy((*slot)->data, a.data(), a.size());
  REQUIRE(s->Submit(1, *slot, a.size()).ok());
  d = s->Receive(1);
  REQUIRE(d.ok());
  std::string back(a.size(), '\0');
  REQUIRE(s->CopyToHost(1, *d, back.data()).ok());
  CHECK(back == a);
  s->Release(1, *d);
}

TEST_CASE("without verify a corrupted byte reaches the device") {
  auto s = MakeCuda(1, 2, false);
  const std::string a = BatchBytes(0, 0, 4099);
  s->CorruptNextForTesting(0);
  Result<Staging::Slot*> slot = s->Acquire(0, a.size());
  REQUIRE(slot.ok());
  std::memcpy((*slot)->data, a.data(), a.size());
  REQUIRE(s->Submit(0, *slot, a.size()).ok());
  Result<Staging::Delivery> d = s->Receive(0);
  REQUIRE(d.ok());
  CHECK_FALSE(d->verified);
  std::string back(a.size(), '\0');
  REQUIRE(s->CopyToHost(0, *d, back.data()).ok());
  size_t differing = 0;
  for (size_t i = 0; i < a.size(); ++i) differing += back[i] != a[i];
  CHECK(differing == 1);
  s->Release(0, *d);
}

TEST_CASE("a replica that cannot pin falls back to pageable memory and says so") {
  auto s = MakeCuda(2, 2, true);
  s->FailPinnedForTesting(1);
  for (uint64_t b = 0; b < 4; ++b) {
    for (int64_t r = 0; r < 2; ++r) {
      const std::string bytes = BatchBytes(r, b, size_t{5000} << b);  // grows every time
      Result<Staging::Slot*> slot = s->Acquire(r, bytes.size());
      REQUIRE(slot.ok());
      std::memcpy((*slot)->data, bytes.data(), bytes.size());
      REQUIRE(s->Submit(r, *slot, bytes.size()).ok());
      Result<Staging::Delivery> d = s->Receive(r);
      REQUIRE(d.ok());
      CHECK(d->checksum == Checksum(bytes.data(), bytes.size()));
      std::string back(bytes.size(), '\0');
      REQUIRE(s->CopyToHost(r, *d, back.data()).ok());
      CHECK(back == bytes);
      s->Release(r, *d);
    }
  }
  CHECK(s->stats(0).pinned);
  CHECK_FALSE(s->stats(1).pinned);
  const std::vector<std::string> notes = s->notes();
  REQUIRE(notes.size() == 1);  // once, not at every growth
  CHECK(notes[0].find("replica 1: pinned allocation of") == 0);
  CHECK(notes[0].find("using pageable memory") != std::string::npos);
  CHECK(notes[0].find("cudaHostAlloc") != std::string::npos);
}

TEST_CASE("the plain-copy baseline runs") {
  Result<double> seconds = PlainPinnedCopySeconds(0, 1 << 20, 4);
  REQUIRE(seconds.ok());
  CHECK(*seconds > 0);
}

}  // namespace
}  // namespace tfdist::device

// Skips (exit 77) before doctest runs when there is no GPU to test on.
int main([[maybe_unused]] int argc, [[maybe_unused]] char** argv) {
#ifndef TFDIST_HAVE_CUDA
  std::puts("cuda_staging_test: built without CUDA; skipped");
  return 77;
#else
  tfdist::Result<int> devices = tfdist::device::CudaDeviceCount();
  if (!devices.ok() || *devices == 0) {
    std::printf(
        "cuda_staging_test: no usable GPU (%s); skipped\n",
        devices.ok() ? "cudaGetDeviceCount found none" : devices.status().message().c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
#endif
}
