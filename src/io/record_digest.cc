// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// RecordDigest: XXH3-64 per record, a sum and a polynomial over them.

#include "tfdist/io/record_digest.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>
#include <type_traits>

#include "record_scan.h"

namespace tfdist::io {
namespace {

using Modulus = std::integral_constant<uint64_t, RecordDigest::kOrderedModulus>;
__extension__ typedef unsigned __int128 Wide;  // GCC's and Clang's

// a * b modulo 2^61 - 1. REQUIRES: a, b < 2^61 - 1.
uint64_t MulMod(uint64_t a, uint64_t b) {
  const Wide p = static_cast<Wide>(a) * b;
  uint64_t r = static_cast<uint64_t>(p & Modulus::value) + static_cast<uint64_t>(p >> 61);
  if (r >= Modulus::value) r -= Modulus::value;
  return r;
}

uint64_t AddMod(uint64_t a, uint64_t b) {
  uint64_t r = a + b;  // < 2^62: no overflow
  if (r >= Modulus::value) r -= Modulus::value;
  return r;
}

// b^e modulo 2^61 - 1.
uint64_t PowMod(uint64_t b, uint64_t e) {
  uint64_t r = 1;
  for (; e > 0; e >>= 1) {
    if (e & 1) r = MulMod(r, b);
    b = MulMod(b, b);
  }
  return r;
}

uint64_t Reduce(uint64_t h) {
  const uint64_t r = (h & Modulus::value) + (h >> 61);
  return r >= Modulus::value ? r - Modulus::value : r;
}

// Digests the records of `reader` (opened at options.start_offset) until the
// first one that starts at or after `stop` (or the end); `end` receives the
// offset where it stopped.
FileDigest DigestReader(Result<std::unique_ptr<RecordReader>> reader,
                        const RecordReaderOptions& options, uint64_t stop, uint64_t* end) {
  FileDigest out;
  out.compression = options.compression;
  *end = options.start_offset;
  if (!reader.ok()) {
    out.status = reader.status();
    return out;
  }
  RecordReader& r = **reader;
  std::string_view record;
  while (r.position() < stop && r.ReadRecord(record)) out.digest.Add(record);
  out.compression = r.compression();
  out.status = r.status();
  out.error_offset = r.error_offset();
  *end = r.position();
  return out;
}

FileDigest DigestRange(const std::string& path, const RecordReaderOptions& options, uint64_t stop,
                       uint64_t* end) {
  return DigestReader(RecordReader::Open(path, options), options, stop, end);
}

// A large uncompressed file in parallel parts, as CountRecords counts one:
// each part after the first starts at the first whole valid record after
// its cut, and the parts are joined only where each ends at the next's
// start; anywhere else the digest goes on sequentially. The result is that
// of one sequential read, in memory bounded by one reader per part.
FileDigest DigestFile(const std::string& path, const RecordReaderOptions& options,
                      uint64_t min_part_size, size_t max_parts) {
  // An open that fails is left to the sequential read, which words it.
  PartsPlan plan = PlanParts(path, options, min_part_size, max_parts);
  uint64_t end;
  if (plan.stream) {
    return DigestReader(RecordReader::FromSource(std::move(plan.stream), plan.options),
                        plan.options, std::numeric_limits<uint64_t>::max(), &end);
  }
  if (plan.num_parts < 2) {
    return DigestRange(path, options, std::numeric_limits<uint64_t>::max(), &end);
  }
  return DigestFileRange(path, plan.options, 0, *plan.size, min_part_size, plan.num_parts).digest;
}

void Add(FileDigest& total, const FileDigest& part) {
  total.digest.Append(part.digest);
  total.status = part.status;
  total.error_offset = part.error_offset;
}

bool Failed(const FileDigest& total) { return !total.status.ok(); }

}  // namespace

uint64_t RecordHash(std::string_view payload) {
  return XXH3_64bits(payload.data(), payload.size());
}

void RecordDigest::Add(std::string_view payload) {
  const uint64_t h = RecordHash(payload);
  ++records;
  payload_bytes += payload.size();
  unordered += h;
  ordered = AddMod(MulMod(ordered, kOrderedBase), Reduce(h));
}

void RecordDigest::Append(const RecordDigest& next) {
  records += next.records;
  payload_bytes += next.payload_bytes;
  unordered += next.unordered;
  ordered = AddMod(MulMod(ordered, PowMod(kOrderedBase, next.records)), next.ordered);
}

RangeDigest DigestFileRange(const std::string& path, const RecordReaderOptions& options,
                            uint64_t from, uint64_t to, uint64_t min_part_size, size_t max_parts) {
  RangeDigest range;
  range.digest.compression = Compression::kNone;
  if (options.compression != Compression::kNone) {
    range.digest.status = Status::InvalidArgument(
        fmt::format("{}: only an uncompressed file is read by byte ranges", path));
    return range;
  }
  range.begin = ReadFileRange(
      path, options, from, to, min_part_size, max_parts,
      [&path](const RecordReaderOptions& o, uint64_t stop, uint64_t* part_end) {
        return DigestRange(path, o, stop, part_end);
      },
      Add, Failed, &range.digest, &range.end);
  return range;
}

FileDigest JoinDigestedRanges(const std::string& path, const RecordReaderOptions& options,
                              std::span<const RangeDigest> ranges) {
  return JoinRanges(
      ranges, &RangeDigest::digest, options,
      [&path](const RecordReaderOptions& o, uint64_t stop, uint64_t* end) {
        return DigestRange(path, o, stop, end);
      },
      Add, Failed);
}

std::vector<FileDigest> DigestFiles(std::span<const std::string> files,
                                    const RecordReaderOptions& options, uint64_t min_part_size,
                                    size_t max_parts) {
  std::vector<FileDigest> out(files.size());
  // In the list's order, as CountFiles: objects are prefetched in it.
  std::atomic<size_t> next{0};
  const size_t workers =
      std::min<size_t>(files.size(), std::max(1, tbb::this_task_arena::max_concurrency()));
  tbb::parallel_for(size_t{0}, workers, [&](size_t) {
    for (size_t i; (i = next.fetch_add(1)) < files.size();) {
      out[i] = DigestFile(files[i], options, min_part_size, max_parts);
    }
  });
  return out;
}

}  // namespace tfdist::io
