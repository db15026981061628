// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// RecordReader: reads and checks the records of one TFRecord file or stream.

#ifndef TFDIST_IO_RECORD_READER_H_
#define TFDIST_IO_RECORD_READER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/io/byte_stream.h"

namespace tfdist::io {

struct RecordReaderOptions {
  // How the file is compressed. Default: kNone, as TFRecordDataset's "".
  // kAuto sniffs the first bytes (see DetectCompression).
  Compression compression = Compression::kNone;

  // Check the data CRC of every record. Default: true. The length CRC is
  // checked either way: a length is never trusted unchecked (zeros would
  // read as endless empty records, a damaged length as a huge one).
  bool verify_checksums = true;

  // The largest payload handed out whole, and so the most a reader holds in
  // memory for one record, whatever length a header declares. A longer
  // record is still read through and checked, so that one cut short or
  // damaged is reported as such; a whole one is then handed out elided
  // (elide_large_records) or is ResourceExhausted naming its size.
  // Default: 256 MiB.
  uint64_t max_record_size = uint64_t{256} << 20;

  // Hand out a whole record longer than max_record_size as its first
  // kElidedRecordPrefix bytes, with last_record_elided() set, instead of
  // failing (for display). Default: false.
  bool elide_large_records = false;

  // Bytes read (or inflated) from the file at a time. Default: 1 MiB.
  size_t block_size = size_t{1} << 20;

  // Byte of the file at which reading starts, for an uncompressed file whose
  // records are known to start there; offsets stay absolute. Default: 0.
  uint64_t start_offset = 0;

  // Read and inflate on a background thread, `read_ahead` blocks ahead, so
  // the caller checks CRCs of one block while the next is read. 0 reads on the
  // caller's thread. Files smaller than two blocks, pipes and standard input
  // are always read inline.
  // Default: 3.
  int read_ahead = 3;
};

// The bytes of an elided record that ReadRecord hands out (see
// RecordReaderOptions::elide_large_records).
inline constexpr size_t kElidedRecordPrefix = 4096;

// The bytes a record takes in its file beyond its payload: the length, the
// length's CRC and the payload's CRC.
inline constexpr uint64_t kRecordFramingBytes = 8 + 4 + 4;

// Reads the records of a TFRecord stream in order, checking both CRCs, with
// TensorFlow's error semantics (tensorflow/core/lib/io/record_reader.cc):
//  * the input ending exactly at a record boundary is a clean end;
//  * a missing or short header, or a bad length CRC, is DataLoss
//    "truncated record at N" / "corrupted record at N" with N the offset of
//    the record's header;
//  * a short payload or footer, or a bad data CRC, is the same with N the
//    offset of the payload (header offset + 12); a header followed by no byte
//    at all is "truncated record at N" with N the header offset, as in
//    TensorFlow.
// Offsets count bytes of the uncompressed stream. Errors are sticky.
//
// Not thread-safe; one reader per thread.
class RecordReader {
 public:
  // Opens `path` ("-" for standard input).
  // Error: NotFound when the file cannot be opened.
  static Result<std::unique_ptr<RecordReader>> Open(const std::string& path,
                                                    const RecordReaderOptions& options);

  // Reads from `source`, which holds the possibly compressed bytes.
  static Result<std::unique_ptr<RecordReader>> FromSource(std::unique_ptr<ByteSource> source,
                                                          const RecordReaderOptions& options);

  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // Reads the next record. `record` views the payload without a copy where it
  // lies inside one read block; it stays valid until the next call.
  // Return values:
  //  * true                   - success
  //  * false (status().ok())  - clean end of the input
  //  * false (!status().ok()) - failure (DataLoss carries path and offset)
  bool ReadRecord(std::string_view& record);

  // As above, copying the payload into `record` (its capacity is reused).
  bool ReadRecord(std::string& record);

  // Reads past the next record, checking its CRCs, without assembling the
  // payload: memory stays bounded by the block size whatever the record size.
  // Return values as ReadRecord.
  bool SkipRecord();

  // Reads past the next record as SkipRecord() does (memory bounded by the
  // block size, both CRCs checked, no max_record_size), handing its payload
  // to `piece` in order, as one or more pieces, as they are read: a record
  // found damaged after some were given returns false, and they count for
  // nothing. Return values as ReadRecord.
  bool ScanRecord(const std::function<void(std::string_view)>& piece);

  // Skips records as SkipRecord() does until the next one would start at or
  // after stream offset `stop`, the input ends, or a record is bad (see
  // status()). Returns the payload bytes skipped. Whole records inside a
  // block go through a tight loop; this is the scan behind count and verify.
  uint64_t SkipRecords(uint64_t stop);

  const Status& status() const { return status_; }

  // Offset (in the uncompressed stream) of the header of the record last read.
  // REQUIRES: a record was read.
  uint64_t last_record_offset() const { return last_record_offset_; }

  // Payload size of the record last read. REQUIRES: a record was read.
  uint64_t last_record_size() const { return last_record_size_; }

  // The record last read was longer than max_record_size and ReadRecord
  // handed out only its first kElidedRecordPrefix bytes.
  bool last_record_elided() const { return last_record_elided_; }

  // Offset at which the next record starts: the bytes consumed so far.
  uint64_t position() const { return position_; }

  // The record offset named by the error in status(), for DataLoss errors in
  // the framing; nullopt otherwise (an I/O or decompression error).
  std::optional<uint64_t> error_offset() const { return error_offset_; }

  // Records read successfully so far.
  uint64_t records_read() const { return records_read_; }

  // The compression in use (the detected one when options said kAuto).
  Compression compression() const { return compression_; }

  const std::string& path() const;

  // The block stream behind a reader (record_reader.cc); not for callers.
  class Blocks;

 private:
  RecordReader(std::unique_ptr<Blocks> blocks, Compression compression,
               const RecordReaderOptions& options);

  // Copies up to n bytes into dst across blocks; returns the count copied.
  size_t ReadBytes(char* dst, size_t n);
  // Consumes up to n bytes, passing each contiguous piece to `sink`.
  template <typename Sink>
  size_t ConsumeBytes(size_t n, Sink&& sink);
  bool NextBlock();
  // `piece`: see ScanRecord (`record` is then null).
  bool Next(std::string_view* record, const std::function<void(std::string_view)>* piece = nullptr);
  bool Fail(Status status, std::optional<uint64_t> offset = std::nullopt);

  std::unique_ptr<Blocks> blocks_;
  Compression compression_;
  bool verify_checksums_;
  uint64_t max_record_size_;
  bool elide_large_records_;
  std::string_view block_;  // unread part of the current block
  bool eof_ = false;
  Status status_;
  std::optional<uint64_t> error_offset_;
  std::string scratch_;
  uint64_t position_ = 0;
  uint64_t last_record_offset_ = 0;
  uint64_t last_record_size_ = 0;
  uint64_t records_read_ = 0;
  bool last_record_elided_ = false;
};

// Records and their payload bytes: of a file, of part of one, or summed
// over files. Whatever says how many records and how many payload bytes
// says it with this.
struct FileRecords {
  uint64_t records = 0;
  uint64_t payload_bytes = 0;

  bool operator==(const FileRecords&) const = default;
};

// What a scan of one file found: the loop behind count and verify. The
// records are the good ones before the end or the first error, and the
// payload bytes theirs.
struct RecordCount : FileRecords {
  Compression compression = Compression::kNone;  // as used (detected if kAuto)
  Status status;                                 // OK, or the first error (DataLoss with offset)
  std::optional<uint64_t> error_offset;          // the record offset the error names
};

// Reads every record of `path`, checking CRCs as `options` say, without
// assembling payloads. A large uncompressed file is scanned in parallel:
// its byte range is cut into parts, each part after the first starts at the
// first offset holding a whole valid record (both CRCs), and the parts are
// joined only where each one ends exactly where the next begins; anywhere
// else the scan goes on sequentially. The result (counts, first error and
// its offset) is always that of the sequential scan.
//
// Parts are at least `min_part_size` bytes and at most `max_parts` (0: the
// number of hardware threads); tests lower both to exercise the joins.
RecordCount CountRecords(const std::string& path, const RecordReaderOptions& options,
                         uint64_t min_part_size = uint64_t{32} << 20, size_t max_parts = 0);

// A byte range of a file counted apart (by one process of several), for
// JoinCountedRanges: the records that start in it.
struct RangeCount {
  // Where its first record starts: 0 for a range from 0, else the first
  // whole valid record at or after its start; nullopt when none was found.
  std::optional<uint64_t> begin;
  uint64_t end = 0;   // the position after its last record
  RecordCount count;  // its records, and its first error
};

// Counts the records of the uncompressed file `path` that start in the
// byte range [from, to), as CountRecords counts a file (in parallel parts
// of at least `min_part_size` bytes, at most `max_parts`, 0: the CPUs).
// REQUIRES: options.compression kNone (else the count's status is
// InvalidArgument).
RangeCount CountFileRange(const std::string& path, const RecordReaderOptions& options,
                          uint64_t from, uint64_t to, uint64_t min_part_size = uint64_t{32} << 20,
                          size_t max_parts = 0);

// The count of the whole file from its `ranges` (in order, from 0, to its
// end): the result of one sequential scan. Where a range does not start
// where the one before it ended (a wrong guess of where records start, a
// damaged region), the rest of the file is scanned here, from there.
RecordCount JoinCountedRanges(const std::string& path, const RecordReaderOptions& options,
                              std::span<const RangeCount> ranges);

}  // namespace tfdist::io

#endif  // TFDIST_IO_RECORD_READER_H_
