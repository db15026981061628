// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Staging rings, the host transport and the batch checksum.

#include "tfdist/device/staging.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "device_config.h"
#include "transport.h"

namespace tfdist::device {

namespace {

inline uint64_t LoadLe64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

constexpr size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Checksum without the length term, of bytes whose first word has index
// `first` in the batch: the sum over words of w_i * (2 * (first + i) + 1).
uint64_t WeightedSum(const unsigned char* p, size_t n, uint64_t first) {
  const size_t words = n / 8;
  // Four independent sums keep the multipliers busy; the order of addition
  // does not matter modulo 2^64.
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= words; i += 4) {
    const uint64_t k = 2 * (first + i) + 1;
    const unsigned char* q = p + 8 * i;
    s0 += LoadLe64(q) * k;
    s1 += LoadLe64(q + 8) * (k + 2);
    s2 += LoadLe64(q + 16) * (k + 4);
    s3 += LoadLe64(q + 24) * (k + 6);
  }
  uint64_t sum = s0 + s1 + s2 + s3;
  for (; i < words; ++i) sum += LoadLe64(p + 8 * i) * (2 * (first + i) + 1);
  if (const size_t tail = n % 8; tail != 0) {
    uint64_t w = 0;
    for (size_t k = 0; k < tail; ++k) w |= static_cast<uint64_t>(p[8 * words + k]) << (8 * k);
    sum += w * (2 * (first + words) + 1);
  }
  return sum;
}

// Host replicas: a CPU device reads host memory as it is, so a replica's
// batch is the staging slot itself, handed over without a copy (as
// TensorFlow's CPU replicas use the batch tensor in place). The replica-side
// checksum is computed when the consumer receives the batch, so it also
// catches a write into the slot after Submit.
class HostTransport final : public Transport {
 public:
  explicit HostTransport(int depth) : slots_(static_cast<size_t>(depth)) {}

  std::string device() const override { return "cpu"; }
  bool pinned() const override { return false; }

  Status Reserve(int slot, size_t bytes, char** data, size_t* capacity, std::string*) override {
    SlotMemory& m = slots_[static_cast<size_t>(slot)];
    m = SlotMemory();
    *data = nullptr;
    *capacity = 0;
    TFDIST_ASSIGN_OR_RETURN(m.buffer, AllocateHost(bytes));
    *data = m.buffer.get();
    *capacity = bytes;
    return Status::OK();
  }

  Status StartCopy(int, size_t, bool) override { return Status::OK(); }

  Status WaitCopy(int slot, size_t bytes, bool checksum, CopyResult* out) override {
    const SlotMemory& m = slots_[static_cast<size_t>(slot)];
    const uint64_t sum =
        checksum ? WeightedSum(reinterpret_cast<const unsigned char*>(m.buffer.get()), bytes, 0) +
                       static_cast<uint64_t>(bytes)
                 : 0;
    *out = CopyResult{m.buffer.get(), 0, sum};
    return Status::OK();
  }

  Status CopyToHost(int slot, size_t bytes, void* dst) override {
    if (bytes > 0) std::memcpy(dst, slots_[static_cast<size_t>(slot)].buffer.get(), bytes);
    return Status::OK();
  }

 private:
  struct SlotMemory {
    HostMemory buffer;  // staging slot and replica memory in one
  };
  std::vector<SlotMemory> slots_;
};

}  // namespace

Result<HostMemory> AllocateHost(size_t bytes) {
  constexpr size_t kAlign = 64;
  void* p = std::aligned_alloc(kAlign, RoundUp(std::max<size_t>(bytes, 1), kAlign));
  if (p == nullptr)
    return Status::ResourceExhausted(fmt::format("out of host memory allocating {} bytes", bytes));
  return HostMemory(static_cast<char*>(p));
}

std::unique_ptr<Transport> MakeHostTransport(int depth) {
  return std::make_unique<HostTransport>(depth);
}

Result<DeviceKind> ParseDeviceKind(std::string_view text) {
  if (text == "auto") return DeviceKind::kAuto;
  if (text == "cpu") return DeviceKind::kCpu;
  if (text == "cuda") return DeviceKind::kCuda;
  return Status::InvalidArgument(
      fmt::format("unknown device '{}'; expected auto, cpu or cuda", text));
}

std::string_view DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kAuto:
      return "auto";
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kCuda:
      return "cuda";
  }
  return "auto";
}

uint64_t Checksum(const void* data, size_t n) {
  return WeightedSum(static_cast<const unsigned char*>(data), n, 0) + static_cast<uint64_t>(n);
}

#ifndef TFDIST_HAVE_CUDA
Result<int> CudaDeviceCount() {
  return Status::FailedPrecondition("this tfdist was built without CUDA");
}

Result<double> PlainPinnedCopySeconds(int, size_t, int64_t) {
  return Status::FailedPrecondition("this tfdist was built without CUDA");
}
#endif

struct Staging::Replica {
  enum class Phase { kFree, kAcquired, kSubmitted, kReceived };
  struct SlotState {
    Phase phase = Phase::kFree;
    uint64_t batch = 0;
    size_t bytes = 0;
    uint64_t host_checksum = 0;
    Status error;  // of a failed Acquire or Submit, handed on to Receive
  };

  std::unique_ptr<Transport> transport;
  std::vector<Slot> slots;  // never resized: Slot* stay valid
  std::vector<SlotState> states;

  mutable std::mutex mu;
  std::condition_variable cv;
  uint64_t acquired = 0;  // ring positions; the slot of position p is p % depth
  uint64_t received = 0;
  bool finished = false;
  bool shutdown = false;
  ReplicaStats stats;
  std::atomic<bool> corrupt_next{false};

  // Hands `error` to the consumer in the slot's place.
  void Fail(int index, Status error) {
    {
      std::lock_guard lock(mu);
      SlotState& st = states[static_cast<size_t>(index)];
      st.bytes = 0;
      st.error = std::move(error);
      st.phase = Phase::kSubmitted;
    }
    cv.notify_all();
  }

  void Free(int index) {
    {
      std::lock_guard lock(mu);
      states[static_cast<size_t>(index)].phase = Phase::kFree;
    }
    cv.notify_all();
  }
};

Result<std::unique_ptr<Staging>> Staging::Create(const StagingOptions& options) {
  if (options.replicas < 1) {
    return Status::InvalidArgument(
        fmt::format("replicas must be at least 1; got {}", options.replicas));
  }
  constexpr int64_t kMaxDepth = 1024;
  if (options.depth < 1 || options.depth > kMaxDepth) {
    return Status::InvalidArgument(
        fmt::format("staging depth must be in 1..{}; got {}", kMaxDepth, options.depth));
  }

  std::vector<std::string> notes;
  DeviceKind kind = options.device;
  std::vector<int> gpus;
  if (kind != DeviceKind::kCpu) {
    Result<int> count = CudaDeviceCount();
    std::string why;
    if (!count.ok()) {
      why = count.status().message();
    } else if (*count == 0) {
      why = "cudaGetDeviceCount: no CUDA device visible";
    }
    if (!why.empty()) {
      if (kind == DeviceKind::kCuda) {
        return Status::FailedPrecondition(
            fmt::format("device cuda: no usable CUDA device ({})", why));
      }
      notes.push_back(fmt::format("no usable CUDA device ({}); using host replicas", why));
      kind = DeviceKind::kCpu;
    } else {
      std::set<int> seen;
      for (int g : options.gpus) {
        if (g < 0 || g >= *count) {
          return Status::InvalidArgument(fmt::format(
              "GPU {} is not visible: {} CUDA device(s), ordinals 0..{}", g, *count, *count - 1));
        }
        if (!seen.insert(g).second) {
          return Status::InvalidArgument(fmt::format("GPU {} is listed twice", g));
        }
        gpus.push_back(g);
      }
      if (gpus.empty()) {
        for (int g = 0; g < *count; ++g) gpus.push_back(g);
      }
      kind = DeviceKind::kCuda;
    }
  }

  auto build = [&](DeviceKind k) -> Result<std::unique_ptr<Staging>> {
    std::unique_ptr<Staging> staging(new Staging(k, options.depth, options.verify));
    const int depth = static_cast<int>(options.depth);
    for (int64_t r = 0; r < options.replicas; ++r) {
      auto rep = std::make_unique<Replica>();
      if (k == DeviceKind::kCuda) {
#ifdef TFDIST_HAVE_CUDA
        const int gpu = gpus[static_cast<size_t>(r) % gpus.size()];
        Result<std::unique_ptr<Transport>> t = MakeCudaTransport(gpu, depth);
        if (!t.ok()) {
          return Status::FailedPrecondition(
              fmt::format("replica {} on cuda:{}: {}", r, gpu, t.status().message()));
        }
        rep->transport = std::move(t).value();
#endif
      } else {
        rep->transport = MakeHostTransport(depth);
      }
      rep->slots.resize(static_cast<size_t>(depth));
      rep->states.resize(static_cast<size_t>(depth));
      for (int i = 0; i < depth; ++i) {
        rep->slots[static_cast<size_t>(i)].replica = r;
        rep->slots[static_cast<size_t>(i)].index = i;
      }
      staging->replicas_.push_back(std::move(rep));
    }
    return staging;
  };

  Result<std::unique_ptr<Staging>> staging = build(kind);
  if (!staging.ok() && kind == DeviceKind::kCuda && options.device == DeviceKind::kAuto) {
    notes.push_back(
        fmt::format("CUDA setup failed ({}); using host replicas", staging.status().message()));
    staging = build(DeviceKind::kCpu);
  }
  if (!staging.ok()) return staging.status();
  (*staging)->notes_ = std::move(notes);
  return staging;
}

Staging::Staging(DeviceKind kind, int64_t depth, bool verify)
    : kind_(kind), depth_(depth), verify_(verify) {}

Staging::~Staging() = default;

Staging::Replica& Staging::Get(int64_t replica) const {
  assert(replica >= 0 && replica < replicas() && "REQUIRES: 0 <= replica < replicas()");
  return *replicas_[static_cast<size_t>(replica)];
}

void Staging::AddNote(std::string note) {
  std::lock_guard lock(notes_mu_);
  notes_.push_back(std::move(note));
}

std::vector<std::string> Staging::notes() const {
  std::lock_guard lock(notes_mu_);
  return notes_;
}

std::string Staging::ReplicaDevice(int64_t replica) const {
  return Get(replica).transport->device();
}

Result<Staging::Slot*> Staging::Acquire(int64_t replica, size_t bytes) {
  if (replica < 0 || replica >= replicas()) {
    return Status::InvalidArgument(fmt::format("no replica {}", replica));
  }
  Replica& rep = *replicas_[static_cast<size_t>(replica)];
  int index;
  {
    std::unique_lock lock(rep.mu);
    auto slot_index = [&] {
      return static_cast<int>(rep.acquired % static_cast<uint64_t>(depth_));
    };
    rep.cv.wait(lock, [&] {
      return rep.shutdown || rep.finished ||
             rep.states[static_cast<size_t>(slot_index())].phase == Replica::Phase::kFree;
    });
    if (rep.shutdown)
      return Status::Cancelled(fmt::format("replica {}: staging shut down", replica));
    if (rep.finished) {
      return Status::FailedPrecondition(fmt::format("replica {}: Acquire after Finish", replica));
    }
    index = slot_index();
    Replica::SlotState& st = rep.states[static_cast<size_t>(index)];
    st = Replica::SlotState();
    st.phase = Replica::Phase::kAcquired;
    st.batch = rep.acquired++;
  }
  Slot& slot = rep.slots[static_cast<size_t>(index)];
  if (bytes > slot.capacity) {
    // Headroom, so that slowly growing batches do not reallocate every time.
    const size_t capacity = RoundUp(std::max(bytes, slot.capacity + slot.capacity / 2), 4096);
    std::string note;
    Status s = rep.transport->Reserve(index, capacity, &slot.data, &slot.capacity, &note);
    if (!note.empty()) AddNote(fmt::format("replica {}: {}", replica, note));
    if (!s.ok()) {
      s = std::move(s).Annotate(fmt::format("replica {}", replica));
      rep.Fail(index, s);
      return s;
    }
  }
  return &slot;
}

Status Staging::Submit(int64_t replica, Slot* slot, size_t bytes) {
  if (replica < 0 || replica >= replicas()) {
    return Status::InvalidArgument(fmt::format("no replica {}", replica));
  }
  Replica& rep = *replicas_[static_cast<size_t>(replica)];
  if (slot == nullptr || slot->replica != replica || slot->index < 0 || slot->index >= depth_ ||
      &rep.slots[static_cast<size_t>(slot->index)] != slot) {
    return Status::InvalidArgument(fmt::format("replica {}: Submit of a foreign slot", replica));
  }
  const int index = slot->index;
  {
    std::lock_guard lock(rep.mu);
    if (rep.shutdown)
      return Status::Cancelled(fmt::format("replica {}: staging shut down", replica));
    if (rep.states[static_cast<size_t>(index)].phase != Replica::Phase::kAcquired) {
      return Status::InvalidArgument(
          fmt::format("replica {}: Submit of slot {}, which is not acquired", replica, index));
    }
  }
  if (bytes > slot->capacity) {
    Status s = Status::InvalidArgument(fmt::format(
        "replica {}: Submit of {} bytes into a slot of {} bytes", replica, bytes, slot->capacity));
    rep.Fail(index, s);
    return s;
  }
  const uint64_t host_checksum = verify_ ? Checksum(slot->data, bytes) : 0;
  if (bytes > 0 && rep.corrupt_next.exchange(false)) slot->data[bytes / 2] ^= 0x01;
  Status s = rep.transport->StartCopy(index, bytes, verify_);
  if (!s.ok()) s = std::move(s).Annotate(fmt::format("replica {}", replica));
  {
    std::lock_guard lock(rep.mu);
    Replica::SlotState& st = rep.states[static_cast<size_t>(index)];
    st.bytes = bytes;
    st.host_checksum = host_checksum;
    st.error = s;
    st.phase = Replica::Phase::kSubmitted;
  }
  rep.cv.notify_all();
  return s;
}

void Staging::Finish(int64_t replica) {
  Replica& rep = Get(replica);
  {
    std::lock_guard lock(rep.mu);
    rep.finished = true;
  }
  rep.cv.notify_all();
}

Result<Staging::Delivery> Staging::Receive(int64_t replica) {
  if (replica < 0 || replica >= replicas()) {
    return Status::InvalidArgument(fmt::format("no replica {}", replica));
  }
  Replica& rep = *replicas_[static_cast<size_t>(replica)];
  int index;
  Replica::SlotState st;
  {
    std::unique_lock lock(rep.mu);
    auto slot_index = [&] {
      return static_cast<int>(rep.received % static_cast<uint64_t>(depth_));
    };
    auto ready = [&] {
      return rep.states[static_cast<size_t>(slot_index())].phase == Replica::Phase::kSubmitted;
    };
    rep.cv.wait(lock, [&] {
      return rep.shutdown || ready() || (rep.finished && rep.received == rep.acquired);
    });
    if (rep.shutdown)
      return Status::Cancelled(fmt::format("replica {}: staging shut down", replica));
    if (!ready()) return Status::OutOfRange(fmt::format("replica {}: no more batches", replica));
    index = slot_index();
    rep.states[static_cast<size_t>(index)].phase = Replica::Phase::kReceived;
    st = rep.states[static_cast<size_t>(index)];
    ++rep.received;
  }
  if (!st.error.ok()) {
    rep.Free(index);
    return st.error;
  }
  CopyResult copy;
  if (Status s = rep.transport->WaitCopy(index, st.bytes, verify_, &copy); !s.ok()) {
    rep.Free(index);
    return std::move(s).Annotate(fmt::format("replica {}, batch {}", replica, st.batch));
  }
  if (verify_ && copy.checksum != st.host_checksum) {
    rep.Free(index);
    return Status::DataLoss(
        fmt::format("replica {} ({}), batch {}: checksum mismatch after the copy of {} bytes: "
                    "host {:#018x}, {} {:#018x}",
                    replica, rep.transport->device(), st.batch, st.bytes, st.host_checksum,
                    kind_ == DeviceKind::kCuda ? "device" : "replica", copy.checksum));
  }
  {
    std::lock_guard lock(rep.mu);
    rep.stats.batches += 1;
    rep.stats.bytes += st.bytes;
    rep.stats.copy_seconds += copy.copy_seconds;
  }
  Delivery d;
  d.slot = &rep.slots[static_cast<size_t>(index)];
  d.device_data = st.bytes > 0 ? copy.device_data : nullptr;
  d.bytes = st.bytes;
  d.batch = st.batch;
  d.verified = verify_;
  d.checksum = verify_ ? copy.checksum : 0;
  return d;
}

void Staging::Release(int64_t replica, const Delivery& delivery) {
  Replica& rep = Get(replica);
  if (delivery.slot == nullptr || delivery.slot->replica != replica) return;
  const auto index = static_cast<size_t>(delivery.slot->index);
  {
    std::lock_guard lock(rep.mu);
    if (index >= rep.states.size() || rep.states[index].phase != Replica::Phase::kReceived) return;
    rep.states[index].phase = Replica::Phase::kFree;
  }
  rep.cv.notify_all();
}

Status Staging::CopyToHost(int64_t replica, const Delivery& delivery, void* dst) const {
  if (replica < 0 || replica >= replicas() || delivery.slot == nullptr ||
      delivery.slot->replica != replica) {
    return Status::InvalidArgument(
        fmt::format("replica {}: CopyToHost of a foreign delivery", replica));
  }
  Status s = replicas_[static_cast<size_t>(replica)]->transport->CopyToHost(delivery.slot->index,
                                                                            delivery.bytes, dst);
  if (!s.ok()) return std::move(s).Annotate(fmt::format("replica {}", replica));
  return s;
}

void Staging::Shutdown() {
  for (auto& rep : replicas_) {
    {
      std::lock_guard lock(rep->mu);
      rep->shutdown = true;
    }
    rep->cv.notify_all();
  }
}

Staging::ReplicaStats Staging::stats(int64_t replica) const {
  const Replica& rep = Get(replica);
  ReplicaStats s;
  {
    std::lock_guard lock(rep.mu);
    s = rep.stats;
  }
  s.pinned = rep.transport->pinned();
  return s;
}

void Staging::CorruptNextForTesting(int64_t replica) { Get(replica).corrupt_next = true; }

void Staging::FailPinnedForTesting(int64_t replica) {
  Get(replica).transport->FailPinnedForTesting();
}

}  // namespace tfdist::device
