// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist run. Threads: per worker, a producer runs the worker's stream of
// per-replica batches; packers (a pool, each serving fixed replicas, or the
// producer itself) write each batch's wire format into a staging slot of its
// replica and submit its copy to the device. The calling thread is the
// training loop: step by step it receives one batch per replica, waits out
// the simulated step, and gives the slots back.
//
// No deadlock with bounded rings: a packer serves replicas of one worker
// only, whose batches are produced in step order and taken in that order, so
// a batch waits for a slot only while the training loop is at an earlier
// step, whose batches are all ahead of it. (A packer shared by two workers
// could hold one worker's batch for a later step in front of the other
// worker's batch that the loop waits for.)

#include "tfdist/run/runner.h"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "channel.h"
#include "report.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/distribute/execute.h"
#include "tfdist/distribute/steps.h"
#include "tfdist/io/byte_stream.h"
#include "tfdist/proto/example_parse.h"
#include "wait_histogram.h"

namespace tfdist::run {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The simulated training step: a sleep that ends on time. A plain sleep
// oversleeps by the timer slack (50 us by default) and the wake-up latency
// (a 5 ms step took 5.18 ms, a 0.5 ms one 0.66 ms), so the step sleeps with
// a timer slack of 1 ns to an absolute deadline less a margin, then spins to
// the deadline. The margin is the median lateness of the last 32 wake-ups
// plus 5 us (at most 500 us or the step): a short spin where wake-ups are
// prompt, and the least CPU taken from the input's threads. On a loaded
// two-core machine a margin from the median gave 5 ms steps a mean of
// 5.17-5.33 ms, the 90th percentile 5.73-5.99 ms and the fixed 200 us
// before 5.39-5.55 ms (300 steps each, load 11): a longer spin is more
// often preempted. A step can still run long when another thread takes the
// CPU: what it measured is reported.
// Thread-compatible; the timer slack is the constructing thread's, given
// back by the destructor, which runs on that thread.
class SimulatedStep {
 public:
  explicit SimulatedStep(double ms)
      : length_ns_(static_cast<int64_t>(ms * 1e6)),
        old_slack_(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)) {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  }
  ~SimulatedStep() {
    if (old_slack_ > 0) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(old_slack_), 0, 0, 0);
  }
  SimulatedStep(const SimulatedStep&) = delete;
  SimulatedStep& operator=(const SimulatedStep&) = delete;

  // Waits out one step; returns its measured length in seconds.
  double Run() {
    const int64_t start = Now();
    const int64_t deadline = start + length_ns_;
    const int64_t wake = deadline - std::min(margin_ns_, length_ns_);
    if (wake > start) {
      const timespec ts{static_cast<time_t>(wake / kNs), static_cast<long>(wake % kNs)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
      }
      Learn(Now() - wake);
    }
    int64_t now = Now();
    while (now < deadline) now = Now();
    return static_cast<double>(now - start) / 1e9;
  }

 private:
  static constexpr int64_t kNs = 1'000'000'000;
  static constexpr int64_t kMinMarginNs = 5'000, kMaxMarginNs = 500'000;

  static int64_t Now() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * kNs + ts.tv_nsec;
  }

  void Learn(int64_t late_ns) {
    late_[seen_++ % late_.size()] = std::max<int64_t>(0, late_ns);
    const size_t n = std::min(seen_, late_.size());
    std::array<int64_t, 32> sorted = late_;
    const auto median = sorted.begin() + static_cast<std::ptrdiff_t>(n / 2);
    std::nth_element(sorted.begin(), median, sorted.begin() + static_cast<std::ptrdiff_t>(n));
    margin_ns_ = std::clamp(*median + kMinMarginNs, kMinMarginNs, kMaxMarginNs);
  }

  const int64_t length_ns_;
  const int old_slack_;
  int64_t margin_ns_ = 200'000;  // until wake-ups are seen
  std::array<int64_t, 32> late_{};
  size_t seen_ = 0;
};

// The lengths of the simulated steps for their quantiles: to the
// microsecond up to 10 ms over the asked length, within 9% of the excess
// beyond (a WaitHistogram), in memory bounded whatever the number of steps.
class StepLengths {
 public:
  explicit StepLengths(double seconds) : length_(seconds) {}

  void Add(double seconds) {
    const double over_us = (seconds - length_) * 1e6;
    if (over_us < static_cast<double>(fine_.size())) {
      ++fine_[static_cast<size_t>(std::max(0.0, over_us))];
      ++fine_count_;
    } else {
      coarse_.Add(seconds - length_);
    }
  }

  // The length below which a fraction `q` of the steps took; 0 without
  // steps. REQUIRES: 0 <= q <= 1.
  double Quantile(double q) const {
    const uint64_t count = fine_count_ + coarse_.count();
    if (count == 0) return 0;
    const uint64_t rank =
        std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(count))));
    if (rank > fine_count_) {
      const double beyond = static_cast<double>(rank - fine_count_);
      return length_ + coarse_.Quantile(beyond / static_cast<double>(coarse_.count()));
    }
    uint64_t seen = 0;
    for (size_t us = 0;; ++us) {
      seen += fine_[us];
      if (seen >= rank) return length_ + (static_cast<double>(us) + 0.5) / 1e6;
    }
  }

 private:
  double length_;
  std::vector<uint64_t> fine_ = std::vector<uint64_t>(10'000);  // 1 us each
  uint64_t fine_count_ = 0;
  WaitHistogram coarse_;
};

// Local replicas this host may simulate: a thread and a staging ring each.
constexpr int64_t kMaxLocalReplicas = 256;

// A batch on its way to the packer, or the end of an epoch.
struct Job {
  std::vector<data::Element> elements;
  bool end_of_epoch = false;
};

// A batch staged and submitted (its copy may still run), or the end of an epoch.
struct Packed {
  std::vector<data::Element> elements;  // kept only for RunOptions::on_batch
  bool end_of_epoch = false;
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t wire_bytes = 0;
};

// The first error of any thread; setting it stops the run.
class Failure {
 public:
  void Set(Status status) {
    std::lock_guard lock(mu_);
    if (status_.ok()) status_ = std::move(status);
    failed_.store(true, std::memory_order_release);
  }
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  Status status() const {
    std::lock_guard lock(mu_);
    return status_;
  }

 private:
  mutable std::mutex mu_;
  Status status_;
  std::atomic<bool> failed_{false};
};

struct Replica {
  Replica(int64_t w, int64_t r, size_t depth) : worker(w), local(r), packed(depth + 1) {}
  int64_t worker;
  int64_t local;
  Timeline::Track* track = nullptr;  // its slot waits, packs and copies
  Channel<Packed> packed;
  double pack_seconds = 0;     // written by its packer, read after join
  std::optional<Packed> head;  // the consumer's next item
  ReplicaReport report;
};

struct Worker;

// A thread that stages the batches of the replicas given to it, in order.
struct Packer {
  struct Item {
    Worker* worker;
    Replica* replica;
    Job job;
  };
  explicit Packer(size_t capacity) : jobs(capacity) {}
  Channel<Item> jobs;
  std::thread thread;
};

struct Worker {
  int64_t worker = 0;
  std::unique_ptr<device::Staging> staging;
  std::vector<std::unique_ptr<Replica>> replicas;
  std::thread producer;
  std::vector<std::unique_ptr<Packer>> packers;  // none: the producer packs
  Timeline::Track* read_track = nullptr;         // its reads
  Timeline::Track* ring_track = nullptr;         // its replicas' rings, by the loop
  double read_seconds = 0;                       // written by the producer, read after join
  double split_seconds = 0;                      // of read_seconds, the split
  uint64_t fetched_bytes = 0;                    // payloads fetched by offset (DATA read by index)
  // Indexes found not to describe their files (read by scanning instead).
  std::vector<std::string> fetch_notes;
  uint64_t read_batches = 0;
};

// The declared features of a map(parse_example(...)), if the pipeline has one.
const std::vector<data::FeatureSpec>* DeclaredFeatures(const data::Pipeline& pipeline) {
  for (const data::Op& op : pipeline.ops) {
    const auto* map = std::get_if<data::MapOp>(&op.params);
    if (map != nullptr && map->opaque.empty()) return &map->features;
  }
  return nullptr;
}

// The records of a batch for its wire format: the elements of nested
// batches (batch().batch()) and of enumerate()'s pairs, in order.
void AppendLeaves(const data::Element& e, std::vector<data::Element>& out) {
  if (e.kind != data::Element::Kind::kBatch && e.kind != data::Element::Kind::kPair) {
    out.push_back(e);
    return;
  }
  for (const data::Element& item : e.items) AppendLeaves(item, out);
}

// Size of the kRecords wire format: n + 1 offsets, then the payloads.
constexpr uint64_t RecordsWire(uint64_t records, uint64_t payload_bytes) {
  return 8 * (records + 1) + payload_bytes;
}

class Runner {
 public:
  Runner(const RunOptions& options, const dist::Execution& ex,
         const std::optional<proto::DenseParser>& parser)
      : options_(options), ex_(ex), parser_(parser) {}

  // Every worker's staging and replicas.
  Status SetUp();
  // "cuda" or "cpu": what the staging picked. REQUIRES: SetUp succeeded.
  std::string device() const;
  // Starts the producers and packers, runs the training loop on this thread,
  // then stops and joins them. REQUIRES: SetUp succeeded.
  Status Run(RunReport& report);
  // What every worker measured. REQUIRES: Run returned.
  std::vector<WorkerMeasures> Measures() const;

 private:
  // The staging options of worker `w`.
  device::StagingOptions StagingFor(int64_t w) const;
  // Packer threads per worker.
  size_t PackersPerWorker() const;
  void Produce(Worker& w);
  // A packer thread's loop.
  void Pack(Packer& p);
  // Hands a batch of `r` to its packer, or stages it here; false when the
  // run stops.
  bool Dispatch(Worker& w, Replica& r, Job job);
  // Stages one batch of `r`; false when the run stops.
  bool PackJob(Worker& w, Replica& r, Job job);
  // The consumer's next item of `r` into r.head; false when the run stops.
  bool Fill(Replica& r, double& waited);
  Status Consume(RunReport& report);
  // Receives r's head batch, waiting for its copy.
  Result<device::Staging::Delivery> Receive(Worker& w, Replica& r, RunReport& report);
  // One global step: every replica's head batch, the simulated training
  // step, the slots given back.
  Status Step(RunReport& report);
  // Drops the short step at the end of an epoch: drains what was staged
  // for it, up to every replica's end of epoch.
  Status DropStep(RunReport& report);
  void ShowProgress(const RunReport& report, Clock::time_point start) const;
  // With a timeline: how many batches each replica has ready.
  void RecordRings(Clock::time_point at);
  void Stop();

  const RunOptions& options_;
  const dist::Execution& ex_;
  const std::optional<proto::DenseParser>& parser_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Replica*> replicas_;  // of every worker, in order
  // A step's batches, given back once the step is over.
  struct Received {
    Worker* worker;
    Replica* replica;
    device::Staging::Delivery delivery;
  };
  std::vector<Received> received_;
  Failure failure_;
  std::atomic<bool> stop_{false};
  // With a simulated step: its sleep, and the length of each step.
  std::optional<SimulatedStep> step_;
  std::optional<StepLengths> step_lengths_;
  Timeline::Track* loop_track_ = nullptr;  // with RunOptions::timeline
};

device::StagingOptions Runner::StagingFor(int64_t w) const {
  const dist::Topology& t = ex_.topology();
  device::StagingOptions so = options_.staging;
  so.replicas = t.replicas;
  // Several workers on this host: their replicas continue round-robin over
  // the GPUs where the previous worker's stopped.
  if (ex_.workers().size() > 1 && so.device != device::DeviceKind::kCpu) {
    if (so.gpus.empty()) {
      Result<int> count = device::CudaDeviceCount();
      for (int g = 0; count.ok() && g < *count; ++g) so.gpus.push_back(g);
    }
    if (!so.gpus.empty()) {
      const size_t shift = static_cast<size_t>(w * t.replicas) % so.gpus.size();
      std::rotate(so.gpus.begin(), so.gpus.begin() + static_cast<std::ptrdiff_t>(shift),
                  so.gpus.end());
    }
  }
  return so;
}

Status Runner::SetUp() {
  for (int64_t w : ex_.workers()) {
    auto worker = std::make_unique<Worker>();
    worker->worker = w;
    TFDIST_ASSIGN_OR_RETURN(worker->staging, device::Staging::Create(StagingFor(w)));
    if (options_.corrupt_replica_for_testing) {
      worker->staging->CorruptNextForTesting(*options_.corrupt_replica_for_testing);
    }
    if (options_.fail_pinned_replica_for_testing) {
      worker->staging->FailPinnedForTesting(*options_.fail_pinned_replica_for_testing);
    }
    Timeline* timeline = options_.timeline;
    if (timeline != nullptr) {
      timeline->NameProcess(w + 1, fmt::format("worker {}", w));
      worker->read_track = timeline->AddTrack(w + 1, "read (and decompress, split)");
      std::vector<std::string> series;
      for (int64_t r = 0; r < ex_.topology().replicas; ++r) series.push_back(fmt::format("r{}", r));
      worker->ring_track =
          timeline->AddTrack(w + 1, "staging rings (batches ready)", std::move(series));
    }
    const size_t depth = static_cast<size_t>(worker->staging->depth());
    for (int64_t r = 0; r < ex_.topology().replicas; ++r) {
      auto replica = std::make_unique<Replica>(w, r, depth);
      replica->report.worker = w;
      replica->report.replica = r;
      replica->report.device = worker->staging->ReplicaDevice(r);
      if (timeline != nullptr) {
        replica->track = timeline->AddTrack(
            w + 1, fmt::format("replica {}: slot wait, {}, copy", r, parser_ ? "parse" : "pack"));
      }
      replicas_.push_back(replica.get());
      worker->replicas.push_back(std::move(replica));
    }
    workers_.push_back(std::move(worker));
  }
  received_.reserve(replicas_.size());
  if (options_.timeline != nullptr) {
    options_.timeline->NameProcess(0, "training loop");
    loop_track_ = options_.timeline->AddTrack(0, "loop: input wait, receive, step");
  }
  return Status::OK();
}

std::string Runner::device() const {
  return workers_.front()->staging->kind() == device::DeviceKind::kCuda ? "cuda" : "cpu";
}

size_t Runner::PackersPerWorker() const {
  const size_t cores = std::thread::hardware_concurrency();
  // By default: parsing is compute-bound and gains from a thread per core
  // where cores are to spare; on two, the reading side (the interleave's
  // threads) already keeps most of both busy, and handing each batch to
  // another thread costs more than it saves: 800k Examples took 128 ms
  // parsed on the reading thread, 149 ms with two packers, 153 ms with one
  // (best of 7, tools/bench-run's data). Copying raw records is
  // memory-bound and is fastest on the reading thread there too.
  const size_t threads = options_.pack_threads >= 0 ? static_cast<size_t>(options_.pack_threads)
                         : cores <= 2               ? 0
                         : parser_                  ? cores
                                                    : cores - 2;
  const size_t R = static_cast<size_t>(ex_.topology().replicas);
  return threads == 0 ? 0 : std::min(R, std::max<size_t>(1, threads / workers_.size()));
}

Status Runner::Run(RunReport& report) {
  // Packers: shared out among the workers, each serving one worker's replicas.
  const size_t per_worker = PackersPerWorker();
  const size_t R = static_cast<size_t>(ex_.topology().replicas);
  const auto start = Clock::now();
  for (auto& w : workers_) {
    const size_t depth = static_cast<size_t>(w->staging->depth());
    for (size_t p = 0; p < per_worker; ++p) {
      // Room for every batch in flight of the replicas it serves.
      w->packers.push_back(std::make_unique<Packer>(depth * ((R + per_worker - 1) / per_worker)));
      w->packers.back()->thread = std::thread([this, p = w->packers.back().get()] { Pack(*p); });
    }
  }
  for (auto& w : workers_) {
    w->producer = std::thread([this, &w] { Produce(*w); });
  }
  Status consumed = Consume(report);
  report.seconds = Since(start);
  if (options_.timeline != nullptr) options_.timeline->Close();
  step_.reset();  // on this thread, which set its timer slack
  Stop();
  for (auto& w : workers_) {
    w->producer.join();
    for (auto& p : w->packers) p->thread.join();
  }
  if (!consumed.ok()) return consumed;
  return failure_.status();
}

std::vector<WorkerMeasures> Runner::Measures() const {
  std::vector<WorkerMeasures> out;
  for (const auto& w : workers_) {
    WorkerMeasures& wm = out.emplace_back();
    wm.file_bytes = ex_.FileBytesRead(w->worker) + w->fetched_bytes;
    wm.read_seconds = w->read_seconds;
    wm.split_seconds = w->split_seconds;
    wm.read_batches = w->read_batches;
    wm.notes = w->staging->notes();
    wm.notes.insert(wm.notes.end(), w->fetch_notes.begin(), w->fetch_notes.end());
    for (const auto& r : w->replicas) {
      const device::Staging::ReplicaStats st = w->staging->stats(r->local);
      ReplicaMeasures& rm = wm.replicas.emplace_back();
      rm.report = r->report;
      rm.report.copy_seconds = st.copy_seconds;
      rm.report.pinned = st.pinned;
      rm.pack_seconds = r->pack_seconds;
      rm.copies = st.batches;
    }
  }
  return out;
}

void Runner::Produce(Worker& w) {
  const int64_t R = ex_.topology().replicas;
  for (int64_t epoch = 0; epoch < options_.epochs; ++epoch) {
    Result<std::unique_ptr<dist::WorkerStream>> stream = ex_.Open(w.worker);
    if (!stream.ok()) return failure_.Set(stream.status());
    const double split_before = w.split_seconds;
    const uint64_t fetched_before = w.fetched_bytes;
    for (uint64_t i = 0;; ++i) {
      if (stop_.load(std::memory_order_relaxed)) return;
      std::vector<data::Element> batch;
      bool end = false;
      const auto start = Clock::now();
      Status s = (*stream)->Next(batch, end);
      const auto done = Clock::now();
      w.read_seconds += std::chrono::duration<double>(done - start).count();
      if (w.read_track != nullptr && !end) {
        w.read_track->Complete("read", start, done, {"batch", static_cast<int64_t>(i)},
                               {"elements", static_cast<int64_t>(batch.size())});
      }
      if (!s.ok()) return failure_.Set(std::move(s));
      w.fetched_bytes = fetched_before + (*stream)->fetched_bytes();
      for (const std::string& note : (*stream)->fetch_notes()) {
        if (std::find(w.fetch_notes.begin(), w.fetch_notes.end(), note) == w.fetch_notes.end()) {
          w.fetch_notes.push_back(note);
        }
      }
      if (end) break;
      w.split_seconds = split_before + (*stream)->split_seconds();
      ++w.read_batches;
      if (!Dispatch(w, *w.replicas[static_cast<size_t>(dist::LocalReplica(i, R))],
                    Job{std::move(batch), false})) {
        return;
      }
    }
    for (auto& r : w.replicas) {
      if (!Dispatch(w, *r, Job{{}, true})) return;
    }
  }
}

bool Runner::Dispatch(Worker& w, Replica& r, Job job) {
  if (w.packers.empty()) return PackJob(w, r, std::move(job));
  Packer& p = *w.packers[static_cast<size_t>(r.local) % w.packers.size()];
  return p.jobs.Push(Packer::Item{&w, &r, std::move(job)});
}

void Runner::Pack(Packer& p) {
  Packer::Item item;
  while (p.jobs.Pop(item)) {
    if (!PackJob(*item.worker, *item.replica, std::move(item.job))) return;
  }
}

bool Runner::PackJob(Worker& w, Replica& r, Job job) {
  Packed packed;
  packed.end_of_epoch = job.end_of_epoch;
  if (!job.end_of_epoch) {
    if (std::any_of(job.elements.begin(), job.elements.end(), [](const data::Element& e) {
          return e.kind == data::Element::Kind::kBatch || e.kind == data::Element::Kind::kPair;
        })) {
      std::vector<data::Element> leaves;
      for (const data::Element& e : job.elements) AppendLeaves(e, leaves);
      job.elements = std::move(leaves);
    }
    packed.records = job.elements.size();
    packed.bytes = data::PayloadBytes(job.elements);
    const uint64_t bound = parser_ ? parser_->MaxBatchBytes(packed.records, packed.bytes)
                                   : RecordsWire(packed.records, packed.bytes);
    const auto asked = r.track != nullptr ? Clock::now() : Clock::time_point();
    Result<device::Staging::Slot*> slot = w.staging->Acquire(r.local, bound);
    if (!slot.ok()) {
      if (slot.status().code() != StatusCode::kCancelled) failure_.Set(slot.status());
      return false;
    }
    const auto start = Clock::now();
    // A wait for a slot: the ring was full (not the instant of a free one).
    if (r.track != nullptr && start - asked >= std::chrono::microseconds(2)) {
      r.track->Complete("slot wait", asked, start);
    }
    if (parser_) {
      Result<proto::ColumnLayout> layout =
          parser_->ParseBatch(job.elements, std::span<char>((*slot)->data, bound));
      if (!layout.ok()) {
        failure_.Set(layout.status());
        return false;
      }
      packed.wire_bytes = layout->total_bytes;
    } else {
      PackRecords(job.elements, (*slot)->data);
      packed.wire_bytes = bound;
    }
    const auto packed_at = Clock::now();
    r.pack_seconds += std::chrono::duration<double>(packed_at - start).count();
    Status s = w.staging->Submit(r.local, *slot, packed.wire_bytes);
    if (r.track != nullptr) {
      r.track->Complete(parser_ ? "parse" : "pack", start, packed_at,
                        {"records", static_cast<int64_t>(packed.records)},
                        {"bytes", static_cast<int64_t>(packed.bytes)});
      r.track->Complete("copy", packed_at, Clock::now(),
                        {"wire_bytes", static_cast<int64_t>(packed.wire_bytes)});
    }
    if (!s.ok()) {
      // Cancelled: the loop stopped (max_steps, an error elsewhere) while this
      // batch was being packed; that is no failure of its own.
      if (s.code() != StatusCode::kCancelled) failure_.Set(std::move(s));
      return false;
    }
    if (options_.on_batch) packed.elements = std::move(job.elements);
  }
  return r.packed.Push(std::move(packed));
}

bool Runner::Fill(Replica& r, double& waited) {
  if (r.head) return true;
  const auto start = Clock::now();
  Packed p;
  for (;;) {
    const auto got = r.packed.PopFor(p, std::chrono::milliseconds(100));
    if (got == Channel<Packed>::PopResult::kItem) break;
    if (got == Channel<Packed>::PopResult::kClosed || failure_.failed()) return false;
    if (Interrupted()) {
      failure_.Set(Status::Interrupted());
      return false;
    }
  }
  waited += Since(start);
  r.head = std::move(p);
  return true;
}

void Runner::Stop() {
  stop_.store(true);
  for (auto& w : workers_) {
    for (auto& r : w->replicas) {
      r->packed.Close();
    }
    if (w->staging) w->staging->Shutdown();
  }
  for (auto& w : workers_) {
    for (auto& p : w->packers) p->jobs.Close();
  }
}

Result<device::Staging::Delivery> Runner::Receive(Worker& w, Replica& r, RunReport& report) {
  const auto t = Clock::now();
  Result<device::Staging::Delivery> d = w.staging->Receive(r.local);
  report.copy_wait_seconds += Since(t);
  return d;
}

Status Runner::Step(RunReport& report) {
  ++report.steps;
  const int64_t step = static_cast<int64_t>(report.steps);
  const auto receiving = loop_track_ != nullptr ? Clock::now() : Clock::time_point();
  for (auto& w : workers_) {
    for (auto& rp : w->replicas) {
      Replica& r = *rp;
      ReplicaReport& rr = r.report;
      ++rr.batches;
      if (r.head->end_of_epoch) {
        ++rr.empty_batches;  // padding: this replica ran out while others have data
        if (options_.on_batch) options_.on_batch(w->worker, r.local, step, {});
        continue;
      }
      TFDIST_ASSIGN_OR_RETURN(auto d, Receive(*w, r, report));
      rr.records += r.head->records;
      rr.bytes += r.head->bytes;
      rr.wire_bytes += r.head->wire_bytes;
      rr.empty_batches += r.head->records == 0;
      if (options_.on_batch) options_.on_batch(w->worker, r.local, step, r.head->elements);
      received_.push_back({w.get(), &r, d});
      r.head.reset();
    }
  }
  if (loop_track_ != nullptr) {
    loop_track_->Complete("receive", receiving, Clock::now(), {"step", step});
  }
  if (step_) {
    const auto stepping = loop_track_ != nullptr ? Clock::now() : Clock::time_point();
    const double seconds = step_->Run();
    report.step_seconds += seconds;
    step_lengths_->Add(seconds);
    if (loop_track_ != nullptr) {
      loop_track_->Complete("step", stepping, Clock::now(), {"step", step});
    }
  }
  // The slots of the step's batches go back once it is over.
  for (Received& x : received_) x.worker->staging->Release(x.replica->local, x.delivery);
  received_.clear();
  return Status::OK();
}

Status Runner::DropStep(RunReport& report) {
  ++report.dropped_steps;
  for (auto& w : workers_) {
    for (auto& r : w->replicas) {
      for (;;) {
        if (!Fill(*r, report.wait_seconds)) return failure_.status();
        if (r->head->end_of_epoch) break;
        TFDIST_ASSIGN_OR_RETURN(auto d, Receive(*w, *r, report));
        w->staging->Release(r->local, d);
        r->head.reset();
      }
    }
  }
  return Status::OK();
}

void Runner::RecordRings(Clock::time_point at) {
  for (auto& w : workers_) {
    std::vector<int64_t> ready;
    for (auto& r : w->replicas) {
      ready.push_back(static_cast<int64_t>(r->packed.size()) + (r->head ? 1 : 0));
    }
    w->ring_track->Count("ready", at, std::move(ready));
  }
}

void Runner::ShowProgress(const RunReport& report, Clock::time_point start) const {
  Progress p;
  for (const Replica* r : replicas_) {
    p.records += r->report.records;
    p.bytes += r->report.bytes;
  }
  p.steps = report.steps;
  p.seconds = Since(start);
  if (options_.distribute.max_steps) {
    p.total_steps = static_cast<uint64_t>(*options_.distribute.max_steps);
  }
  options_.progress(p);
}

Status Runner::Consume(RunReport& report) {
  if (options_.step_time_ms > 0) {
    step_.emplace(options_.step_time_ms);
    step_lengths_.emplace(options_.step_time_ms / 1e3);
  }
  const auto start = Clock::now();
  auto last_progress = start;
  std::optional<Clock::time_point> steady_start;  // the first step done
  uint64_t first_records = 0;
  WaitHistogram waits;
  double steady_waited = 0;
  auto finish = [&]() {
    if (steady_start) report.steady_seconds = Since(*steady_start);
    report.steady_steps = waits.count();
    uint64_t records = 0;
    for (const Replica* r : replicas_) records += r->report.records;
    report.steady_records = records - first_records;
    report.wait_p50_seconds = waits.Quantile(0.5);
    report.wait_p99_seconds = waits.Quantile(0.99);
    report.steady_wait_seconds = steady_waited;
    if (step_lengths_ && report.steps > 0) {
      report.step_mean_seconds = report.step_seconds / static_cast<double>(report.steps);
      report.step_p99_seconds = step_lengths_->Quantile(0.99);
    }
  };
  const std::optional<int64_t> max_steps = options_.distribute.max_steps;
  for (int64_t epoch = 0; epoch < options_.epochs; ++epoch) {
    for (;;) {
      if (max_steps && static_cast<int64_t>(report.steps) >= *max_steps) {
        finish();
        return Status::OK();
      }
      // Every replica's next item: a batch, or the end of its epoch.
      // Last replica first: a worker stages its replicas' batches in order,
      // so the loop is woken once a step rather than once a replica.
      bool any_batch = false, any_end = false;
      double waited = 0;
      Clock::time_point filling;
      if (loop_track_ != nullptr) {
        options_.timeline->SetStep(static_cast<int64_t>(report.steps) + 1);
        filling = Clock::now();
        RecordRings(filling);
      }
      for (auto it = replicas_.rbegin(); it != replicas_.rend(); ++it) {
        Replica* r = *it;
        if (!Fill(*r, waited)) return failure_.status();
        any_batch = any_batch || !r->head->end_of_epoch;
        any_end = any_end || r->head->end_of_epoch;
      }
      report.wait_seconds += waited;
      if (loop_track_ != nullptr) {
        loop_track_->Complete("input wait", filling, Clock::now(),
                              {"step", static_cast<int64_t>(report.steps) + 1});
      }
      if (options_.agree_step) {
        TFDIST_ASSIGN_OR_RETURN(std::tie(any_batch, any_end),
                                options_.agree_step(any_batch, any_end));
      }
      const dist::StepKind kind = dist::NextStep(any_batch, any_end, ex_.drops_short_step());
      if (kind == dist::StepKind::kEnd) break;  // the epoch is over
      if (kind == dist::StepKind::kDropped) {
        // One worker with static shapes: TensorFlow drops the short step and
        // ends the epoch.
        TFDIST_RETURN_IF_ERROR(DropStep(report));
        break;
      }
      const bool first = !steady_start;
      if (first) {
        report.first_batch_seconds = Since(start);
      } else {
        waits.Add(waited);
        steady_waited += waited;
      }
      TFDIST_RETURN_IF_ERROR(Step(report));
      if (first) {
        // The steady state is the steps after this one: its window starts
        // here, or the first step's time would be divided among the others.
        steady_start = Clock::now();
        for (const Replica* r : replicas_) first_records += r->report.records;
      }
      if (Interrupted()) return Status::Interrupted();
      if (options_.progress && Since(last_progress) >= 0.2) {
        last_progress = Clock::now();
        ShowProgress(report, start);
      }
    }
    for (Replica* r : replicas_) r->head.reset();  // the end-of-epoch markers
  }
  finish();
  return Status::OK();
}

}  // namespace

uint64_t RecordsWireBytes(const std::vector<data::Element>& batch) {
  return RecordsWire(batch.size(), data::PayloadBytes(batch));
}

void PackRecords(const std::vector<data::Element>& batch, char* out) {
  char* data = out + 8 * (batch.size() + 1);
  uint64_t at = 0;
  for (size_t i = 0; i <= batch.size(); ++i) {
    std::memcpy(out + 8 * i, &at, 8);  // little endian, as every target of CUDA
    if (i == batch.size()) break;
    const std::string_view p = batch[i].payload();
    if (!p.empty()) std::memcpy(data + at, p.data(), p.size());
    at += p.size();
  }
}

Result<RunReport> Run(const data::Pipeline& pipeline, const RunOptions& options) {
  assert(options.epochs >= 1 && "REQUIRES: epochs >= 1");
  assert(options.step_time_ms >= 0 && options.step_time_ms <= kMaxStepTimeMs &&
         "REQUIRES: 0 <= step_time_ms <= kMaxStepTimeMs");
  assert(options.pack_threads >= -1 && "REQUIRES: pack_threads >= -1");
  std::optional<proto::DenseParser> parser;
  if (const auto* features = DeclaredFeatures(pipeline)) {
    TFDIST_ASSIGN_OR_RETURN(parser, proto::DenseParser::Create(*features));
  }
  RunMeasures measures;
  const auto plan_start = Clock::now();
  TFDIST_ASSIGN_OR_RETURN(const dist::Execution ex,
                          dist::Execution::Plan(pipeline, options.distribute, options.build));
  measures.plan_seconds = Since(plan_start);
  const int64_t local = static_cast<int64_t>(ex.workers().size()) * ex.topology().replicas;
  if (local > kMaxLocalReplicas) {
    return Status::InvalidArgument(
               fmt::format("running {} workers x {} replicas here needs {} local replicas; at "
                           "most {} can run on one host",
                           ex.workers().size(), ex.topology().replicas, local, kMaxLocalReplicas))
        .WithAdvice(Remedy::kOneWorker);
  }
  for (const std::optional<int64_t>& r :
       {options.corrupt_replica_for_testing, options.fail_pinned_replica_for_testing}) {
    if (r && (*r < 0 || *r >= ex.topology().replicas)) {
      return Status::InvalidArgument(fmt::format("testing: no local replica {} (replicas 0..{})",
                                                 *r, ex.topology().replicas - 1));
    }
  }
  RunReport report;
  report.decision = ex.decision();
  report.topology = ex.topology();
  report.workers = ex.workers();
  report.format = parser ? WireFormat::kFeatures : WireFormat::kRecords;
  report.epochs = options.epochs;
  report.verified = options.staging.verify;
  Runner runner(options, ex, parser);
  const auto setup_start = Clock::now();
  TFDIST_RETURN_IF_ERROR(runner.SetUp());
  measures.setup_seconds = Since(setup_start);
  report.device = runner.device();
  measures.inflate_before = io::ProcessInflateTotals();
  TFDIST_RETURN_IF_ERROR(runner.Run(report));
  measures.inflate_after = io::ProcessInflateTotals();
  measures.workers = runner.Measures();
  AddMeasures(measures, report);
  return report;
}

}  // namespace tfdist::run
