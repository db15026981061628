// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Byte sources and sinks: files, memory, and zlib/gzip stream decorators
// (files written atomically: atomic_file.h).

#ifndef TFDIST_IO_BYTE_STREAM_H_
#define TFDIST_IO_BYTE_STREAM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"

namespace tfdist::io {

// Whole-file compression of a TFRecord file.
enum class Compression {
  kNone,  // TensorFlow's compression_type=""
  kGzip,  // "GZIP": a gzip stream, possibly several concatenated members
  kZlib,  // "ZLIB": a zlib stream
  kAuto,  // sniff the gzip/zlib magic, confirmed by a valid first record
};

// Accepts TensorFlow's spellings ("", "GZIP", "ZLIB") and "none", "gzip",
// "zlib", "auto" in any case. Error: InvalidArgument naming the accepted values.
Result<Compression> ParseCompression(std::string_view text);
// "none", "GZIP", "ZLIB" or "auto".
std::string_view CompressionName(Compression c);

// A sequential source of bytes. Not thread-safe.
class ByteSource {
 public:
  virtual ~ByteSource() = default;

  // Reads up to dst.size() bytes into dst.
  // Return values:
  //  * n == dst.size()  - success
  //  * n < dst.size()   - the end of the input was reached after n bytes, or
  //                       an error stopped the source there, which the next
  //                       call returns (an inflated stream hands out the
  //                       bytes before damage first); the next call returns
  //                       0 at the end
  //  * error            - NotFound/DataLoss/Internal naming the file
  // So a reader that must not miss an error reads until 0.
  virtual Result<size_t> Read(std::span<char> dst) = 0;

  // The name used in messages: the file's path.
  virtual const std::string& name() const = 0;

  // The total size in bytes when known in advance (an uncompressed file).
  virtual std::optional<uint64_t> size() const { return std::nullopt; }
};

// Cold reads, for the whole process: OpenFileSource evicts a regular file
// from the page cache (posix_fadvise DONTNEED) when it opens it at its first
// byte, so that what follows measures the storage, not memory. Reads by
// offset (FetchRecords) and parts opened past the start do not evict.
void SetColdReads(bool cold);
bool ColdReads();

// Opens a file for sequential reading from byte `offset` on. "-" reads
// standard input (REQUIRES: offset 0). size() is what lies past `offset`.
// Error: NotFound (missing, unreadable, a directory) naming the path.
Result<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path, uint64_t offset = 0);

// A source over bytes held in memory.
std::unique_ptr<ByteSource> NewMemorySource(std::string name, std::string data);

// A source that yields `prefix`, then the rest of `inner` (used to read again
// the bytes that were sniffed to detect the compression).
std::unique_ptr<ByteSource> NewPrefixedSource(std::string prefix,
                                              std::unique_ptr<ByteSource> inner);

// Decompresses `inner`, which holds a gzip (`kGzip`, concatenated members are
// read one after another) or zlib (`kZlib`) stream. A damaged or truncated
// stream is DataLoss naming the file and the compressed byte offset.
// REQUIRES: c is kGzip or kZlib.
std::unique_ptr<ByteSource> NewInflatingSource(std::unique_ptr<ByteSource> inner, Compression c);

// Time spent inside zlib's inflate and the bytes it produced, summed over
// every inflating source and thread of the process (tfdist run's
// "decompress" stage). Thread-safe.
struct InflateTotals {
  double seconds = 0;
  uint64_t bytes = 0;
};
InflateTotals ProcessInflateTotals();

// Looks at the first bytes of a file (`prefix`, the whole file when
// `whole_file`) and says how it is compressed: gzip or zlib when the magic
// matches and the first record read through the decompressor has a valid
// length CRC (or the stream holds no records); kNone when the raw bytes start
// with a valid record (or are empty); otherwise what the magic says.
Compression DetectCompression(std::string_view prefix);

// The compression that a file's first bytes `prefix` prove, by the rule of
// DetectCompression without its fallback on the magic alone: kGzip or kZlib
// when the magic matches and the first record read through the
// decompressor has a valid length CRC (or the stream holds no records);
// kNone when the raw bytes start with a valid record; kAuto when none of
// these holds (an empty prefix, damage, or bytes that are no TFRecord file).
Compression ProvenCompression(std::string_view prefix);

// A sequential sink of bytes. Not thread-safe.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status Write(std::string_view data) = 0;
  // Flushes everything to the layer below; a file sink also fsyncs.
  virtual Status Finish() = 0;
};

// Compresses into `inner` as gzip or zlib. Finish() ends the stream and
// finishes `inner`. `level` -1: ISA-L's fast level (the size of zlib's
// default, several times its speed); 0 to 9: zlib at that level.
// REQUIRES: c is kGzip or kZlib; level in [-1, 9].
std::unique_ptr<ByteSink> NewDeflatingSink(std::unique_ptr<ByteSink> inner, Compression c,
                                           int level);

// A sink that appends to *out, which must outlive it.
std::unique_ptr<ByteSink> NewStringSink(std::string* out);

}  // namespace tfdist::io

#endif  // TFDIST_IO_BYTE_STREAM_H_
