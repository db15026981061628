// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Staging on host replicas: delivery, FIFO order, the ring bound, verify, and device choice.

#include "tfdist/device/staging.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "batch_bytes.h"
#include "device_config.h"

namespace tfdist::device {
namespace {

using namespace std::chrono_literals;

// The definition of Checksum, written the slow and obvious way.
uint64_t ReferenceChecksum(const unsigned char* p, size_t n) {
  uint64_t sum = n;
  for (size_t i = 0; 8 * i < n; ++i) {
    uint64_t w = 0;
    for (size_t k = 0; k < 8 && 8 * i + k < n; ++k) w |= uint64_t{p[8 * i + k]} << (8 * k);
    sum += w * (2 * i + 1);
  }
  return sum;
}

std::unique_ptr<Staging> MakeHost(int64_t replicas, int64_t depth, bool verify) {
  StagingOptions o;
  o.device = DeviceKind::kCpu;
  o.replicas = replicas;
  o.depth = depth;
  o.verify = verify;
  Result<std::unique_ptr<Staging>> s = Staging::Create(o);
  REQUIRE(s.ok());
  return std::move(s).value();
}

// Acquire, fill and submit one batch; REQUIREs success.
void Put(Staging& s, int64_t r, const std::string& bytes) {
  Result<Staging::Slot*> slot = s.Acquire(r, bytes.size());
  REQUIRE(slot.ok());
  REQUIRE((*slot)->capacity >= bytes.size());
  if (!bytes.empty()) std::memcpy((*slot)->data, bytes.data(), bytes.size());
  REQUIRE(s.Submit(r, *slot, bytes.size()).ok());
}

// Receive one batch and return its delivered bytes, releasing the slot.
std::string Take(Staging& s, int64_t r) {
  Result<Staging::Delivery> d = s.Receive(r);
  REQUIRE(d.ok());
  std::string out(d->bytes, '\0');
  if (d->bytes > 0) std::memcpy(out.data(), d->device_data, d->bytes);
  std::string back(d->bytes, '\0');
  REQUIRE(s.CopyToHost(r, *d, back.data()).ok());
  CHECK(back == out);
  s.Release(r, *d);
  return out;
}

TEST_CASE("device names parse and print") {
  CHECK(*ParseDeviceKind("auto") == DeviceKind::kAuto);
  CHECK(*ParseDeviceKind("cpu") == DeviceKind::kCpu);
  CHECK(*ParseDeviceKind("cuda") == DeviceKind::kCuda);
  Result<DeviceKind> bad = ParseDeviceKind("gpu");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad.status().message().find("auto, cpu or cuda") != std::string::npos);
  CHECK(DeviceKindName(DeviceKind::kCuda) == "cuda");
  CHECK(DeviceKindName(DeviceKind::kCpu) == "cpu");
}

TEST_CASE("the checksum has its documented values") {
  CHECK(Checksum(nullptr, 0) == 0);
  const unsigned char one[8] = {1, 0, 0, 0, 0, 0, 0, 0};
  CHECK(Checksum(one, 8) == 1 * 1 + 8);
  const unsigned char two[16] = {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
  CHECK(Checksum(two, 16) == 1 * 1 + 2 * 3 + 16);
  const unsigned char tail[3] = {0x01, 0x02, 0x03};
  CHECK(Checksum(tail, 3) == 0x030201u + 3);
  // Words are little-endian: the last byte of a word is its most significant.
  const unsigned char high[8] = {0, 0, 0, 0, 0, 0, 0, 0x80};
  CHECK(Checksum(high, 8) == 0x8000000000000000u + 8);
  // Arithmetic wraps modulo 2^64: (-1) * 1 + (-1) * 3 + 16.
  const std::string ones(16, '\xff');
  CHECK(Checksum(ones.data(), 16) == 12);
}

TEST_CASE("the checksum matches its definition at every length and alignment") {
  const std::string data = BatchBytes(7, 7, 1200);
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t n = 0; n + offset <= data.size(); n += (n < 80 ? 1 : 37)) {
      CAPTURE(offset);
      CAPTURE(n);
      REQUIRE(Checksum(p + offset, n) == ReferenceChecksum(p + offset, n));
    }
  }
}

TEST_CASE("the checksum sees swapped words, every flipped byte and trailing zeros") {
  std::string data = BatchBytes(1, 2, 256);
  const uint64_t base = Checksum(data.data(), data.size());
  std::string swapped = data;
  std::swap_ranges(swapped.begin(), swapped.begin() + 8, swapped.begin() + 40);
  REQUIRE(swapped != data);
  CHECK(Checksum(swapped.data(), swapped.size()) != base);
  for (size_t i = 0; i < data.size(); ++i) {
    for (unsigned char bit : {0x01, 0x80}) {
      std::string damaged = data;
      damaged[i] = static_cast<char>(damaged[i] ^ bit);
      CAPTURE(i);
      REQUIRE(Checksum(damaged.data(), damaged.size()) != base);
    }
  }
  // A zero byte appended changes the length term only.
  std::string longer = data + '\0';
  CHECK(Checksum(longer.data(), longer.size()) == base + 1);
}

TEST_CASE("bad options are InvalidArgument") {
  for (auto [replicas, depth] : {std::pair<int64_t, int64_t>{0, 2}, {1, 0}, {-3, 2}, {1, 5000}}) {
    StagingOptions o;
    o.device = DeviceKind::kCpu;
    o.replicas = replicas;
    o.depth = depth;
    Result<std::unique_ptr<Staging>> s = Staging::Create(o);
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == StatusCode::kInvalidArgument);
  }
}

TEST_CASE("host replicas deliver the submitted bytes with stats") {
  auto s = MakeHost(2, 2, false);
  CHECK(s->kind() == DeviceKind::kCpu);
  CHECK(s->ReplicaDevice(0) == "cpu");
  CHECK(s->ReplicaDevice(1) == "cpu");
  const std::string a = BatchBytes(0, 0, 1000), b = BatchBytes(1, 0, 777);
  Put(*s, 0, a);
  Put(*s, 1, b);
  CHECK(Take(*s, 1) == b);
  CHECK(Take(*s, 0) == a);
  const Staging::ReplicaStats st = s->stats(1);
  CHECK(st.batches == 1);
  CHECK(st.bytes == 777);
  CHECK(st.copy_seconds >= 0);
  CHECK_FALSE(st.pinned);
  CHECK(s->stats(0).bytes == 1000);
}

TEST_CASE("a host replica reads its staging slot in place, as a CPU device reads host memory") {
  auto s = MakeHost(1, 1, true);
  const std::string a = BatchBytes(0, 0, 64);
  Result<Staging::Slot*> slot = s->Acquire(0, a.size());
  REQUIRE(slot.ok());
  std::memcpy((*slot)->data, a.data(), a.size());
  REQUIRE(s->Submit(0, *slot, a.size()).ok());
  Result<Staging::Delivery> d = s->Receive(0);
  REQUIRE(d.ok());
  CHECK(d->device_data == (*slot)->data);
  CHECK(d->verified);
  CHECK(d->checksum == Checksum(a.data(), a.size()));
  std::string back(a.size(), '\0');
  REQUIRE(s->CopyToHost(0, *d, back.data()).ok());
  CHECK(back == a);
  s->Release(0, *d);
  CHECK(s->stats(0).copy_seconds == 0);
}

TEST_CASE("batches arrive in FIFO order per replica across threads, with verify") {
  for (bool verify : {false, true}) {
    CAPTURE(verify);
    constexpr int64_t kReplicas = 3;
    constexpr uint64_t kBatches = 60;
    auto s = MakeHost(kReplicas, 2, verify);
    auto size_of = [](int64_t r, uint64_t b) -> size_t {
      return (b % 7 == 3) ? 0 : (r + 1) * 97 * (b % 11) + b;
    };
    std::vector<std::thread> producers;
    std::atomic<int> failures{0};
    for (int64_t r = 0; r < kReplicas; ++r) {
      producers.emplace_back([&, r] {
        for (uint64_t b = 0; b < kBatches; ++b) {
          const std::string bytes = BatchBytes(r, b, size_of(r, b));
          Result<Staging::Slot*> slot = s->Acquire(r, bytes.size());
          if (!slot.ok()) {
            ++failures;
            return;
          }
          if (!bytes.empty()) std::memcpy((*slot)->data, bytes.data(), bytes.size());
          if (!s->Submit(r, *slot, bytes.size()).ok()) ++failures;
        }
        s->Finish(r);
      });
    }
    // One consumer, replicas in turn, as a training step takes them.
    for (uint64_t b = 0; b < kBatches; ++b) {
      for (int64_t r = 0; r < kReplicas; ++r) {
        Result<Staging::Delivery> d = s->Receive(r);
        REQUIRE(d.ok());
        CHECK(d->batch == b);
        CHECK(d->verified == verify);
        const std::string want = BatchBytes(r, b, size_of(r, b));
        REQUIRE(d->bytes == want.size());
        if (verify) CHECK(d->checksum == Checksum(want.data(), want.size()));
        if (!want.empty()) CHECK(std::memcmp(d->device_data, want.data(), want.size()) == 0);
        s->Release(r, *d);
      }
    }
    for (std::thread& t : producers) t.join();
    CHECK(failures == 0);
    for (int64_t r = 0; r < kReplicas; ++r) {
      Result<Staging::Delivery> end = s->Receive(r);
      REQUIRE_FALSE(end.ok());
      CHECK(end.status().code() == StatusCode::kOutOfRange);
      CHECK(s->stats(r).batches == kBatches);
    }
  }
}

TEST_CASE("Acquire blocks while depth slots are outstanding") {
  constexpr int64_t kDepth = 3;
  auto s = MakeHost(1, kDepth, false);
  for (int i = 0; i < kDepth; ++i) Put(*s, 0, BatchBytes(0, i, 100));
  std::atomic<bool> acquired{false};
  std::thread producer([&] {
    Result<Staging::Slot*> slot = s->Acquire(0, 100);
    REQUIRE(slot.ok());
    acquired = true;
    REQUIRE(s->Submit(0, *slot, 0).ok());
  });
  std::this_thread::sleep_for(150ms);
  CHECK_FALSE(acquired.load());
  // Receiving is not enough: the delivered slot is still in use until Release.
  Result<Staging::Delivery> d = s->Receive(0);
  REQUIRE(d.ok());
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(acquired.load());
  s->Release(0, *d);
  producer.join();
  CHECK(acquired.load());
  for (int i = 1; i < kDepth; ++i) CHECK(Take(*s, 0) == BatchBytes(0, i, 100));
  CHECK(Take(*s, 0).empty());
}

TEST_CASE("a slot grows to the batch and keeps its capacity") {
  auto s = MakeHost(1, 1, true);
  for (size_t n : {size_t{10}, size_t{5000}, size_t{300}, (size_t{1} << 20) + 13, size_t{0},
                   size_t{1000}, (size_t{3} << 20) + 8}) {
    CAPTURE(n);
    const std::string bytes = BatchBytes(0, n, n);
    Result<Staging::Slot*> slot = s->Acquire(0, n);
    REQUIRE(slot.ok());
    CHECK((*slot)->capacity >= n);
    if (n >= 5000) CHECK((*slot)->capacity < 2 * n + 8192);  // bounded headroom
    if (n > 0) std::memcpy((*slot)->data, bytes.data(), n);
    REQUIRE(s->Submit(0, *slot, n).ok());
    // Verified in chunks on host replicas: the sum must still be the whole batch's.
    Result<Staging::Delivery> d = s->Receive(0);
    REQUIRE(d.ok());
    CHECK(d->checksum == Checksum(bytes.data(), n));
    CHECK(std::string(static_cast<const char*>(d->device_data), d->bytes) == bytes);
    s->Release(0, *d);
  }
  Result<Staging::Slot*> slot = s->Acquire(0, 0);
  REQUIRE(slot.ok());
  CHECK((*slot)->capacity >= (size_t{1} << 20));  // no shrinking
  REQUIRE(s->Submit(0, *slot, 0).ok());
}

TEST_CASE("zero-byte batches are delivered and verified") {
  auto s = MakeHost(1, 2, true);
  Result<Staging::Slot*> slot = s->Acquire(0, 0);
  REQUIRE(slot.ok());
  REQUIRE(s->Submit(0, *slot, 0).ok());
  Result<Staging::Delivery> d = s->Receive(0);
  REQUIRE(d.ok());
  CHECK(d->bytes == 0);
  CHECK(d->device_data == nullptr);
  CHECK(d->verified);
  CHECK(d->checksum == 0);
  s->Release(0, *d);
  CHECK(s->stats(0).batches == 1);
}

TEST_CASE("Shutdown wakes a blocked Receive and a blocked Acquire") {
  auto s = MakeHost(2, 1, false);
  Put(*s, 1, "x");  // replica 1's only slot is now taken
  Status receive_status, acquire_status;
  std::thread consumer([&] { receive_status = s->Receive(0).status(); });
  std::thread producer([&] { acquire_status = s->Acquire(1, 1).status(); });
  std::this_thread::sleep_for(100ms);
  s->Shutdown();
  consumer.join();
  producer.join();
  CHECK(receive_status.code() == StatusCode::kCancelled);
  CHECK(acquire_status.code() == StatusCode::kCancelled);
  CHECK(s->Acquire(0, 1).status().code() == StatusCode::kCancelled);
}

TEST_CASE("verify reports a corrupted copy as DataLoss naming replica and batch") {
  auto s = MakeHost(2, 2, true);
  const std::string a = BatchBytes(1, 0, 4096), b = BatchBytes(1, 1, 4096);
  Put(*s, 1, a);
  CHECK(Take(*s, 1) == a);
  s->CorruptNextForTesting(1);
  Put(*s, 1, "");  // an empty batch has no byte to damage: the corruption waits
  CHECK(Take(*s, 1).empty());
  Put(*s, 1, b);
  Result<Staging::Delivery> bad = s->Receive(1);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kDataLoss);
  CHECK(bad.status().message().find("replica 1") != std::string::npos);
  CHECK(bad.status().message().find("batch 2") != std::string::npos);
  // The slot came back to the ring; the next batch is fine again.
  const std::string c = BatchBytes(1, 3, 100);
  Put(*s, 1, c);
  Put(*s, 1, c);
  CHECK(Take(*s, 1) == c);
  CHECK(Take(*s, 1) == c);
  CHECK(s->stats(1).batches == 4);
}

TEST_CASE("without verify the corruption reaches the replica unnoticed") {
  auto s = MakeHost(1, 2, false);
  const std::string a = BatchBytes(0, 0, 333);
  s->CorruptNextForTesting(0);
  Put(*s, 0, a);
  const std::string got = Take(*s, 0);
  REQUIRE(got.size() == a.size());
  size_t differing = 0;
  for (size_t i = 0; i < a.size(); ++i) differing += got[i] != a[i];
  CHECK(differing == 1);
}

TEST_CASE("misuse of slots is InvalidArgument and reaches the consumer") {
  auto s = MakeHost(2, 2, false);
  Result<Staging::Slot*> slot = s->Acquire(0, 10);
  REQUIRE(slot.ok());
  CHECK(s->Submit(1, *slot, 10).code() == StatusCode::kInvalidArgument);  // replica 0's slot
  CHECK(s->Acquire(2, 1).status().code() == StatusCode::kInvalidArgument);
  const Status too_big = s->Submit(0, *slot, (*slot)->capacity + 1);
  CHECK(too_big.code() == StatusCode::kInvalidArgument);
  CHECK(s->Submit(0, *slot, 1).code() == StatusCode::kInvalidArgument);  // no longer acquired
  Result<Staging::Delivery> d = s->Receive(0);
  REQUIRE_FALSE(d.ok());
  CHECK(d.status() == too_big);
  Put(*s, 0, "ok");
  CHECK(Take(*s, 0) == "ok");
}

TEST_CASE("Finish ends a replica once its batches are received") {
  auto s = MakeHost(1, 2, false);
  Put(*s, 0, "a");
  s->Finish(0);
  CHECK(s->Acquire(0, 1).status().code() == StatusCode::kFailedPrecondition);
  CHECK(Take(*s, 0) == "a");
  CHECK(s->Receive(0).status().code() == StatusCode::kOutOfRange);
}

TEST_CASE("without a usable GPU, cuda fails naming the call and auto falls back to host") {
  StagingOptions cuda;
  cuda.device = DeviceKind::kCuda;
  cuda.replicas = 2;
  Result<std::unique_ptr<Staging>> c = Staging::Create(cuda);
  Result<int> devices = CudaDeviceCount();
  StagingOptions automatic = cuda;
  automatic.device = DeviceKind::kAuto;
  Result<std::unique_ptr<Staging>> a = Staging::Create(automatic);
  REQUIRE(a.ok());
  if (devices.ok() && *devices > 0) {
    // A machine with a GPU: both pick it.
    REQUIRE(c.ok());
    CHECK((*c)->kind() == DeviceKind::kCuda);
    CHECK((*a)->kind() == DeviceKind::kCuda);
    CHECK((*a)->ReplicaDevice(0).rfind("cuda:", 0) == 0);
    return;
  }
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == StatusCode::kFailedPrecondition);
  CHECK((*a)->kind() == DeviceKind::kCpu);
  CHECK((*a)->ReplicaDevice(1) == "cpu");
  const std::vector<std::string> notes = (*a)->notes();
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("using host replicas") != std::string::npos);
#ifdef TFDIST_HAVE_CUDA
  // The runtime's own words and the call that failed.
  REQUIRE_FALSE(devices.ok());
  CHECK(c.status().message().find("cudaGetDeviceCount") != std::string::npos);
  CHECK(c.status().message().find(devices.status().message()) != std::string::npos);
  CHECK(notes[0].find(devices.status().message()) != std::string::npos);
  CHECK(devices.status().message().rfind("cudaGetDeviceCount: ", 0) == 0);
  CHECK(devices.status().message().size() > std::string("cudaGetDeviceCount: ").size());
#else
  CHECK(c.status().message().find("without CUDA") != std::string::npos);
  CHECK(notes[0].find("without CUDA") != std::string::npos);
#endif
  Result<double> plain = PlainPinnedCopySeconds(0, 1024, 1);
  REQUIRE_FALSE(plain.ok());
  CHECK(plain.status().code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("host replicas ignore the GPU list") {
  StagingOptions o;
  o.device = DeviceKind::kCpu;
  o.gpus = {5, 7};
  Result<std::unique_ptr<Staging>> s = Staging::Create(o);
  REQUIRE(s.ok());
  CHECK((*s)->ReplicaDevice(0) == "cpu");
}

}  // namespace
}  // namespace tfdist::device
