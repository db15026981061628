// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The read-ahead source and the prefetch of first ranges (storage.h), over
// objects of this test whose reads end when the test lets them: the bytes,
// several ranges in flight for one large object, the process-wide bound on
// the bytes read ahead, errors, and prefetched first ranges taken by the
// source that opens the object.

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tfdist/base/interrupt.h"
#include "tfdist/io/storage.h"

namespace tfdist::io {
namespace {

// The reads of every TestObject: started, ended, and the bytes in flight.
class Reads {
 public:
  static Reads& Get() {
    static Reads* reads = new Reads();  // its thread runs to the end of the process
    return *reads;
  }

  // While closed, reads wait; open, they end (on a thread of their own).
  void SetOpen(bool open) {
    {
      std::lock_guard lock(mu_);
      open_ = open;
    }
    cv_.notify_all();
  }

  void Start(const std::string& name, uint64_t offset, uint64_t size,
             std::function<void()> finish) {
    std::lock_guard lock(mu_);
    if (offset == 0) ++first_reads_[name];
    in_flight_ += size;
    max_in_flight_ = std::max(max_in_flight_, in_flight_);
    ++per_name_[name];
    max_per_name_[name] = std::max(max_per_name_[name], per_name_[name]);
    ++started_;
    queue_.push_back({name, size, std::move(finish)});
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
    cv_.notify_all();
  }

  // Waits until `n` reads were started (false after 20 s).
  bool WaitStarted(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return started_ >= n; });
  }

  // Waits until every read started has ended.
  void WaitIdle() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return queue_.empty() && in_flight_ == 0; });
  }

  void Reset() {
    std::lock_guard lock(mu_);
    max_in_flight_ = in_flight_;
    max_per_name_.clear();
    started_ = 0;
  }
  uint64_t max_in_flight() {
    std::lock_guard lock(mu_);
    return max_in_flight_;
  }
  int max_per_name(const std::string& name) {
    std::lock_guard lock(mu_);
    return max_per_name_[name];
  }
  int started() {
    std::lock_guard lock(mu_);
    return started_;
  }
  // Reads of the first byte of `name`, ever.
  int first_reads(const std::string& name) {
    std::lock_guard lock(mu_);
    return first_reads_[name];
  }

 private:
  struct Pending {
    std::string name;
    uint64_t size;
    std::function<void()> finish;
  };

  void Loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return open_ && !queue_.empty(); });
      Pending p = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      p.finish();
      p.finish = nullptr;  // what the read kept alive goes now
      lock.lock();
      in_flight_ -= p.size;
      --per_name_[p.name];
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  std::deque<Pending> queue_;
  uint64_t in_flight_ = 0, max_in_flight_ = 0;
  std::map<std::string, int> per_name_, max_per_name_, first_reads_;
  int started_ = 0;
  std::thread thread_;  // left running: the process ends with the test
};

// An object of memory whose ReadAtAsync ends on Reads' thread.
class TestObject : public RandomAccessObject {
 public:
  TestObject(std::string name, std::string data, std::string version = "v1",
             std::optional<uint64_t> listed_size = std::nullopt)
      : data_(std::move(data)) {
    info_.name = std::move(name);
    info_.size = listed_size.value_or(data_.size());
    info_.version = std::move(version);
  }

  Status ReadAt(uint64_t offset, std::span<char> dst) override {
    if (offset + dst.size() > data_.size()) {
      return Status::OutOfRange(fmt::format("{}: ends", info_.name));
    }
    if (fail_at_ && offset + dst.size() > *fail_at_) {
      return Status::Unavailable(fmt::format("{}: failed after every attempt", info_.name));
    }
    std::memcpy(dst.data(), data_.data() + offset, dst.size());
    return Status::OK();
  }

  void ReadAtAsync(uint64_t offset, std::span<char> dst,
                   std::function<void(Status)> done) override {
    Reads::Get().Start(info_.name, offset, dst.size(),
                       [this, offset, dst, done] { done(ReadAt(offset, dst)); });
  }

  const ObjectInfo& info() const override { return info_; }
  void FailAt(uint64_t offset) { fail_at_ = offset; }

 private:
  std::string data_;
  ObjectInfo info_;
  std::optional<uint64_t> fail_at_;
};

std::string Pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 13 + i / 251 + seed) % 251);
  return s;
}

// Reads `source` to its end in pieces of `piece` bytes.
Result<std::string> ReadAll(ByteSource& source, size_t piece) {
  std::string out, buf(piece, '\0');
  for (;;) {
    Result<size_t> n = source.Read(std::span<char>(buf));
    if (!n.ok()) return n.status();
    if (*n == 0) return out;
    out.append(buf.data(), *n);
  }
}

class Options {
 public:
  Options(uint64_t read_ahead, uint64_t range) : saved_(GetRemoteOptions()) {
    RemoteOptions o = saved_;
    o.read_ahead_bytes = read_ahead;
    o.range_bytes = range;
    SetRemoteOptions(o);
  }
  ~Options() { SetRemoteOptions(saved_); }

 private:
  RemoteOptions saved_;
};

TEST_CASE("the source gives the object's bytes from an offset, in pieces of any size") {
  Options options(1 << 20, 64 << 10);
  const std::string data = Pattern(1000003, 1);
  for (uint64_t offset :
       {uint64_t{0}, uint64_t{1}, uint64_t{65536}, uint64_t{999999}, uint64_t{1000003}}) {
    for (size_t piece : {size_t{1000}, size_t{65536}, size_t{300000}}) {
      auto source = NewObjectSource(std::make_unique<TestObject>("s3://b/o", data), offset);
      CHECK(source->name() == "s3://b/o");
      CHECK(source->size() == data.size() - offset);
      Result<std::string> got = ReadAll(*source, piece);
      REQUIRE(got.ok());
      CHECK(*got == data.substr(offset));
    }
  }
}

// A TestObject with the default ReadAtAsync: the read ends before it returns.
class SyncObject : public TestObject {
 public:
  using TestObject::TestObject;
  Status ReadAt(uint64_t offset, std::span<char> dst) override {
    reads.push_back(offset);
    return TestObject::ReadAt(offset, dst);
  }
  void ReadAtAsync(uint64_t offset, std::span<char> dst,
                   std::function<void(Status)> done) override {
    RandomAccessObject::ReadAtAsync(offset, dst, std::move(done));
  }
  std::vector<uint64_t> reads;
};

TEST_CASE("an object read synchronously is read a range at a time, as the reader goes") {
  Options options(1 << 20, 64 << 10);
  const std::string data = Pattern(500000, 5);
  auto object = std::make_unique<SyncObject>("s3://b/sync", data);
  SyncObject* sync = object.get();
  auto source = NewObjectSource(std::move(object), 0);
  std::string buf(1000, '\0');
  REQUIRE(source->Read(std::span<char>(buf)).ok());
  CHECK(buf == data.substr(0, 1000));
  CHECK(sync->reads == std::vector<uint64_t>{0});  // not the whole read-ahead at once
  Result<std::string> rest = ReadAll(*source, 70000);
  REQUIRE(rest.ok());
  CHECK(*rest == data.substr(1000));
  CHECK(sync->reads.size() == 8);
}

TEST_CASE("a large object is read by several ranges at once, within the read-ahead") {
  constexpr uint64_t kRange = 64 << 10, kAhead = 1 << 20;
  Options options(kAhead, kRange);
  const std::string data = Pattern(4 << 20, 2);
  Reads::Get().WaitIdle();
  Reads::Get().SetOpen(false);
  Reads::Get().Reset();
  auto source = NewObjectSource(std::make_unique<TestObject>("s3://b/large", data), 0);
  Result<std::string> got = Status::Internal("not read");
  std::thread reader([&] { got = ReadAll(*source, 100000); });
  // Every range the read-ahead allows is asked before the first arrives.
  CHECK(Reads::Get().WaitStarted(kAhead / kRange));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(Reads::Get().started() == kAhead / kRange);
  Reads::Get().SetOpen(true);
  reader.join();
  REQUIRE(got.ok());
  CHECK(*got == data);
  CHECK(Reads::Get().max_per_name("s3://b/large") == kAhead / kRange);
  CHECK(Reads::Get().max_in_flight() <= kAhead);
}

TEST_CASE("the bytes read ahead by every source together stay within the bound") {
  constexpr uint64_t kRange = 64 << 10, kAhead = 256 << 10;
  constexpr int kSources = 8;
  Options options(kAhead, kRange);
  Reads::Get().Reset();
  std::vector<std::string> data;
  std::vector<std::unique_ptr<ByteSource>> sources;
  for (int i = 0; i < kSources; ++i) {
    data.push_back(Pattern(1 << 20, i));
    sources.push_back(
        NewObjectSource(std::make_unique<TestObject>(fmt::format("s3://b/o{}", i), data[i]), 0));
  }
  // Round robin, as an interleave reads: every source open at once.
  std::vector<std::string> got(kSources);
  std::string buf(10000, '\0');
  for (bool more = true; more;) {
    more = false;
    for (int i = 0; i < kSources; ++i) {
      Result<size_t> n = sources[i]->Read(std::span<char>(buf));
      REQUIRE(n.ok());
      got[i].append(buf.data(), *n);
      more = more || *n > 0;
    }
  }
  for (int i = 0; i < kSources; ++i) CHECK(got[i] == data[i]);
  // The documented bound: read_ahead_bytes, plus one range per open source.
  CHECK(Reads::Get().max_in_flight() <= kAhead + kSources * kRange);
  sources.clear();
  Reads::Get().WaitIdle();

  // The budget came back: one source reads as far ahead as before.
  Reads::Get().WaitIdle();
  Reads::Get().SetOpen(false);
  Reads::Get().Reset();
  auto source = NewObjectSource(std::make_unique<TestObject>("s3://b/again", data[0]), 0);
  Result<std::string> again = Status::Internal("not read");
  std::thread reader([&] { again = ReadAll(*source, 100000); });
  CHECK(Reads::Get().WaitStarted(kAhead / kRange));
  Reads::Get().SetOpen(true);
  reader.join();
  REQUIRE(again.ok());
  CHECK(*again == data[0]);
}

TEST_CASE("a source closed with ranges in flight gives their bytes back when they end") {
  constexpr uint64_t kRange = 64 << 10, kAhead = 512 << 10;
  Options options(kAhead, kRange);
  const std::string data = Pattern(2 << 20, 3);
  Reads::Get().WaitIdle();
  Reads::Get().SetOpen(false);
  Reads::Get().Reset();
  {
    auto source = NewObjectSource(std::make_unique<TestObject>("s3://b/closed", data), 0);
    std::thread reader([&] {
      std::string buf(10, '\0');
      CHECK(source->Read(std::span<char>(buf)).ok());
    });
    CHECK(Reads::Get().WaitStarted(kAhead / kRange));
    Reads::Get().SetOpen(true);
    reader.join();
  }  // closed: its object lives until the reads in flight end
  Reads::Get().WaitIdle();
  Reads::Get().SetOpen(false);
  Reads::Get().Reset();
  auto source = NewObjectSource(std::make_unique<TestObject>("s3://b/next", data), 0);
  std::thread reader([&] { CHECK(ReadAll(*source, 65536).ok()); });
  CHECK(Reads::Get().WaitStarted(kAhead / kRange));  // the whole budget again
  Reads::Get().SetOpen(true);
  reader.join();
}

TEST_CASE("a read error comes after the bytes before it; a short object is DataLoss") {
  Options options(256 << 10, 64 << 10);
  const std::string data = Pattern(300000, 4);
  auto object = std::make_unique<TestObject>("s3://b/fails", data);
  object->FailAt(200000);
  auto source = NewObjectSource(std::move(object), 0);
  std::string out;
  std::string buf(50000, '\0');
  Status error;
  for (;;) {
    Result<size_t> n = source->Read(std::span<char>(buf));
    if (!n.ok()) {
      error = n.status();
      break;
    }
    REQUIRE(*n > 0);
    out.append(buf.data(), *n);
  }
  CHECK(error.code() == StatusCode::kUnavailable);
  CHECK(error.message().find("s3://b/fails") != std::string::npos);
  CHECK(out == data.substr(0, 196608));  // the three whole ranges before the failing one
  CHECK(source->Read(std::span<char>(buf)).status().code() == StatusCode::kUnavailable);

  // An object shorter than the size it was opened at: DataLoss, not a short end.
  auto shrunk =
      NewObjectSource(std::make_unique<TestObject>("s3://b/shrunk", data, "v1", 500000), 0);
  Result<std::string> got = ReadAll(*shrunk, 100000);
  CHECK(got.status().code() == StatusCode::kDataLoss);
  CHECK(got.status().message().find("s3://b/shrunk") != std::string::npos);
}

// In a child process (the interrupt flag is for good): a reader waiting for
// a range ends with Cancelled soon after SIGINT.
TEST_CASE("source interrupt child" *
          doctest::skip(std::getenv("TFDIST_INTERRUPT_CHILD") == nullptr)) {
  InstallInterruptHandlers();
  Options options(1 << 20, 64 << 10);
  Reads::Get().SetOpen(false);  // the reads never end
  auto source = NewObjectSource(std::make_unique<TestObject>("s3://b/stuck", Pattern(1000, 6)), 0);
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(getpid(), SIGINT);
  });
  std::string buf(10, '\0');
  Result<size_t> n = source->Read(std::span<char>(buf));
  killer.join();
  REQUIRE(n.status().code() == StatusCode::kCancelled);
}

TEST_CASE("a reader waiting for a range ends with Cancelled on SIGINT") {
  if (std::getenv("TFDIST_INTERRUPT_CHILD") != nullptr) return;
  const std::string command = "TFDIST_INTERRUPT_CHILD=1 timeout 60 /proc/" +
                              std::to_string(getpid()) +
                              "/exe --test-case='source interrupt child' >/dev/null 2>&1";
  const int rc = std::system(command.c_str());
  CHECK(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 0);
}

// The objects that PrefetchObjects opens.
class TestStorage : public Storage {
 public:
  void Put(const std::string& name, std::string data, std::string version = "v1") {
    std::lock_guard lock(mu_);
    objects_[name] = {std::move(data), std::move(version)};
  }
  Status List(std::string_view,
              const std::function<Status(std::span<const ObjectInfo>)>&) override {
    return Status::Internal("not listed in this test");
  }
  Result<ObjectInfo> Stat(std::string_view name) override {
    std::lock_guard lock(mu_);
    auto it = objects_.find(std::string(name));
    if (it == objects_.end()) return Status::NotFound(fmt::format("{}: no such object", name));
    return ObjectInfo{std::string(name), it->second.first.size(), it->second.second};
  }
  Result<std::unique_ptr<RandomAccessObject>> Open(const ObjectInfo& info) override {
    std::lock_guard lock(mu_);
    const auto& [data, version] = objects_.at(info.name);
    return std::unique_ptr<RandomAccessObject>(
        std::make_unique<TestObject>(info.name, data, version));
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::pair<std::string, std::string>> objects_;
};

// The storage of s3:// for this test (SetStorageForTesting).
TestStorage& TheTestStorage() {
  static TestStorage* storage = [] {
    auto owned = std::make_unique<TestStorage>();
    TestStorage* raw = owned.get();
    SetStorageForTesting(Scheme::kS3, std::move(owned));
    return raw;
  }();
  return *storage;
}

TEST_CASE("the first ranges of the objects to come are read ahead, within half the budget") {
  constexpr uint64_t kRange = 64 << 10, kAhead = 1 << 20;
  Options options(kAhead, kRange);
  std::vector<std::string> names, data;
  for (int i = 0; i < 20; ++i) {
    names.push_back(fmt::format("s3://b/part-{:02}", i));
    data.push_back(Pattern(100000 + i, 10 + i));
    TheTestStorage().Put(names.back(), data.back());
  }
  Reads::Get().WaitIdle();
  Reads::Get().SetOpen(false);
  Reads::Get().Reset();
  std::vector<std::string> hint = names;
  hint.insert(hint.begin() + 3, "local/file.tfrecord");  // ignored
  PrefetchObjects(hint);
  CHECK(Reads::Get().WaitStarted(kAhead / 2 / kRange));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(Reads::Get().started() == kAhead / 2 / kRange);
  Reads::Get().SetOpen(true);
  for (int i = 0; i < 20; ++i) {
    Result<ObjectInfo> info = StatObject(names[i]);
    REQUIRE(info.ok());
    auto object = StorageFor(Scheme::kS3).Open(*info);
    REQUIRE(object.ok());
    auto source = NewObjectSource(std::move(*object), 0);
    Result<std::string> got = ReadAll(*source, 30000);
    REQUIRE(got.ok());
    CHECK(*got == data[i]);
    CHECK(Reads::Get().first_reads(names[i]) == 1);  // prefetched or not, read once
  }

  // A reader ahead of the prefetches: those it passed are not fetched.
  Reads::Get().WaitIdle();
  std::vector<std::string> later;
  for (int i = 0; i < 12; ++i) {
    later.push_back(fmt::format("s3://b/later-{:02}", i));
    TheTestStorage().Put(later.back(), Pattern(70000, i));
  }
  Reads::Get().SetOpen(false);
  Reads::Get().Reset();
  PrefetchObjects(later);
  CHECK(Reads::Get().WaitStarted(kAhead / 2 / kRange));  // later-00 to later-07
  auto open = [](const std::string& name) {
    Result<ObjectInfo> info = StatObject(name);
    REQUIRE(info.ok());
    auto object = StorageFor(Scheme::kS3).Open(*info);
    REQUIRE(object.ok());
    return NewObjectSource(std::move(*object), 0);
  };
  {
    auto ahead = open(later[10]);  // before its prefetch could start
    Result<std::string> got = Status::Internal("not read");
    std::thread reader([&] { got = ReadAll(*ahead, 30000); });
    CHECK(Reads::Get().WaitStarted(kAhead / 2 / kRange + 1));
    Reads::Get().SetOpen(true);
    reader.join();
    REQUIRE(got.ok());
    CHECK(*got == Pattern(70000, 10));
  }
  for (int i = 0; i < 8; ++i) CHECK(ReadAll(*open(later[i]), 30000).ok());
  for (int i = 0; i < 200 && Reads::Get().first_reads(later[11]) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(Reads::Get().first_reads(later[11]) == 1);
  CHECK(Reads::Get().first_reads(later[8]) == 0);
  CHECK(Reads::Get().first_reads(later[9]) == 0);
  CHECK(Reads::Get().first_reads(later[10]) == 1);

  // A prefetched range of another version than the one opened is not used.
  Reads::Get().WaitIdle();
  TheTestStorage().Put("s3://b/changed", Pattern(5000, 1), "v1");
  PrefetchObjects(std::vector<std::string>{"s3://b/changed"});
  for (int i = 0; i < 200 && Reads::Get().first_reads("s3://b/changed") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(Reads::Get().first_reads("s3://b/changed") == 1);
  auto source =
      NewObjectSource(std::make_unique<TestObject>("s3://b/changed", Pattern(6000, 2), "v2"), 0);
  Result<std::string> got = ReadAll(*source, 30000);
  REQUIRE(got.ok());
  CHECK(*got == Pattern(6000, 2));
  CHECK(Reads::Get().first_reads("s3://b/changed") == 2);
}

TEST_CASE("prefetches of small objects are a few requests at once, not half the budget") {
  // 64 KiB objects under a 64 MiB budget: half of it would be 512 at once.
  constexpr uint64_t kRange = 1 << 20, kAhead = 64 << 20;
  Options options(kAhead, kRange);
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) {
    names.push_back(fmt::format("s3://b/small-{:03}", i));
    TheTestStorage().Put(names.back(), Pattern(64 << 10, i));
  }
  Reads::Get().WaitIdle();
  Reads::Get().SetOpen(false);
  Reads::Get().Reset();
  PrefetchObjects(names);
  CHECK(Reads::Get().WaitStarted(16));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(Reads::Get().started() == 16);
  // As reads end, the next ones start: every object read once.
  Reads::Get().SetOpen(true);
  for (int i = 0; i < 200 && Reads::Get().first_reads(names.back()) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (int i = 0; i < 100; ++i) {
    Result<ObjectInfo> info = StatObject(names[i]);
    REQUIRE(info.ok());
    auto object = StorageFor(Scheme::kS3).Open(*info);
    REQUIRE(object.ok());
    Result<std::string> got = ReadAll(*NewObjectSource(std::move(*object), 0), 30000);
    REQUIRE(got.ok());
    CHECK(*got == Pattern(64 << 10, i));
    CHECK(Reads::Get().first_reads(names[i]) == 1);
  }
}

}  // namespace
}  // namespace tfdist::io
