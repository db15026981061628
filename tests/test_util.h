// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Helpers for tests: framing, compression, byte damage, temporary folders,
// batch labels.

#ifndef TFDIST_TESTS_TEST_UTIL_H_
#define TFDIST_TESTS_TEST_UTIL_H_

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tfdist/data/dataset.h"
#include "tfdist/io/byte_stream.h"
#include "tfdist/io/index_location.h"
#include "tfdist/io/record_writer.h"

namespace tfdist::testing {

// The framed bytes of `records`.
inline std::string Frame(const std::vector<std::string>& records) {
  std::string out;
  for (const std::string& r : records) io::AppendRecord(&out, r);
  return out;
}

// The DALI tfrecord2idx index of Frame(records), computed here: "offset
// size" per record, size counting the framing.
inline std::string DaliIndex(const std::vector<std::string>& records) {
  std::string lines;
  uint64_t offset = 0;
  for (const std::string& r : records) {
    lines += fmt::format("{} {}\n", offset, r.size() + 16);
    offset += r.size() + 16;
  }
  return lines;
}

// `raw` as a whole gzip or zlib stream (kNone: as it is).
inline std::string Compress(const std::string& raw, io::Compression c) {
  if (c == io::Compression::kNone) return raw;
  std::string out;
  auto sink = io::NewDeflatingSink(io::NewStringSink(&out), c, -1);
  REQUIRE(sink->Write(raw).ok());
  REQUIRE(sink->Finish().ok());
  return out;
}

inline std::string FlipByte(std::string s, size_t offset) {
  s.at(offset) = static_cast<char>(s.at(offset) ^ 0x40);
  return s;
}

inline std::string Truncate(std::string s, size_t size) {
  s.resize(size);
  return s;
}

// While it lives, indexes are read and written in `folder`
// (io::SetIndexFolder): FILE.idx beside FILE when `folder` is the data's.
class IndexesIn {
 public:
  explicit IndexesIn(const std::string& folder) { io::SetIndexFolder(folder); }
  ~IndexesIn() { io::SetIndexFolder(""); }
  IndexesIn(const IndexesIn&) = delete;
  IndexesIn& operator=(const IndexesIn&) = delete;
};

// A fresh folder under $TMPDIR, removed with its content on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tfdist-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string File(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The names in folder `dir`, sorted.
inline std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary) << data;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// An element as the pipeline tests print it: its label, or a batch as
// "[a,b,[c,d]]".
inline std::string ElementText(const data::Element& e) {
  if (e.kind != data::Element::Kind::kBatch) return e.Label();
  std::string out = "[";
  for (size_t i = 0; i < e.items.size(); ++i) out += (i ? "," : "") + ElementText(e.items[i]);
  return out + "]";
}

// "[a,b,c]": the labels of a batch's elements (doc/semantics.md, "Elements and labels").
inline std::string BatchLabels(const std::vector<data::Element>& batch) {
  std::string out = "[";
  for (size_t i = 0; i < batch.size(); ++i) out += (i ? "," : "") + batch[i].Label();
  return out + "]";
}

}  // namespace tfdist::testing

#endif  // TFDIST_TESTS_TEST_UTIL_H_
