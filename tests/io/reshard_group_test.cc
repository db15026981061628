// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// reshard and convert shared by a group of members (threads here, the
// ranks of an MPI job in tfdist): the same bytes as one process, and all or
// nothing when one member fails.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"
#include "tfdist/base/group.h"
#include "tfdist/io/reshard.h"

namespace tfdist::io {
namespace {

using testing::Compress;
using testing::Frame;
using testing::Listing;
using testing::TempDir;
using testing::WriteFile;

// Members that are threads of this process, meeting at each AllGather.
class ThreadGroup {
 public:
  explicit ThreadGroup(int n) : slots_(static_cast<size_t>(n)) {
    for (int r = 0; r < n; ++r) members_.emplace_back(new Member(this, r));
  }
  Group* member(int r) { return members_[static_cast<size_t>(r)].get(); }
  int size() const { return static_cast<int>(slots_.size()); }

 private:
  class Member final : public Group {
   public:
    Member(ThreadGroup* g, int r) : g_(g), r_(r) {}
    int rank() const override { return r_; }
    int size() const override { return g_->size(); }
    Result<std::vector<std::string>> AllGather(std::string mine) override {
      return g_->AllGather(r_, std::move(mine));
    }
    std::string Name(int r) const override { return fmt::format("member {}", r); }

   private:
    ThreadGroup* g_;
    int r_;
  };

  std::vector<std::string> AllGather(int r, std::string mine) {
    std::unique_lock<std::mutex> lock(mu_);
    slots_[static_cast<size_t>(r)] = std::move(mine);
    const uint64_t round = round_;
    if (++arrived_ == size()) {
      result_ = slots_;
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return round_ != round; });
    }
    // The next round cannot end before this member arrives at it.
    return result_;
  }

  std::vector<std::unique_ptr<Member>> members_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> slots_, result_;
  int arrived_ = 0;
  uint64_t round_ = 0;
};

// Runs `job` at each member of a group of `n`, in threads; their results.
template <typename T>
std::vector<Result<T>> RunGroup(int n, const std::function<Result<T>(Group*)>& job) {
  ThreadGroup group(n);
  std::vector<Result<T>> results(static_cast<size_t>(n), Status::Internal("not run"));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] { results[static_cast<size_t>(r)] = job(group.member(r)); });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> RandomRecords(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> records;
  for (size_t i = 0; i < n; ++i) {
    std::string r = fmt::format("{}:", i);
    const size_t size = rng() % 6 == 0 ? rng() % 20000 : rng() % 100;
    while (r.size() < size) r.push_back(static_cast<char>(rng()));
    records.push_back(std::move(r));
  }
  return records;
}

// Inputs of every compression and of uneven sizes, in folder `in` beside
// the output folders.
struct Inputs {
  TempDir dir;
  std::vector<std::string> paths;
  explicit Inputs(bool compressed) {
    const Compression kinds[] = {Compression::kNone, Compression::kGzip, Compression::kZlib};
    std::filesystem::create_directory(dir.File("in"));
    for (int f = 0; f < 5; ++f) {
      const Compression c = compressed ? kinds[f % 3] : Compression::kNone;
      paths.push_back(dir.File(fmt::format("in/part-{}.tfrecord{}", f,
                                           c == Compression::kGzip   ? ".gz"
                                           : c == Compression::kZlib ? ".zlib"
                                                                     : "")));
      WriteFile(paths.back(), Compress(Frame(RandomRecords(60 + 40 * f, 7 + f)), c));
    }
  }
  // A new, empty output folder.
  std::string Folder(const std::string& name) {
    std::filesystem::create_directory(dir.File(name));
    return dir.File(name);
  }
};

// The staging folders left beside the output folders (none, when all is well).
std::vector<std::string> Staging(const TempDir& dir) {
  std::vector<std::string> left;
  for (const std::string& name : Listing(dir.path())) {
    if (name.rfind(".tfdist-staging", 0) == 0) left.push_back(name);
  }
  return left;
}

void CheckSameOutputs(const RewriteSummary& alone, const RewriteSummary& shared) {
  REQUIRE(alone.outputs.size() == shared.outputs.size());
  CHECK(alone.total.records == shared.total.records);
  CHECK(alone.total.payload_bytes == shared.total.payload_bytes);
  for (size_t k = 0; k < alone.outputs.size(); ++k) {
    const OutputSummary& a = alone.outputs[k];
    const OutputSummary& b = shared.outputs[k];
    CAPTURE(b.path);
    CHECK(std::filesystem::path(a.path).filename() == std::filesystem::path(b.path).filename());
    CHECK(a.count.records == b.count.records);
    CHECK(a.count.payload_bytes == b.count.payload_bytes);
    CHECK(a.file_bytes == b.file_bytes);
    CHECK(Bytes(a.path) == Bytes(b.path));
  }
}

TEST_CASE("a group writes the shards byte for byte as one process does") {
  for (bool compressed : {false, true}) {
    for (bool shuffle : {false, true}) {
      for (Compression out : {Compression::kNone, Compression::kGzip}) {
        Inputs in(compressed);
        ReshardOptions o;
        o.num_shards = 7;
        o.output_compression = out;
        o.balance = ReshardBalance::kBytes;
        if (shuffle) o.seed = 42;
        o.output_prefix = in.Folder("alone") + "/s";
        auto alone = Reshard(in.paths, o);
        REQUIRE(alone.ok());
        for (int n : {2, 3, 4, 9}) {
          CAPTURE(compressed);
          CAPTURE(shuffle);
          CAPTURE(CompressionName(out));
          CAPTURE(n);
          const std::string folder = in.Folder(fmt::format("group-{}", n));
          auto results = RunGroup<RewriteSummary>(n, [&](Group* g) {
            ReshardOptions mine = o;
            mine.output_prefix = folder + "/s";
            mine.group = g;
            return Reshard(in.paths, mine);
          });
          for (const auto& r : results) {
            REQUIRE(r.ok());
            CheckSameOutputs(*alone, *r);
          }
          CHECK(Listing(folder).size() == 7);
          CHECK(Staging(in.dir).empty());
        }
      }
    }
  }
}

TEST_CASE("a group converts file by file as one process does") {
  Inputs in(true);
  ConvertOptions o;
  o.output_compression = Compression::kZlib;
  o.output_dir = in.Folder("alone");
  auto alone = Convert(in.paths, o);
  REQUIRE(alone.ok());
  o.output_dir = in.Folder("group");
  auto results = RunGroup<RewriteSummary>(3, [&](Group* g) {
    ConvertOptions mine = o;
    mine.group = g;
    return Convert(in.paths, mine);
  });
  for (const auto& r : results) {
    REQUIRE(r.ok());
    CheckSameOutputs(*alone, *r);
  }
  CHECK(Staging(in.dir).empty());
}

TEST_CASE("a failed write at one member leaves no output and no staged file at any") {
  for (int failing : {0, 2}) {
    CAPTURE(failing);
    Inputs in(true);
    const std::string folder = in.Folder("out");
    class FullDisk final : public ByteSink {
     public:
      Status Write(std::string_view) override {
        return Status::Internal("write failed: No space left on device");
      }
      Status Finish() override { return Status::OK(); }
    };
    auto results = RunGroup<RewriteSummary>(3, [&](Group* g) {
      ReshardOptions o;
      o.num_shards = 6;
      o.output_prefix = folder + "/s";
      o.group = g;
      if (g->rank() == failing) {
        o.wrap_sink = [](std::unique_ptr<ByteSink>) -> std::unique_ptr<ByteSink> {
          return std::make_unique<FullDisk>();
        };
      }
      return Reshard(in.paths, o);
    });
    for (const auto& r : results) {
      REQUIRE_FALSE(r.ok());
      CHECK(r.status().code() == StatusCode::kInternal);
      // The same error at every member; a member's own names it.
      CHECK(r.status().message() == results[0].status().message());
      CHECK(r.status().message().find("No space left on device") != std::string::npos);
      CHECK((r.status().message().rfind("member 2: writing", 0) == 0) == (failing == 2));
    }
    CHECK(Listing(folder).empty());
    CHECK(Staging(in.dir).empty());
  }
}

TEST_CASE("a damaged input scanned by any member is the group's error, in one process's words") {
  Inputs in(false);
  std::string bytes = Bytes(in.paths[3]);
  bytes[100] ^= 0x55;
  WriteFile(in.paths[3], bytes);
  ReshardOptions o;
  o.num_shards = 4;
  o.output_prefix = in.Folder("alone") + "/s";
  auto alone = Reshard(in.paths, o);
  REQUIRE_FALSE(alone.ok());
  CHECK(alone.status().code() == StatusCode::kDataLoss);
  const std::string folder = in.Folder("group");
  auto results = RunGroup<RewriteSummary>(4, [&](Group* g) {
    ReshardOptions mine = o;
    mine.output_prefix = folder + "/s";
    mine.group = g;
    return Reshard(in.paths, mine);
  });
  for (const auto& r : results) {
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().ToString() == alone.status().ToString());
  }
  CHECK(Listing(folder).empty());
  CHECK(Staging(in.dir).empty());
}

TEST_CASE("a group keeps an existing set unless told to replace it, as one process") {
  Inputs in(false);
  const std::string folder = in.Folder("out");
  auto run = [&](bool force) {
    return RunGroup<RewriteSummary>(2, [&](Group* g) {
      ReshardOptions o;
      o.num_shards = 3;
      o.output_prefix = folder + "/s";
      o.overwrite = force;
      o.group = g;
      return Reshard(in.paths, o);
    });
  };
  for (const auto& r : run(false)) REQUIRE(r.ok());
  for (const auto& r : run(false)) {
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().advice().remedy == Remedy::kOverwrite);
  }
  for (const auto& r : run(true)) REQUIRE(r.ok());
  CHECK(Listing(folder).size() == 3);
  CHECK(Staging(in.dir).empty());
}

}  // namespace
}  // namespace tfdist::io
