// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// reshard and convert: plan from record offsets, copy verified framed bytes, commit all at once.

#include "tfdist/io/reshard.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "file_index_internal.h"
#include "record_format.h"
#include "record_scan.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/base/random.h"
#include "tfdist/io/atomic_file.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::io {
namespace {

__extension__ typedef unsigned __int128 Wide;

constexpr uint64_t kFraming = kRecordHeaderSize + kRecordFooterSize;
constexpr uint64_t kPieceSize = uint64_t{1} << 20;

std::string_view Suffix(Compression c) {
  return c == Compression::kGzip ? ".gz" : c == Compression::kZlib ? ".zlib" : "";
}

// One input as planned: record i spans [offsets[i], offsets[i + 1]) of its
// uncompressed stream.
struct Input {
  std::string path;
  Compression compression = Compression::kNone;
  std::vector<uint64_t> offsets;
  uint64_t first = 0;            // global number of its first record
  bool verified = false;         // both CRCs checked by the scan
  bool from_index = false;       // offsets read from FILE.idx
  std::unique_ptr<AtomicFile> spill;  // an inflated copy, read in its place

  uint64_t records() const { return offsets.size() - 1; }
  const std::string& read_path() const { return spill ? spill->temp_path() : path; }
};

// One output file and the input records (output positions) it holds.
struct Output {
  std::string path;
  uint64_t begin = 0, end = 0;
  std::unique_ptr<AtomicFile> file;
  uint64_t framed_bytes = 0;
  uint64_t file_bytes = 0;
};

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

// Passes the bytes read through to a sink as well (the spill of an input).
class TeeSource final : public ByteSource {
 public:
  TeeSource(std::unique_ptr<ByteSource> inner, ByteSink* sink)
      : inner_(std::move(inner)), sink_(sink) {}
  Result<size_t> Read(std::span<char> dst) override {
    TFDIST_ASSIGN_OR_RETURN(size_t n, inner_->Read(dst));
    TFDIST_RETURN_IF_ERROR(sink_->Write(std::string_view(dst.data(), n)));
    return n;
  }
  const std::string& name() const override { return inner_->name(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  ByteSink* sink_;
};

Result<std::unique_ptr<ByteSource>> OpenStream(const std::string& path, Compression c) {
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenFileSource(path));
  if (c != Compression::kNone) source = NewInflatingSource(std::move(source), c);
  return source;
}

Result<Compression> DetectFileCompression(const std::string& path, Compression c) {
  if (c != Compression::kAuto) return c;
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenFileSource(path));
  std::string prefix(64 * 1024, '\0');
  TFDIST_ASSIGN_OR_RETURN(size_t n, source->Read(prefix));
  prefix.resize(n);
  return DetectCompression(prefix);
}

// The error a scan with both CRCs checked reports for `path`: the words of
// count and verify. `fallback` when that scan finds nothing wrong.
Status CanonicalError(const Input& in, Status fallback) {
  if (fallback.code() == StatusCode::kCancelled) return fallback;
  RecordReaderOptions options;
  options.compression = in.compression;
  const RecordCount count = CountRecords(in.path, options);
  return count.status.ok() ? fallback : count.status;
}

// Offsets of the records of an uncompressed file from its index, when one
// fits the file. Never reads the records.
bool OffsetsFromIndex(Input& in) {
  std::string stale;
  std::optional<std::vector<uint64_t>> offsets = ReadRecordBoundaries(in.path, &stale);
  if (!offsets) return false;
  in.offsets = std::move(*offsets);
  in.from_index = true;
  return true;
}

// Pass 1 over one input: the offset of every record. `verify` checks both
// CRCs now (else the copy checks them); `spill_prefix` non-empty inflates
// the input into a temporary file beside the outputs.
Status ScanInput(Input& in, bool verify, bool use_index, const std::string& spill_prefix) {
  if (use_index && !verify && in.compression == Compression::kNone && OffsetsFromIndex(in)) {
    return Status::OK();
  }
  std::unique_ptr<ByteSink> spill_sink;
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenStream(in.path, in.compression));
  if (!spill_prefix.empty()) {
    TFDIST_ASSIGN_OR_RETURN(in.spill, AtomicFile::Create(spill_prefix + "-spill", true));
    spill_sink = in.spill->TakeSink(/*sync=*/false);
    source = std::make_unique<TeeSource>(std::move(source), spill_sink.get());
  }
  RecordReaderOptions options;
  options.verify_checksums = verify;
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader,
                          RecordReader::FromSource(std::move(source), options));
  in.offsets.assign(1, 0);
  while (reader->SkipRecord()) in.offsets.push_back(reader->position());
  Status status = reader->status();
  reader.reset();
  if (!status.ok()) return CanonicalError(in, status);
  in.verified = verify;
  if (spill_sink) {
    TFDIST_RETURN_IF_ERROR(spill_sink->Finish());
    spill_sink.reset();
    TFDIST_RETURN_IF_ERROR(in.spill->CloseFile());
  }
  return Status::OK();
}

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

 private:
  std::mutex mu_;
  Status status_;
  size_t rank_ = 0;
  std::atomic<bool> failed_{false};
};

Status WriteError(const Output& out, Status s) {
  if (s.code() == StatusCode::kCancelled) return s;
  return Status(s.code(), fmt::format("writing {}: {}", out.path, s.message()));
}

Result<std::unique_ptr<ByteSink>> OpenOutput(Output& out, const RewriteOptions& o) {
  TFDIST_ASSIGN_OR_RETURN(out.file, AtomicFile::Create(out.path, o.overwrite));
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
    for (const Open& o : open_) close(o.fd);
  }

  // A descriptor of input `f`, opened now if it is not open.
  Result<int> Get(const Input& in, size_t f) {
    ++clock_;
    for (Open& o : open_) {
      if (o.file == f) {
        o.used = clock_;
        return o.fd;
      }
    }
    if (open_.size() >= kMaxOpen) {
      auto lru = std::min_element(open_.begin(), open_.end(),
                                  [](const Open& a, const Open& b) { return a.used < b.used; });
      close(lru->fd);
      open_.erase(lru);
    }
    const int fd = open(in.read_path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const int e = errno;
      const std::string message = fmt::format("{}: cannot open: {}", in.path, std::strerror(e));
      // Out of descriptors is this process's trouble, not the data's.
      return e == EMFILE || e == ENFILE ? Status::Internal(message) : Status::NotFound(message);
    }
    open_.push_back({f, fd, clock_});
    return fd;
  }

 private:
  static constexpr size_t kMaxOpen = 16;
  struct Open {
    size_t file;
    int fd;
    uint64_t used;
  };
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
        in, Status::DataLoss(fmt::format("{}: corrupted record at {}: {} (the index does not "
                                         "describe the file; write it again with tfdist index "
                                         "--force)",
                                         in.path, *it, what)));
  }
  return Status::OK();
}

// Reads bytes [begin, end) of input `f` (whole records), checks them when
// the scan did not, and writes them to `sink`.
Status CopyPiece(const Input& in, size_t f, InputFiles& files, uint64_t begin, uint64_t end,
                 std::string& buffer, ByteSink& sink, const Output& out) {
  if (Interrupted()) return Status::Cancelled("interrupted");
  TFDIST_ASSIGN_OR_RETURN(const int fd, files.Get(in, f));
  const size_t n = static_cast<size_t>(end - begin);
  if (buffer.size() < n) buffer.resize(n);
  size_t done = 0;
  while (done < n) {
    const ssize_t r = pread(fd, buffer.data() + done, n - done, static_cast<off_t>(begin + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      return Status::NotFound(
          fmt::format("{}: read failed at byte {}: {}", in.path, begin + done, std::strerror(errno)));
    }
    if (r == 0) {
      return Status::DataLoss(fmt::format("{}: truncated record at {}: the file shrank while it "
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
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<ByteSink> sink, OpenOutput(out, *job.options));
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

// Writes every output with a pipeline over the inputs read once, in order:
// inflating (or reading) the next piece overlaps deflating (or writing) the
// one before. REQUIRES: the identity order.
Status WriteOutputsSequentially(const Job& job) {
  struct Piece {
    size_t output;
    std::string data;
    bool last;
  };
  std::vector<Input>& inputs = *job.inputs;
  std::vector<Output>& outputs = *job.outputs;
  Status read_status, write_status;
  std::atomic<bool> write_failed{false};
  // Reader state: the output, the next record, the input and its stream.
  size_t k = 0, f = 0;
  uint64_t g = 0, pos = 0;
  std::unique_ptr<ByteSource> stream;
  size_t stream_file = SIZE_MAX;
  // Writer state: the output being written.
  std::unique_ptr<ByteSink> sink;

  auto produce = [&](tbb::flow_control& fc) -> Piece* {
    if (write_failed.load() || k >= outputs.size()) {
      fc.stop();
      return nullptr;
    }
    if (Interrupted()) {
      read_status = Status::Cancelled("interrupted");
      fc.stop();
      return nullptr;
    }
    const Output& out = outputs[k];
    auto piece = std::make_unique<Piece>();
    piece->output = k;
    if (g >= out.end) {  // an empty output
      piece->last = true;
      ++k;
      return piece.release();
    }
    f = job.FileOf(g, f);
    Input& in = inputs[f];
    if (stream_file != f) {
      Result<std::unique_ptr<ByteSource>> s = OpenStream(in.path, in.compression);
      if (!s.ok()) {
        read_status = s.status();
        fc.stop();
        return nullptr;
      }
      stream = std::move(*s);
      stream_file = f;
      pos = 0;
    }
    const uint64_t last = std::min(out.end - in.first, in.records());
    // A piece: up to kPieceSize bytes of this input's records in this output.
    const uint64_t stop = in.offsets[last];
    const size_t n = static_cast<size_t>(std::min(stop - pos, kPieceSize));
    piece->data.resize(n);
    Result<size_t> got = stream->Read(piece->data);
    if (!got.ok() || *got < n) {
      read_status = got.ok() ? CanonicalError(in, Status::DataLoss(fmt::format(
                                                      "{}: truncated record at {}: the file "
                                                      "shrank while it was being resharded",
                                                      in.path, pos + *got)))
                             : CanonicalError(in, got.status());
      fc.stop();
      return nullptr;
    }
    pos += n;
    // Records done: those wholly before pos.
    auto it = std::upper_bound(in.offsets.begin(), in.offsets.begin() + last + 1, pos);
    g = in.first + static_cast<uint64_t>(it - in.offsets.begin()) - 1;
    piece->last = g >= out.end;
    if (piece->last) ++k;
    return piece.release();
  };

  auto consume = [&](Piece* raw) {
    std::unique_ptr<Piece> piece(raw);
    if (write_failed.load()) return;
    Output& out = outputs[piece->output];
    Status s;
    if (!sink) {
      Result<std::unique_ptr<ByteSink>> opened = OpenOutput(out, *job.options);
      if (opened.ok()) {
        sink = std::move(*opened);
      } else {
        s = opened.status();
      }
    }
    if (s.ok() && !piece->data.empty()) {
      s = sink->Write(piece->data);
      if (!s.ok()) s = WriteError(out, s);
      out.framed_bytes += piece->data.size();
    }
    if (s.ok() && piece->last) s = FinishOutput(out, std::move(sink));
    if (!s.ok()) {
      write_status = s;
      write_failed.store(true);
    }
  };

  tbb::parallel_pipeline(
      4, tbb::make_filter<void, Piece*>(tbb::filter_mode::serial_in_order, produce) &
             tbb::make_filter<Piece*, void>(tbb::filter_mode::serial_in_order, consume));
  sink.reset();
  if (read_status.code() == StatusCode::kCancelled) return read_status;
  if (!write_status.ok()) return write_status;
  return read_status;
}

// Pass 1 over all inputs. `sequential`: the copy will read each input once
// in order; `shuffle`: it will read records in any order.
Result<std::vector<Input>> ScanInputs(std::span<const std::string> paths, const RewriteOptions& o,
                                      bool shuffle, const std::string& spill_prefix) {
  if (o.output_compression == Compression::kAuto) {
    return Status::InvalidArgument("the output needs --compression none, gzip or zlib");
  }
  if (paths.empty()) return Status::InvalidArgument("no input files");
  std::vector<Input> inputs(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    if (paths[i] == "-") {
      return Status::InvalidArgument(
          "standard input ('-') cannot be resharded or converted: the inputs are read twice");
    }
    inputs[i].path = paths[i];
    TFDIST_ASSIGN_OR_RETURN(inputs[i].compression,
                            DetectFileCompression(paths[i], o.input_compression));
  }
  const bool any_compressed = std::any_of(inputs.begin(), inputs.end(), [](const Input& in) {
    return in.compression != Compression::kNone;
  });
  const bool sequential = any_compressed && !shuffle;
  FirstError errors;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, inputs.size(), 1),
                    [&](const tbb::blocked_range<size_t>& r) {
                      for (size_t i = r.begin(); i != r.end(); ++i) {
                        if (errors.failed()) return;
                        Input& in = inputs[i];
                        const bool spill = shuffle && in.compression != Compression::kNone;
                        // A file read by random access is checked as it is copied.
                        const bool verify = sequential || spill;
                        errors.Set(i, ScanInput(in, verify, o.use_index,
                                                spill ? spill_prefix : std::string()));
                      }
                    },
                    tbb::simple_partitioner());
  TFDIST_RETURN_IF_ERROR(errors.status());
  uint64_t first = 0;
  for (Input& in : inputs) {
    in.first = first;
    first += in.records();
  }
  return inputs;
}

// Pass 2 and the commit.
Result<RewriteSummary> WriteAndCommit(std::vector<Input>& inputs, const ReshardPlan& plan,
                                      std::vector<Output>& outputs, const RewriteOptions& o) {
  const bool random_access =
      !plan.order.empty() || std::all_of(inputs.begin(), inputs.end(), [](const Input& in) {
        return in.compression == Compression::kNone || in.spill;
      });
  Job job{&inputs, &plan, &outputs, &o};
  if (random_access) {
    // Outputs are written concurrently, each by one task.
    FirstError errors;
    tbb::parallel_for(tbb::blocked_range<size_t>(0, outputs.size(), 1),
                      [&](const tbb::blocked_range<size_t>& r) {
                        for (size_t k = r.begin(); k != r.end(); ++k) {
                          if (errors.failed()) return;
                          errors.Set(k, WriteOutputRandomAccess(job, k, errors));
                        }
                      },
                      tbb::simple_partitioner());
    TFDIST_RETURN_IF_ERROR(errors.status());
  } else {
    TFDIST_RETURN_IF_ERROR(WriteOutputsSequentially(job));
  }
  for (Input& in : inputs) in.spill.reset();  // not needed any more
  AtomicFileSet files;
  for (Output& out : outputs) files.Add(std::move(out.file));
  TFDIST_RETURN_IF_ERROR(files.Commit(o.sync));

  RewriteSummary summary;
  for (const Output& out : outputs) {
    OutputSummary s;
    s.path = out.path;
    s.count.records = out.end - out.begin;
    s.count.payload_bytes = out.framed_bytes - kFraming * s.count.records;
    s.file_bytes = out.file_bytes;
    summary.total.records += s.count.records;
    summary.total.payload_bytes += s.count.payload_bytes;
    summary.outputs.push_back(std::move(s));
  }
  summary.planned_from_index =
      std::any_of(inputs.begin(), inputs.end(), [](const Input& in) { return in.from_index; });
  return summary;
}

// Says what was interrupted and that nothing changed; other errors pass.
Status Explain(Status s) {
  if (s.code() == StatusCode::kCancelled) {
    return Status::Cancelled("interrupted; no output was written and no temporary file is left");
  }
  if (s.code() == StatusCode::kInternal && s.message().rfind("writing ", 0) == 0) {
    return Status(s.code(), s.message() + "; no output was written and no temporary file is left");
  }
  return s;
}

}  // namespace

Result<ReshardBalance> ParseReshardBalance(std::string_view text) {
  if (text == "records") return ReshardBalance::kRecords;
  if (text == "bytes") return ReshardBalance::kBytes;
  return Status::InvalidArgument(
      fmt::format("unknown balance '{}'; expected records or bytes", text));
}

std::vector<uint64_t> SeededPermutation(uint64_t n, uint64_t seed) {
  std::vector<uint64_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = i;
  Rng rng(seed);
  for (uint64_t i = n; i > 1; --i) std::swap(v[i - 1], v[rng.Below(i)]);
  return v;
}

Result<ReshardPlan> PlanReshard(std::span<const uint64_t> record_sizes,
                                const ReshardPlanOptions& options) {
  const uint64_t records = record_sizes.size();
  if ((options.num_shards == 0) == (options.records_per_shard == 0)) {
    return Status::InvalidArgument(
        "give exactly one of --num-shards and --records-per-shard (at least 1)");
  }
  if (records == 0) {
    return Status::InvalidArgument("the inputs hold no records: there is nothing to reshard");
  }
  const uint64_t n =
      options.num_shards != 0
          ? options.num_shards
          : records / options.records_per_shard + (records % options.records_per_shard != 0);
  if (n > records) {
    return Status::InvalidArgument(fmt::format(
        "cannot write {} shards from {} record{}: every shard must hold at least one record, as "
        "TensorFlow's FILE sharding expects (use --num-shards {} or fewer)",
        n, records, records == 1 ? "" : "s", records));
  }
  ReshardPlan plan;
  if (options.seed) plan.order = SeededPermutation(records, *options.seed);
  plan.bounds.assign(n + 1, records);
  plan.bounds[0] = 0;
  if (options.balance == ReshardBalance::kRecords) {
    const uint64_t q = records / n, extra = records % n;
    for (uint64_t s = 0; s <= n; ++s) plan.bounds[s] = s * q + std::min(s, extra);
    return plan;
  }
  // Shard s starts at the first record at which the bytes before it reach s
  // means: a shard ends at most one record past its share.
  Wide total = 0;
  for (uint64_t size : record_sizes) total += size;
  Wide prefix = 0;
  uint64_t s = 1;
  for (uint64_t p = 0; p < records && s < n; ++p) {
    while (s < n && prefix * n >= Wide{s} * total) plan.bounds[s++] = p;
    prefix += record_sizes[plan.record_at(p)];
  }
  // Every shard non-empty: a huge record may otherwise leave a shard nothing.
  for (s = 1; s < n; ++s) {
    plan.bounds[s] = std::max(plan.bounds[s], plan.bounds[s - 1] + 1);
    plan.bounds[s] = std::min(plan.bounds[s], records - (n - s));
  }
  return plan;
}

std::string ShardFileName(const std::string& prefix, uint64_t index, uint64_t count,
                          Compression compression) {
  return fmt::format("{}-{:05}-of-{:05}.tfrecord{}", prefix, index, count, Suffix(compression));
}

std::string ConvertedFileName(const std::string& path, Compression compression,
                              const std::string& output_dir) {
  const size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  for (std::string_view suffix : {".gz", ".zlib"}) {
    if (base.size() > suffix.size() && base.ends_with(suffix)) {
      base.resize(base.size() - suffix.size());
      break;
    }
  }
  base += Suffix(compression);
  if (!output_dir.empty()) {
    return output_dir.ends_with('/') ? output_dir + base : output_dir + "/" + base;
  }
  return slash == std::string::npos ? base : path.substr(0, slash + 1) + base;
}

Result<RewriteSummary> Reshard(std::span<const std::string> inputs, const ReshardOptions& options) {
  if (options.output_prefix.empty()) return Status::InvalidArgument("no --output prefix given");
  if ((options.num_shards == 0) == (options.records_per_shard == 0)) {
    return Status::InvalidArgument(
        "give exactly one of --num-shards and --records-per-shard (at least 1)");
  }
  auto names = [&](uint64_t n) {
    std::vector<std::string> v;
    for (uint64_t s = 0; s < n; ++s) {
      v.push_back(ShardFileName(options.output_prefix, s, n, options.output_compression));
    }
    return v;
  };
  // Fail before reading anything when the shard names are known already.
  if (options.num_shards != 0) {
    TFDIST_RETURN_IF_ERROR(
        CheckNewFiles(names(std::min<uint64_t>(options.num_shards, 1 << 20)), options.overwrite));
  }
  Result<std::vector<Input>> scanned =
      ScanInputs(inputs, options, options.seed.has_value(), options.output_prefix);
  if (!scanned.ok()) return Explain(scanned.status());
  std::vector<Input>& in = *scanned;

  ReshardPlan plan;
  {
    std::vector<uint64_t> sizes;
    sizes.reserve(in.empty() ? 0 : in.back().first + in.back().records());
    for (const Input& input : in) {
      for (uint64_t i = 0; i < input.records(); ++i) {
        sizes.push_back(input.offsets[i + 1] - input.offsets[i]);
      }
    }
    TFDIST_ASSIGN_OR_RETURN(plan, PlanReshard(sizes, options));
  }
  const std::vector<std::string> paths = names(plan.num_shards());
  TFDIST_RETURN_IF_ERROR(CheckNewFiles(paths, options.overwrite));
  std::vector<Output> outputs(paths.size());
  for (size_t s = 0; s < paths.size(); ++s) {
    outputs[s].path = paths[s];
    outputs[s].begin = plan.bounds[s];
    outputs[s].end = plan.bounds[s + 1];
  }
  Result<RewriteSummary> summary = WriteAndCommit(in, plan, outputs, options);
  if (!summary.ok()) return Explain(summary.status());
  return summary;
}

Result<RewriteSummary> Convert(std::span<const std::string> inputs, const ConvertOptions& options) {
  std::vector<std::string> paths;
  std::set<std::string> seen;
  for (const std::string& input : inputs) {
    std::string out = ConvertedFileName(input, options.output_compression, options.output_dir);
    namespace fs = std::filesystem;
    std::error_code ec;
    const bool same = fs::path(out).lexically_normal() == fs::path(input).lexically_normal() ||
                      fs::equivalent(out, input, ec);
    if (same) {
      return Status::InvalidArgument(fmt::format(
          "{}: converting to {} would write the file onto itself (use --output-dir)", input,
          CompressionName(options.output_compression)));
    }
    if (!seen.insert(fs::path(out).lexically_normal().string()).second) {
      return Status::InvalidArgument(
          fmt::format("{}: two inputs would be converted to this same file", out));
    }
    paths.push_back(std::move(out));
  }
  TFDIST_RETURN_IF_ERROR(CheckNewFiles(paths, options.overwrite));
  Result<std::vector<Input>> scanned = ScanInputs(inputs, options, false, "");
  if (!scanned.ok()) return Explain(scanned.status());
  std::vector<Input>& in = *scanned;
  ReshardPlan plan;  // identity; one output per input
  std::vector<Output> outputs(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    outputs[i].path = paths[i];
    outputs[i].begin = in[i].first;
    outputs[i].end = in[i].first + in[i].records();
  }
  Result<RewriteSummary> summary = WriteAndCommit(in, plan, outputs, options);
  if (!summary.ok()) return Explain(summary.status());
  return summary;
}

}  // namespace tfdist::io
