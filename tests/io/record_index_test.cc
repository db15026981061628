// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Record indexes: DALI's format, checked against offsets computed here, and
// trusted only while they fit their file.

#include "tfdist/record_index.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <string_view>

#include "test_util.h"

namespace tfdist::io {
namespace {

TEST_CASE("an index lists each record's offset and framed size, as tfrecord2idx does") {
  testing::TempDir dir;
  const std::vector<std::string> records = {"", "a", std::string(1000, 'x'), "hello"};
  const std::string path = dir.File("f.tfrecord");
  testing::WriteFile(path, testing::Frame(records));
  auto index = WriteIndex(path, "", false);
  REQUIRE(index.ok());
  CHECK(index->index_path == path + ".idx");
  std::string want;
  uint64_t offset = 0;
  for (const auto& r : records) {
    want += fmt::format("{} {}\n", offset, r.size() + 16);
    offset += r.size() + 16;
  }
  CHECK(testing::ReadFile(path + ".idx") == want);
  std::string stale;
  auto read = ReadIndex(path, "", &stale);
  REQUIRE(read.has_value());
  CHECK(read->count.records == 4);
  CHECK(read->count.payload_bytes == 1006);
  CHECK(stale.empty());
  // Elsewhere, by the file's base name.
  CHECK(WriteIndex(path, dir.path() + "/", true).ok());
  CHECK(IndexPathFor("a/b/c.tfrecord", "out") == "out/c.tfrecord.idx");
}

TEST_CASE("a stale, foreign or malformed index is ignored with the reason") {
  testing::TempDir dir;
  const std::string path = dir.File("g");
  testing::WriteFile(path, testing::Frame({"one", "two"}));
  std::string stale;
  CHECK_FALSE(ReadIndex(path, "", &stale).has_value());
  CHECK(stale.empty());  // no index at all
  testing::WriteFile(path + ".idx", "0 19\n");
  CHECK_FALSE(ReadIndex(path, "", &stale).has_value());
  CHECK(stale.find("covers 19 bytes") != std::string::npos);
  testing::WriteFile(path + ".idx", "0 19\nx y\n");
  CHECK_FALSE(ReadIndex(path, "", &stale).has_value());
  CHECK(stale.find("line 2") != std::string::npos);
  REQUIRE(WriteIndex(path, "", true).ok());
  struct utimbuf old = {1, 1};
  REQUIRE(utime((path + ".idx").c_str(), &old) == 0);
  CHECK_FALSE(ReadIndex(path, "", &stale).has_value());
  CHECK(stale.find("older than") != std::string::npos);
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
}

TEST_CASE("a directory index round-trips through its text") {
  const std::vector<DirectoryIndexEntry> entries = {
      {"a b.tfrecord", 102, 1'700'000'000'123'456'789, 6, 6},
      {"empty", 0, -5, 0, 0},
      {"z", uint64_t{1} << 40, 1, uint64_t{1} << 33, uint64_t{1} << 39}};
  const std::string text = FormatDirectoryIndex(entries);
  CHECK(text.starts_with(std::string(kDirectoryIndexHeader) + "\n"));
  CHECK(text.find("102 1700000000123456789 6 6 a b.tfrecord\n") != std::string::npos);
  auto parsed = ParseDirectoryIndex(text);
  REQUIRE(parsed.ok());
  CHECK(*parsed == entries);
  CHECK(ParseDirectoryIndex("tfdist-directory-index 2\n").status().code() ==
        StatusCode::kInvalidArgument);
  auto bad = ParseDirectoryIndex(std::string(kDirectoryIndexHeader) + "\n1 2 3 4 a\n1 2 x 4 b\n");
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad.status().message().find("line 3") != std::string::npos);
  CHECK_FALSE(ParseDirectoryIndex(std::string(kDirectoryIndexHeader) + "\n1 2 3 4 a/b\n").ok());
}

// Sets `path`'s modification time to `seconds` after the epoch.
void SetMtime(const std::string& path, int64_t seconds) {
  const timespec times[2] = {{seconds, 0}, {seconds, 0}};
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

std::vector<std::string_view> Views(const std::vector<std::string>& names) {
  return {names.begin(), names.end()};
}

TEST_CASE("a directory index counts each file of the folder once, from FILE.idx or a scan") {
  testing::TempDir dir;
  testing::WriteFile(dir.File("b.tfrecord"), testing::Frame({"one", "two", "three"}));
  testing::WriteFile(dir.File("a with space"), testing::Frame({"x"}));
  testing::WriteFile(dir.File("empty"), "");
  testing::WriteFile(dir.File(".hidden"), testing::Frame({"h", "hh"}));
  testing::WriteFile(dir.File("damaged"), testing::FlipByte(testing::Frame({"abc"}), 13));
  {
    auto w = RecordWriter::Open(dir.File("c.gz"),
                                RecordWriterOptions{Compression::kGzip, -1, false, true});
    REQUIRE(w.ok());
    REQUIRE((*w)->Write("x").ok());
    REQUIRE((*w)->Close().ok());
  }
  REQUIRE(mkdir(dir.File("sub").c_str(), 0755) == 0);
  REQUIRE(WriteIndex(dir.File("b.tfrecord"), "", false).ok());
  auto report = WriteDirectoryIndex(dir.path(), "", false);
  REQUIRE(report.ok());
  CHECK(report->index_path == dir.File(kDirectoryIndexName));
  CHECK(report->files == 4);
  CHECK(report->records == 6);
  CHECK(report->payload_bytes == 3 + 3 + 5 + 1 + 1 + 2);
  CHECK(report->from_file_indexes == 1);
  REQUIRE(report->skipped.size() == 2);
  CHECK(report->skipped[0].first == dir.File("c.gz"));
  CHECK(report->skipped[0].second == "GZIP-compressed");
  CHECK(report->skipped[1].first == dir.File("damaged"));
  auto entries = ParseDirectoryIndex(testing::ReadFile(dir.File(kDirectoryIndexName)));
  REQUIRE(entries.ok());
  std::vector<std::string> listed;
  for (const auto& e : *entries) listed.push_back(e.name);
  CHECK(listed == std::vector<std::string>{".hidden", "a with space", "b.tfrecord", "empty"});
  struct stat st;
  REQUIRE(stat(dir.File("b.tfrecord").c_str(), &st) == 0);
  CHECK((*entries)[2].size == static_cast<uint64_t>(st.st_size));
  CHECK((*entries)[2].mtime_ns == st.st_mtim.tv_sec * 1'000'000'000 + st.st_mtim.tv_nsec);
  CHECK((*entries)[2].records == 3);
  // Not again without overwrite.
  CHECK(WriteDirectoryIndex(dir.path(), "", false).status().code() == StatusCode::kInvalidArgument);
  CHECK(WriteDirectoryIndex(dir.path() + "/", "", true).ok());

  const std::vector<std::string> names = {".hidden", "a with space", "b.tfrecord", "c.gz", "empty"};
  DirectoryLookup found = LookUpDirectoryIndex(dir.path(), Views(names));
  CHECK(found.found);
  CHECK(found.problem.empty());
  CHECK(found.matched == std::vector<uint8_t>{1, 1, 1, 0, 1});
  CHECK(found.stale == 0);
  CHECK(found.counts[2].records == 3);
  CHECK(found.counts[2].payload_bytes == 11);
  CHECK(found.counts[0].records == 2);
  CHECK_FALSE(LookUpDirectoryIndex(dir.File("sub"), Views(names)).found);
  CHECK(WriteDirectoryIndex(dir.File("missing"), "", false).status().code() ==
        StatusCode::kNotFound);
}

TEST_CASE("stale directory index entries are ignored: size, mtime, removed; new files have none") {
  testing::TempDir dir;
  for (const char* n : {"f1", "f2", "f3", "f4"}) {
    testing::WriteFile(dir.File(n), testing::Frame({"r", n}));
    SetMtime(dir.File(n), 1'000'000);
  }
  REQUIRE(WriteDirectoryIndex(dir.path(), "", false).ok());
  const std::vector<std::string> names = {"f1", "f2", "f3", "f4", "f5"};
  DirectoryLookup before = LookUpDirectoryIndex(dir.path(), Views(names));
  CHECK(before.matched == std::vector<uint8_t>{1, 1, 1, 1, 0});
  CHECK(before.stale == 0);
  // f1: another size, same mtime; f2: same size, another mtime; f3 removed;
  // f5 added after the index.
  testing::WriteFile(dir.File("f1"), testing::Frame({"r", "f1", "more"}));
  SetMtime(dir.File("f1"), 1'000'000);
  SetMtime(dir.File("f2"), 1'000'001);
  REQUIRE(unlink(dir.File("f3").c_str()) == 0);
  testing::WriteFile(dir.File("f5"), testing::Frame({"new"}));
  DirectoryLookup after = LookUpDirectoryIndex(dir.path(), Views(names));
  CHECK(after.matched == std::vector<uint8_t>{0, 0, 0, 1, 0});
  CHECK(after.stale == 3);
  CHECK(after.counts[3].records == 2);
  // An entry as new as the index itself is not trusted: the file could have
  // changed in the same clock tick without changing size or mtime.
  struct stat index_st;
  REQUIRE(stat(dir.File(kDirectoryIndexName).c_str(), &index_st) == 0);
  const timespec same[2] = {index_st.st_mtim, index_st.st_mtim};
  REQUIRE(utimensat(AT_FDCWD, dir.File("f4").c_str(), same, 0) == 0);
  std::string text = testing::ReadFile(dir.File(kDirectoryIndexName));
  const std::string old_f4 =
      fmt::format("{} 1000000000000000 ", testing::ReadFile(dir.File("f4")).size());
  const std::string new_f4 =
      fmt::format("{} {} ", testing::ReadFile(dir.File("f4")).size(),
                  index_st.st_mtim.tv_sec * 1'000'000'000 + index_st.st_mtim.tv_nsec);
  REQUIRE(text.find(old_f4) != std::string::npos);
  text.replace(text.find(old_f4), old_f4.size(), new_f4);
  testing::WriteFile(dir.File(kDirectoryIndexName), text);
  const timespec keep[2] = {index_st.st_mtim, index_st.st_mtim};
  REQUIRE(utimensat(AT_FDCWD, dir.File(kDirectoryIndexName).c_str(), keep, 0) == 0);
  DirectoryLookup racy = LookUpDirectoryIndex(dir.path(), Views(names));
  CHECK(racy.matched[3] == 0);
  // Rewritten, the index covers the folder as it is now.
  REQUIRE(WriteDirectoryIndex(dir.path(), "", true).ok());
  DirectoryLookup rewritten = LookUpDirectoryIndex(dir.path(), Views(names));
  CHECK(rewritten.matched == std::vector<uint8_t>{1, 1, 0, 1, 1});
  CHECK(rewritten.stale == 0);  // f3 is gone from the folder and from the index
  CHECK(rewritten.counts[0].records == 3);
  // A damaged index is ignored as a whole, with the reason.
  testing::WriteFile(dir.File(kDirectoryIndexName),
                     std::string(kDirectoryIndexHeader) + "\n1 2 3 4 f1\nnot a line\n");
  DirectoryLookup damaged = LookUpDirectoryIndex(dir.path(), Views(names));
  CHECK(damaged.found);
  CHECK(damaged.problem.find("line 3") != std::string::npos);
  CHECK(damaged.matched == std::vector<uint8_t>(5, 0));
}

TEST_CASE("a directory index matches names across many chunks") {
  testing::TempDir dir;
  // Long names make a large index: it is read in chunks of whole lines.
  std::vector<DirectoryIndexEntry> entries;
  std::vector<std::string> names;
  const std::string frame = testing::Frame({"abc"});
  for (int i = 0; i < 3000; ++i) {
    const std::string name = fmt::format("{:0>200}", i);
    if (i % 3 != 1) {
      testing::WriteFile(dir.File(name), frame);
      SetMtime(dir.File(name), 1'000'000 + i);
    }
    entries.push_back({name, frame.size(), (int64_t{1'000'000} + i) * 1'000'000'000, 1, 3});
    if (i % 3 != 2) names.push_back(name);  // every third file is not asked for
  }
  testing::WriteFile(dir.File(kDirectoryIndexName), FormatDirectoryIndex(entries));
  DirectoryLookup found = LookUpDirectoryIndex(dir.path(), Views(names));
  REQUIRE(found.problem.empty());
  uint64_t matched = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const int number = std::stoi(names[i]);
    CAPTURE(number);
    CHECK(found.matched[i] == (number % 3 == 0 ? 1 : 0));
    matched += found.matched[i];
  }
  CHECK(matched == 1000);
  CHECK(found.stale == 1000);  // the missing files
}

}  // namespace
}  // namespace tfdist::io
