// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// reshard and convert, pass by pass (private to src/io): pass 1 finds every
// record (reshard_scan.cc), the plan says where each goes
// (reshard_plan.cc), pass 2 copies them (reshard_copy.cc), and reshard.cc
// drives the passes and commits the outputs.

#ifndef TFDIST_IO_RESHARD_INTERNAL_H_
#define TFDIST_IO_RESHARD_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "record_format.h"
#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/io/atomic_file.h"
#include "tfdist/io/byte_stream.h"
#include "tfdist/io/output_set.h"
#include "tfdist/io/reshard.h"

namespace tfdist::io {

inline constexpr uint64_t kFraming = kRecordHeaderSize + kRecordFooterSize;

// One input as planned: record i spans [offsets[i], offsets[i + 1]) of its
// uncompressed stream.
struct Input {
  std::string path;
  Compression compression = Compression::kNone;
  std::vector<uint64_t> offsets;
  uint64_t first = 0;                 // global number of its first record
  bool verified = false;              // both CRCs checked by the scan
  bool from_index = false;            // offsets read from FILE.idx
  std::string spill_path;             // an inflated copy, read in its place
  std::unique_ptr<AtomicFile> spill;  // the copy, when this process made it

  uint64_t records() const { return offsets.size() - 1; }
  bool spilled() const { return !spill_path.empty(); }
  const std::string& read_path() const { return spilled() ? spill_path : path; }
};

// One output file and the input records (output positions) it holds.
struct Output {
  std::string path;
  uint64_t begin = 0, end = 0;
  std::unique_ptr<AtomicFile> file;
  std::string staged;  // written by another member of the group: its staged file
  uint64_t framed_bytes = 0;
  uint64_t file_bytes = 0;
};

// Keeps the first error of parallel tasks (by a caller-chosen rank).
class FirstError {
 public:
  void Set(size_t rank, Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (s.ok()) return;
    // An interrupt stops every task; report it rather than a task it stopped.
    const bool cancel = s.code() == StatusCode::kCancelled;
    if (status_.ok() || (cancel && status_.code() != StatusCode::kCancelled) ||
        (!cancel && status_.code() != StatusCode::kCancelled && rank < rank_)) {
      status_ = std::move(s);
      rank_ = rank;
    }
    failed_.store(true);
  }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  Status status() const { return status_; }
  // The caller's rank of the task that failed (when one did).
  size_t rank() const { return rank_; }

 private:
  std::mutex mu_;
  Status status_;
  size_t rank_ = 0;
  std::atomic<bool> failed_{false};
};

// The uncompressed stream of `path`, compressed as `c` (not kAuto).
Result<std::unique_ptr<ByteSource>> OpenStream(const std::string& path, Compression c);

// The error a scan with both CRCs checked reports for `in`: the words of
// count and verify. `fallback` when that scan finds nothing wrong.
Status CanonicalError(const Input& in, Status fallback);

// The compression of input `path`: `declared`, or (kAuto) what its first
// bytes say. Error: InvalidArgument for standard input, or an input that
// is not a regular file (its first record's DataLoss when it is damaged
// there); NotFound.
Result<Compression> InputCompression(const std::string& path, Compression declared);

// Pass 1: where every record of inputs[i] is, for each i of `which`, in
// parallel. REQUIRES: their compression known (InputCompression).
// `shuffle`: the copy will read records in any order, so compressed inputs
// are inflated into scratch files of `spill_to`; `sequential`: the copy
// will read each input once, in order (then every input is checked now).
// On error, `*failed` is the index (into `inputs`) of the input it is
// about. Error: NotFound or DataLoss for an input (in count's words);
// Cancelled.
Status ScanInputs(std::vector<Input>& inputs, std::span<const size_t> which,
                  const RewriteOptions& o, bool shuffle, bool sequential, OutputSet* spill_to,
                  size_t* failed);

// Pass 2: copies the records `plan` gives each output into its file
// (out.file, staged by `set`, finished, not committed): `outputs` may be
// any of the plan's, in order. Uncompressed or spilled inputs, or a
// shuffle, are read by random access with the outputs written in parallel;
// otherwise the inputs are read once, in order.
// On error, `*failed` is the index (into `outputs`) of the output it is
// about. Error: as ScanInputs for the inputs; a failed write (Internal)
// says "writing PATH: ..." and that nothing was written.
Status WriteOutputs(std::vector<Input>& inputs, const ReshardPlan& plan,
                    std::vector<Output>& outputs, const RewriteOptions& o, OutputSet& set,
                    size_t* failed);

}  // namespace tfdist::io

#endif  // TFDIST_IO_RESHARD_INTERNAL_H_
