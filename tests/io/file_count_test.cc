// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The index-else-scan ladder: which rung counts each file, and that every
// rung gives the count a scan would.

#include "tfdist/io/file_count.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "file_index_internal.h"
#include "test_util.h"
#include "tfdist/io/directory_index.h"
#include "tfdist/io/file_index.h"

namespace tfdist::io {
namespace {

// Sets `path`'s modification time to `seconds` after the epoch.
void SetMtime(const std::string& path, int64_t seconds) {
  const timespec times[2] = {{seconds, 0}, {seconds, 0}};
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

StringList Views(const std::vector<std::string>& names) { return StringList(names); }

TEST_CASE("CountFiles takes FILE.idx when it fits, else scans, and says which and why") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  const std::string indexed = dir.File("a"), stale = dir.File("b"), plain = dir.File("c"),
                    damaged = dir.File("d");
  testing::WriteFile(indexed, testing::Frame({"one", "two"}));
  REQUIRE(WriteIndex(indexed, false).ok());
  testing::WriteFile(stale, testing::Frame({"one", "two", "three"}));
  testing::WriteFile(stale + ".idx", "0 19\n");
  REQUIRE(StampIndex(stale).ok());
  testing::WriteFile(plain, testing::Frame({"x"}));
  testing::WriteFile(damaged, testing::FlipByte(testing::Frame({"abc", "def"}), 19 + 13));
  const std::vector<std::string> files = {indexed, stale, plain, damaged};
  std::vector<FileCount> counts = CountFiles(files, CountOptions());
  REQUIRE(counts.size() == 4);
  CHECK(counts[0].source == CountSource::kFileIndex);
  CHECK(static_cast<const FileRecords&>(counts[0].count) == FileRecords{2, 6});
  CHECK(counts[0].count.status.ok());
  CHECK(counts[0].stale_index.empty());
  CHECK(counts[1].source == CountSource::kScan);
  CHECK(static_cast<const FileRecords&>(counts[1].count) == FileRecords{3, 11});
  CHECK(counts[1].stale_index == fmt::format("{}.idx covers 19 bytes; {} has 59", stale, stale));
  CHECK(counts[2].source == CountSource::kScan);
  CHECK(counts[2].stale_index.empty());
  CHECK(counts[2].count.records == 1);
  CHECK(counts[3].source == CountSource::kScan);
  CHECK(counts[3].count.status.code() == StatusCode::kDataLoss);
  CHECK(counts[3].count.error_offset == 19 + 12);
  CHECK(counts[3].count.records == 1);
  // Every rung agrees with a scan, which --no-index asks for.
  CountOptions no_index;
  no_index.file_index = false;
  const std::vector<FileCount> scanned = CountFiles(files, no_index);
  for (size_t i = 0; i < files.size(); ++i) {
    CAPTURE(i);
    CHECK(scanned[i].source == CountSource::kScan);
    CHECK(scanned[i].stale_index.empty());
    CHECK(static_cast<const FileRecords&>(scanned[i].count) ==
          static_cast<const FileRecords&>(counts[i].count));
  }
}

TEST_CASE("no index stands in for a file read as compressed") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  const std::string gz = dir.File("c.gz");
  testing::WriteFile(gz, testing::Compress(testing::Frame({"x", "yy"}), Compression::kGzip));
  // An index that fits the compressed bytes (as if they were records).
  testing::WriteFile(gz + ".idx", fmt::format("0 {}\n", testing::ReadFile(gz).size()));
  CountOptions options;
  options.scan.compression = Compression::kGzip;
  std::vector<FileCount> counts = CountFiles(std::vector<std::string>{gz}, options);
  CHECK(counts[0].source == CountSource::kScan);
  CHECK(counts[0].count.compression == Compression::kGzip);
  CHECK(static_cast<const FileRecords&>(counts[0].count) == FileRecords{2, 3});
  // Left unread where only uncompressed files are wanted.
  const int dir_fd = open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(dir_fd >= 0);
  CountOptions uncompressed;
  uncompressed.scan.compression = Compression::kAuto;
  uncompressed.uncompressed_only = true;
  uncompressed.file_index = false;
  FileCount c =
      CountFileAt(IndexedFolder{dir_fd, dir.path(), dir_fd, dir.path()}, "c.gz", uncompressed);
  CHECK(c.source == CountSource::kScan);
  CHECK(c.count.compression == Compression::kGzip);
  CHECK(c.count.status.ok());
  CHECK(c.count.records == 0);
  // A missing file, in the words of a scan.
  c = CountFileAt(IndexedFolder{dir_fd, dir.path(), dir_fd, dir.path()}, "missing", uncompressed);
  CHECK(c.count.status.code() == StatusCode::kNotFound);
  CHECK(c.count.status.message().starts_with(dir.File("missing") + ": cannot open"));
  close(dir_fd);
}

// A folder of `n` files of one record each ("p-0000" ...), all older than
// its directory index, which has a listing.
struct IndexedDataFolder {
  testing::TempDir dir;
  testing::IndexesIn indexes_here{dir.path()};
  std::vector<std::string> paths;

  explicit IndexedDataFolder(int n) {
    for (int i = 0; i < n; ++i) {
      paths.push_back(dir.File(fmt::format("p-{:04}", i)));
      testing::WriteFile(paths.back(), testing::Frame({std::string(static_cast<size_t>(i), 'r')}));
      SetMtime(paths.back(), 1'000'000 + i);
    }
    REQUIRE(WriteDirectoryIndex(dir.path(), false).ok());
  }
};

TEST_CASE("FileCounter lists a folder from its index and counts its files from it") {
  IndexedDataFolder folder(50);
  const std::vector<std::string> patterns = {folder.dir.path() + "/p-*"};
  FileCounter counter(patterns);
  REQUIRE(counter.listings().size() == 1);
  const auto& [dir, names] = *counter.listings().begin();
  CHECK(dir == folder.dir.path());
  CHECK(names.size() == 51);  // and the index itself
  auto expanded = ExpandFilePatterns(patterns, counter.listings());
  REQUIRE(expanded.ok());
  CHECK(*expanded == folder.paths);
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  std::mutex mu;
  auto progress = [&](uint64_t done, uint64_t total) {
    std::lock_guard<std::mutex> lock(mu);
    calls.emplace_back(done, total);
  };
  auto counts = counter.Count(*expanded, Compression::kNone, progress);
  REQUIRE(counts.ok());
  CHECK(counts->from_directory_index == 50);
  CHECK(counts->from_file_index == 0);
  CHECK(counts->scanned == 0);
  CHECK(counts->stale_entries == 0);
  CHECK(counts->ignored.empty());
  for (int i = 0; i < 50; ++i) CHECK(counts->counts[i] == FileRecords{1, uint64_t(i)});
  CHECK(calls == std::vector<std::pair<uint64_t, uint64_t>>{{50, 50}});
  CHECK(counts->SourcesText() ==
        "50 files from .tfdist-index, 0 from index files, 0 by scanning; folder names from its "
        ".tfdist-index");
}

TEST_CASE("FileCounter falls from a stale entry to FILE.idx, then to a scan") {
  IndexedDataFolder folder(6);
  // p-0001 and p-0002 change after the index; p-0002 gets a FILE.idx.
  testing::WriteFile(folder.paths[1], testing::Frame({"changed"}));
  testing::WriteFile(folder.paths[2], testing::Frame({"changed", "too"}));
  REQUIRE(WriteIndex(folder.paths[2], false).ok());
  // Asked for in another order, without a listing (no pattern ahead).
  std::vector<std::string> files = {folder.paths[5], folder.paths[2], folder.paths[0],
                                    folder.paths[1]};
  FileCounter counter;
  CHECK(counter.listings().empty());
  auto counts = counter.Count(Views(files), Compression::kNone);
  REQUIRE(counts.ok());
  CHECK(counts->counts == std::vector<FileRecords>{{1, 5}, {2, 10}, {1, 0}, {1, 7}});
  CHECK(counts->from_directory_index == 2);
  CHECK(counts->from_file_index == 1);
  CHECK(counts->scanned == 1);
  CHECK(counts->stale_entries == 2);
  CHECK(counts->directory_index_found);
  CHECK_FALSE(counts->folder_names_from_index);
  CHECK(counts->SourcesText() ==
        "2 files from .tfdist-index, 1 from index files, 1 by scanning; 2 stale .tfdist-index "
        "entries ignored");
  // The same through CountFiles' directory rung.
  CountOptions options;
  options.directory_index = true;
  const std::vector<FileCount> each = CountFiles(files, options);
  CHECK(each[0].source == CountSource::kDirectoryIndex);
  CHECK(each[1].source == CountSource::kFileIndex);
  CHECK(each[2].source == CountSource::kDirectoryIndex);
  CHECK(each[3].source == CountSource::kScan);
  for (size_t i = 0; i < files.size(); ++i) {
    CHECK(static_cast<const FileRecords&>(each[i].count) == counts->counts[i]);
  }
  // Read compressed, every file is scanned: no index applies, and the scan
  // finds the files uncompressed (a usage error, not damage).
  auto gz = FileCounter().Count(Views(files), Compression::kGzip);
  CHECK(gz.status().code() == StatusCode::kInvalidArgument);
  CHECK(gz.status().advice() == Advice{Remedy::kDeclareCompression, "none"});
}

TEST_CASE("FileCounter ignores a damaged directory index as a whole, with advice") {
  IndexedDataFolder folder(3);
  testing::WriteFile(folder.dir.File(kDirectoryIndexName),
                     std::string(kDirectoryIndexHeader) + "\nlisting 0 0 0 0\nnot a line\n");
  const std::vector<std::string> patterns = {folder.dir.path() + "/p-*"};
  FileCounter counter(patterns);
  CHECK(counter.listings().empty());
  auto counts = counter.Count(Views(folder.paths), Compression::kNone);
  REQUIRE(counts.ok());
  CHECK(counts->scanned == 3);
  REQUIRE(counts->ignored.size() == 1);
  CHECK(counts->ignored[0].message ==
        folder.dir.path() +
            "/.tfdist-index is ignored: line 3 is not \"SIZE MTIME_NS CTIME_NS INODE DEVICE "
            "FINGERPRINT RECORDS PAYLOAD_BYTES NAME\" or \"- NAME\"");
  CHECK(counts->ignored[0].advice == Advice{Remedy::kRewriteDirectoryIndex, folder.dir.path()});
  CHECK(counts->SourcesText() == "0 files from .tfdist-index, 0 from index files, 3 by scanning");
}

TEST_CASE("files of several folders, in any order, each get their own folder's entry") {
  testing::TempDir a, b, cache;
  const char* old_cache = getenv("XDG_CACHE_HOME");
  const std::string saved = old_cache != nullptr ? old_cache : "";
  REQUIRE(setenv("XDG_CACHE_HOME", cache.path().c_str(), 1) == 0);
  SetIndexFolder("");
  // a/f<k> holds k + 1 records, b/f<k> holds k + 11.
  for (int k = 0; k < 4; ++k) {
    std::vector<std::string> ra(static_cast<size_t>(k + 1), "r"),
        rb(static_cast<size_t>(k + 11), "s");
    testing::WriteFile(a.File(fmt::format("f{}", k)), testing::Frame(ra));
    testing::WriteFile(b.File(fmt::format("f{}", k)), testing::Frame(rb));
    SetMtime(a.File(fmt::format("f{}", k)), 1'000'000);
    SetMtime(b.File(fmt::format("f{}", k)), 1'000'000);
  }
  REQUIRE(WriteDirectoryIndex(a.path(), false).ok());
  REQUIRE(WriteDirectoryIndex(b.path(), false).ok());
  const std::vector<std::vector<std::string>> lists = {
      {a.File("f0"), a.File("f1"), a.File("f2"), a.File("f3")},  // one run, in order
      {a.File("f2"), a.File("f0"), a.File("f3")},                // one run, out of order
      {a.File("f0"), b.File("f1"), a.File("f1"), b.File("f0")},  // folders interleaved
      {b.File("f3"), b.File("f3"), a.File("f3")},                // a name twice
  };
  for (const auto& list : lists) {
    CAPTURE(list.size());
    CountOptions options;
    options.directory_index = true;
    const std::vector<FileCount> counts = CountFiles(list, options);
    for (size_t i = 0; i < list.size(); ++i) {
      CAPTURE(list[i]);
      const int k = list[i].back() - '0';
      const uint64_t want = list[i].starts_with(a.path()) ? k + 1 : k + 11;
      CHECK(counts[i].count.records == want);
      if (i == 0 || list[i] != list[i - 1]) CHECK(counts[i].source == CountSource::kDirectoryIndex);
    }
    FileCounter counter;
    auto from_counter = counter.Count(StringList(list), Compression::kNone);
    REQUIRE(from_counter.ok());
    for (size_t i = 0; i < list.size(); ++i) CHECK(from_counter->counts[i] == counts[i].count);
  }
  if (!saved.empty()) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  SetIndexFolder("");
}

TEST_CASE("FileCounter reports the first failed scan in the order given, after counting all") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  std::vector<std::string> files;
  for (const char* n : {"a", "b", "c", "d"}) {
    files.push_back(dir.File(n));
    testing::WriteFile(files.back(), testing::Frame({"abc", "def"}));
  }
  testing::WriteFile(files[1], testing::Truncate(testing::Frame({"abc", "def"}), 30));
  testing::WriteFile(files[3], testing::FlipByte(testing::Frame({"abc"}), 2));
  std::atomic<uint64_t> last{0};
  auto counts = FileCounter().Count(Views(files), Compression::kNone, [&](uint64_t done, uint64_t) {
    last = std::max<uint64_t>(last, done);
  });
  REQUIRE_FALSE(counts.ok());
  CHECK(counts.status().code() == StatusCode::kDataLoss);
  CHECK(counts.status().message().starts_with(files[1] + ": truncated record at 19"));
  CHECK(last == 4);
  // No folder has a directory index: the short form.
  auto good = FileCounter().Count(Views({files[0], files[2]}), Compression::kNone);
  REQUIRE(good.ok());
  CHECK(good->SourcesText() == "0 files from index files, 2 by scanning");
}

}  // namespace
}  // namespace tfdist::io
