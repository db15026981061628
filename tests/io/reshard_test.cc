// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// reshard and convert: plans, balance bounds, seeds, content preserved, atomic failures.

#include "tfdist/io/reshard.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "file_index_internal.h"
#include "test_util.h"
#include "tfdist/io/byte_stream.h"
#include "tfdist/io/record_reader.h"
#include "tfdist/io/record_writer.h"

namespace tfdist::io {
namespace {

using testing::Compress;
using testing::Frame;
using testing::Listing;
using testing::TempDir;
using testing::WriteFile;

std::vector<std::string> ReadRecords(const std::string& path) {
  RecordReaderOptions options;
  options.compression = Compression::kAuto;
  auto reader = RecordReader::Open(path, options);
  REQUIRE(reader.ok());
  std::vector<std::string> records;
  std::string r;
  while ((*reader)->ReadRecord(r)) records.push_back(r);
  REQUIRE((*reader)->status().ok());
  return records;
}

// Random records of random sizes (some empty, some large), distinct contents.
std::vector<std::string> RandomRecords(size_t n, uint32_t seed, size_t max_size = 3000) {
  std::mt19937 rng(seed);
  std::vector<std::string> records;
  for (size_t i = 0; i < n; ++i) {
    const size_t size = rng() % 8 == 0 ? rng() % max_size : rng() % 64;
    std::string r = fmt::format("{}:", i);
    while (r.size() < size) r.push_back(static_cast<char>(rng()));
    records.push_back(std::move(r));
  }
  return records;
}

// The multiset of records, by content hash.
std::map<size_t, int> Multiset(const std::vector<std::string>& records) {
  std::map<size_t, int> m;
  for (const std::string& r : records) ++m[std::hash<std::string>{}(r)];
  return m;
}

uint64_t Framed(const std::string& r) { return r.size() + 16; }

TEST_CASE("a plan by records gives every shard its share, counts differing by at most 1") {
  for (uint64_t records : {1, 2, 7, 16, 17, 100, 1001}) {
    for (uint64_t n : {1, 2, 3, 7, 16}) {
      if (n > records) continue;
      CAPTURE(records);
      CAPTURE(n);
      std::vector<uint64_t> sizes(records, 20);
      ReshardPlanOptions o;
      o.num_shards = n;
      auto plan = PlanReshard(sizes, o);
      REQUIRE(plan.ok());
      REQUIRE(plan->num_shards() == n);
      CHECK(plan->order.empty());
      CHECK(plan->bounds.front() == 0);
      CHECK(plan->bounds.back() == records);
      uint64_t lo = records, hi = 0;
      for (uint64_t s = 0; s < n; ++s) {
        const uint64_t c = plan->bounds[s + 1] - plan->bounds[s];
        lo = std::min(lo, c);
        hi = std::max(hi, c);
      }
      CHECK(lo >= 1);
      CHECK(hi - lo <= 1);
    }
  }
}

TEST_CASE("a plan by bytes keeps every shard within one record of the mean, none empty") {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    const uint64_t records = 1 + rng() % 300;
    const uint64_t n = 1 + rng() % records;
    std::vector<uint64_t> sizes(records);
    for (uint64_t& s : sizes) {
      // Mostly small, sometimes huge: the case where naive cuts leave a shard empty.
      s = 16 + (rng() % 10 == 0 ? rng() % 100000 : rng() % 100);
    }
    CAPTURE(trial);
    ReshardPlanOptions o;
    o.num_shards = n;
    o.balance = ReshardBalance::kBytes;
    if (trial % 2 == 1) o.seed = trial;
    auto plan = PlanReshard(sizes, o);
    REQUIRE(plan.ok());
    REQUIRE(plan->num_shards() == n);
    uint64_t total = 0, largest = 0;
    for (uint64_t s : sizes) {
      total += s;
      largest = std::max(largest, s);
    }
    const double mean = static_cast<double>(total) / static_cast<double>(n);
    uint64_t covered = 0;
    for (uint64_t s = 0; s < n; ++s) {
      REQUIRE(plan->bounds[s + 1] > plan->bounds[s]);
      uint64_t bytes = 0;
      for (uint64_t p = plan->bounds[s]; p < plan->bounds[s + 1]; ++p) {
        bytes += sizes[plan->record_at(p)];
      }
      covered += bytes;
      CHECK(static_cast<double>(bytes) <= mean + static_cast<double>(largest));
    }
    CHECK(covered == total);
  }
}

TEST_CASE("a plan by bytes over records of one size differs in counts by at most 1") {
  std::vector<uint64_t> sizes(103, 116);
  ReshardPlanOptions o;
  o.num_shards = 10;
  o.balance = ReshardBalance::kBytes;
  auto plan = PlanReshard(sizes, o);
  REQUIRE(plan.ok());
  for (uint64_t s = 0; s < 10; ++s) {
    const uint64_t c = plan->bounds[s + 1] - plan->bounds[s];
    CHECK((c == 10 || c == 11));
  }
}

TEST_CASE("records per shard K makes ceil(records / K) shards of at most K records") {
  std::vector<uint64_t> sizes(25, 30);
  ReshardPlanOptions o;
  o.records_per_shard = 7;
  auto plan = PlanReshard(sizes, o);
  REQUIRE(plan.ok());
  REQUIRE(plan->num_shards() == 4);
  for (uint64_t s = 0; s < 4; ++s) CHECK(plan->bounds[s + 1] - plan->bounds[s] <= 7);
  // A K beyond the record count is one shard, without overflow, in both balances.
  for (ReshardBalance balance : {ReshardBalance::kRecords, ReshardBalance::kBytes}) {
    o.balance = balance;
    for (uint64_t k : {uint64_t{25}, uint64_t{26}, ~uint64_t{0}, ~uint64_t{0} - 1}) {
      o.records_per_shard = k;
      plan = PlanReshard(sizes, o);
      REQUIRE(plan.ok());
      CHECK(plan->num_shards() == 1);
    }
  }
}

// Whether `f` stops the process with a failed assert (in a child process).
template <typename F>
bool Aborts(F f) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // An assert failing writes to stderr; that is expected here.
    if (std::freopen("/dev/null", "w", stderr) == nullptr) _exit(2);
    f();
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

TEST_CASE("a plan refuses more shards than records and no records; a shard count is required") {
  std::vector<uint64_t> sizes(5, 20);
  ReshardPlanOptions o;
  o.num_shards = 6;
  auto plan = PlanReshard(sizes, o);
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.status().code() == StatusCode::kInvalidArgument);
  CHECK(plan.status().message() ==
        "cannot write 6 shards from 5 records: every shard must hold at least one record, as "
        "TensorFlow's FILE sharding expects");
  CHECK(plan.status().advice() == Advice{Remedy::kFewerShards, "5"});
  o.num_shards = 1;
  CHECK(PlanReshard({}, o).status().code() == StatusCode::kInvalidArgument);
  // Exactly one of the counts (the CLI checks it; the plan asserts it).
  o.records_per_shard = 2;
  CHECK(Aborts([&] { (void)PlanReshard(sizes, o); }));
  o = ReshardPlanOptions();
  CHECK(Aborts([&] { (void)PlanReshard(sizes, o); }));
  o.num_shards = 2;
  CHECK_FALSE(Aborts([&] { (void)PlanReshard(sizes, o); }));
}

TEST_CASE("seeds give deterministic permutations, different for different seeds") {
  const std::vector<uint64_t> a = SeededPermutation(1000, 7);
  CHECK(a == SeededPermutation(1000, 7));
  CHECK(a != SeededPermutation(1000, 8));
  std::vector<uint64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (uint64_t i = 0; i < 1000; ++i) REQUIRE(sorted[i] == i);
  std::vector<uint64_t> identity(1000);
  for (uint64_t i = 0; i < 1000; ++i) identity[i] = i;
  CHECK(a != identity);
  CHECK(SeededPermutation(0, 1).empty());
  CHECK(SeededPermutation(1, 1) == std::vector<uint64_t>{0});
}

TEST_CASE("shard and converted names follow TensorFlow's convention") {
  CHECK(ShardFileName("out/train", 3, 16, Compression::kNone) ==
        "out/train-00003-of-00016.tfrecord");
  CHECK(ShardFileName("t", 0, 2, Compression::kGzip) == "t-00000-of-00002.tfrecord.gz");
  CHECK(ShardFileName("t", 1, 2, Compression::kZlib) == "t-00001-of-00002.tfrecord.zlib");
  CHECK(ConvertedFileName("d/a.tfrecord.gz", Compression::kNone, "") == "d/a.tfrecord");
  CHECK(ConvertedFileName("d/a.tfrecord", Compression::kZlib, "") == "d/a.tfrecord.zlib");
  CHECK(ConvertedFileName("d/a.tfrecord.zlib", Compression::kGzip, "o") == "o/a.tfrecord.gz");
  CHECK(ConvertedFileName("a.tfrecord", Compression::kNone, "o/") == "o/a.tfrecord");
}

// Three inputs, one per compression, of random records.
struct Dataset {
  TempDir dir;
  std::vector<std::string> paths;
  std::vector<std::string> records;  // in input order
  explicit Dataset(uint32_t seed, size_t per_file = 150) {
    const Compression kinds[] = {Compression::kNone, Compression::kGzip, Compression::kZlib};
    const char* names[] = {"in-a.tfrecord", "in-b.tfrecord.gz", "in-c.tfrecord.zlib"};
    for (int f = 0; f < 3; ++f) {
      std::vector<std::string> recs = RandomRecords(per_file, seed + f);
      paths.push_back(dir.File(names[f]));
      WriteFile(paths.back(), Compress(Frame(recs), kinds[f]));
      records.insert(records.end(), recs.begin(), recs.end());
    }
  }
};

std::vector<std::string> Concatenated(const RewriteSummary& s) {
  std::vector<std::string> all;
  for (const OutputSummary& o : s.outputs) {
    std::vector<std::string> r = ReadRecords(o.path);
    CHECK(r.size() == o.count.records);
    uint64_t bytes = 0;
    for (const std::string& x : r) bytes += x.size();
    CHECK(bytes == o.count.payload_bytes);
    CHECK(std::filesystem::file_size(o.path) == o.file_bytes);
    all.insert(all.end(), r.begin(), r.end());
  }
  return all;
}

TEST_CASE("every reshard mode keeps the multiset of records, across compressions") {
  const Compression outs[] = {Compression::kNone, Compression::kGzip, Compression::kZlib};
  for (Compression out : outs) {
    for (ReshardBalance balance : {ReshardBalance::kRecords, ReshardBalance::kBytes}) {
      for (bool shuffle : {false, true}) {
        for (bool only_uncompressed : {false, true}) {
          CAPTURE(CompressionName(out));
          CAPTURE(static_cast<int>(balance));
          CAPTURE(shuffle);
          CAPTURE(only_uncompressed);
          Dataset data(11);
          std::span<const std::string> inputs(data.paths);
          std::vector<std::string> expected = data.records;
          if (only_uncompressed) {
            inputs = inputs.first(1);
            expected.resize(150);
          }
          ReshardOptions o;
          o.output_prefix = data.dir.File("out");
          o.num_shards = 7;
          o.balance = balance;
          o.output_compression = out;
          if (shuffle) o.seed = 5;
          auto summary = Reshard(inputs, o);
          REQUIRE(summary.ok());
          REQUIRE(summary->outputs.size() == 7);
          CHECK(summary->outputs[2].path == ShardFileName(o.output_prefix, 2, 7, out));
          const std::vector<std::string> got = Concatenated(*summary);
          CHECK(summary->total.records == expected.size());
          CHECK(Multiset(got) == Multiset(expected));
          if (shuffle) {
            CHECK(got != expected);
          } else {
            CHECK(got == expected);  // shards in name order give the input order
          }
          // Only the inputs and the shards are left: no temporary or spill file.
          CHECK(Listing(data.dir.path()).size() == data.paths.size() + 7);
        }
      }
    }
  }
}

TEST_CASE("the same seed writes the same shards; another seed, another order") {
  Dataset data(3);
  auto run = [&](uint64_t seed, const std::string& prefix) {
    ReshardOptions o;
    o.output_prefix = data.dir.File(prefix);
    o.num_shards = 4;
    o.seed = seed;
    auto s = Reshard(data.paths, o);
    REQUIRE(s.ok());
    return Concatenated(*s);
  };
  const std::vector<std::string> a = run(9, "a"), b = run(9, "b"), c = run(10, "c");
  CHECK(a == b);
  CHECK(a != c);
  CHECK(Multiset(a) == Multiset(c));
}

TEST_CASE("convert changes the compression file by file and keeps every record") {
  Dataset data(21);
  const Compression outs[] = {Compression::kNone, Compression::kGzip, Compression::kZlib};
  for (Compression out : outs) {
    CAPTURE(CompressionName(out));
    TempDir dest;
    ConvertOptions o;
    o.output_compression = out;
    o.output_dir = dest.path();
    auto s = Convert(data.paths, o);
    REQUIRE(s.ok());
    REQUIRE(s->outputs.size() == 3);
    for (size_t f = 0; f < 3; ++f) {
      CHECK(s->outputs[f].path == ConvertedFileName(data.paths[f], out, dest.path()));
      const std::vector<std::string> got = ReadRecords(s->outputs[f].path);
      const std::vector<std::string> want(data.records.begin() + 150 * f,
                                          data.records.begin() + 150 * (f + 1));
      CHECK(got == want);
      RecordReaderOptions ro;
      ro.compression = Compression::kAuto;
      auto reader = RecordReader::Open(s->outputs[f].path, ro);
      REQUIRE(reader.ok());
      std::string r;
      REQUIRE((*reader)->ReadRecord(r));
      CHECK((*reader)->compression() == out);
    }
    CHECK(Listing(dest.path()).size() == 3);
  }
}

TEST_CASE("convert refuses to write a file onto itself") {
  Dataset data(1);
  ConvertOptions o;
  o.output_compression = Compression::kNone;
  auto s = Convert(std::span<const std::string>(data.paths).first(1), o);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kInvalidArgument);
  CHECK(s.status().message() ==
        data.paths[0] + ": converting to none would write the file onto itself");
  CHECK(s.status().advice() == Advice{Remedy::kOtherOutputFolder, ""});
}

TEST_CASE("a corrupt input fails with its file and offset and leaves nothing behind") {
  for (bool index : {false, true}) {
    for (bool shuffle : {false, true}) {
      CAPTURE(index);
      CAPTURE(shuffle);
      TempDir dir;
      testing::IndexesIn indexes_here(dir.path());
      std::vector<std::string> recs = RandomRecords(40, 5, 100);
      std::string bytes = Frame(recs);
      // Damage the payload of record 30 (its size and framing stay valid).
      uint64_t offset = 0;
      for (int i = 0; i < 30; ++i) offset += Framed(recs[i]);
      bytes = testing::FlipByte(bytes, offset + 12 + recs[30].size() / 2);
      const std::string path = dir.File("bad.tfrecord");
      WriteFile(path, bytes);
      if (index) {
        // An index that fits the file: the damage is found while copying.
        WriteFile(path + ".idx", testing::DaliIndex(recs));
        REQUIRE(StampIndex(path).ok());
      }
      const std::vector<std::string> before = Listing(dir.path());
      ReshardOptions o;
      o.output_prefix = dir.File("out");
      o.num_shards = 3;
      if (shuffle) o.seed = 1;
      auto s = Reshard(std::vector<std::string>{path}, o);
      REQUIRE_FALSE(s.ok());
      CHECK(s.status().code() == StatusCode::kDataLoss);
      CHECK(s.status().message() ==
            fmt::format("{}: corrupted record at {}: data CRC mismatch in the {}-byte payload of "
                        "the record at {}",
                        path, offset + 12, recs[30].size(), offset));
      CHECK(Listing(dir.path()) == before);
    }
  }
}

TEST_CASE("a full disk while writing any shard leaves the destination as it was") {
  for (Compression in_c : {Compression::kNone, Compression::kGzip}) {
    for (uint64_t fail_after : {uint64_t{0}, uint64_t{5000}, uint64_t{12000}}) {
      CAPTURE(CompressionName(in_c));
      CAPTURE(fail_after);
      TempDir dir;
      const std::vector<std::string> recs = RandomRecords(400, 8);
      const std::string path = dir.File(in_c == Compression::kNone ? "in.tfrecord" : "in.gz");
      WriteFile(path, Compress(Frame(recs), in_c));
      const std::vector<std::string> before = Listing(dir.path());
      // Every output sink takes `fail_after` bytes, then the disk is full.
      class FullDisk final : public ByteSink {
       public:
        FullDisk(std::unique_ptr<ByteSink> inner, uint64_t room)
            : inner_(std::move(inner)), room_(room) {}
        Status Write(std::string_view data) override {
          if (data.size() > room_) return Status::Internal("write failed: No space left on device");
          room_ -= data.size();
          return inner_->Write(data);
        }
        Status Finish() override {
          // Flushing what is buffered would not fit either, when the room is gone.
          return room_ == 0 ? Status::Internal("fsync failed: No space left on device")
                            : inner_->Finish();
        }

       private:
        std::unique_ptr<ByteSink> inner_;
        uint64_t room_;
      };
      ReshardOptions o;
      o.output_prefix = dir.File("out");
      o.num_shards = 4;
      o.wrap_sink = [fail_after](std::unique_ptr<ByteSink> inner) -> std::unique_ptr<ByteSink> {
        return std::make_unique<FullDisk>(std::move(inner), fail_after);
      };
      auto s = Reshard(std::vector<std::string>{path}, o);
      REQUIRE_FALSE(s.ok());
      CHECK(s.status().code() == StatusCode::kInternal);
      CHECK(s.status().message().find("No space left on device") != std::string::npos);
      CHECK(s.status().message().find("no output was written") != std::string::npos);
      CHECK(Listing(dir.path()) == before);
    }
  }
}

TEST_CASE("existing outputs are kept unless overwriting is asked for") {
  Dataset data(4);
  ReshardOptions o;
  o.output_prefix = data.dir.File("out");
  o.num_shards = 2;
  const std::string existing = ShardFileName(o.output_prefix, 1, 2, Compression::kNone);
  WriteFile(existing, "keep me");
  auto s = Reshard(data.paths, o);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kInvalidArgument);
  CHECK(s.status().message() ==
        o.output_prefix + "-*-of-00002.tfrecord: 1 shard of the prefix " + o.output_prefix +
            " is there already, and a new set beside it would double the dataset for any glob of "
            "the prefix");
  CHECK(s.status().advice() == Advice{Remedy::kOverwrite, ""});
  CHECK(testing::ReadFile(existing) == "keep me");
  CHECK(Listing(data.dir.path()).size() == 4);
  o.overwrite = true;
  s = Reshard(data.paths, o);
  REQUIRE(s.ok());
  CHECK(Multiset(Concatenated(*s)) == Multiset(data.records));
}

TEST_CASE("an up-to-date index plans the copy without changing its result") {
  TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  const std::vector<std::string> recs = RandomRecords(300, 12);
  const std::string path = dir.File("in.tfrecord");
  WriteFile(path, Frame(recs));
  WriteFile(path + ".idx", testing::DaliIndex(recs));
  REQUIRE(StampIndex(path).ok());
  ReshardOptions o;
  o.output_prefix = dir.File("out");
  o.num_shards = 5;
  o.balance = ReshardBalance::kBytes;
  auto s = Reshard(std::vector<std::string>{path}, o);
  REQUIRE(s.ok());
  CHECK(s->planned_from_index);
  CHECK(Concatenated(*s) == recs);
}

TEST_CASE("an index whose sizes wrap past 2^64 is ignored: the input is scanned") {
  TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  const std::vector<std::string> recs = {"r0", "r1", "r2", "r3", "r4"};
  const std::string path = dir.File("in.tfrecord");
  WriteFile(path, Frame(recs));
  // 16 + (2^64 - 16) wraps to 0, and 0 + 90 ends where the file does.
  WriteFile(path + ".idx", "0 16\n16 18446744073709551600\n0 90\n");
  REQUIRE(StampIndex(path).ok());
  ReshardOptions o;
  o.output_prefix = dir.File("out");
  o.num_shards = 2;
  auto s = Reshard(std::vector<std::string>{path}, o);
  REQUIRE(s.ok());
  CHECK_FALSE(s->planned_from_index);
  REQUIRE(s->outputs.size() == 2);
  CHECK(s->outputs[0].count == FileRecords{3, 6});
  CHECK(s->outputs[1].count == FileRecords{2, 4});
  CHECK(Concatenated(*s) == recs);
}

TEST_CASE("an index that frames the records otherwise fails the copy and leaves nothing behind") {
  TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  // Five records of 18 bytes, at 0, 18, 36, 54 and 72.
  const std::string path = dir.File("in.tfrecord");
  WriteFile(path, Frame({"r0", "r1", "r2", "r3", "r4"}));
  const std::string stale = "; the index does not describe the file";
  auto reshard = [&](const std::string& index, uint64_t shards, std::optional<uint64_t> seed) {
    WriteFile(path + ".idx", index);
    REQUIRE(StampIndex(path).ok());
    const std::vector<std::string> before = Listing(dir.path());
    ReshardOptions o;
    o.output_prefix = dir.File("out");
    o.num_shards = shards;
    o.seed = seed;
    auto s = Reshard(std::vector<std::string>{path}, o);
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == StatusCode::kDataLoss);
    CHECK(Listing(dir.path()) == before);
    if (s.status().message().ends_with(stale)) {
      CHECK(s.status().advice() == Advice{Remedy::kRewriteFileIndex, path});
    }
    return s.status().message();
  };
  // Every CRC checks out over [0, 36) and [36, 90): two records and three.
  CHECK(reshard("0 36\n36 54\n", 2, std::nullopt).ends_with(stale));
  CHECK(reshard("0 36\n36 54\n", 1, std::nullopt) ==
        fmt::format("{}: corrupted record at 0: the length field says 2 bytes, the index 20{}",
                    path, stale));
  CHECK(reshard("0 18\n18 18\n36 27\n63 27\n", 2, std::nullopt) ==
        fmt::format("{}: corrupted record at 36: the length field says 2 bytes, the index 11{}",
                    path, stale));
  // Shuffled, the record the index puts at 27 (inside r1) may come first.
  uint64_t seed = 0;
  while (SeededPermutation(4, seed)[0] != 1) ++seed;
  CHECK(reshard("0 27\n27 27\n54 18\n72 18\n", 1, seed) ==
        fmt::format("{}: corrupted record at 27: no record header here, where the index puts one{}",
                    path, stale));
  // A damaged file under an index that fits it is reported as count and
  // verify word it.
  WriteFile(path, testing::FlipByte(Frame({"r0", "r1", "r2", "r3", "r4"}), 18 + 9));
  CHECK(reshard(testing::DaliIndex({"r0", "r1", "r2", "r3", "r4"}), 2, std::nullopt)
            .starts_with(fmt::format("{}: corrupted record at 18: length CRC mismatch", path)));
}

}  // namespace
}  // namespace tfdist::io
