// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// URLs through io's storage: names split by scheme, globs over listings,
// reads by StatObject and ReadAt, against an in-memory store.

#include "tfdist/io/storage.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "remote_glob.h"
#include "storage_listed.h"
#include "test_util.h"
#include "tfdist/io/directory_index.h"
#include "tfdist/io/file_count.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/file_list.h"
#include "tfdist/io/record_fetch.h"
#include "tfdist/io/record_reader.h"
#include "tfdist/io/reshard.h"

namespace tfdist::io {
namespace {

// A store in memory: objects by full name, listed in pages of page_size,
// counting its requests and the bytes read.
struct FakeObjects {
  std::mutex mu;
  std::map<std::string, std::pair<std::string, std::string>> objects;  // data, version
  size_t page_size = 2;
  std::atomic<uint64_t> lists{0}, pages{0}, stats{0}, opens{0}, bytes_read{0};
  Status list_error;  // returned by List when not OK
  // List waits (at most a second) until this many listings run at once.
  size_t wait_for_listings = 0;
  size_t listing_now = 0;
  std::condition_variable cv;

  void Put(const std::string& name, std::string data, std::string version = "\"v1\"") {
    const std::lock_guard lock(mu);
    objects[name] = {std::move(data), std::move(version)};
  }
};

class FakeObject final : public RandomAccessObject {
 public:
  FakeObject(FakeObjects& s, ObjectInfo info) : s_(s), info_(std::move(info)) {}
  Status ReadAt(uint64_t offset, std::span<char> dst) override {
    const std::lock_guard lock(s_.mu);
    auto it = s_.objects.find(info_.name);
    if (it == s_.objects.end()) return Status::NotFound(info_.name + ": no such object");
    if (it->second.second != info_.version) {
      return Status::DataLoss(info_.name + ": the object was replaced while it was read");
    }
    const std::string& data = it->second.first;
    if (offset > data.size() || data.size() - offset < dst.size()) {
      return Status::OutOfRange(fmt::format("{}: ends at byte {}", info_.name, data.size()));
    }
    std::copy_n(data.data() + offset, dst.size(), dst.data());
    s_.bytes_read += dst.size();
    return Status::OK();
  }
  const ObjectInfo& info() const override { return info_; }

 private:
  FakeObjects& s_;
  ObjectInfo info_;
};

class FakeStore final : public Storage {
 public:
  explicit FakeStore(FakeObjects& s) : s_(s) {}
  Status List(std::string_view prefix,
              const std::function<Status(std::span<const ObjectInfo>)>& page) override {
    ++s_.lists;
    {
      std::unique_lock lock(s_.mu);
      ++s_.listing_now;
      s_.cv.notify_all();
      s_.cv.wait_for(lock, std::chrono::seconds(1),
                     [&] { return s_.listing_now >= s_.wait_for_listings; });
      if (!s_.list_error.ok()) {
        --s_.listing_now;
        return s_.list_error;
      }
    }
    std::vector<ObjectInfo> all;
    {
      const std::lock_guard lock(s_.mu);
      for (const auto& [name, o] : s_.objects) {
        if (name.starts_with(prefix)) all.push_back({name, o.first.size(), o.second});
      }
      --s_.listing_now;
    }
    for (size_t at = 0; at < all.size(); at += s_.page_size) {
      ++s_.pages;
      TFDIST_RETURN_IF_ERROR(page(
          std::span<const ObjectInfo>(all).subspan(at, std::min(s_.page_size, all.size() - at))));
    }
    return Status::OK();
  }
  Result<ObjectInfo> Stat(std::string_view name) override {
    ++s_.stats;
    const std::lock_guard lock(s_.mu);
    auto it = s_.objects.find(std::string(name));
    if (it == s_.objects.end()) return Status::NotFound(fmt::format("{}: no such object", name));
    return ObjectInfo{std::string(name), it->second.first.size(), it->second.second};
  }
  Result<std::unique_ptr<RandomAccessObject>> Open(const ObjectInfo& info) override {
    ++s_.opens;
    return std::unique_ptr<RandomAccessObject>(std::make_unique<FakeObject>(s_, info));
  }

 private:
  FakeObjects& s_;
};

// Installs a fresh fake store for s3:// and gs:// for one test.
struct Fake {
  FakeObjects objects;
  Fake() {
    SetStorageForTesting(Scheme::kS3, std::make_unique<FakeStore>(objects));
    SetStorageForTesting(Scheme::kGcs, std::make_unique<FakeStore>(objects));
  }
  ~Fake() {
    SetStorageForTesting(Scheme::kS3, nullptr);
    SetStorageForTesting(Scheme::kGcs, nullptr);
  }
};

Result<std::vector<std::string>> Expand(std::vector<std::string> patterns,
                                        MatchRule rule = MatchRule::kEveryPattern) {
  TFDIST_ASSIGN_OR_RETURN(StringList list, ExpandFilePatterns(patterns, rule));
  return list.ToVector();
}

TEST_CASE("ParseLocation splits URLs; other schemes are errors naming s3:// and gs://") {
  auto s3 = ParseLocation("s3://bucket/a/b.tfrecord");
  REQUIRE(s3.ok());
  CHECK(s3->scheme == Scheme::kS3);
  CHECK(s3->bucket == "bucket");
  CHECK(s3->key == "a/b.tfrecord");
  CHECK(s3->Url() == "s3://bucket/a/b.tfrecord");
  auto gs = ParseLocation("gs://b");
  REQUIRE(gs.ok());
  CHECK(gs->scheme == Scheme::kGcs);
  CHECK(gs->key.empty());
  auto local = ParseLocation("data/x:y");
  REQUIRE(local.ok());
  CHECK(local->scheme == Scheme::kLocal);
  CHECK(local->Url() == "data/x:y");
  for (const char* bad : {"hdfs://nn/x", "az://c/x", "http://h/x", "file:///x"}) {
    auto r = ParseLocation(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message().find("s3://") != std::string::npos);
    CHECK(r.status().message().find("gs://") != std::string::npos);
  }
  CHECK_FALSE(ParseLocation("s3://").ok());
  CHECK_FALSE(ParseLocation("s3:///k").ok());
  CHECK(IsRemote("gs://b/k"));
  CHECK_FALSE(IsRemote("./gs://b"));
  CHECK(CheckLocalOutput("out/part", "--output").ok());
  const Status out = CheckLocalOutput("s3://b/out", "--output");
  CHECK(out.code() == StatusCode::kInvalidArgument);
  CHECK(out.message().find("local") != std::string::npos);
}

TEST_CASE("the literal prefixes of a pattern, escapes resolved, small brackets split") {
  CHECK(ListPrefixesOf("s3://b/train-*").prefixes == std::vector<std::string>{"s3://b/train-"});
  CHECK(ListPrefixesOf("s3://b/a\\*b").prefixes == std::vector<std::string>{"s3://b/a*b"});
  CHECK_FALSE(ListPrefixesOf("s3://b/a\\*b").wildcard);
  CHECK(ListPrefixesOf("s3://b/x-[ab]/y*").prefixes ==
        std::vector<std::string>{"s3://b/x-a/y", "s3://b/x-b/y"});
  CHECK(ListPrefixesOf("s3://b/x-[!a]*").prefixes == std::vector<std::string>{"s3://b/x-"});
  CHECK(ListPrefixesOf("s3://b/[0-2]").prefixes ==
        std::vector<std::string>{"s3://b/0", "s3://b/1", "s3://b/2"});
}

TEST_CASE("a URL glob matches as a local one: * and ? stop at '/', brackets, dots, escapes") {
  Fake fake;
  for (const char* name :
       {"s3://b/d/x.1", "s3://b/d/x.10", "s3://b/d/x.2", "s3://b/d/.hidden", "s3://b/d/sub/x.3",
        "s3://b/d/y", "s3://b/d/a*b", "s3://b/d/", "s3://b/e/x.1"}) {
    fake.objects.Put(name, "");
  }
  auto all = Expand({"s3://b/d/*"});
  REQUIRE(all.ok());
  CHECK(*all == std::vector<std::string>{"s3://b/d/.hidden", "s3://b/d/a*b", "s3://b/d/x.1",
                                         "s3://b/d/x.10", "s3://b/d/x.2", "s3://b/d/y"});
  auto deep = Expand({"s3://b/*/x.?"});
  REQUIRE(deep.ok());
  CHECK(*deep == std::vector<std::string>{"s3://b/d/x.1", "s3://b/d/x.2", "s3://b/e/x.1"});
  auto brackets = Expand({"s3://b/d/x.[12]*"});
  REQUIRE(brackets.ok());
  CHECK(*brackets == std::vector<std::string>{"s3://b/d/x.1", "s3://b/d/x.10", "s3://b/d/x.2"});
  auto escaped = Expand({"s3://b/d/a\\*b"});
  REQUIRE(escaped.ok());
  CHECK(*escaped == std::vector<std::string>{"s3://b/d/a*b"});
}

TEST_CASE("100,000 objects over 100 pages: every match, sorted, each opened with no stat") {
  Fake fake;
  fake.objects.page_size = 1000;
  for (int i = 0; i < 100'000; ++i) {
    fake.objects.Put(fmt::format("s3://big/train-{:06}-of-100000", (i * 7919) % 100'000), "");
  }
  fake.objects.Put("s3://big/train-x/nested", "");  // * does not cross '/'
  auto files = Expand({"s3://big/train-*"});
  REQUIRE(files.ok());
  CHECK(files->size() == 100'000);
  CHECK(std::is_sorted(files->begin(), files->end()));
  CHECK(fake.objects.pages == 101);
  const uint64_t stats = fake.objects.stats;
  auto last = StatObject(files->back());
  REQUIRE(last.ok());
  CHECK(fake.objects.stats == stats);
}

TEST_CASE("URL matches sort byte-wise together with local ones, every page read") {
  Fake fake;
  fake.objects.page_size = 3;
  for (int i = 0; i < 10; ++i) fake.objects.Put(fmt::format("gs://b/p-{}", i), "");
  testing::TempDir dir;
  testing::WriteFile(dir.File("z"), "");
  auto files = Expand({dir.File("z"), "gs://b/p-*", "gs://b/p-1"});
  REQUIRE(files.ok());
  REQUIRE(files->size() == 12);
  CHECK(std::is_sorted(files->begin(), files->end()));
  CHECK(files->front() == dir.File("z"));  // '/' sorts before 'g'
  CHECK(std::count(files->begin(), files->end(), "gs://b/p-1") == 2);
  CHECK(files->back() == "gs://b/p-9");
  CHECK(fake.objects.pages >= 4);
}

TEST_CASE("no match: the local messages; a missing literal URL is no match") {
  Fake fake;
  fake.objects.Put("s3://b/x", "");
  auto none = Expand({"s3://b/y*", "s3://b/x"});
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message() == "no files match 's3://b/y*'");
  auto missing = Expand({"s3://b/nothing"});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "no files match 's3://b/nothing'");
  auto any = Expand({"s3://b/y*", "s3://b/z*"}, MatchRule::kAnyPattern);
  REQUIRE_FALSE(any.ok());
  CHECK(any.status().message() == "No files matched pattern: s3://b/y*, s3://b/z*");
}

TEST_CASE("listing errors, bucket wildcards, unsupported schemes, index files") {
  Fake fake;
  fake.objects.Put("s3://b/d/x", "");
  fake.objects.Put("s3://b/d/x.idx", "");
  fake.objects.list_error = Status::Unavailable("s3://b/d/: 503 SlowDown after 10 attempts");
  auto failed = Expand({"s3://b/d/*"});
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().code() == StatusCode::kUnavailable);
  fake.objects.list_error = Status::OK();
  auto index = Expand({"s3://b/d/*"});
  REQUIRE_FALSE(index.ok());
  CHECK(index.status().message().find("x.idx") != std::string::npos);
  auto bucket = Expand({"s3://b*/x"});
  REQUIRE_FALSE(bucket.ok());
  CHECK(bucket.status().code() == StatusCode::kInvalidArgument);
  auto scheme = Expand({"hdfs://nn/x*"});
  REQUIRE_FALSE(scheme.ok());
  CHECK(scheme.status().message().find("s3://") != std::string::npos);
}

TEST_CASE("the prefixes of several patterns are listed concurrently, a covered one not again") {
  Fake fake;
  for (const char* name : {"s3://b/a/1", "s3://b/b/1", "s3://b/c/1", "s3://b/a/sub/2"}) {
    fake.objects.Put(name, "");
  }
  fake.objects.wait_for_listings = 3;
  const uint64_t lists = fake.objects.lists;
  auto files = Expand({"s3://b/a/*", "s3://b/b/*", "s3://b/c/*", "s3://b/a/sub/*"});
  REQUIRE(files.ok());
  CHECK(*files ==
        std::vector<std::string>{"s3://b/a/1", "s3://b/a/sub/2", "s3://b/b/1", "s3://b/c/1"});
  CHECK(fake.objects.lists - lists == 3);  // s3://b/a/sub/ is under s3://b/a/
  CHECK(ListingCountsForTesting().most_at_once >= 3);
}

TEST_CASE("a glob's matches are read with no further request per object") {
  Fake fake;
  for (int i = 0; i < 5; ++i) {
    fake.objects.Put(fmt::format("s3://b/r-{}", i),
                     testing::Frame({fmt::format("record {}", i), "two"}));
  }
  auto files = Expand({"s3://b/r-*"});
  REQUIRE(files.ok());
  const uint64_t stats = fake.objects.stats;
  const uint64_t requests = StatRequestsForTesting();
  for (const std::string& f : *files) {
    auto source = OpenFileSource(f);
    REQUIRE(source.ok());
    CHECK((*source)->name() == f);
  }
  CountOptions o;
  o.file_index = false;
  std::vector<FileCount> counts = CountFiles(*files, o);
  for (const FileCount& c : counts) {
    CHECK(c.count.status.ok());
    CHECK(c.count.records == 2);
  }
  CHECK(fake.objects.stats == stats);
  CHECK(StatRequestsForTesting() == requests);
  // An object no listing saw is stat'ed once.
  fake.objects.Put("s3://b/other", testing::Frame({"x"}));
  CHECK(OpenFileSource("s3://b/other").ok());
  CHECK(fake.objects.stats == stats + 1);
}

TEST_CASE("FetchRecords reads objects by ReadAt; a replaced object is an error") {
  Fake fake;
  const std::string data = testing::Frame({"alpha", "beta", "gamma"});
  fake.objects.Put("gs://b/f", data, "7");
  std::vector<FetchRequest> requests(2);
  requests[0].offset = 0;
  requests[0].payload_size = 5;
  requests[1].offset = 5 + 16;
  requests[1].payload_size = 4;
  uint64_t bytes = 0;
  REQUIRE(FetchRecords("gs://b/f", requests, &bytes).ok());
  CHECK(requests[0].payload == "alpha");
  CHECK(requests[1].payload == "beta");
  CHECK(bytes == 5 + 4 + 32);
  // Replaced after a listing saw it: the read of that version fails.
  REQUIRE(Expand({"gs://b/f*"}).ok());
  fake.objects.Put("gs://b/f", data, "8");
  const Status replaced = FetchRecords("gs://b/f", requests);
  CHECK(replaced.code() == StatusCode::kDataLoss);
}

TEST_CASE("an object's index is in the local cache, keyed by its URL and version") {
  Fake fake;
  testing::TempDir cache;
  setenv("XDG_CACHE_HOME", cache.path().c_str(), 1);
  // ETags as S3 gives them: longer than a short string's inline buffer.
  const std::string e1 = "\"0e79ae923e7c9bf33cc130556ac82c3f\"";
  const std::string e2 = "\"b0b5cf1809e801fdbffa50eaae9dbe6d\"";
  fake.objects.Put("s3://b/d/../f", testing::Frame({"one", "two", "three"}), e1);
  auto files = Expand({"s3://b/d/../*"});
  REQUIRE(files.ok());
  REQUIRE(files->size() == 1);
  auto written = WriteIndex("s3://b/d/../f", /*overwrite=*/false);
  REQUIRE(written.ok());
  CHECK(written->count.records == 3);
  // In the cache, never beside the object, and never out of the cache.
  CHECK(written->index_path == cache.path() + "/tfdist/index/s3:/b/d/%2E%2E/f.idx");
  CHECK(std::filesystem::exists(written->index_path));
  CHECK(fake.objects.objects.size() == 1);
  // Counted from the index: no byte of the object read.
  fake.objects.bytes_read = 0;
  CountOptions o;
  std::vector<FileCount> counts = CountFiles(*files, o);
  REQUIRE(counts[0].count.status.ok());
  CHECK(counts[0].source == CountSource::kFileIndex);
  CHECK(counts[0].count.records == 3);
  CHECK(fake.objects.bytes_read == 0);
  // So does layout's counter (directory index first, then NAME.idx).
  FileCounter counter(std::vector<std::string>{"s3://b/d/../*"});
  auto layout = counter.Count(StringList(std::span<const std::string>(*files)), Compression::kNone);
  REQUIRE(layout.ok());
  CHECK(layout->counts[0].records == 3);
  CHECK(layout->from_file_index == 1);
  CHECK(fake.objects.bytes_read == 0);
  // Another version under the same name (listed again): the index is stale.
  fake.objects.Put("s3://b/d/../f", testing::Frame({"one", "two", "six"}), e2);
  REQUIRE(Expand({"s3://b/d/../*"}).ok());
  std::string stale;
  CHECK_FALSE(ReadIndex("s3://b/d/../f", &stale));
  CHECK(stale.find("another version of s3://b/d/../f") != std::string::npos);
  CHECK(stale.find("version " + e1) != std::string::npos);
  CHECK(stale.find("now " + e2) != std::string::npos);
  counts = CountFiles(*files, o);
  CHECK(counts[0].source == CountSource::kScan);
  CHECK(fake.objects.bytes_read > 0);
  unsetenv("XDG_CACHE_HOME");
}

TEST_CASE("an object folder's directory index counts gzip objects: no byte read, replaced stale") {
  Fake fake;
  testing::TempDir cache;
  setenv("XDG_CACHE_HOME", cache.path().c_str(), 1);
  const std::vector<std::string> a = {"one", "two", "three"};
  fake.objects.Put("s3://gz/d/a.gz", testing::Compress(testing::Frame(a), Compression::kGzip),
                   "\"e-a1\"");
  fake.objects.Put("s3://gz/d/b.zz", testing::Compress(testing::Frame({"x"}), Compression::kZlib),
                   "\"e-b\"");
  fake.objects.Put("s3://gz/d/c", testing::Frame({"p", "q"}), "\"e-c\"");
  fake.objects.Put("s3://gz/d/sub/x.gz", testing::Compress(testing::Frame(a), Compression::kGzip));
  fake.objects.Put("s3://gz/d/z-bad.gz",
                   testing::Truncate(testing::Compress(testing::Frame(a), Compression::kGzip), 20));
  auto written = WriteDirectoryIndex("s3://gz/d/", /*overwrite=*/false);
  REQUIRE(written.ok());
  CHECK(written->index_path == cache.path() + "/tfdist/index/s3:/gz/d/.tfdist-index");
  CHECK(written->files == 3);
  CHECK(written->total.records == 6);
  REQUIRE(written->skipped.size() == 1);
  CHECK(written->skipped[0].first == "s3://gz/d/z-bad.gz");
  // The index holds each object's size, version and compression; nothing
  // was written into the bucket.
  CHECK(fake.objects.objects.size() == 5);
  std::string folder;
  auto entries = ParseObjectDirectoryIndex(testing::ReadFile(written->index_path), &folder);
  REQUIRE(entries.ok());
  CHECK(folder == "s3://gz/d");
  REQUIRE(entries->size() == 3);
  CHECK((*entries)[0].name == "a.gz");
  CHECK((*entries)[0].version == "\"e-a1\"");
  CHECK((*entries)[0].compression == Compression::kGzip);
  CHECK((*entries)[0].count.records == 3);
  CHECK((*entries)[1].compression == Compression::kZlib);
  CHECK((*entries)[2].compression == Compression::kNone);
  CHECK(WriteDirectoryIndex("s3://gz/d", false).status().code() == StatusCode::kInvalidArgument);

  // count's ladder and layout's counter: every count from the index, no
  // payload byte read (the glob's listing gives size and version).
  auto files = Expand({"s3://gz/d/[abc]*"});
  REQUIRE(files.ok());
  REQUIRE(files->size() == 3);
  fake.objects.bytes_read = 0;
  const uint64_t opens = fake.objects.opens;
  CountOptions o;
  o.directory_index = true;
  o.scan.compression = Compression::kAuto;
  std::vector<FileCount> counts = CountFiles(*files, o);
  for (const FileCount& c : counts) {
    CHECK(c.count.status.ok());
    CHECK(c.source == CountSource::kDirectoryIndex);
  }
  CHECK(counts[0].count.records == 3);
  CHECK(counts[0].count.compression == Compression::kGzip);
  CHECK(counts[1].count.compression == Compression::kZlib);
  CHECK(counts[2].count.records == 2);
  const std::vector<std::string> gz = {"s3://gz/d/a.gz"};
  FileCounter counter;
  auto layout = counter.Count(StringList(std::span<const std::string>(gz)), Compression::kGzip);
  REQUIRE(layout.ok());
  CHECK(layout->from_directory_index == 1);
  CHECK(layout->counts[0].records == 3);
  CHECK(fake.objects.bytes_read == 0);
  CHECK(fake.objects.opens == opens);
  // Read as another compression than it was counted through: not taken.
  auto as_zlib = counter.Count(StringList(std::span<const std::string>(gz)), Compression::kZlib);
  CHECK_FALSE(as_zlib.ok());

  // A replaced object (another version, listed again) is scanned anew.
  fake.objects.Put("s3://gz/d/a.gz", testing::Compress(testing::Frame({"one"}), Compression::kGzip),
                   "\"e-a2\"");
  files = Expand({"s3://gz/d/[abc]*"});
  REQUIRE(files.ok());
  counts = CountFiles(*files, o);
  CHECK(counts[0].source == CountSource::kScan);
  CHECK(counts[0].count.records == 1);
  CHECK(counts[0].stale_index.find("no longer describes") != std::string::npos);
  CHECK(counts[1].source == CountSource::kDirectoryIndex);
  CHECK(fake.objects.bytes_read > 0);
  auto again = counter.Count(StringList(std::span<const std::string>(gz)), Compression::kGzip);
  REQUIRE(again.ok());
  CHECK(again->from_directory_index == 0);
  CHECK(again->stale_entries == 1);
  CHECK(again->counts[0].records == 1);
  unsetenv("XDG_CACHE_HOME");
}

TEST_CASE("reshard reads objects by position into local shards, the same records") {
  Fake fake;
  testing::TempDir out;
  std::vector<std::string> all;
  for (int f = 0; f < 3; ++f) {
    std::vector<std::string> records;
    for (int r = 0; r < 4; ++r) records.push_back(fmt::format("object {} record {}", f, r));
    all.insert(all.end(), records.begin(), records.end());
    fake.objects.Put(fmt::format("gs://b/in-{}", f), testing::Frame(records),
                     fmt::format("{}", 100 + f));
  }
  auto files = Expand({"gs://b/in-*"});
  REQUIRE(files.ok());
  ReshardOptions o;
  o.num_shards = 2;
  o.output_prefix = out.File("part");
  o.sync = false;
  o.seed = 7;  // shuffled: the copy reads records of every object by position
  auto summary = Reshard(*files, o);
  REQUIRE(summary.ok());
  CHECK(summary->total.records == 12);
  std::vector<std::string> read;
  for (const OutputSummary& s : summary->outputs) {
    auto reader = RecordReader::Open(s.path, RecordReaderOptions());
    REQUIRE(reader.ok());
    std::string_view record;
    while ((*reader)->ReadRecord(record)) read.emplace_back(record);
    CHECK((*reader)->status().ok());
  }
  std::sort(read.begin(), read.end());
  std::sort(all.begin(), all.end());
  CHECK(read == all);
  // Nothing was written into the store.
  CHECK(fake.objects.objects.size() == 3);
}

TEST_CASE("what listings saw stays bounded, newest first") {
  std::vector<ObjectInfo> first = {{"s3://q/a", 1, "\"1\""}};
  RememberListed(first);
  auto a = StatObject("s3://q/a");
  REQUIRE(a.ok());
  CHECK(a->version == "\"1\"");
  RememberListed({{"s3://q/a", 2, "\"2\""}});
  a = StatObject("s3://q/a");
  REQUIRE(a.ok());
  CHECK(a->version == "\"2\"");
  // A large expansion pushes the old ones out, itself kept whole.
  SetListedBoundForTesting(100'000);
  std::vector<ObjectInfo> many(2000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = {fmt::format("s3://q/m{:08}", i), i, "v"};
  RememberListed(std::move(many));
  auto m = StatObject("s3://q/m00000007");
  REQUIRE(m.ok());
  CHECK(m->size == 7);
  Fake fake;  // the old record is gone: a Stat now, which the fake has not
  CHECK(StatObject("s3://q/a").status().code() == StatusCode::kNotFound);
  SetListedBoundForTesting(uint64_t{64} << 20);
}

TEST_CASE("the local storage lists, stats and reads by position") {
  testing::TempDir dir;
  testing::WriteFile(dir.File("p-1"), "hello");
  testing::WriteFile(dir.File("q"), "");
  std::filesystem::create_directory(dir.File("p-d"));
  testing::WriteFile(dir.File("p-d/x"), "xy");
  Storage& local = StorageFor(Scheme::kLocal);
  std::vector<std::string> names;
  REQUIRE(local
              .List(dir.File("p-"),
                    [&](std::span<const ObjectInfo> page) {
                      for (const ObjectInfo& o : page) names.push_back(o.name);
                      return Status::OK();
                    })
              .ok());
  CHECK(names == std::vector<std::string>{dir.File("p-1"), dir.File("p-d/x")});
  auto info = local.Stat(dir.File("p-1"));
  REQUIRE(info.ok());
  CHECK(info->size == 5);
  CHECK(info->version.empty());
  auto object = local.Open(*info);
  REQUIRE(object.ok());
  char buf[3];
  REQUIRE((*object)->ReadAt(1, buf).ok());
  CHECK(std::string_view(buf, 3) == "ell");
  CHECK((*object)->ReadAt(3, buf).code() == StatusCode::kOutOfRange);
  CHECK(local.Stat(dir.File("none")).status().code() == StatusCode::kNotFound);
}

}  // namespace
}  // namespace tfdist::io
