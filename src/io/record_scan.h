// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A tight loop over the whole, valid records of a buffer (count and verify).

#ifndef TFDIST_IO_RECORD_SCAN_H_
#define TFDIST_IO_RECORD_SCAN_H_

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "tfdist/base/status.h"
#include "tfdist/io/byte_stream.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::io {

struct ScanResult {
  size_t consumed = 0;         // bytes of the records walked
  uint64_t records = 0;        // records walked
  uint64_t payload_bytes = 0;  // their payload bytes
  size_t last_offset = 0;      // offset in the buffer of the last one walked
  uint64_t last_size = 0;      // its payload size
};

// Walks records from the start of data[0, n) while each lies whole in the
// buffer, checks out (its length CRC always, its data CRC when `verify`),
// and starts before `stop`.
// Stops silently at the first one that does not: the caller's general path
// reads it again and words the error. With SSE4.2 the CRCs are inlined, so
// the checks of consecutive small records overlap in the CPU.
ScanResult ScanRecords(const char* data, size_t n, size_t stop, bool verify);

// The first i in [0, n - 12] at which data holds a header with a valid
// length CRC, or n when there is none. Used to find where records start in
// the middle of a file; independent positions keep the crc32 unit busy.
size_t FindValidHeader(const char* data, size_t n);

// The first offset in [from, to) of the uncompressed file `path` at which a
// whole valid record (both CRCs) starts, looking at no more than 16 MiB;
// nullopt when there is none or the file cannot be read. Where a scan in
// parallel parts starts each part after the first (record_reader.cc,
// record_digest.cc); a wrong guess (odds 2^-64) only costs the sequential
// fallback, since the parts are joined only where one ends at the next's start.
std::optional<uint64_t> FindRecordStart(const std::string& path, const RecordReaderOptions& options,
                                        uint64_t from, uint64_t to);

// What a reader in parallel parts learns from one open of `path` (not for
// "-", which is read as it comes).
struct PartsPlan {
  // `options`, with the compression detected from the file's first 64 KiB
  // where it was kAuto.
  RecordReaderOptions options;
  std::optional<uint64_t> size;  // none for "-" and for a stream
  // A pipe, FIFO or device: read it from this open, once (a second open would
  // find its first bytes gone, or wait for a writer that is done).
  std::unique_ptr<ByteSource> stream;
  Status status;  // the open's error
  // Parts worth reading in parallel (ReadInParts wants 2 or more): 0 for a
  // stream, a compressed file or a read from an offset, else the file's size
  // over `min_part_size`, at most `max_parts` (0: the CPUs).
  size_t num_parts = 0;
};
PartsPlan PlanParts(const std::string& path, const RecordReaderOptions& options,
                    uint64_t min_part_size, size_t max_parts);

// Reads the records of the uncompressed file `path` that start in its byte
// range [from, to) in `num_parts` (1 or more) parallel parts, with the
// result of one sequential read from the first of them: part k is read
// from the first whole valid record at or after its cut (FindRecordStart;
// offset 0 for the first part of a range from 0) up to the first record
// starting at or after the next cut (`to` for the last part), by
// `read(options, stop, &end)` (a range reader: a Result of the records from
// options.start_offset that start before `stop`, and in `end` the position
// after the last). The parts are handed to `join(result)` in order, which
// returns false to stop (an error). Where a part does not start where the
// one before it ended (a wrong guess of FindRecordStart, a damaged region),
// the rest of the range is read sequentially from there and joined
// instead. Returns where the range's first record starts, nullopt when
// none was found (then nothing is joined), and sets `*end` to the position
// after its last record.
template <typename ReadRange, typename Join>
std::optional<uint64_t> ReadInParts(const std::string& path, const RecordReaderOptions& options,
                                    uint64_t from, uint64_t to, size_t num_parts, ReadRange read,
                                    Join join, uint64_t* end) {
  using PartResult = decltype(read(options, uint64_t{0}, static_cast<uint64_t*>(nullptr)));
  struct Part {
    std::optional<uint64_t> begin;
    uint64_t end = 0;
    PartResult result{};
  };
  num_parts = std::max<size_t>(num_parts, 1);
  std::vector<Part> parts(num_parts);
  auto cut = [&](size_t k) { return from + (to - from) / num_parts * k; };
  tbb::parallel_for(size_t{0}, num_parts, [&](size_t k) {
    Part& part = parts[k];
    part.begin = k == 0 && from == 0 ? std::optional<uint64_t>(0)
                                     : FindRecordStart(path, options, cut(k), cut(k + 1));
    if (!part.begin) return;
    RecordReaderOptions o = options;
    o.start_offset = *part.begin;
    part.result = read(o, k + 1 == num_parts ? to : cut(k + 1), &part.end);
  });
  *end = from;
  if (!parts[0].begin) return std::nullopt;
  uint64_t position = *parts[0].begin;
  for (Part& part : parts) {
    if (part.begin != position) {
      RecordReaderOptions o = options;
      o.start_offset = position;
      join(read(o, to, end));
      return parts[0].begin;
    }
    position = part.end;
    if (!join(part.result)) break;
  }
  *end = position;
  return parts[0].begin;
}

// A byte range [from, to) of a file read by ReadInParts in parts of at
// least `min_part_size` bytes, at most `max_parts` (0: the CPUs), each
// part's result added to `*total` by `add(total, part)` until an error
// (`failed(total)`). Returns where the range's first record starts, and
// sets `*end` after its last (see ReadInParts).
template <typename Total, typename ReadRange, typename Add, typename Failed>
std::optional<uint64_t> ReadFileRange(const std::string& path, const RecordReaderOptions& options,
                                      uint64_t from, uint64_t to, uint64_t min_part_size,
                                      size_t max_parts, ReadRange read, Add add, Failed failed,
                                      Total* total, uint64_t* end) {
  if (max_parts == 0) max_parts = std::max(1u, std::thread::hardware_concurrency());
  const size_t parts = static_cast<size_t>(
      std::clamp<uint64_t>((to - from) / std::max<uint64_t>(min_part_size, 1), 1, max_parts));
  return ReadInParts(
      path, options, from, to, parts, read,
      [&](const Total& part) {
        add(*total, part);
        return !failed(*total);
      },
      end);
}

// The result of a whole file from ranges read apart (each with `begin`,
// `end` and its result, `range.*result`), in order from 0: where a range
// does not start where the one before ended, the rest of the file is read
// by `read(options, stop, &end)` from there. Results are added up by
// `add(total, part)`, up to the first error (`failed(total)`).
template <typename Range, typename Total, typename ReadRange, typename Add, typename Failed>
Total JoinRanges(std::span<const Range> ranges, Total Range::*result,
                 const RecordReaderOptions& options, ReadRange read, Add add, Failed failed) {
  Total total;
  total.compression = Compression::kNone;
  uint64_t position = 0;
  for (const Range& range : ranges) {
    if (range.begin != position) {
      RecordReaderOptions o = options;
      o.compression = Compression::kNone;
      o.start_offset = position;
      uint64_t end;
      add(total, read(o, std::numeric_limits<uint64_t>::max(), &end));
      return total;
    }
    add(total, range.*result);
    if (failed(total)) return total;
    position = range.end;
  }
  return total;
}

}  // namespace tfdist::io

#endif  // TFDIST_IO_RECORD_SCAN_H_
