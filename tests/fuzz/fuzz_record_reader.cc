// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Fuzz target: the record reader over any bytes, raw, GZIP, ZLIB or sniffed.
// The first byte picks the compression and the reading mode; the rest is
// the file. Every input must end in records and then a clean end or an
// error (never a crash, a hang, or memory beyond the input's size and the
// reader's blocks).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_target.h"
#include "tfdist/io/byte_stream.h"
#include "tfdist/io/record_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tfdist::io::Compression;
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  static constexpr Compression kCompressions[] = {Compression::kNone, Compression::kGzip,
                                                  Compression::kZlib, Compression::kAuto};
  tfdist::io::RecordReaderOptions options;
  options.compression = kCompressions[mode & 3];
  options.verify_checksums = (mode & 4) == 0;
  options.block_size = (mode & 8) ? 7 : 4096;  // tiny blocks split every field
  options.read_ahead = 0;
  std::string file(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto reader = tfdist::io::RecordReader::FromSource(
      tfdist::io::NewMemorySource("fuzz", std::move(file)), options);
  if (!reader.ok()) return 0;
  if (mode & 16) {
    (*reader)->SkipRecords(~uint64_t{0});
  } else {
    std::string_view record;
    while ((*reader)->ReadRecord(record)) {
    }
  }
  // Whatever happened is said: a clean end reads as OK, anything else names
  // an error.
  if (!(*reader)->status().ok() && (*reader)->status().ToString().empty()) __builtin_trap();
  return 0;
}
