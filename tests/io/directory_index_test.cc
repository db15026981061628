// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Directory indexes: the text and its one parser, the writer's counts and
// listing, and the reader's checks against the folder.

#include "tfdist/io/directory_index.h"

#include <dirent.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include <algorithm>
#include <chrono>
#include <string_view>
#include <thread>

#include "test_util.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/file_list.h"
#include "tfdist/io/record_writer.h"

namespace tfdist::io {
namespace {

TEST_CASE("a directory index round-trips through its text") {
  DirectoryIndexContents contents;
  contents.entries = {{"a b.tfrecord", 102, 1'700'000'000'123'456'789, {6, 6}},
                      {"empty", 0, -5, {0, 0}},
                      {"z", uint64_t{1} << 40, 1, {uint64_t{1} << 33, uint64_t{1} << 39}}};
  contents.entries[0].ctime_ns = 1'700'000'001'000'000'000;
  contents.entries[0].inode = 77;
  contents.entries[0].device = 66306;
  contents.entries[1].fingerprint = 0xabcd;
  contents.others = {".tfdist-index", "b.gz", "sub"};
  contents.listing = {1'700'000'000'000'000'001, 1'700'000'000'000'000'000, 1234, 66306};
  const std::string text = FormatDirectoryIndex(contents).value();
  CHECK(text.starts_with(std::string(kDirectoryIndexHeader) +
                         "\nlisting 1700000000000000001 1700000000000000000 "
                         "00000000000000001234 00000000000000066306\n"));
  CHECK(text.find("102 1700000000123456789 1700000001000000000 77 66306 - 6 6 a b.tfrecord\n"
                  "- b.gz\n0 -5 0 0 0 0000abcd 0 0 empty\n- sub\n") != std::string::npos);
  auto parsed = ParseDirectoryIndex(text);
  REQUIRE(parsed.ok());
  CHECK(*parsed == contents);
  // No listing: zeros of the same widths, so that the writer can fill it in
  // in place.
  contents.listing = {};
  CHECK(FormatDirectoryIndex(contents)->find(
            "\nlisting 0000000000000000000 0000000000000000000 00000000000000000000 "
            "00000000000000000000\n") != std::string::npos);
  // Version 1: entries only; version 2: a listing, and entries without the
  // rest of the stamp (both read, their entries all stale).
  auto v1 = ParseDirectoryIndex("tfdist-directory-index 1\n102 7 6 6 a\n");
  REQUIRE(v1.ok());
  CHECK(v1->entries.size() == 1);
  CHECK(v1->listing.empty());
  CHECK_FALSE(ParseDirectoryIndex("tfdist-directory-index 1\n- a\n").ok());
  auto v2 = ParseDirectoryIndex("tfdist-directory-index 2\nlisting 1 2 3 4\n102 7 6 6 a\n- b\n");
  REQUIRE(v2.ok());
  CHECK(v2->entries == std::vector<DirectoryIndexEntry>{{"a", 102, 7, {6, 6}}});
  CHECK(v2->listing == FolderStamp{1, 2, 3, 4});
  CHECK(ParseDirectoryIndex("tfdist-directory-index 4\n").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK_FALSE(ParseDirectoryIndex(std::string(kDirectoryIndexHeader) + "\n1 2 3 4 a\n").ok());
  CHECK_FALSE(ParseDirectoryIndex(std::string(kDirectoryIndexHeader) + "\nlisting 1 2 3\n").ok());
  CHECK_FALSE(
      ParseDirectoryIndex(std::string(kDirectoryIndexHeader) + "\nlisting -1 2 3 4\n").ok());
  const std::string head = std::string(kDirectoryIndexHeader) + "\nlisting 0 0 0 0\n";
  CHECK_FALSE(ParseDirectoryIndex(head + "1 2 3 4 a\n").ok());  // version 2's line
  CHECK_FALSE(ParseDirectoryIndex(head + "1 2 3 4 5 x 6 7 a\n").ok());
  CHECK_FALSE(ParseDirectoryIndex(head + "1 2 3 4 5 -- 6 7 a\n").ok());
  auto bad = ParseDirectoryIndex(head + "1 2 3 4 5 - 6 7 a\n1 2 3 4 5 - x 7 b\n");
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad.status().message().find("line 4") != std::string::npos);
  CHECK_FALSE(ParseDirectoryIndex(head + "1 2 3 4 5 - 6 7 a/b\n").ok());
  CHECK_FALSE(ParseDirectoryIndex(head + "- \n").ok());
  CHECK_FALSE(ParseDirectoryIndex(head + "- .\n").ok());
  CHECK_FALSE(ParseDirectoryIndex(head + "- ..\n").ok());
  CHECK_FALSE(ParseDirectoryIndex(head + "1 2 3 4 5 - 6 7 ..\n").ok());
}

// Many long names make a text of many chunks (the parser cuts it at whole
// lines every 256 KiB and parses the chunks in parallel).
DirectoryIndexContents ManyEntries(size_t n) {
  DirectoryIndexContents contents;
  for (size_t i = 0; i < n; ++i) {
    std::string name = fmt::format("{:0>150}", i);
    if (i % 7 == 3) {
      contents.others.push_back(std::move(name));
    } else {
      contents.entries.push_back(
          {std::move(name), i * 19, static_cast<int64_t>(i) - 5, {i, i * 3}});
    }
  }
  return contents;
}

TEST_CASE("every name the formatter writes parses back the same; it refuses the others") {
  using namespace std::string_literals;
  // Names a folder may hold: each round-trips, as an entry and as a "- " line.
  const std::vector<std::string> good = {"a\tb",
                                         " lead",
                                         "trail ",
                                         "two  spaces",
                                         "back\\slash",
                                         "\\",
                                         "caf\xc3\xa9 \xe2\x9c\x93",
                                         "\xff",
                                         "-",
                                         "- x",
                                         "1 2 3 4 x",
                                         "...",
                                         "a\vb\fc\x01",
                                         "\x7f"};
  for (const std::string& name : good) {
    CAPTURE(name);
    DirectoryIndexContents contents;
    contents.entries = {{name, 1, 2, {3, 4}}};
    contents.listing = {5, 6, 7, 8};
    auto text = FormatDirectoryIndex(contents);
    REQUIRE(text.ok());
    auto parsed = ParseDirectoryIndex(*text);
    REQUIRE(parsed.ok());
    CHECK(*parsed == contents);
    contents.entries.clear();
    contents.others = {name};
    text = FormatDirectoryIndex(contents);
    REQUIRE(text.ok());
    parsed = ParseDirectoryIndex(*text);
    REQUIRE(parsed.ok());
    CHECK(*parsed == contents);
  }
  // A CR (last, where a CRLF line end's is dropped, or inside), a newline,
  // a NUL: the formatter refuses them rather than write a line that reads
  // back as another name, or not at all; the parser refuses them too.
  const std::vector<std::string> bad = {"a\r", "\r", "a\rb", "a\nb", "a\n", "a\0b"s,
                                        "\0"s, "",   ".",    "..",   "a/b"};
  for (const std::string& name : bad) {
    CAPTURE(name);
    DirectoryIndexContents contents;
    contents.entries = {{name, 1, 2, {3, 4}}};
    auto text = FormatDirectoryIndex(contents);
    CHECK(text.status().code() == StatusCode::kInvalidArgument);
    CHECK(text.status().message().starts_with("a directory index line cannot hold the name"));
    contents.entries.clear();
    contents.others = {name};
    CHECK(FormatDirectoryIndex(contents).status().code() == StatusCode::kInvalidArgument);
    if (name.find('\n') != std::string::npos || name.ends_with('\r')) continue;  // line ends
    const std::string head = std::string(kDirectoryIndexHeader) + "\nlisting 5 6 7 8\n";
    CHECK_FALSE(ParseDirectoryIndex(head + "1 2 3 4 5 - 6 7 " + name + "\n").ok());
    CHECK_FALSE(ParseDirectoryIndex(head + "- " + name + "\n").ok());
  }
}

TEST_CASE("ParseDirectoryIndex is the parser DirectoryIndex reads with, across chunks") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  const DirectoryIndexContents contents = ManyEntries(8000);
  const std::string text = FormatDirectoryIndex(contents).value();
  REQUIRE(text.size() > 4 * (size_t{1} << 18));
  auto parsed = ParseDirectoryIndex(text);
  REQUIRE(parsed.ok());
  CHECK(*parsed == contents);
  // In place, the same lines: no file exists, so every entry is stale, and
  // the "- NAME" lines are no entries.
  testing::WriteFile(dir.File(kDirectoryIndexName), text);
  std::vector<std::string> names;
  for (const DirectoryIndexEntry& e : contents.entries) names.push_back(e.name);
  for (const std::string& o : contents.others) names.push_back(o);
  std::sort(names.begin(), names.end());
  std::vector<std::string_view> views(names.begin(), names.end());
  const DirectoryLookup found = LookUpDirectoryIndex(dir.path(), views);
  CHECK(found.problem.empty());
  CHECK(found.stale == contents.entries.size());
  // A damaged line deep in a later chunk (and one after it): both name the
  // first, by its line number in the file.
  for (size_t bad : {size_t{2}, size_t{3999}, size_t{7990}}) {
    CAPTURE(bad);
    std::string damaged = text;
    size_t at = 0;
    for (size_t line = 1; line < bad + 2; ++line) at = damaged.find('\n', at) + 1;
    damaged.insert(at, "x");  // "x123 ..." or "x- NAME"
    const size_t tail = damaged.rfind('\n', damaged.size() - 2) + 1;
    damaged.insert(tail, "?");
    const std::string want = fmt::format(
        "line {} is not \"SIZE MTIME_NS CTIME_NS INODE DEVICE FINGERPRINT RECORDS PAYLOAD_BYTES "
        "NAME\" or \"- NAME\"",
        bad + 2);
    auto text_error = ParseDirectoryIndex(damaged);
    CHECK(text_error.status().code() == StatusCode::kInvalidArgument);
    CHECK(text_error.status().message() == want);
    testing::WriteFile(dir.File(kDirectoryIndexName), damaged);
    const DirectoryLookup ignored = LookUpDirectoryIndex(dir.path(), views);
    CHECK(ignored.found);
    CHECK(ignored.problem == want);
    CHECK(ignored.stale == 0);
    CHECK(std::count(ignored.matched.begin(), ignored.matched.end(), 1) == 0);
  }
  // A bad header or listing line: the same words both ways.
  for (const std::string& bad : {std::string("tfdist-directory-index 4\n"),
                                 std::string(kDirectoryIndexHeader) + "\nlisting 1 2 3\n"}) {
    auto text_error = ParseDirectoryIndex(bad);
    REQUIRE_FALSE(text_error.ok());
    testing::WriteFile(dir.File(kDirectoryIndexName), bad);
    CHECK(DirectoryIndex::Open(dir.path())->problem() == text_error.status().message());
  }
}

TEST_CASE("a version 1 index, a last line without a newline, CRLF lines: read alike") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  const std::string v1 = "tfdist-directory-index 1\r\n102 7 6 6 a\r\n3 4 5 6 b c";
  auto parsed = ParseDirectoryIndex(v1);
  REQUIRE(parsed.ok());
  REQUIRE(parsed->entries.size() == 2);
  CHECK(parsed->entries[0] == DirectoryIndexEntry{"a", 102, 7, {6, 6}});
  CHECK(parsed->entries[1] == DirectoryIndexEntry{"b c", 3, 4, {5, 6}});
  CHECK(parsed->listing.empty());
  testing::WriteFile(dir.File(kDirectoryIndexName), v1);
  auto index = DirectoryIndex::Open(dir.path());
  CHECK(index->found());
  CHECK(index->problem().empty());
  CHECK_FALSE(index->Listing().has_value());
  // Written in another order, read back sorted by name in place.
  const std::string unsorted = std::string(kDirectoryIndexHeader) +
                               "\nlisting 0 0 0 0\n1 1 1 1 1 - 1 1 z\n- m\n1 1 1 1 1 - 1 1 a\n";
  parsed = ParseDirectoryIndex(unsorted);
  REQUIRE(parsed.ok());
  CHECK(parsed->entries.size() == 2);
  CHECK(parsed->others == std::vector<std::string>{"m"});
  testing::WriteFile(dir.File(kDirectoryIndexName), unsorted);
  testing::WriteFile(dir.File("a"), "");
  testing::WriteFile(dir.File("z"), "");
  const std::vector<std::string_view> names = {"a", "m", "z"};
  const DirectoryLookup found = LookUpDirectoryIndex(dir.path(), names);
  CHECK(found.problem.empty());
  CHECK(found.stale == 2);  // a and z are there, of another stamp; m has no entry
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
  testing::IndexesIn indexes_here(dir.path());
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
  REQUIRE(WriteIndex(dir.File("b.tfrecord"), false).ok());
  auto report = WriteDirectoryIndex(dir.path(), false);
  REQUIRE(report.ok());
  CHECK(report->index_path == dir.File(kDirectoryIndexName));
  CHECK(report->files == 4);
  CHECK(report->total == FileRecords{6, 3 + 3 + 5 + 1 + 1 + 2});
  CHECK(report->from_file_indexes == 1);
  REQUIRE(report->skipped.size() == 2);
  CHECK(report->skipped[0].first == dir.File("c.gz"));
  CHECK(report->skipped[0].second == "GZIP-compressed");
  CHECK(report->skipped[1].first == dir.File("damaged"));
  auto contents = ParseDirectoryIndex(testing::ReadFile(dir.File(kDirectoryIndexName)));
  REQUIRE(contents.ok());
  const std::vector<DirectoryIndexEntry>& entries = contents->entries;
  std::vector<std::string> listed;
  for (const auto& e : entries) listed.push_back(e.name);
  CHECK(listed == std::vector<std::string>{".hidden", "a with space", "b.tfrecord", "empty"});
  // The other names of the folder: all of them, with the listing's time.
  CHECK(contents->others == std::vector<std::string>{".tfdist-index", "b.tfrecord.idx",
                                                     "b.tfrecord.idx.stamp", "c.gz", "damaged",
                                                     "sub"});
  CHECK(report->listing);
  struct stat st;
  REQUIRE(stat(dir.path().c_str(), &st) == 0);
  CHECK(contents->listing.ctime_ns == st.st_ctim.tv_sec * 1'000'000'000 + st.st_ctim.tv_nsec);
  CHECK(contents->listing.mtime_ns == st.st_mtim.tv_sec * 1'000'000'000 + st.st_mtim.tv_nsec);
  CHECK(contents->listing.inode == st.st_ino);
  REQUIRE(stat(dir.File("b.tfrecord").c_str(), &st) == 0);
  CHECK(entries[2].size == static_cast<uint64_t>(st.st_size));
  CHECK(entries[2].mtime_ns == st.st_mtim.tv_sec * 1'000'000'000 + st.st_mtim.tv_nsec);
  CHECK(entries[2].ctime_ns == st.st_ctim.tv_sec * 1'000'000'000 + st.st_ctim.tv_nsec);
  CHECK(entries[2].inode == st.st_ino);
  CHECK(entries[2].device == st.st_dev);
  CHECK_FALSE(entries[2].fingerprint.has_value());  // change times are trusted here
  CHECK(entries[2].count.records == 3);
  // Not again without overwrite.
  CHECK(WriteDirectoryIndex(dir.path(), false).status().code() == StatusCode::kInvalidArgument);
  CHECK(WriteDirectoryIndex(dir.path() + "/", true).ok());

  const std::vector<std::string> names = {".hidden", "a with space", "b.tfrecord", "c.gz", "empty"};
  DirectoryLookup found = LookUpDirectoryIndex(dir.path(), Views(names));
  CHECK(found.found);
  CHECK(found.problem.empty());
  CHECK(found.matched == std::vector<uint8_t>{1, 1, 1, 0, 1});
  CHECK(found.stale == 0);
  CHECK(found.counts[2].records == 3);
  CHECK(found.counts[2].payload_bytes == 11);
  CHECK(found.counts[0].records == 2);
  {  // Another folder's index is not in the folder named for this one.
    testing::IndexesIn sub_indexes(dir.File("sub"));
    CHECK_FALSE(LookUpDirectoryIndex(dir.File("sub"), Views(names)).found);
  }
  testing::IndexesIn indexes_again(dir.path());
  CHECK(WriteDirectoryIndex(dir.File("missing"), false).status().code() == StatusCode::kNotFound);
}

// The folder's names as readdir gives them, sorted.
std::vector<std::string> ReadNames(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  REQUIRE(d != nullptr);
  while (const dirent* e = readdir(d)) {
    const std::string_view n(e->d_name);
    if (n != "." && n != "..") names.emplace_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> Strings(const std::vector<std::string_view>& views) {
  return {views.begin(), views.end()};
}

TEST_CASE("a directory index lists its folder while the folder's mtime is unchanged") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  for (const char* n : {"p-0", "p-1", "p-2", "z.gz"}) {
    testing::WriteFile(dir.File(n), testing::Frame({"r", n}));
  }
  REQUIRE(mkdir(dir.File("sub").c_str(), 0755) == 0);
  REQUIRE(WriteDirectoryIndex(dir.path(), false).ok());
  auto index = DirectoryIndex::Open(dir.path());
  auto listing = index->Listing();
  REQUIRE(listing.has_value());
  CHECK(Strings(*listing) == ReadNames(dir.path()));
  // list_files matches the listing's names as it would the folder's.
  const std::vector<std::string> patterns = {dir.path() + "/p-*", dir.path() + "/[sz]*"};
  FolderListings listings;
  for (const std::string& p : patterns) listings[FolderPattern::Split(p)->dir] = *listing;
  auto from_listing = ExpandFilePatterns(patterns, listings);
  auto from_folder = ExpandFilePatterns(patterns);
  REQUIRE(from_folder.ok());
  REQUIRE(from_listing.ok());
  CHECK(*from_listing == *from_folder);
  CHECK(from_folder->size() == 5);
  // One pattern: its matches go straight from the listing into the list.
  for (const std::string& p : patterns) {
    auto one = ExpandFilePatterns(std::vector<std::string>{p}, listings);
    REQUIRE(one.ok());
    CHECK(*one == ExpandFilePatterns(std::vector<std::string>{p})->ToVector());
  }
  // And a match that is the index itself is the error it is from the folder.
  const std::vector<std::string> all = {dir.path() + "/*"};
  listings[dir.path()] = *listing;
  CHECK(ExpandFilePatterns(all, listings).status() == ExpandFilePatterns(all).status());
  CHECK(ExpandFilePatterns(all).status().advice().remedy == Remedy::kMoveIndexes);
  // An entry added, removed or renamed at once after the index is written
  // (the writer waited for the clock) sets a later change time: no listing.
  testing::WriteFile(dir.File("p-3"), testing::Frame({"new"}));
  CHECK_FALSE(DirectoryIndex::Open(dir.path())->Listing().has_value());
  REQUIRE(WriteDirectoryIndex(dir.path(), true).ok());
  CHECK(DirectoryIndex::Open(dir.path())->Listing().has_value());
  REQUIRE(rename(dir.File("p-0").c_str(), dir.File("q-0").c_str()) == 0);
  CHECK_FALSE(DirectoryIndex::Open(dir.path())->Listing().has_value());
  REQUIRE(WriteDirectoryIndex(dir.path(), true).ok());
  REQUIRE(unlink(dir.File("z.gz").c_str()) == 0);
  CHECK_FALSE(DirectoryIndex::Open(dir.path())->Listing().has_value());
  // Nor when the folder's mtime is set back (as rsync -a, cp -a or touch -r
  // do): its change time moved.
  REQUIRE(WriteDirectoryIndex(dir.path(), true).ok());
  struct stat indexed, st;
  REQUIRE(stat(dir.path().c_str(), &indexed) == 0);
  testing::WriteFile(dir.File("p-4"), testing::Frame({"sneaked in"}));
  const timespec back[2] = {indexed.st_atim, indexed.st_mtim};
  REQUIRE(utimensat(AT_FDCWD, dir.path().c_str(), back, 0) == 0);
  REQUIRE(stat(dir.path().c_str(), &st) == 0);
  REQUIRE(st.st_mtim.tv_nsec == indexed.st_mtim.tv_nsec);
  CHECK_FALSE(DirectoryIndex::Open(dir.path())->Listing().has_value());
  // Written elsewhere, an index records no listing (nor reads one there).
  testing::TempDir other;
  SetIndexFolder(other.path());
  auto elsewhere = WriteDirectoryIndex(dir.path(), false);
  SetIndexFolder(dir.path());
  REQUIRE(elsewhere.ok());
  CHECK_FALSE(elsewhere->listing);
  auto text = ParseDirectoryIndex(testing::ReadFile(other.File(kDirectoryIndexName)));
  REQUIRE(text.ok());
  CHECK(text->listing.empty());
  // A version 1 index has no listing, and its entries (without the change
  // time, inode and device of their files) cannot be checked: all stale.
  std::string v1 = "tfdist-directory-index 1\n";
  for (const DirectoryIndexEntry& e : text->entries) {
    v1 += fmt::format("{} {} {} {} {}\n", e.size, e.mtime_ns, e.count.records,
                      e.count.payload_bytes, e.name);
  }
  testing::WriteFile(dir.File(kDirectoryIndexName), v1);
  auto old = DirectoryIndex::Open(dir.path());
  CHECK_FALSE(old->Listing().has_value());
  const std::vector<std::string> names = {"p-1", "p-2", "p-3"};
  const DirectoryLookup from_old = old->LookUp(Views(names));
  CHECK(from_old.matched == std::vector<uint8_t>{0, 0, 0});
  CHECK(from_old.stale == 3);
}

TEST_CASE("a future mtime is no reason for trust, nor for leaving a file out") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  const std::string frame = testing::Frame({"abc"});
  testing::WriteFile(dir.File("soon"), frame);
  testing::WriteFile(dir.File("later"), frame);
  // mtimes ahead of the clock, by 0.3 s and by a century (a host whose
  // clock ran ahead): their change times are now, and entries are judged by
  // the whole stamp, so both are counted.
  timespec now{};
  REQUIRE(clock_gettime(CLOCK_REALTIME, &now) == 0);
  const int64_t now_ns = int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  auto set_ns = [&](const std::string& path, int64_t ns) {
    const timespec t[2] = {{ns / 1'000'000'000, ns % 1'000'000'000},
                           {ns / 1'000'000'000, ns % 1'000'000'000}};
    REQUIRE(utimensat(AT_FDCWD, path.c_str(), t, 0) == 0);
  };
  set_ns(dir.File("soon"), now_ns + 300'000'000);
  set_ns(dir.File("later"), 4'102'444'800'000'000'000);  // 2100-01-01
  auto report = WriteDirectoryIndex(dir.path(), false);
  REQUIRE(report.ok());
  CHECK(report->files == 2);
  CHECK(report->skipped.empty());
  const std::vector<std::string> names = {"later", "soon"};
  CHECK(LookUpDirectoryIndex(dir.path(), Views(names)).matched == std::vector<uint8_t>{1, 1});
  // Rewritten in place, the same size and the same future mtime: stale.
  testing::WriteFile(dir.File("later"), testing::Frame({"xyz"}));
  set_ns(dir.File("later"), 4'102'444'800'000'000'000);
  const DirectoryLookup after = LookUpDirectoryIndex(dir.path(), Views(names));
  CHECK(after.matched == std::vector<uint8_t>{0, 1});
  CHECK(after.stale == 1);
}

TEST_CASE("a name the index cannot hold (newline, carriage return) gets no entry and no listing") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  const std::string frame = testing::Frame({"abc"});
  testing::WriteFile(dir.File("foo"), frame);
  testing::WriteFile(dir.File("foo\r"), testing::Frame({"abc", "defgh"}));
  auto report = WriteDirectoryIndex(dir.path(), false);
  REQUIRE(report.ok());
  CHECK_FALSE(report->listing);
  auto contents = ParseDirectoryIndex(testing::ReadFile(dir.File(kDirectoryIndexName)));
  REQUIRE(contents.ok());
  REQUIRE(contents->entries.size() == 1);
  CHECK(contents->entries[0].name == "foo");
  CHECK(contents->entries[0].count.records == 1);
  CHECK(contents->others.empty());
  CHECK(contents->listing.empty());
  CHECK_FALSE(DirectoryIndex::Open(dir.path())->Listing().has_value());
  // "foo\r" has no entry: a summary scans it.
  const std::vector<std::string> names = {"foo", "foo\r"};
  CHECK(LookUpDirectoryIndex(dir.path(), Views(names)).matched == std::vector<uint8_t>{1, 0});
}

TEST_CASE(
    "stale directory index entries are ignored: size, mtime, ctime, removed; new ones have none") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  for (const char* n : {"f1", "f2", "f3", "f4"}) {
    testing::WriteFile(dir.File(n), testing::Frame({"r", n}));
    SetMtime(dir.File(n), 1'000'000);
  }
  REQUIRE(WriteDirectoryIndex(dir.path(), false).ok());
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
  // f4 rewritten in place with the same size, its mtime put back (as cp -p,
  // rsync -t and touch -r do): its change time moved, so its entry is stale.
  testing::WriteFile(dir.File("f4"), testing::Frame({"R", "F4"}));
  SetMtime(dir.File("f4"), 1'000'000);
  DirectoryLookup same_size = LookUpDirectoryIndex(dir.path(), Views(names));
  CHECK(same_size.matched[3] == 0);
  CHECK(same_size.stale == 4);
  // Rewritten, the index covers the folder as it is now.
  REQUIRE(WriteDirectoryIndex(dir.path(), true).ok());
  DirectoryLookup rewritten = LookUpDirectoryIndex(dir.path(), Views(names));
  CHECK(rewritten.matched == std::vector<uint8_t>{1, 1, 0, 1, 1});
  CHECK(rewritten.counts[3].records == 2);
  CHECK(rewritten.stale == 0);  // f3 is gone from the folder and from the index
  CHECK(rewritten.counts[0].records == 3);
  // A damaged index is ignored as a whole, with the reason.
  testing::WriteFile(
      dir.File(kDirectoryIndexName),
      std::string(kDirectoryIndexHeader) + "\nlisting 0 0 0 0\n1 2 3 4 5 - 6 7 f1\nnot a line\n");
  DirectoryLookup damaged = LookUpDirectoryIndex(dir.path(), Views(names));
  CHECK(damaged.found);
  CHECK(damaged.problem.find("line 4") != std::string::npos);
  CHECK(damaged.matched == std::vector<uint8_t>(5, 0));
}

TEST_CASE("a directory index matches names across many chunks") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  // Long names make a large index: it is read in chunks of whole lines.
  std::vector<DirectoryIndexEntry> entries;
  std::vector<std::string> names;
  const std::string frame = testing::Frame({"abc"});
  for (int i = 0; i < 3000; ++i) {
    const std::string name = fmt::format("{:0>200}", i);
    DirectoryIndexEntry& e = entries.emplace_back();
    e = {name, frame.size(), (int64_t{1'000'000} + i) * 1'000'000'000, {1, 3}};
    if (i % 3 != 1) {
      testing::WriteFile(dir.File(name), frame);
      SetMtime(dir.File(name), 1'000'000 + i);
      struct stat st;
      REQUIRE(stat(dir.File(name).c_str(), &st) == 0);
      e.ctime_ns = st.st_ctim.tv_sec * 1'000'000'000 + st.st_ctim.tv_nsec;
      e.inode = st.st_ino;
      e.device = st.st_dev;
    }
    if (i % 3 != 2) names.push_back(name);  // every third file is not asked for
  }
  testing::WriteFile(dir.File(kDirectoryIndexName),
                     FormatDirectoryIndex({entries, {}, {}}).value());
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
