// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// RecordReader over a stream of blocks, read inline or on a read-ahead thread.

#include "tfdist/io/record_reader.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "record_format.h"
#include "record_scan.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/io/storage.h"

namespace tfdist::io {

// Hands out the input as a sequence of blocks. The view returned by Next()
// stays valid until the following call.
class RecordReader::Blocks {
 public:
  virtual ~Blocks() = default;
  // Return values: a non-empty block; an empty one at the end; or an error.
  virtual Result<std::string_view> Next() = 0;
  virtual const std::string& name() const = 0;
};

namespace {

class InlineBlocks final : public RecordReader::Blocks {
 public:
  InlineBlocks(std::unique_ptr<ByteSource> source, size_t block_size)
      : source_(std::move(source)), buffer_(block_size) {}

  Result<std::string_view> Next() override {
    if (Interrupted()) return Status::Interrupted();
    Result<size_t> n = source_->Read(buffer_);
    if (!n.ok()) return n.status();
    return std::string_view(buffer_.data(), *n);
  }
  const std::string& name() const override { return source_->name(); }

 private:
  std::unique_ptr<ByteSource> source_;
  std::vector<char> buffer_;
};

// Reads `depth` blocks ahead on a thread of its own: the copy out of the page
// cache (or the inflate) of one block overlaps the CRC checks of the previous.
class ReadAheadBlocks final : public RecordReader::Blocks {
 public:
  ReadAheadBlocks(std::unique_ptr<ByteSource> source, size_t block_size, int depth)
      : source_(std::move(source)), name_(source_->name()) {
    for (int i = 0; i < depth + 1; ++i) free_.push_back(std::vector<char>(block_size));
    thread_ = std::thread([this] { Run(); });
  }

  ~ReadAheadBlocks() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  Result<std::string_view> Next() override {
    std::unique_lock<std::mutex> lock(mu_);
    if (in_use_) {
      free_.push_back(std::move(*in_use_));
      in_use_.reset();
      cv_.notify_all();
    }
    cv_.wait(lock, [this] { return !ready_.empty() || !status_.ok() || finished_; });
    if (ready_.empty()) {
      if (!status_.ok()) return status_;
      return std::string_view();
    }
    Filled f = std::move(ready_.front());
    ready_.pop_front();
    in_use_ = std::move(f.buffer);
    return std::string_view(in_use_->data(), f.size);
  }

  const std::string& name() const override { return name_; }

 private:
  struct Filled {
    std::vector<char> buffer;
    size_t size;
  };

  void Run() {
    for (;;) {
      std::vector<char> buffer;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !free_.empty(); });
        if (stop_) return;
        buffer = std::move(free_.back());
        free_.pop_back();
      }
      Result<size_t> n =
          Interrupted() ? Result<size_t>(Status::Interrupted()) : source_->Read(buffer);
      // A short read may still be followed by an error (ByteSource::Read):
      // the end is a read of nothing.
      const bool last = !n.ok() || *n == 0;
      std::lock_guard<std::mutex> lock(mu_);
      if (!n.ok()) {
        status_ = n.status();
      } else if (*n > 0) {
        ready_.push_back({std::move(buffer), *n});
      }
      if (last) {
        finished_ = true;
        cv_.notify_all();
        return;
      }
      cv_.notify_all();
    }
  }

  std::unique_ptr<ByteSource> source_;
  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<char>> free_;
  std::deque<Filled> ready_;
  std::optional<std::vector<char>> in_use_;
  Status status_;
  bool finished_ = false;
  bool stop_ = false;
  std::thread thread_;
};

// InvalidArgument when the first bytes of the file `name`, `prefix`, prove
// a compression other than the declared `declared` (ProvenCompression),
// naming both; OK when they agree or prove nothing (damage stays DataLoss,
// reported where the reader meets it).
Status CheckDeclaredCompression(const std::string& name, std::string_view prefix,
                                Compression declared) {
  const Compression proven = ProvenCompression(prefix);
  if (proven == Compression::kAuto || proven == declared) return Status::OK();
  const std::string_view d = CompressionName(declared);
  const std::string message =
      proven == Compression::kNone
          ? fmt::format(
                "{}: read as {}-compressed, but the file is uncompressed: it starts with "
                "a valid TFRecord record, not a {} header",
                name, d, d)
          : fmt::format(
                "{}: read as {}-compressed, but the file is {}-compressed: it starts "
                "with a {} header and its first record is valid",
                name, d, CompressionName(proven), CompressionName(proven));
  return Status::InvalidArgument(message).WithAdvice(Remedy::kDeclareCompression,
                                                     std::string(CompressionName(proven)));
}

}  // namespace

Result<std::unique_ptr<RecordReader>> RecordReader::Open(const std::string& path,
                                                         const RecordReaderOptions& options) {
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source,
                          OpenFileSource(path, options.start_offset));
  return FromSource(std::move(source), options);
}

Result<std::unique_ptr<RecordReader>> RecordReader::FromSource(std::unique_ptr<ByteSource> source,
                                                               const RecordReaderOptions& options) {
  Compression compression = options.compression;
  std::string sniffed;
  if (options.start_offset != 0 && compression != Compression::kNone) {
    return Status::InvalidArgument("start_offset needs an uncompressed file");
  }
  // A declared compression is checked against the file's first bytes too:
  // GZIP declared on an uncompressed file (or ZLIB on a GZIP one) is the
  // user's mistake, not damage, when the bytes prove another compression.
  Status mismatch;
  if (compression != Compression::kNone) {
    // Sniff a prefix, then read it again ahead of the rest of the source.
    sniffed.resize(64 * 1024);
    TFDIST_ASSIGN_OR_RETURN(size_t n, source->Read(sniffed));
    sniffed.resize(n);
    if (compression == Compression::kAuto) {
      compression = DetectCompression(sniffed);
    } else {
      mismatch = CheckDeclaredCompression(source->name(), sniffed, compression);
    }
  }
  const std::optional<uint64_t> size = source->size();
  if (!sniffed.empty()) source = NewPrefixedSource(std::move(sniffed), std::move(source));
  if (compression != Compression::kNone) {
    source = NewInflatingSource(std::move(source), compression);
  }
  const size_t block_size = std::max<size_t>(options.block_size, 64);
  // Small files are not worth a thread; a compressed file always is. A pipe or
  // terminal (no size) is read inline: a thread blocked reading it could not
  // be stopped when the caller is done early.
  const bool small = size && compression == Compression::kNone && *size < 2 * block_size;
  std::unique_ptr<Blocks> blocks;
  if (options.read_ahead > 0 && size && !small) {
    blocks = std::make_unique<ReadAheadBlocks>(std::move(source), block_size, options.read_ahead);
  } else {
    const size_t inline_size =
        small ? std::max<size_t>(std::min<size_t>(*size + 1, block_size), 64) : block_size;
    blocks = std::make_unique<InlineBlocks>(std::move(source), inline_size);
  }
  auto reader =
      std::unique_ptr<RecordReader>(new RecordReader(std::move(blocks), compression, options));
  reader->position_ = options.start_offset;
  if (!mismatch.ok()) reader->Fail(std::move(mismatch));
  return reader;
}

RecordReader::RecordReader(std::unique_ptr<Blocks> blocks, Compression compression,
                           const RecordReaderOptions& options)
    : blocks_(std::move(blocks)),
      compression_(compression),
      verify_checksums_(options.verify_checksums),
      max_record_size_(options.max_record_size),
      elide_large_records_(options.elide_large_records) {}

RecordReader::~RecordReader() = default;

const std::string& RecordReader::path() const { return blocks_->name(); }

bool RecordReader::Fail(Status status, std::optional<uint64_t> offset) {
  status_ = std::move(status);
  error_offset_ = offset;
  return false;
}

bool RecordReader::NextBlock() {
  if (eof_ || !status_.ok()) return false;
  Result<std::string_view> b = blocks_->Next();
  if (!b.ok()) return Fail(b.status());
  block_ = *b;
  if (block_.empty()) eof_ = true;
  return !eof_;
}

template <typename Sink>
size_t RecordReader::ConsumeBytes(size_t n, Sink&& sink) {
  size_t done = 0;
  while (done < n) {
    if (block_.empty() && !NextBlock()) break;
    const size_t take = std::min(n - done, block_.size());
    sink(block_.substr(0, take));
    block_.remove_prefix(take);
    done += take;
  }
  return done;
}

size_t RecordReader::ReadBytes(char* dst, size_t n) {
  return ConsumeBytes(n, [&dst](std::string_view piece) {
    std::memcpy(dst, piece.data(), piece.size());
    dst += piece.size();
  });
}

bool RecordReader::Next(std::string_view* record,
                        const std::function<void(std::string_view)>* piece) {
  if (!status_.ok()) return false;
  // Fast path: the whole record lies in the current block and checks out.
  // Anything else (a record across blocks, damage) takes the general path,
  // which reads the same bytes again and words the error.
  if (block_.size() >= kRecordHeaderSize + kRecordFooterSize) {
    const char* p = block_.data();
    const uint64_t length = DecodeFixed64(p);
    if (length <= block_.size() - kRecordHeaderSize - kRecordFooterSize &&
        (record == nullptr || length <= max_record_size_) &&
        HeaderIsValid(std::string_view(p, kRecordHeaderSize)) &&
        (!verify_checksums_ || crc32c::Unmask(DecodeFixed32(p + kRecordHeaderSize + length)) ==
                                   crc32c::Value(p + kRecordHeaderSize, length))) {
      last_record_offset_ = position_;
      last_record_size_ = length;
      position_ += kRecordHeaderSize + length + kRecordFooterSize;
      ++records_read_;
      last_record_elided_ = false;
      if (record != nullptr) *record = std::string_view(p + kRecordHeaderSize, length);
      if (piece != nullptr) (*piece)(std::string_view(p + kRecordHeaderSize, length));
      block_.remove_prefix(kRecordHeaderSize + length + kRecordFooterSize);
      return true;
    }
  }
  const uint64_t offset = position_;
  const std::string& name = blocks_->name();
  const char* detail =
      compression_ == Compression::kNone ? "" : " (offset in the decompressed stream)";

  char header[kRecordHeaderSize];
  const size_t got = ReadBytes(header, sizeof header);
  if (!status_.ok()) return false;
  if (got == 0) return false;  // clean end at a record boundary
  if (got < sizeof header) {
    return Fail(
        Status::DataLoss(fmt::format(
            "{}: truncated record at {}{}: {} of the {} header bytes before the end of the file",
            name, offset, detail, got, kRecordHeaderSize)),
        offset);
  }
  const uint64_t length = DecodeFixed64(header);
  // The length CRC is checked even when checksums are not: an unchecked
  // length trusts zeros as endless empty records (a sparse file, /dev/zero)
  // and a damaged length as a huge record.
  if (!HeaderIsValid(std::string_view(header, sizeof header))) {
    const std::string what =
        fmt::format("{}: corrupted record at {}{}: length CRC mismatch (length field {:#018x})",
                    name, offset, detail, length);
    // The mistake everybody makes: a compressed file read as uncompressed.
    // Its first bytes say so; that is a usage error, not damage.
    const Compression looks = offset == 0 && compression_ == Compression::kNone
                                  ? DetectCompression(std::string_view(header, sizeof header))
                                  : Compression::kNone;
    if (looks != Compression::kNone) {
      const std::string_view c = CompressionName(looks);
      return Fail(Status::InvalidArgument(
                      fmt::format("{}; the file starts with a {} header: it is {}-compressed and "
                                  "was read as uncompressed",
                                  what, c, c))
                      .WithAdvice(Remedy::kDeclareCompression, std::string(c)),
                  offset);
    }
    return Fail(Status::DataLoss(what), offset);
  }
  const uint64_t data_offset = offset + kRecordHeaderSize;
  auto truncated = [&](uint64_t got_bytes) {
    // TensorFlow names the header when nothing follows it, else the payload.
    const uint64_t at = got_bytes == 0 ? offset : data_offset;
    return Fail(Status::DataLoss(fmt::format(
                    "{}: truncated record at {}{}: {} of the {} payload and footer bytes "
                    "before the end of the file",
                    name, at, detail, got_bytes, PayloadAndFooterBytes(length))),
                at);
  };

  uint32_t crc = 0;
  std::string_view payload;
  if (length <= block_.size() && block_.size() - length >= kRecordFooterSize) {
    payload = block_.substr(0, length);  // the common case: no copy
    block_.remove_prefix(length);
    if (verify_checksums_) crc = crc32c::Value(payload.data(), payload.size());
    if (piece != nullptr) (*piece)(payload);
  } else {
    // Keep no more than a record may hold, and only what arrives: memory
    // follows the bytes the input really yields, never the declared length.
    const uint64_t keep = record == nullptr            ? 0
                          : length <= max_record_size_ ? length
                                                       : kElidedRecordPrefix;
    scratch_.clear();
    const size_t consumed = ConsumeBytes(length, [&](std::string_view part) {
      if (verify_checksums_) crc = crc32c::Extend(crc, part.data(), part.size());
      if (scratch_.size() < keep) {
        scratch_.append(part.substr(0, std::min<uint64_t>(part.size(), keep - scratch_.size())));
      }
      if (piece != nullptr) (*piece)(part);
    });
    if (!status_.ok()) return false;
    if (consumed < length) return truncated(consumed);
    payload = scratch_;
  }
  char footer[kRecordFooterSize];
  const size_t footer_got = ReadBytes(footer, sizeof footer);
  if (!status_.ok()) return false;
  if (footer_got < sizeof footer) return truncated(length + footer_got);
  if (verify_checksums_ && crc32c::Unmask(DecodeFixed32(footer)) != crc) {
    return Fail(
        Status::DataLoss(fmt::format(
            "{}: corrupted record at {}{}: data CRC mismatch in the {}-byte payload of the record "
            "at {}",
            name, data_offset, detail, length, offset)),
        data_offset);
  }
  last_record_elided_ = false;
  if (record != nullptr && length > max_record_size_) {
    if (!elide_large_records_) {
      // The record is whole and sound: not damage, but more memory than a
      // record may take.
      return Fail(Status::ResourceExhausted(fmt::format(
          "{}: record at {}{} holds {} bytes, more than the {} bytes a record may hold in memory",
          name, offset, detail, length, max_record_size_)));
    }
    payload = payload.substr(0, kElidedRecordPrefix);
    last_record_elided_ = true;
  }
  position_ = data_offset + length + kRecordFooterSize;
  last_record_offset_ = offset;
  last_record_size_ = length;
  ++records_read_;
  if (record != nullptr) *record = payload;
  return true;
}

bool RecordReader::ReadRecord(std::string_view& record) { return Next(&record); }

bool RecordReader::ReadRecord(std::string& record) {
  std::string_view view;
  if (!Next(&view)) return false;
  record.assign(view.data(), view.size());
  return true;
}

bool RecordReader::SkipRecord() { return Next(nullptr); }

bool RecordReader::ScanRecord(const std::function<void(std::string_view)>& piece) {
  return Next(nullptr, &piece);
}

uint64_t RecordReader::SkipRecords(uint64_t stop) {
  uint64_t bytes = 0;
  while (position_ < stop && status_.ok()) {
    if (!block_.empty()) {
      const size_t stop_in_block =
          stop - position_ >= block_.size() ? block_.size() : stop - position_;
      const ScanResult r =
          ScanRecords(block_.data(), block_.size(), stop_in_block, verify_checksums_);
      if (r.records > 0) {
        last_record_offset_ = position_ + r.last_offset;
        last_record_size_ = r.last_size;
        position_ += r.consumed;
        records_read_ += r.records;
        bytes += r.payload_bytes;
        block_.remove_prefix(r.consumed);
        continue;
      }
    }
    // A record across blocks, a bad one, or the end: the general path.
    if (!Next(nullptr)) break;
    bytes += last_record_size_;
  }
  return bytes;
}

namespace {

// Scans records from `options.start_offset` until the first record that
// starts at or after `stop` (or the end). Returns the count; `end` receives
// the offset where the scan stopped.
RecordCount ScanReader(Result<std::unique_ptr<RecordReader>> reader,
                       const RecordReaderOptions& options, uint64_t stop, uint64_t* end) {
  RecordCount count;
  count.compression = options.compression;
  *end = options.start_offset;
  if (!reader.ok()) {
    count.status = reader.status();
    return count;
  }
  RecordReader& r = **reader;
  count.compression = r.compression();
  count.payload_bytes = r.SkipRecords(stop);
  count.records = r.records_read();
  count.status = r.status();
  count.error_offset = r.error_offset();
  *end = r.position();
  return count;
}

RecordCount ScanRange(const std::string& path, const RecordReaderOptions& options, uint64_t stop,
                      uint64_t* end) {
  return ScanReader(RecordReader::Open(path, options), options, stop, end);
}

void Add(RecordCount& total, const RecordCount& part) {
  total.records += part.records;
  total.payload_bytes += part.payload_bytes;
  total.status = part.status;
  total.error_offset = part.error_offset;
}

bool Failed(const RecordCount& total) { return !total.status.ok(); }

}  // namespace

std::optional<uint64_t> FindRecordStart(const std::string& path, const RecordReaderOptions& options,
                                        uint64_t from, uint64_t to) {
  constexpr uint64_t kMaxSyncSearch = uint64_t{16} << 20;
  to = std::min(to, from + kMaxSyncSearch);
  Result<std::unique_ptr<ByteSource>> source = OpenFileSource(path, from);
  if (!source.ok()) return std::nullopt;
  std::string window(std::min<uint64_t>(to - from, 1 << 20) + kRecordHeaderSize, '\0');
  uint64_t base = from;
  size_t have = 0;
  while (base < to) {
    Result<size_t> n = (*source)->Read(std::span<char>(window).subspan(have));
    if (!n.ok()) return std::nullopt;
    have += *n;
    if (have < kRecordHeaderSize) return std::nullopt;
    const size_t candidates = std::min<uint64_t>(have - kRecordHeaderSize + 1, to - base);
    for (size_t i = 0; i < candidates; ++i) {
      i += FindValidHeader(window.data() + i, candidates - 1 - i + kRecordHeaderSize);
      if (i >= candidates) break;
      // A valid length CRC by chance has odds of 2^-32; the data CRC makes
      // the odds 2^-64. A wrong guess only costs the sequential fallback.
      RecordReaderOptions probe = options;
      probe.start_offset = base + i;
      probe.read_ahead = 0;
      uint64_t end;
      RecordCount one = ScanRange(path, probe, base + i + 1, &end);
      if (one.status.ok() && one.records == 1) return base + i;
    }
    if (*n == 0) return std::nullopt;
    // Keep the last header's worth of bytes: a record may start there.
    const size_t keep = kRecordHeaderSize - 1;
    std::memmove(window.data(), window.data() + have - keep, keep);
    base += have - keep;
    have = keep;
  }
  return std::nullopt;
}

PartsPlan PlanParts(const std::string& path, const RecordReaderOptions& options,
                    uint64_t min_part_size, size_t max_parts) {
  PartsPlan plan;
  plan.options = options;
  if (path == "-") return plan;
  Result<std::unique_ptr<ByteSource>> source = OpenFileSource(path);
  if (!source.ok()) {
    plan.status = source.status();
    return plan;
  }
  plan.size = (*source)->size();
  if (!plan.size) {
    plan.stream = std::move(*source);
    return plan;
  }
  std::string prefix;
  if (plan.options.compression == Compression::kAuto) {
    prefix.resize(64 * 1024);
    Result<size_t> n = (*source)->Read(prefix);
    prefix.resize(n.ok() ? *n : 0);
    if (n.ok()) plan.options.compression = DetectCompression(prefix);
  }
  if (options.start_offset == 0 && IsRemote(path)) {
    // An object in a store is read once, as one stream, from this open: a
    // second open would fetch its first range again (and a prefetched one
    // would be spent on the sniff), and parts would each read ahead, their
    // record-start searches too.
    plan.stream = prefix.empty() ? std::move(*source)
                                 : NewPrefixedSource(std::move(prefix), std::move(*source));
    return plan;
  }
  if (plan.options.compression != Compression::kNone || options.start_offset != 0) return plan;
  if (max_parts == 0) max_parts = std::max(1u, std::thread::hardware_concurrency());
  plan.num_parts = static_cast<size_t>(
      std::min<uint64_t>(max_parts, *plan.size / std::max<uint64_t>(min_part_size, 1)));
  return plan;
}

RecordCount CountRecords(const std::string& path, const RecordReaderOptions& options,
                         uint64_t min_part_size, size_t max_parts) {
  // Detect the compression once, up front, so the parts need not.
  PartsPlan plan = PlanParts(path, options, min_part_size, max_parts);
  if (!plan.status.ok()) {
    RecordCount failed;
    failed.compression = options.compression;
    failed.status = plan.status;
    return failed;
  }
  RecordReaderOptions opts = plan.options;
  uint64_t end;
  if (plan.stream) {
    return ScanReader(RecordReader::FromSource(std::move(plan.stream), opts), opts,
                      std::numeric_limits<uint64_t>::max(), &end);
  }
  if (plan.num_parts < 2) return ScanRange(path, opts, std::numeric_limits<uint64_t>::max(), &end);

  // Each part reads blocks that stay in its core's cache; two cores scanning
  // halves beat one core reading while another checks.
  opts.read_ahead = 0;
  opts.block_size = 256 * 1024;
  return CountFileRange(path, opts, 0, *plan.size, min_part_size, plan.num_parts).count;
}

RangeCount CountFileRange(const std::string& path, const RecordReaderOptions& options,
                          uint64_t from, uint64_t to, uint64_t min_part_size, size_t max_parts) {
  RangeCount range;
  range.count.compression = Compression::kNone;
  if (options.compression != Compression::kNone) {
    range.count.status = Status::InvalidArgument(
        fmt::format("{}: only an uncompressed file is read by byte ranges", path));
    return range;
  }
  // Each part reads blocks that stay in its core's cache; two cores scanning
  // halves beat one core reading while another checks.
  RecordReaderOptions opts = options;
  opts.read_ahead = 0;
  opts.block_size = 256 * 1024;
  range.begin = ReadFileRange(
      path, opts, from, to, min_part_size, max_parts,
      [&path](const RecordReaderOptions& o, uint64_t stop, uint64_t* part_end) {
        return ScanRange(path, o, stop, part_end);
      },
      Add, Failed, &range.count, &range.end);
  return range;
}

RecordCount JoinCountedRanges(const std::string& path, const RecordReaderOptions& options,
                              std::span<const RangeCount> ranges) {
  return JoinRanges(
      ranges, &RangeCount::count, options,
      [&path](const RecordReaderOptions& o, uint64_t stop, uint64_t* end) {
        return ScanRange(path, o, stop, end);
      },
      Add, Failed);
}

}  // namespace tfdist::io
