// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// FILE.idx: DALI's format, checked against offsets computed here, and
// trusted only while it fits its file, by every reader alike.

#include "tfdist/io/file_index.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "file_index_internal.h"
#include "file_stamp.h"
#include "test_util.h"
#include "tfdist/io/crc32c.h"
#include "tfdist/io/directory_index.h"
#include "tfdist/io/index_location.h"
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
  std::optional<IndexedCount> c = ReadIndex(path, &by_path.stale);
  if (c) {
    by_path.count = c->count;
    CHECK(c->index_path == path + ".idx");
  }
  // Relative to the open folder: the same verdict and the same words.
  const int dir_fd = open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(dir_fd >= 0);
  std::string stale_at = "not cleared";
  std::optional<IndexedCount> at =
      ReadIndexAt(IndexedFolder{dir_fd, dir.path(), dir_fd, dir.path()}, name, &stale_at);
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

TEST_CASE("an index written in parts at any cuts is WriteIndex's, byte for byte") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  std::vector<std::string> records;
  for (size_t i = 0; i < 400; ++i) records.push_back(std::string((i * 37) % 900, 'a' + i % 26));
  const std::string framed = testing::Frame(records);
  const std::string path = dir.File("f.tfrecord");
  testing::WriteFile(path, framed);
  REQUIRE(WriteIndex(path, false).ok());
  const std::string want = testing::ReadFile(path + ".idx");
  const std::string want_stamp = testing::ReadFile(path + ".idx.stamp");
  for (size_t parts : {1, 2, 3, 7}) {
    CAPTURE(parts);
    auto index = IndexInParts::Begin(path, /*overwrite=*/true);
    REQUIRE(index.ok());
    std::vector<RangeCount> counted;
    std::vector<std::string> files;
    for (size_t k = 0; k < parts; ++k) {
      // Cuts 5 bytes past an even split: inside records.
      const uint64_t from = k == 0 ? 0 : framed.size() / parts * k + 5;
      const uint64_t to = k + 1 == parts ? framed.size() : framed.size() / parts * (k + 1) + 5;
      files.push_back(dir.File(fmt::format("part-{}", k)));
      counted.push_back(WriteIndexPart(path, from, to, files.back()));
    }
    auto written = (*index)->Finish(counted, files);
    REQUIRE(written.ok());
    CHECK(written->count.records == records.size());
    CHECK(testing::ReadFile(path + ".idx") == want);
    CHECK(testing::ReadFile(path + ".idx.stamp") == want_stamp);
    for (const std::string& f : files) CHECK_FALSE(std::filesystem::exists(f));
  }
  // A damaged record: WriteIndex's error, and no index.
  const std::string bad = dir.File("bad.tfrecord");
  testing::WriteFile(bad, testing::FlipByte(framed, framed.size() * 2 / 3));
  const Status alone = WriteIndex(bad, false).status();
  REQUIRE(alone.code() == StatusCode::kDataLoss);
  auto index = IndexInParts::Begin(bad, false);
  REQUIRE(index.ok());
  std::vector<RangeCount> counted;
  std::vector<std::string> files;
  for (size_t k = 0; k < 3; ++k) {
    files.push_back(dir.File(fmt::format("bad-part-{}", k)));
    counted.push_back(WriteIndexPart(bad, framed.size() / 3 * k,
                                     k == 2 ? framed.size() : framed.size() / 3 * (k + 1),
                                     files.back()));
  }
  CHECK((*index)->Finish(counted, files).status() == alone);
  CHECK_FALSE(std::filesystem::exists(bad + ".idx"));
  for (const std::string& f : files) CHECK_FALSE(std::filesystem::exists(f));
}

TEST_CASE("an index lists each record's offset and framed size, as tfrecord2idx does") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  const std::vector<std::string> records = {"", "a", std::string(1000, 'x'), "hello"};
  const std::string path = dir.File("f.tfrecord");
  testing::WriteFile(path, testing::Frame(records));
  auto index = WriteIndex(path, false);
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
  // In a named folder, by the file's base name.
  SetIndexFolder("out/");
  CHECK(IndexPathFor("a/b/c.tfrecord") == "out/c.tfrecord.idx");
}

TEST_CASE("a stale, foreign or malformed index is ignored with the reason, by every reader") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
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
    REQUIRE(StampIndex(path).ok());
    const Read read = ReadAll(dir, "g");
    CHECK(read.stale == c.stale);
    CHECK(read.count.has_value() == c.stale.empty());
    if (read.count) CHECK(*read.count == FileRecords{2, 6});
  }
  // Framing the bytes otherwise is not seen without reading the records.
  testing::WriteFile(idx, "0 38\n");
  REQUIRE(StampIndex(path).ok());
  CHECK(ReadAll(dir, "g").count == FileRecords{1, 22});
  // An index its stamp was not written with (another index, or one cut
  // short), and an index without a stamp (an older tfdist's, or DALI's).
  REQUIRE(WriteIndex(path, true).ok());
  testing::WriteFile(idx, "0 19\n19 19\n\n");
  CHECK(ReadAll(dir, "g").stale ==
        idx + " is not the index its stamp " + idx + ".stamp was written with");
  testing::WriteFile(idx + ".stamp", "tfdist-index-stamp 1 1 2 3");
  CHECK(ReadAll(dir, "g").stale == idx + ".stamp: is not an index stamp");
  REQUIRE(unlink((idx + ".stamp").c_str()) == 0);
  CHECK(ReadAll(dir, "g").stale == idx + " has no stamp " + idx +
                                       ".stamp (written by an older tfdist, or by another tool), "
                                       "so it cannot be checked against " +
                                       path);
  // A file rewritten in place with the same size, its mtime put back (as
  // cp -p, rsync -t and touch -r do), or with a future mtime kept: its
  // change time moved, so the index no longer fits.
  REQUIRE(WriteIndex(path, true).ok());
  CHECK(ReadAll(dir, "g").count == FileRecords{2, 6});
  struct stat before;
  REQUIRE(stat(path.c_str(), &before) == 0);
  testing::WriteFile(path, testing::Frame({"uno", "dos"}));
  const struct timespec back[2] = {before.st_atim, before.st_mtim};
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), back, 0) == 0);
  CHECK(ReadAll(dir, "g").stale ==
        idx + " was written for another version of " + path + " (its change time changed)");
  const struct timespec future[2] = {{0, UTIME_OMIT}, {4'102'444'800, 0}};  // 2100-01-01
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), future, 0) == 0);
  REQUIRE(WriteIndex(path, true).ok());
  CHECK(ReadAll(dir, "g").count == FileRecords{2, 6});
  testing::WriteFile(path, testing::Frame({"one", "two"}));
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), future, 0) == 0);
  CHECK(ReadAll(dir, "g").stale ==
        idx + " was written for another version of " + path + " (its change time changed)");
  // A file renamed into place (rsync's way): another inode.
  REQUIRE(WriteIndex(path, true).ok());
  testing::WriteFile(path + ".new", testing::Frame({"one", "two"}));
  REQUIRE(stat(path.c_str(), &before) == 0);
  REQUIRE(rename((path + ".new").c_str(), path.c_str()) == 0);
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), future, 0) == 0);
  CHECK(ReadAll(dir, "g").stale.starts_with(idx + " was written for another version of " + path +
                                            " (its inode"));
  // An index larger than any index of its file is not read at all.
  testing::WriteFile(idx, "0 19\n19 19\n" + std::string(200, ' '));
  CHECK(ReadAll(dir, "g").stale ==
        idx + " has 211 bytes, more than an index of the 38 bytes of " + path + " can");
  // Only a regular file is an index: a FIFO in its place is not opened for
  // good (which would wait for a writer), nor read.
  REQUIRE(unlink(idx.c_str()) == 0);
  REQUIRE(mkfifo(idx.c_str(), 0644) == 0);
  CHECK(ReadAll(dir, "g").count == std::nullopt);
  REQUIRE(unlink(idx.c_str()) == 0);
  // An empty file and an empty index describe each other.
  testing::WriteFile(dir.File("empty"), "");
  testing::WriteFile(dir.File("empty.idx"), "");
  REQUIRE(StampIndex(dir.File("empty")).ok());
  CHECK(ReadAll(dir, "empty").count == FileRecords{0, 0});
}

TEST_CASE("where change times are not trusted, a content fingerprint is checked too") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  // The fingerprint: the whole of a small file; 16 blocks of 4 KiB spread
  // over a large one, first and last included.
  const std::string small = dir.File("small");
  testing::WriteFile(small, "hello");
  const int small_fd = open(small.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(small_fd >= 0);
  CHECK(ContentFingerprint(small_fd, 5) == crc32c::Value("hello"));
  CHECK(ContentFingerprint(small_fd, 6) == std::nullopt);  // shorter than said: changed
  close(small_fd);
  std::string big(1 << 20, 'b');
  const std::string large = dir.File("large");
  auto fingerprint = [&](const std::string& bytes) {
    testing::WriteFile(large, bytes);
    const int fd = open(large.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    const std::optional<uint32_t> f = ContentFingerprint(fd, bytes.size());
    close(fd);
    return f;
  };
  const std::optional<uint32_t> plain = fingerprint(big);
  REQUIRE(plain.has_value());
  for (const size_t at : {size_t{0}, big.size() - 1, (big.size() - 4096) / 15 * 7 + 100}) {
    std::string changed = big;
    changed[at] = 'c';
    CHECK(fingerprint(changed) != plain);
  }
  // The file systems the tests run on keep change times.
  const int dir_fd = open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  CHECK(CtimeIsTrusted(dir_fd));
  close(dir_fd);

  // A stamp with a fingerprint: trusted while the contents give it, stale
  // once they do not, though every stat field is equal (what a file system
  // that reports no change time would show after a same-size rewrite).
  const std::string path = dir.File("g");
  const std::string idx = path + ".idx";
  testing::WriteFile(path, testing::Frame({"one", "two"}));
  REQUIRE(WriteIndex(path, true).ok());
  REQUIRE(StampIndex(path, true).ok());
  const std::string first = testing::ReadFile(idx + ".stamp");
  CHECK_FALSE(first.ends_with(" -\n"));
  CHECK(ReadAll(dir, "g").count == FileRecords{2, 6});
  testing::WriteFile(path, testing::Frame({"uno", "dos"}));
  REQUIRE(StampIndex(path, true).ok());
  CHECK(ReadAll(dir, "g").count == FileRecords{2, 6});  // the index fits the new file too
  std::string stamp = testing::ReadFile(idx + ".stamp");
  stamp.replace(stamp.size() - 9, 8, first.substr(first.size() - 9, 8));  // the old contents'
  testing::WriteFile(idx + ".stamp", stamp);
  CHECK(ReadAll(dir, "g").stale ==
        idx + " was written for another version of " + path + " (its contents changed)");
}

TEST_CASE("no index for a compressed or damaged file, and none left behind") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  const std::string gz = dir.File("c.gz");
  {
    auto w = RecordWriter::Open(gz, RecordWriterOptions{Compression::kGzip, -1, false, true});
    REQUIRE(w.ok());
    REQUIRE((*w)->Write("x").ok());
    REQUIRE((*w)->Close().ok());
  }
  auto compressed = WriteIndex(gz, false);
  CHECK(compressed.status().code() == StatusCode::kInvalidArgument);
  const std::string bad = dir.File("bad");
  testing::WriteFile(bad, testing::FlipByte(testing::Frame({"abc", "def"}), 21 + 13));
  auto damaged = WriteIndex(bad, false);
  CHECK(damaged.status().code() == StatusCode::kDataLoss);
  struct stat st;
  CHECK(stat((bad + ".idx").c_str(), &st) != 0);
  CHECK(stat((gz + ".idx").c_str(), &st) != 0);
  // Nor over an existing index, unless asked.
  const std::string good = dir.File("good");
  testing::WriteFile(good, testing::Frame({"abc"}));
  testing::WriteFile(good + ".idx", "keep");
  auto exists = WriteIndex(good, false);
  CHECK(exists.status().code() == StatusCode::kInvalidArgument);
  CHECK(exists.status().message() == good + ".idx: already exists");
  CHECK(exists.status().advice() == Advice{Remedy::kOverwrite, ""});
  CHECK(testing::ReadFile(good + ".idx") == "keep");
  CHECK(WriteIndex(good, true).ok());
  CHECK(testing::ReadFile(good + ".idx") == "0 19\n");
}

TEST_CASE("by default indexes live in a cache keyed by the folder's path, none beside the data") {
  testing::TempDir dir, cache;
  const char* old_cache = getenv("XDG_CACHE_HOME");
  const std::string saved = old_cache != nullptr ? old_cache : "";
  REQUIRE(setenv("XDG_CACHE_HOME", cache.path().c_str(), 1) == 0);
  SetIndexFolder("");  // forgets the folders resolved before
  const std::string path = dir.File("f.tfrecord");
  testing::WriteFile(path, testing::Frame({"one", "two"}));
  struct timespec t[2] = {{0, UTIME_OMIT}, {1'700'000'000, 123456789}};
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), t, 0) == 0);
  auto index = WriteIndex(path, false);
  REQUIRE(index.ok());
  char real[PATH_MAX];
  REQUIRE(realpath(dir.path().c_str(), real) != nullptr);
  const std::string folder = cache.path() + "/tfdist/index" + real;
  CHECK(IndexFolderFor(dir.path()) == folder);
  CHECK(index->index_path == folder + "/f.tfrecord.idx");
  CHECK(testing::ReadFile(index->index_path) == testing::DaliIndex({"one", "two"}));
  struct stat st;
  CHECK(stat((path + ".idx").c_str(), &st) != 0);
  // Its stamp goes beside it: the file's mtime, to the nanosecond, and the rest.
  struct stat file_st;
  REQUIRE(stat(path.c_str(), &file_st) == 0);
  CHECK(testing::ReadFile(index->index_path + ".stamp")
            .starts_with(fmt::format("tfdist-index-stamp 1 {} {} 38 1700000000123456789 ",
                                     file_st.st_dev, file_st.st_ino)));
  std::string stale;
  CHECK(ReadIndex(path, &stale).has_value());
  // Found through another spelling of the folder (a symbolic link).
  const std::string link = cache.File("link");
  REQUIRE(symlink(dir.path().c_str(), link.c_str()) == 0);
  CHECK(ReadIndex(link + "/f.tfrecord", &stale).has_value());
  // A file rewritten in place, even with the same size, no longer fits.
  t[1].tv_nsec += 1;
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), t, 0) == 0);
  CHECK_FALSE(ReadIndex(path, &stale).has_value());
  CHECK(stale == index->index_path + " was written for another version of " + path +
                     " (its modification time, change time changed)");
  // The directory index goes there too, with no listing of the folder.
  auto directory = WriteDirectoryIndex(dir.path(), false);
  REQUIRE(directory.ok());
  CHECK(directory->index_path == folder + "/.tfdist-index");
  CHECK_FALSE(directory->listing);
  CHECK(DirectoryIndex::Open(dir.path())->found());
  CHECK(stat(dir.File(".tfdist-index").c_str(), &st) != 0);
  // With no cache to name, writing an index says so.
  const char* home = getenv("HOME");
  const std::string saved_home = home != nullptr ? home : "";
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  SetIndexFolder("");
  auto nowhere = WriteIndex(path, true);
  CHECK(nowhere.status().code() == StatusCode::kInvalidArgument);
  CHECK(nowhere.status().advice() == Advice{Remedy::kIndexFolder, ""});
  CHECK_FALSE(ReadIndex(path, &stale).has_value());
  CHECK(stale.empty());
  if (!saved_home.empty()) setenv("HOME", saved_home.c_str(), 1);
  if (!saved.empty()) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  SetIndexFolder("");
}

}  // namespace
}  // namespace tfdist::io
