// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// reshard's pass 1: the offset of every record of every input, from its
// index or a scan; compressed inputs inflated aside when shuffling.

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cassert>

#include "file_index_internal.h"
#include "reshard_internal.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::io {
namespace {

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

// An input that is not a regular file (a pipe, FIFO or device) cannot be
// read twice, as both passes must. It is opened once and its first record
// read, so that damage there (zeros: /dev/zero) is reported as what it is.
// Error: that record's DataLoss, else InvalidArgument.
Status RejectStream(std::unique_ptr<ByteSource> source, Compression c) {
  const std::string path = source->name();
  RecordReaderOptions options;
  options.compression = c;
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader,
                          RecordReader::FromSource(std::move(source), options));
  if (!reader->SkipRecord() && !reader->status().ok()) return reader->status();
  return Status::InvalidArgument(
      fmt::format("{}: not a regular file; resharding and converting read each input twice", path));
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
// CRCs now (else the copy checks them); `spill_to` non-null inflates
// the input into a temporary file beside the outputs.
Status ScanInput(Input& in, bool verify, bool use_index, OutputSet* spill_to) {
  if (use_index && !verify && in.compression == Compression::kNone && OffsetsFromIndex(in)) {
    return Status::OK();
  }
  std::unique_ptr<ByteSink> spill_sink;
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenStream(in.path, in.compression));
  if (spill_to != nullptr) {
    TFDIST_ASSIGN_OR_RETURN(in.spill, spill_to->CreateScratch("spill"));
    in.spill_path = in.spill->temp_path();
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

}  // namespace

Result<std::unique_ptr<ByteSource>> OpenStream(const std::string& path, Compression c) {
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenFileSource(path));
  if (c != Compression::kNone) source = NewInflatingSource(std::move(source), c);
  return source;
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

Result<Compression> InputCompression(const std::string& path, Compression declared) {
  if (path == "-") {
    return Status::InvalidArgument(
        "standard input ('-') cannot be resharded or converted: the inputs are read twice");
  }
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenFileSource(path));
  if (!source->size()) return RejectStream(std::move(source), declared);
  if (declared != Compression::kAuto) return declared;
  std::string prefix(64 * 1024, '\0');
  TFDIST_ASSIGN_OR_RETURN(size_t n, source->Read(prefix));
  prefix.resize(n);
  return DetectCompression(prefix);
}

Status ScanInputs(std::vector<Input>& inputs, std::span<const size_t> which,
                  const RewriteOptions& o, bool shuffle, bool sequential, OutputSet* spill_to,
                  size_t* failed) {
  assert(o.output_compression != Compression::kAuto);
  FirstError errors;
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, which.size(), 1),
      [&](const tbb::blocked_range<size_t>& r) {
        for (size_t w = r.begin(); w != r.end(); ++w) {
          if (errors.failed()) return;
          const size_t i = which[w];
          Input& in = inputs[i];
          const bool spill = shuffle && in.compression != Compression::kNone;
          // A file read by random access is checked as it is copied.
          const bool verify = sequential || spill;
          errors.Set(i, ScanInput(in, verify, o.use_index, spill ? spill_to : nullptr));
        }
      },
      tbb::simple_partitioner());
  *failed = errors.rank();
  return errors.status();
}

}  // namespace tfdist::io
