// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// reshard's pass 2: the framed bytes of every record copied into its
// output, checked as they go where pass 1 did not check them.

#include <fcntl.h>
#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "record_scan.h"
#include "reshard_internal.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/io/storage.h"

namespace tfdist::io {
namespace {

constexpr uint64_t kPieceSize = uint64_t{1} << 20;

// Counts what reaches the file (below compression).
class CountingSink final : public ByteSink {
 public:
  CountingSink(std::unique_ptr<ByteSink> inner, uint64_t* count)
      : inner_(std::move(inner)), count_(count) {}
  Status Write(std::string_view data) override {
    TFDIST_RETURN_IF_ERROR(inner_->Write(data));
    *count_ += data.size();
    return Status::OK();
  }
  Status Finish() override { return inner_->Finish(); }

 private:
  std::unique_ptr<ByteSink> inner_;
  uint64_t* count_;
};

// A failed write names its output. A write fails only before the commit,
// and nothing is left of the outputs then: a failed write (a full disk)
// says so here, where it is known to be one.
Status WriteError(const Output& out, Status s) {
  if (s.code() == StatusCode::kCancelled) return s;
  return Status(s.code(), fmt::format("writing {}: {}{}", out.path, s.message(),
                                      s.code() == StatusCode::kInternal ||
                                              s.code() == StatusCode::kResourceExhausted
                                          ? "; no output was written and no temporary file is left"
                                          : ""));
}

Result<std::unique_ptr<ByteSink>> OpenOutput(Output& out, const RewriteOptions& o, OutputSet& set) {
  TFDIST_ASSIGN_OR_RETURN(out.file, set.Create(out.path));
  std::unique_ptr<ByteSink> sink = out.file->TakeSink(o.sync);
  if (o.wrap_sink) sink = o.wrap_sink(std::move(sink));
  sink = std::make_unique<CountingSink>(std::move(sink), &out.file_bytes);
  if (o.output_compression != Compression::kNone) {
    sink = NewDeflatingSink(std::move(sink), o.output_compression, o.compression_level);
  }
  return sink;
}

Status FinishOutput(Output& out, std::unique_ptr<ByteSink> sink) {
  Status s = sink->Finish();
  sink.reset();
  if (!s.ok()) return WriteError(out, s);
  s = out.file->CloseFile();
  return s.ok() ? s : WriteError(out, s);
}

// Everything the copy needs: inputs with global record numbers, outputs.
struct Job {
  std::vector<Input>* inputs;
  const ReshardPlan* plan;
  std::vector<Output>* outputs;
  const RewriteOptions* options;
  OutputSet* set;

  size_t FileOf(uint64_t g, size_t hint) const {
    const std::vector<Input>& in = *inputs;
    if (hint < in.size() && g >= in[hint].first && g < in[hint].first + in[hint].records()) {
      return hint;
    }
    size_t lo = 0, hi = in.size();
    while (hi - lo > 1) {
      const size_t mid = (lo + hi) / 2;
      if (in[mid].first <= g) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    while (lo + 1 < in.size() && in[lo].records() == 0) ++lo;  // empty files own no record
    return lo;
  }
};

// The inputs one output task has open: a few at a time, so that thousands of
// inputs never need thousands of file descriptors.
class InputFiles {
 public:
  InputFiles() = default;
  InputFiles(const InputFiles&) = delete;
  InputFiles& operator=(const InputFiles&) = delete;
  ~InputFiles() {
    for (const Open& o : open_) {
      if (o.fd >= 0) close(o.fd);
    }
  }

  // Input `f` open: its descriptor, or for an object (a URL) the object
  // pinned to the version the scan read; opened now if it is not open.
  struct Open {
    size_t file;
    int fd;
    uint64_t used;
    std::shared_ptr<RandomAccessObject> object;
  };
  Result<const Open*> Get(const Input& in, size_t f) {
    ++clock_;
    for (Open& o : open_) {
      if (o.file == f) {
        o.used = clock_;
        return &o;
      }
    }
    if (open_.size() >= kMaxOpen) {
      auto lru = std::min_element(open_.begin(), open_.end(),
                                  [](const Open& a, const Open& b) { return a.used < b.used; });
      if (lru->fd >= 0) close(lru->fd);
      open_.erase(lru);
    }
    if (!in.spill && IsRemote(in.path)) {
      TFDIST_ASSIGN_OR_RETURN(const Location loc, ParseLocation(in.path));
      TFDIST_ASSIGN_OR_RETURN(const ObjectInfo info, StatObject(in.path));
      TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessObject> object,
                              StorageFor(loc.scheme).Open(info));
      open_.push_back({f, -1, clock_, std::move(object)});
      return &open_.back();
    }
    const int fd = open(in.read_path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors is this process's trouble, not the data's.
      return ErrnoError(errno, StatusCode::kNotFound, fmt::format("{}: cannot open", in.path));
    }
    open_.push_back({f, fd, clock_, nullptr});
    return &open_.back();
  }

 private:
  static constexpr size_t kMaxOpen = 16;
  std::vector<Open> open_;
  uint64_t clock_ = 0;
};

// With offsets from the index, `data` (bytes [begin, end) of `in`) must hold
// records framed as the index says: a header at each offset, whose length
// field gives the index's size. CRCs alone would pass records grouped
// differently (two records where the index has one).
Status CheckIndexFraming(const Input& in, const char* data, uint64_t begin, uint64_t end) {
  auto it = std::lower_bound(in.offsets.begin(), in.offsets.end(), begin);
  for (; it + 1 < in.offsets.end() && *it < end; ++it) {
    const char* header = data + (*it - begin);
    const uint64_t length = DecodeFixed64(header);
    const uint64_t indexed = it[1] - *it - kFraming;
    std::string what;
    if (!HeaderIsValid(std::string_view(header, kRecordHeaderSize))) {
      what = "no record header here, where the index puts one";
    } else if (length != indexed) {
      what = fmt::format("the length field says {} bytes, the index {}", length, indexed);
    } else {
      continue;
    }
    // Damage the scan of count and verify finds is reported in their words.
    return CanonicalError(
        in, Status::DataLoss(fmt::format("{}: corrupted record at {}: {}; the index does not "
                                         "describe the file",
                                         in.path, *it, what))
                .WithAdvice(Remedy::kRewriteFileIndex, in.path));
  }
  return Status::OK();
}

// Reads bytes [begin, end) of input `f` (whole records), checks them when
// the scan did not, and writes them to `sink`.
Status CopyPiece(const Input& in, size_t f, InputFiles& files, uint64_t begin, uint64_t end,
                 std::string& buffer, ByteSink& sink, const Output& out) {
  if (Interrupted()) return Status::Interrupted();
  TFDIST_ASSIGN_OR_RETURN(const InputFiles::Open* open, files.Get(in, f));
  const int fd = open->fd;
  const size_t n = static_cast<size_t>(end - begin);
  if (buffer.size() < n) buffer.resize(n);
  size_t done = 0;
  if (open->object) {
    // The version the scan read, or an error: never bytes of another one.
    Status read = open->object->ReadAt(begin, std::span<char>(buffer.data(), n));
    if (read.code() == StatusCode::kOutOfRange) {
      return Status::DataLoss(fmt::format(
          "{}: truncated record at {}: the object ends before byte {}", in.path, begin, end));
    }
    TFDIST_RETURN_IF_ERROR(read);
    done = n;
  }
  while (done < n) {
    const ssize_t r = pread(fd, buffer.data() + done, n - done, static_cast<off_t>(begin + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      return ErrnoError(errno, StatusCode::kNotFound,
                        fmt::format("{}: read failed at byte {}", in.path, begin + done));
    }
    if (r == 0) {
      return Status::DataLoss(
          fmt::format("{}: truncated record at {}: the file shrank while it "
                      "was being resharded",
                      in.path, begin + done));
    }
    done += static_cast<size_t>(r);
  }
  if (in.from_index) TFDIST_RETURN_IF_ERROR(CheckIndexFraming(in, buffer.data(), begin, end));
  if (!in.verified) {
    const ScanResult scan = ScanRecords(buffer.data(), n, n, /*verify=*/true);
    if (scan.consumed != n) {
      return CanonicalError(
          in, Status::DataLoss(fmt::format("{}: corrupted record at {}: CRC mismatch", in.path,
                                           begin + scan.consumed)));
    }
  }
  Status s = sink.Write(std::string_view(buffer.data(), n));
  return s.ok() ? s : WriteError(out, s);
}

// Writes output `k` by random access to the inputs (uncompressed or spilled).
Status WriteOutputRandomAccess(const Job& job, size_t k, FirstError& errors) {
  Output& out = (*job.outputs)[k];
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<ByteSink> sink, OpenOutput(out, *job.options, *job.set));
  std::string buffer;
  std::vector<Input>& inputs = *job.inputs;
  InputFiles files;
  size_t f = 0;
  if (job.plan->order.empty()) {
    // Contiguous records: copy byte ranges, cut at record boundaries.
    uint64_t g = out.begin;
    while (g < out.end) {
      if (errors.failed()) return Status::OK();
      f = job.FileOf(g, f);
      Input& in = inputs[f];
      const uint64_t i = g - in.first;
      const uint64_t last = std::min(out.end - in.first, in.records());
      // The most records from i on that fit in a piece (at least one).
      const uint64_t limit = in.offsets[i] + kPieceSize;
      auto it = std::upper_bound(in.offsets.begin() + static_cast<ptrdiff_t>(i) + 1,
                                 in.offsets.begin() + static_cast<ptrdiff_t>(last) + 1, limit);
      uint64_t j = static_cast<uint64_t>(it - in.offsets.begin()) - 1;
      if (j <= i) j = i + 1;
      TFDIST_RETURN_IF_ERROR(
          CopyPiece(in, f, files, in.offsets[i], in.offsets[j], buffer, *sink, out));
      out.framed_bytes += in.offsets[j] - in.offsets[i];
      g += j - i;
    }
  } else {
    // Permuted records: one read per run of records adjacent in a file.
    size_t piece_file = 0;
    uint64_t piece_begin = 0, piece_end = 0;
    auto flush = [&]() -> Status {
      if (piece_end == piece_begin) return Status::OK();
      out.framed_bytes += piece_end - piece_begin;
      Status s = CopyPiece(inputs[piece_file], piece_file, files, piece_begin, piece_end, buffer,
                           *sink, out);
      piece_begin = piece_end = 0;
      return s;
    };
    for (uint64_t p = out.begin; p < out.end; ++p) {
      if (errors.failed()) return Status::OK();
      const uint64_t g = job.plan->record_at(p);
      f = job.FileOf(g, f);
      const Input& in = inputs[f];
      const uint64_t i = g - in.first;
      const uint64_t b = in.offsets[i], e = in.offsets[i + 1];
      if (!(f == piece_file && b == piece_end && e - piece_begin <= kPieceSize &&
            piece_end > piece_begin)) {
        TFDIST_RETURN_IF_ERROR(flush());
        piece_file = f;
        piece_begin = b;
      }
      piece_end = e;
    }
    TFDIST_RETURN_IF_ERROR(flush());
  }
  return FinishOutput(out, std::move(sink));
}

// A piece of the sequential copy: up to kPieceSize bytes of whole records
// of one input, all for one output.
struct Piece {
  size_t output;
  std::string data;
  bool last;  // the output's last piece
};

// The reading side of the sequential copy: each input read once, in order,
// cut into pieces.
class PieceReader {
 public:
  explicit PieceReader(const Job& job) : job_(job) {}

  // The next piece; nullptr after the last, or on an error (status()).
  std::unique_ptr<Piece> Next() {
    const std::vector<Output>& outputs = *job_.outputs;
    if (k_ >= outputs.size()) return nullptr;
    if (Interrupted()) {
      status_ = Status::Interrupted();
      return nullptr;
    }
    const Output& out = outputs[k_];
    auto piece = std::make_unique<Piece>();
    piece->output = k_;
    // The outputs may be some of the plan's: each starts at its own record.
    bool seek = stream_file_ == SIZE_MAX;
    if (!started_) {
      g_ = out.begin;
      started_ = true;
      seek = true;
    }
    if (g_ >= out.end) {  // an empty output
      piece->last = true;
      ++k_;
      started_ = false;
      return piece;
    }
    f_ = job_.FileOf(g_, f_);
    const Input& in = (*job_.inputs)[f_];
    // Within an output the stream goes on where the last piece ended (in
    // a record, maybe); a new output or input starts at its record.
    if (seek || stream_file_ != f_) {
      if (Status s = SeekTo(in, in.offsets[g_ - in.first]); !s.ok()) {
        status_ = s;
        return nullptr;
      }
    }
    const uint64_t last = std::min(out.end - in.first, in.records());
    // Up to kPieceSize bytes of this input's records in this output.
    const size_t n = static_cast<size_t>(std::min(in.offsets[last] - pos_, kPieceSize));
    piece->data.resize(n);
    Result<size_t> got = stream_->Read(piece->data);
    if (!got.ok() || *got < n) {
      status_ = CanonicalError(
          in, got.ok() ? Status::DataLoss(fmt::format("{}: truncated record at {}: the file "
                                                      "shrank while it was being resharded",
                                                      in.path, pos_ + *got))
                       : got.status());
      return nullptr;
    }
    pos_ += n;
    // Records done: those wholly before pos_.
    auto it = std::upper_bound(in.offsets.begin(), in.offsets.begin() + last + 1, pos_);
    g_ = in.first + static_cast<uint64_t>(it - in.offsets.begin()) - 1;
    piece->last = g_ >= out.end;
    if (piece->last) {
      ++k_;
      started_ = false;
    }
    return piece;
  }

  const Status& status() const { return status_; }
  // The output being read (the one an error is about).
  size_t output() const { return k_; }

 private:
  // Puts the stream of input f_ at byte `offset` of its records: where it
  // is when the outputs follow each other; else opened again, or read up
  // to there.
  Status SeekTo(const Input& in, uint64_t offset) {
    if (stream_file_ != f_ || pos_ > offset) {
      TFDIST_ASSIGN_OR_RETURN(stream_, OpenStream(in.path, in.compression));
      stream_file_ = f_;
      pos_ = 0;
    }
    std::string skipped;
    while (pos_ < offset) {
      if (Interrupted()) return Status::Interrupted();
      skipped.resize(static_cast<size_t>(std::min(offset - pos_, kPieceSize)));
      TFDIST_ASSIGN_OR_RETURN(const size_t n, stream_->Read(skipped));
      if (n == 0) {
        return CanonicalError(
            in, Status::DataLoss(fmt::format("{}: truncated record at {}: the file shrank while "
                                             "it was being resharded",
                                             in.path, pos_)));
      }
      pos_ += n;
    }
    return Status::OK();
  }

  const Job& job_;
  size_t k_ = 0, f_ = 0;  // the output, and the input
  bool started_ = false;  // output k_ has begun
  uint64_t g_ = 0;        // the next record
  uint64_t pos_ = 0;      // in the input's stream
  std::unique_ptr<ByteSource> stream_;
  size_t stream_file_ = SIZE_MAX;
  Status status_;
};

// The writing side of the sequential copy: each output opened at its first
// piece and finished at its last.
class PieceWriter {
 public:
  explicit PieceWriter(const Job& job) : job_(job) {}
  ~PieceWriter() { sink_.reset(); }  // before the outputs' files go

  void Write(const Piece& piece) {
    if (failed()) return;
    Output& out = (*job_.outputs)[piece.output];
    Status s;
    if (!sink_) {
      Result<std::unique_ptr<ByteSink>> opened = OpenOutput(out, *job_.options, *job_.set);
      if (opened.ok()) {
        sink_ = std::move(*opened);
      } else {
        s = opened.status();
      }
    }
    if (s.ok() && !piece.data.empty()) {
      s = sink_->Write(piece.data);
      if (!s.ok()) s = WriteError(out, s);
      out.framed_bytes += piece.data.size();
    }
    if (s.ok() && piece.last) s = FinishOutput(out, std::move(sink_));
    if (!s.ok()) {
      status_ = s;
      failed_output_ = piece.output;
      failed_.store(true);
    }
  }

  bool failed() const { return failed_.load(); }
  const Status& status() const { return status_; }
  size_t failed_output() const { return failed_output_; }

 private:
  const Job& job_;
  size_t failed_output_ = 0;
  std::unique_ptr<ByteSink> sink_;  // of the output being written
  Status status_;
  std::atomic<bool> failed_{false};
};

// Writes every output with a pipeline over the inputs read once, in order:
// inflating (or reading) the next piece overlaps deflating (or writing) the
// one before. REQUIRES: the identity order.
Status WriteOutputsSequentially(const Job& job, size_t* failed) {
  PieceReader reader(job);
  PieceWriter writer(job);
  auto produce = [&](tbb::flow_control& fc) -> Piece* {
    std::unique_ptr<Piece> piece = writer.failed() ? nullptr : reader.Next();
    if (!piece) fc.stop();
    return piece.release();
  };
  auto consume = [&](Piece* raw) { writer.Write(*std::unique_ptr<Piece>(raw)); };
  tbb::parallel_pipeline(
      4, tbb::make_filter<void, Piece*>(tbb::filter_mode::serial_in_order, produce) &
             tbb::make_filter<Piece*, void>(tbb::filter_mode::serial_in_order, consume));
  if (reader.status().code() == StatusCode::kCancelled) return reader.status();
  if (!writer.status().ok()) {
    *failed = writer.failed_output();
    return writer.status();
  }
  *failed = reader.output();
  return reader.status();
}

}  // namespace

Status WriteOutputs(std::vector<Input>& inputs, const ReshardPlan& plan,
                    std::vector<Output>& outputs, const RewriteOptions& o, OutputSet& set,
                    size_t* failed) {
  const bool random_access =
      !plan.order.empty() || std::all_of(inputs.begin(), inputs.end(), [](const Input& in) {
        return in.compression == Compression::kNone || in.spilled();
      });
  Job job{&inputs, &plan, &outputs, &o, &set};
  if (random_access) {
    // Outputs are written concurrently, each by one task.
    FirstError errors;
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, outputs.size(), 1),
        [&](const tbb::blocked_range<size_t>& r) {
          for (size_t k = r.begin(); k != r.end(); ++k) {
            if (errors.failed()) return;
            errors.Set(k, WriteOutputRandomAccess(job, k, errors));
          }
        },
        tbb::simple_partitioner());
    *failed = errors.rank();
    return errors.status();
  }
  return WriteOutputsSequentially(job, failed);
}

}  // namespace tfdist::io
