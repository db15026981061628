// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// DATA read by index (run --read-by-index): the layout and the streams
// equal the scanning ones element for element, payloads included, while
// each worker reads only its own records.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>

#include "file_index_internal.h"
#include "test_util.h"
#include "tfdist/distribute/execute.h"
#include "tfdist/distribute/layout.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/record_fetch.h"
#include "tfdist/io/record_writer.h"
#include "tfdist/proto/synthetic.h"

namespace tfdist::dist {
namespace {

// An element as "file:index=payload-hex" (pairs and batches looked through),
// or with `ids` (as a layout holds records) "file:index/size"; a record not
// read yet shows as "?", which no expectation holds.
std::string Text(const data::Element& e, bool ids = false) {
  switch (e.kind) {
    case data::Element::Kind::kRecord: {
      if (ids) return fmt::format("{}/{}", e.Label(data::LabelMode::kRef), e.PayloadBytes());
      std::string hex;
      for (unsigned char c : e.payload()) hex += fmt::format("{:02x}", c);
      return fmt::format("{}={}", e.Label(data::LabelMode::kRef), hex);
    }
    case data::Element::Kind::kRecordId:
      if (e.payload_state == data::Element::PayloadState::kUnread) return "?";
      return fmt::format("{}/{}", e.Label(data::LabelMode::kRef), e.PayloadBytes());
    case data::Element::Kind::kPair:
      return fmt::format("{}:({})", e.pair_index(), e.items.empty() ? "" : Text(e.items[0], ids));
    case data::Element::Kind::kBatch: {
      std::string out = "[";
      for (const auto& item : e.items) out += Text(item, ids) + ",";
      return out + "]";
    }
    default:
      return "?";
  }
}

std::string Text(const std::vector<data::Element>& batch, bool ids = false) {
  std::string out = "[";
  for (const auto& e : batch) out += Text(e, ids) + " ";
  return out + "]";
}

// A layout's records are ids (read and checked, no payload).
std::vector<std::string> WorkerText(const WorkerLayout& wl) {
  std::vector<std::string> out;
  for (const auto& b : wl.batches) out.push_back(Text(b, true));
  for (const auto& e : wl.elements) out.push_back(Text(std::vector<data::Element>{e}, true));
  return out;
}

std::vector<std::string> StepText(const Layout& l) {
  std::vector<std::string> out;
  for (const Step& s : l.steps) {
    for (const ReplicaBatch& b : s.batches) {
      out.push_back(fmt::format("{} {}/{}{} {}", s.step, b.worker, b.replica, b.padding ? "*" : "",
                                Text(b.elements, true)));
    }
  }
  return out;
}

// A stream's batches, as Text shows them; `ids` (when given) gets them as
// Text(batch, true) does.
Result<std::vector<std::string>> Stream(const Execution& ex, int64_t w, uint64_t* fetched,
                                        std::vector<std::string>* ids = nullptr) {
  TFDIST_ASSIGN_OR_RETURN(auto stream, ex.Open(w));
  std::vector<std::string> out;
  for (;;) {
    std::vector<data::Element> batch;
    bool end = false;
    TFDIST_RETURN_IF_ERROR(stream->Next(batch, end));
    if (end) break;
    out.push_back(Text(batch));
    if (ids != nullptr) ids->push_back(Text(batch, true));
  }
  if (fetched != nullptr) *fetched = stream->fetched_bytes();
  return out;
}

// The framed bytes of the distinct records a worker holds.
uint64_t OwnRecordBytes(const WorkerLayout& wl) {
  std::set<std::pair<const std::string*, uint64_t>> seen;
  uint64_t bytes = 0;
  auto add = [&](const data::Element& e, auto&& self) -> void {
    if (e.kind == data::Element::Kind::kRecord || e.kind == data::Element::Kind::kRecordId) {
      if (seen.insert({e.origin.file, e.origin.offset}).second) bytes += e.PayloadBytes() + 16;
    }
    for (const auto& item : e.items) self(item, self);
  };
  for (const auto& b : wl.batches) {
    for (const auto& e : b) add(e, add);
  }
  for (const auto& e : wl.elements) add(e, add);
  return bytes;
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records) {
  auto w = io::RecordWriter::Open(path, {});
  REQUIRE(w.ok());
  for (const auto& r : records) REQUIRE((*w)->Write(r).ok());
  REQUIRE((*w)->Close().ok());
}

TEST_CASE("an index-driven DATA layout and its streams equal the scanning ones") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  Rng rng(2026);
  int indexed_trials = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t W = static_cast<int64_t>(rng.Uniform(2, 5));
    const int64_t R = static_cast<int64_t>(rng.Uniform(1, 3));
    const int64_t G = static_cast<int64_t>(rng.Uniform(1, 12));
    const size_t num_files = 1 + rng.Uniform(0, 4);
    std::vector<std::string> files;
    for (size_t f = 0; f < num_files; ++f) {
      files.push_back(dir.File(fmt::format("t{}f{:02}.tfrecord", trial, f)));
      std::vector<std::string> records;
      for (uint64_t r = 0, n = rng.Uniform(0, 25); r < n; ++r) {
        // Binary payloads of many sizes, a few larger than a read run.
        const bool large = rng.Uniform(0, 400) == 0;
        std::string payload(large ? (rng.Uniform(4, 6) << 20) : rng.Uniform(0, 300),
                            static_cast<char>(rng.Uniform(0, 255)));
        for (size_t i = 0; i < payload.size() && i < 300; ++i) {
          payload[i] = static_cast<char>(rng.Uniform(0, 255));
        }
        records.push_back(std::move(payload));
      }
      WriteRecords(files.back(), records);
      REQUIRE(io::WriteIndex(files.back(), true).ok());
    }
    std::string expr;
    switch (rng.Uniform(0, 3)) {
      case 0:
        expr = fmt::format("list_files(\"{}/t{}f*.tfrecord\", shuffle={})", dir.path(), trial,
                           rng.Uniform(0, 2) ? "True" : "False");
        expr += fmt::format(".interleave(tfrecord, cycle_length={}, block_length={}{})",
                            rng.Uniform(1, 4), rng.Uniform(1, 3),
                            rng.Uniform(0, 2) ? ", num_parallel_calls=2" : "");
        break;
      case 1:
        expr = fmt::format("list_files(\"{}/t{}f*.tfrecord\", shuffle=False).flat_map(tfrecord)",
                           dir.path(), trial);
        break;
      default: {
        std::string list;
        for (const auto& f : files) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", f);
        expr = fmt::format("tfrecord([{}]{})", list,
                           rng.Uniform(0, 2) ? ", num_parallel_reads=3" : "");
      }
    }
    if (rng.Uniform(0, 2)) expr += fmt::format(".shuffle({}, seed=5)", rng.Uniform(1, 10));
    if (rng.Uniform(0, 3) == 0) expr += ".repeat(2)";
    if (rng.Uniform(0, 3) == 0) expr += fmt::format(".skip({})", rng.Uniform(0, 4));
    if (rng.Uniform(0, 3) == 0) expr += ".shuffle(4)";  // unseeded: the run's seed
    if (rng.Uniform(0, 4) == 0) expr += ".enumerate()";
    const bool batched = rng.Uniform(0, 3) != 0;
    if (batched) {
      expr += fmt::format(".batch({}{})", G, rng.Uniform(0, 3) == 0 ? ", drop_remainder=True" : "");
    }
    if (rng.Uniform(0, 3) == 0) expr += ".prefetch(2)";
    auto pipeline = data::ParsePipeline(expr);
    REQUIRE(pipeline.ok());
    for (Split split : {Split::kAuto, Split::kNone}) {
      CAPTURE(expr);
      CAPTURE(W);
      CAPTURE(R);
      CAPTURE(SplitName(split));
      DistributeOptions o;
      o.policy = AutoShardPolicy::kData;
      o.split = split;
      o.topology = {W, R};
      data::BuildOptions b;
      b.default_seed = 7;
      b.cpus = 2;
      DistributeOptions scan = o;
      scan.read_by_index = false;
      DistributeOptions indexed = o;
      indexed.read_by_index = true;
      auto want = PlanLayout(*pipeline, scan, b);
      auto got = PlanLayout(*pipeline, indexed, b);
      REQUIRE(want.ok() == got.ok());
      if (!want.ok()) {
        CHECK(want.status().message() == got.status().message());
        continue;
      }
      CHECK_FALSE(want->decision.read_by_index);
      CHECK(got->decision.read_by_index);
      ++indexed_trials;
      REQUIRE(got->workers.size() == want->workers.size());
      for (size_t w = 0; w < want->workers.size(); ++w) {
        CAPTURE(w);
        CHECK(WorkerText(got->workers[w]) == WorkerText(want->workers[w]));
        // Each worker read its own records (all of them, and those it keeps
        // twice, as after repeat(), twice: as its stream reads them).
        CHECK(got->workers[w].bytes_read >= OwnRecordBytes(got->workers[w]));
        CHECK(got->workers[w].bytes_read <= want->workers[w].bytes_read);
      }
      CHECK(StepText(*got) == StepText(*want));

      auto ex = Execution::Plan(*pipeline, indexed, b);
      REQUIRE(ex.ok());
      CHECK(ex->read_by_index());
      auto ex_scan = Execution::Plan(*pipeline, scan, b);
      REQUIRE(ex_scan.ok());
      CHECK_FALSE(ex_scan->read_by_index());
      for (int64_t w = 0; w < W; ++w) {
        CAPTURE(w);
        uint64_t fetched = 0;
        std::vector<std::string> streamed_ids;
        auto streamed = Stream(*ex, w, &fetched, &streamed_ids);
        REQUIRE(streamed.ok());
        CHECK(streamed_ids == WorkerText(want->workers[static_cast<size_t>(w)]));
        auto scanned = Stream(*ex_scan, w, nullptr);
        REQUIRE(scanned.ok());
        CHECK(*scanned == *streamed);
        CHECK(fetched >= OwnRecordBytes(got->workers[static_cast<size_t>(w)]));
        // The layout reports the reads the run makes.
        CHECK(got->workers[static_cast<size_t>(w)].bytes_read == fetched);
      }
    }
  }
  CHECK(indexed_trials > 30);
}

// Writes a.tfrecord (6 records) and b.tfrecord (4) with their indexes.
struct TwoFiles {
  testing::TempDir dir;
  testing::IndexesIn indexes_here{dir.path()};
  std::string a = dir.File("a.tfrecord"), b = dir.File("b.tfrecord");
  TwoFiles() {
    WriteRecords(a, {"a0", "a1", "a2", "a3", "a4", "a5"});
    WriteRecords(b, {"b0", "b1", "b2", "b3"});
    REQUIRE(io::WriteIndex(a, true).ok());
    REQUIRE(io::WriteIndex(b, true).ok());
  }
  data::Pipeline Pipeline() const {
    auto p = data::ParsePipeline(fmt::format("tfrecord([\"{}\", \"{}\"])", a, b));
    REQUIRE(p.ok());
    return *p;
  }
};

// DATA over `workers`, reading by index (tfdist's opt-in shortcut).
DistributeOptions Data(int64_t workers) {
  DistributeOptions o;
  o.policy = AutoShardPolicy::kData;
  o.topology = {workers, 1};
  o.read_by_index = true;
  return o;
}

TEST_CASE(
    "a record damaged after indexing is DataLoss naming file and offset, for its worker only") {
  TwoFiles f;
  // Damage a4's payload (record 4 of a: header at 4 * 18): only worker 0 of
  // 2 keeps it (element 4). The index is stamped again, as if the damage had
  // not moved the file's change time (a disk's, not a program's).
  testing::WriteFile(f.a, testing::FlipByte(testing::ReadFile(f.a), 4 * 18 + 12));
  REQUIRE(io::StampIndex(f.a).ok());
  auto ex = Execution::Plan(f.Pipeline(), Data(2), {});
  REQUIRE(ex.ok());
  REQUIRE(ex->read_by_index());
  auto w0 = Stream(*ex, 0, nullptr);
  REQUIRE_FALSE(w0.ok());
  CHECK(w0.status().code() == StatusCode::kDataLoss);
  CHECK(w0.status().message().find(fmt::format("{}: corrupted record at {}", f.a, 4 * 18 + 12)) !=
        std::string::npos);
  // Worker 1 never reads it.
  auto w1 = Stream(*ex, 1, nullptr);
  REQUIRE(w1.ok());
  CHECK(w1->size() == 5);
  // PlanLayout fails the same way.
  auto layout = PlanLayout(f.Pipeline(), Data(2), {});
  REQUIRE_FALSE(layout.ok());
  CHECK(layout.status().code() == StatusCode::kDataLoss);
  CHECK(layout.status().message().find(fmt::format("{}: corrupted record at", f.a)) !=
        std::string::npos);
}

TEST_CASE("a truncated file under an index it no longer fits falls back to reading") {
  TwoFiles f;
  // Now one record longer than its index.
  testing::WriteFile(f.b, testing::Frame({"b0", "b1", "b2", "b3", "b4"}));
  auto layout = PlanLayout(f.Pipeline(), Data(2), {});
  REQUIRE(layout.ok());
  CHECK_FALSE(layout->decision.read_by_index);
  bool warned = false;
  for (const Warning& w : layout->decision.warnings) {
    warned = warned || (w.kind == WarningKind::kIndexNotUsed &&
                        w.message.find(f.b + ".idx") != std::string::npos &&
                        w.message.find("every worker reads every file") != std::string::npos &&
                        w.advice == Advice{Remedy::kRewriteFileIndex, f.b});
  }
  CHECK(warned);
  // Every worker read both files whole: 11 records of 2 bytes, framed.
  for (const auto& w : layout->workers) CHECK(w.bytes_read == 11 * 18);
  REQUIRE(layout->workers[0].elements.size() == 6);
  CHECK(layout->workers[0].elements.back().Label() == "b4");
}

TEST_CASE("records not where a current-looking index says are read by scanning, index named") {
  TwoFiles f;
  // a rewritten with the same size and record count, other boundaries
  // (records of 1, 3, 2, ... bytes), and its index stamped again: what a
  // file system whose change times cannot be trusted may show, or a file
  // rewritten during a run.
  testing::WriteFile(f.a, testing::Frame({"A", "AAA", "a2", "a3", "a4", "a5"}));
  REQUIRE(io::StampIndex(f.a).ok());
  auto ex = Execution::Plan(f.Pipeline(), Data(2), {});
  REQUIRE(ex.ok());
  REQUIRE(ex->read_by_index());
  DistributeOptions scanning = Data(2);
  scanning.read_by_index = false;
  auto reference = Execution::Plan(f.Pipeline(), scanning, {});
  REQUIRE(reference.ok());
  for (int64_t w : {0, 1}) {
    CAPTURE(w);
    auto stream = ex->Open(w);
    REQUIRE(stream.ok());
    std::vector<std::string> got;
    for (;;) {
      std::vector<data::Element> batch;
      bool end = false;
      REQUIRE((*stream)->Next(batch, end).ok());
      if (end) break;
      got.push_back(Text(batch));
    }
    auto want = Stream(*reference, w, nullptr);
    REQUIRE(want.ok());
    CHECK(got == *want);
    const std::vector<std::string>& notes = (*stream)->fetch_notes();
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].starts_with(f.a + ".idx does not describe " + f.a + " ("));
    CHECK(notes[0].ends_with("its records were read by scanning the file; write the index again"));
  }
  // Fewer records than the index planned (91 + 17 = 108 bytes, as before):
  // an error naming the index.
  testing::WriteFile(f.a, testing::Frame({std::string(75, 'x'), "a"}));
  REQUIRE(io::StampIndex(f.a).ok());
  auto fewer = Execution::Plan(f.Pipeline(), Data(2), {});
  REQUIRE(fewer.ok());
  REQUIRE(fewer->read_by_index());
  auto w0 = Stream(*fewer, 0, nullptr);
  REQUIRE_FALSE(w0.ok());
  CHECK(w0.status().code() == StatusCode::kDataLoss);
  CHECK(w0.status().message().find(f.a + ": has 2 records, and record 2 was planned from " + f.a +
                                   ".idx, which does not describe the file") != std::string::npos);
  CHECK(w0.status().advice() == Advice{Remedy::kRewriteFileIndex, f.a});
}

TEST_CASE("an index whose sizes wrap past 2^64 does not fit its file: it is read whole") {
  TwoFiles f;
  // b is 4 records of 18 bytes; 16 + (2^64 - 16) wraps to 0, and 0 + 72 ends
  // where the file does.
  testing::WriteFile(f.b + ".idx", "0 16\n16 18446744073709551600\n0 72\n");
  REQUIRE(io::StampIndex(f.b).ok());
  std::string stale;
  CHECK_FALSE(io::ReadRecordExtents(f.b, &stale));
  CHECK(stale.find("record 1 ends past the 72 bytes") != std::string::npos);
  auto layout = PlanLayout(f.Pipeline(), Data(2), {});
  REQUIRE(layout.ok());
  CHECK_FALSE(layout->decision.read_by_index);
  REQUIRE(layout->workers[1].elements.size() == 5);
  CHECK(layout->workers[1].elements.back().Label() == "b3");
  auto ex = Execution::Plan(f.Pipeline(), Data(2), {});
  REQUIRE(ex.ok());
  CHECK_FALSE(ex->read_by_index());
  auto w1 = Stream(*ex, 1, nullptr);
  REQUIRE(w1.ok());
  CHECK(w1->size() == 5);
}

TEST_CASE("reading by index each worker reads its own records; by default, everything") {
  TwoFiles f;
  auto indexed = PlanLayout(f.Pipeline(), Data(3), {});
  REQUIRE(indexed.ok());
  CHECK(indexed->decision.read_by_index);
  CHECK(indexed->decision.reason.find("each worker reads only its own records") !=
        std::string::npos);
  CHECK_FALSE(indexed->decision.HasWarning(WarningKind::kDataReadsEverything));
  // 10 records over 3 workers: 4, 3, 3.
  CHECK(indexed->workers[0].bytes_read == 4 * 18);
  CHECK(indexed->workers[1].bytes_read == 3 * 18);
  CHECK(indexed->workers[2].bytes_read == 3 * 18);
  DistributeOptions as_tensorflow = Data(3);
  as_tensorflow.read_by_index = DistributeOptions().read_by_index;
  auto scanned = PlanLayout(f.Pipeline(), as_tensorflow, {});
  REQUIRE(scanned.ok());
  CHECK_FALSE(scanned->decision.read_by_index);
  for (const auto& w : scanned->workers) CHECK(w.bytes_read == 10 * 18);
  const LayoutSummary summary = Summarize(*indexed);
  REQUIRE(summary.workers.size() == 3);
  CHECK(summary.workers[0].bytes_read == std::optional<uint64_t>(4 * 18));
  // One worker, FILE, OFF or a compressed reader: no index.
  auto one = PlanLayout(f.Pipeline(), Data(1), {});
  REQUIRE(one.ok());
  CHECK_FALSE(one->decision.read_by_index);
  DistributeOptions off = Data(2);
  off.policy = AutoShardPolicy::kOff;
  auto all = PlanLayout(f.Pipeline(), off, {});
  REQUIRE(all.ok());
  CHECK_FALSE(all->decision.read_by_index);
}

TEST_CASE("FetchRecords reads records in any order, duplicates once, and finds truncation") {
  testing::TempDir dir;
  testing::IndexesIn indexes_here(dir.path());
  const std::string path = dir.File("x.tfrecord");
  WriteRecords(path, {"zero", "one", "two", "three"});
  std::string stale;
  CHECK_FALSE(io::ReadRecordExtents(path, &stale));
  CHECK(stale.empty());
  REQUIRE(io::WriteIndex(path, false).ok());
  auto extents = io::ReadRecordExtents(path, &stale);
  REQUIRE(extents);
  REQUIRE(extents->size() == 4);
  std::vector<io::FetchRequest> req(4);
  const size_t pick[] = {3, 0, 3, 1};
  for (size_t i = 0; i < 4; ++i) {
    req[i].offset = (*extents)[pick[i]].offset;
    req[i].payload_size = (*extents)[pick[i]].size - 16;
  }
  uint64_t read = 0;
  REQUIRE(io::FetchRecords(path, req, &read).ok());
  CHECK(req[0].payload == "three");
  CHECK(req[1].payload == "zero");
  CHECK(req[2].payload == "three");
  CHECK(req[3].payload == "one");
  CHECK(read == (4 + 16) + (3 + 16) + (5 + 16));
  // Sizes no file holds are errors, never allocations or wrapped ends.
  for (uint64_t size : {UINT64_MAX, UINT64_MAX - 16, uint64_t{1} << 62}) {
    std::vector<io::FetchRequest> huge(1);
    huge[0].payload_size = size;
    const Status s = io::FetchRecords(path, huge);
    CHECK(s.code() == StatusCode::kDataLoss);
    CHECK(s.message().find(fmt::format("the length field says 4 bytes, the index {}", size)) !=
          std::string::npos);
  }
  std::vector<io::FetchRequest> far(2);
  far[0].offset = UINT64_MAX - 4;
  far[1].offset = uint64_t{1} << 62;
  far[0].payload_size = far[1].payload_size = 4;
  CHECK(io::FetchRecords(path, far).message() ==
        fmt::format("{}: truncated record at {}: 0 of the 12 header bytes before the end of the "
                    "file",
                    path, uint64_t{1} << 62));
  // Cut inside "three": truncated, at its payload.
  testing::WriteFile(path, testing::Truncate(testing::ReadFile(path), (*extents)[3].offset + 14));
  std::vector<io::FetchRequest> last(1);
  last[0].offset = (*extents)[3].offset;
  last[0].payload_size = 5;
  const Status s = io::FetchRecords(path, last);
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(s.message() == fmt::format("{}: truncated record at {}: 2 of the 9 payload and footer "
                                   "bytes before the end of the file",
                                   path, (*extents)[3].offset + 12));
}

}  // namespace
}  // namespace tfdist::dist
