// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Fuzz target: the index parsers. The first byte picks which: the
// directory index (its text parsed; what parses must format back to text
// that parses to the same contents), or a file's .idx (written beside a
// data file in a temporary folder, stamped as if written for it, then read
// as every reader reads it).

#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "file_index_internal.h"
#include "fuzz_target.h"
#include "tfdist/io/directory_index.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/index_location.h"

namespace {

std::string folder;

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char dir[] = "/tmp/tfdist-fuzz-index.XXXXXX";
  if (mkdtemp(dir) == nullptr) std::abort();
  folder = dir;
  tfdist::io::SetIndexFolder(folder + "/index");
  if (mkdir((folder + "/index").c_str(), 0755) != 0) std::abort();
  // A data file of 64 bytes: an index that fits it ends there.
  WriteFile(folder + "/data", std::string(64, 'x'));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) == 0) {
    auto parsed = tfdist::io::ParseDirectoryIndex(text);
    if (!parsed.ok()) return 0;
    // What parses is what the writer may write: it formats, and reads back
    // the same.
    auto again = tfdist::io::FormatDirectoryIndex(*parsed);
    if (!again.ok()) __builtin_trap();
    auto reparsed = tfdist::io::ParseDirectoryIndex(*again);
    if (!reparsed.ok() || !(*reparsed == *parsed)) __builtin_trap();  // no round trip
    return 0;
  }
  const std::string data_path = folder + "/data";
  const std::string index_path = tfdist::io::IndexPathFor(data_path);
  if (index_path.empty()) std::abort();
  WriteFile(index_path, text);
  if (!tfdist::io::StampIndex(data_path).ok()) std::abort();
  std::string stale;
  (void)tfdist::io::ReadIndex(data_path, &stale);
  (void)tfdist::io::ReadRecordExtents(data_path, &stale);
  return 0;
}
