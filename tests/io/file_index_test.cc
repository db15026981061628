// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// FILE.idx: DALI's format, checked against offsets computed here, and
// trusted only while it fits its file, by every reader alike.

#include "tfdist/io/file_index.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <optional>
#include <string>
#include <vector>

#include "test_util.h"
#include "tfdist/io/record_writer.h"

namespace tfdist::io {
namespace {

// What each reader makes of the index of `dir`/`name`: nullopt and the
// reason, or the count; the three must agree.
struct Read {
  std::optional<FileRecords> count;
  std::string stale;
};

Read ReadAll(const testing::TempDir& dir, const std::string& name) {
  const std::string path = dir.File(name);
  Read by_path;
  std::optional<IndexedCount> c = ReadIndex(path, "", &by_path.stale);
  if (c) {
    by_path.count = c->count;
    CHECK(c->index_path == path + ".idx");
  }
  // Relative to the open folder: the same verdict and the same words.
  const int dir_fd = open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(dir_fd >= 0);
  std::string stale_at = "not cleared";
  std::optional<IndexedCount> at = ReadIndexAt(dir_fd, dir.path(), name, &stale_at);
  close(dir_fd);
  CHECK(at.has_value() == c.has_value());
  if (at && c) CHECK(at->count == c->count);
  CHECK(stale_at == by_path.stale);
  // As extents: the same verdict, and records that add up to the count.
  std::string stale_extents = "not cleared";
  std::optional<std::vector<RecordExtent>> extents = ReadRecordExtents(path, &stale_extents);
  CHECK(extents.has_value() == c.has_value());
  CHECK(stale_extents == by_path.stale);
  if (extents && c) {
    FileRecords sum;
    uint64_t end = 0;
    for (const RecordExtent& e : *extents) {
      CHECK(e.offset == end);
      end = e.offset + e.size;
      ++sum.records;
      sum.payload_bytes += e.size - 16;
    }
    CHECK(sum == c->count);
  }
  return by_path;
}

TEST_CASE("an index lists each record's offset and framed size, as tfrecord2idx does") {
  testing::TempDir dir;
  const std::vector<std::string> records = {"", "a", std::string(1000, 'x'), "hello"};
  const std::string path = dir.File("f.tfrecord");
  testing::WriteFile(path, testing::Frame(records));
  auto index = WriteIndex(path, "", false);
  REQUIRE(index.ok());
  CHECK(index->index_path == path + ".idx");
  CHECK(index->count == FileRecords{4, 1006});
  CHECK(testing::ReadFile(path + ".idx") == testing::DaliIndex(records));
  const Read read = ReadAll(dir, "f.tfrecord");
  CHECK(read.count == FileRecords{4, 1006});
  CHECK(read.stale.empty());
  std::string stale;
  auto extents = ReadRecordExtents(path, &stale);
  REQUIRE(extents.has_value());
  REQUIRE(extents->size() == 4);
  CHECK(extents->at(2).offset == 16 + 17);
  CHECK(extents->at(2).size == 1016);
  // Elsewhere, by the file's base name.
  CHECK(WriteIndex(path, dir.path() + "/", true).ok());
  CHECK(IndexPathFor("a/b/c.tfrecord", "out") == "out/c.tfrecord.idx");
  CHECK(IndexPathFor("a/b/c.tfrecord") == "a/b/c.tfrecord.idx");
}

TEST_CASE("a stale, foreign or malformed index is ignored with the reason, by every reader") {
  testing::TempDir dir;
  const std::string path = dir.File("g");
  // Two records of 19 framed bytes: 38 bytes.
  testing::WriteFile(path, testing::Frame({"one", "two"}));
  CHECK(ReadAll(dir, "g").count == std::nullopt);
  CHECK(ReadAll(dir, "g").stale.empty());  // no index at all
  struct Case {
    const char* index;
    std::string stale;  // "" when the index is trusted
  };
  const std::string idx = path + ".idx";
  const Case cases[] = {
      {"0 19\n19 19\n", ""},
      {"0 19\r\n19 19\r\n", ""},
      {"  0\t19 19 19", ""},  // numbers in pairs, however spaced
      {"0 19\n", idx + " covers 19 bytes; " + path + " has 38"},
      {"", idx + " covers 0 bytes; " + path + " has 38"},
      {"0 19\nx y\n", idx + ": line 2 is not \"offset size\""},
      {"0 19\n19\n", idx + ": line 2 is not \"offset size\""},
      {"0 19\n19 19\nz", idx + ": line 3 is not \"offset size\""},
      {"0 19\n-19 19\n", idx + ": line 2 is not \"offset size\""},
      {"0 19\n20 18\n", idx + ": record 1 does not follow the one before"},
      {"0 15\n15 23\n", idx + ": record 0 does not follow the one before"},
      {"19 19\n0 19\n", idx + ": record 0 does not follow the one before"},
      {"0 19\n19 19\n38 0\n", idx + ": record 2 does not follow the one before"},
      {"0 39\n", idx + ": record 0 ends past the 38 bytes of " + path},
      // Sizes that wrap past 2^64 and come back to the file's 38 bytes.
      {"0 16\n16 18446744073709551600\n0 38\n",
       idx + ": record 1 ends past the 38 bytes of " + path},
      {"0 19\n19 99999999999999999999999\n", idx + ": line 2 is not \"offset size\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.index);
    testing::WriteFile(idx, c.index);
    const Read read = ReadAll(dir, "g");
    CHECK(read.stale == c.stale);
    CHECK(read.count.has_value() == c.stale.empty());
    if (read.count) CHECK(*read.count == FileRecords{2, 6});
  }
  // Framing the bytes otherwise is not seen without reading the records.
  testing::WriteFile(idx, "0 38\n");
  CHECK(ReadAll(dir, "g").count == FileRecords{1, 22});
  // An index older than its file.
  REQUIRE(WriteIndex(path, "", true).ok());
  struct utimbuf old = {1, 1};
  REQUIRE(utime(idx.c_str(), &old) == 0);
  CHECK(ReadAll(dir, "g").stale == idx + " is older than " + path);
  // An empty file and an empty index describe each other.
  testing::WriteFile(dir.File("empty"), "");
  testing::WriteFile(dir.File("empty.idx"), "");
  CHECK(ReadAll(dir, "empty").count == FileRecords{0, 0});
}

TEST_CASE("no index for a compressed or damaged file, and none left behind") {
  testing::TempDir dir;
  const std::string gz = dir.File("c.gz");
  {
    auto w = RecordWriter::Open(gz, RecordWriterOptions{Compression::kGzip, -1, false, true});
    REQUIRE(w.ok());
    REQUIRE((*w)->Write("x").ok());
    REQUIRE((*w)->Close().ok());
  }
  auto compressed = WriteIndex(gz, "", false);
  CHECK(compressed.status().code() == StatusCode::kInvalidArgument);
  const std::string bad = dir.File("bad");
  testing::WriteFile(bad, testing::FlipByte(testing::Frame({"abc", "def"}), 21 + 13));
  auto damaged = WriteIndex(bad, "", false);
  CHECK(damaged.status().code() == StatusCode::kDataLoss);
  struct stat st;
  CHECK(stat((bad + ".idx").c_str(), &st) != 0);
  CHECK(stat((gz + ".idx").c_str(), &st) != 0);
  // Nor over an existing index, unless asked.
  const std::string good = dir.File("good");
  testing::WriteFile(good, testing::Frame({"abc"}));
  testing::WriteFile(good + ".idx", "keep");
  auto exists = WriteIndex(good, "", false);
  CHECK(exists.status().code() == StatusCode::kInvalidArgument);
  CHECK(exists.status().message() == good + ".idx: already exists");
  CHECK(exists.status().advice() == Advice{Remedy::kOverwrite, ""});
  CHECK(testing::ReadFile(good + ".idx") == "keep");
  CHECK(WriteIndex(good, "", true).ok());
  CHECK(testing::ReadFile(good + ".idx") == "0 19\n");
}

}  // namespace
}  // namespace tfdist::io
