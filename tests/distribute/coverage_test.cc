// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Record coverage on generated TFRecord files: OFF's and an unsharded input
// function's duplicates exactly, DATA after an unseeded shuffle as the
// expected fractions and a draw that really runs every worker with a seed
// of its own, and the cases that must give no finding.

#include "tfdist/distribute/coverage.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "test_util.h"
#include "tfdist/io/record_writer.h"

namespace tfdist::dist {
namespace {

// `files` files of `per_file` records each, "f<i>r<j>", in `dir`.
void WriteData(const testing::TempDir& dir, int files, int per_file) {
  for (int f = 0; f < files; ++f) {
    auto w = io::RecordWriter::Open(dir.File(fmt::format("part-{:02}", f)), {});
    REQUIRE(w.ok());
    for (int r = 0; r < per_file; ++r) REQUIRE((*w)->Write(fmt::format("f{}r{}", f, r)).ok());
    REQUIRE((*w)->Close().ok());
  }
}

struct Case {
  std::string expr;
  DistributeOptions options;
  data::BuildOptions build;
  CheckContext ctx;
  CoverageOptions coverage;
};

Case Make(const std::string& expr, Api api, AutoShardPolicy policy, int64_t workers) {
  Case c;
  c.expr = expr;
  c.options.api = api;
  c.options.policy = policy;
  c.options.topology = {workers, 1};
  c.build.cpus = 2;
  c.build.default_seed = 5;
  c.ctx.strategy = Strategy::kMultiWorker;
  return c;
}

CoverageResult Run(const Case& c) {
  CAPTURE(c.expr);
  auto p = data::ParsePipeline(c.expr);
  REQUIRE_MESSAGE(p.ok(), p.status().ToString());
  auto summary = SummarizeLayout(*p, c.options, c.build);
  REQUIRE_MESSAGE(summary.ok(), summary.status().ToString());
  auto result = CoverageFindings(*p, c.options, c.build, *summary, c.ctx, c.coverage);
  REQUIRE_MESSAGE(result.ok(), result.status().ToString());
  return *result;
}

const Finding* Find(const CoverageResult& r, FindingKind kind) {
  for (const Finding& f : r.findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

bool Contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("the expected fractions: missed (1-1/W)^W, once (1-1/W)^(W-1), the rest twice or more") {
  const CoverageFractions one = ExpectedCoverage(1);
  CHECK(one.missed == 0);
  CHECK(one.once == 1);
  const CoverageFractions two = ExpectedCoverage(2);
  CHECK(two.missed == doctest::Approx(0.25));
  CHECK(two.once == doctest::Approx(0.5));
  CHECK(two.duplicated == doctest::Approx(0.25));
  const CoverageFractions four = ExpectedCoverage(4);
  CHECK(four.missed == doctest::Approx(0.31640625));
  CHECK(four.once == doctest::Approx(0.421875));
  CHECK(four.duplicated == doctest::Approx(1 - 0.31640625 - 0.421875));
  // Towards 1/e, 1/e and 1 - 2/e.
  const CoverageFractions many = ExpectedCoverage(4096);
  CHECK(many.missed == doctest::Approx(std::exp(-1.0)).epsilon(0.001));
  CHECK(many.once == doctest::Approx(std::exp(-1.0)).epsilon(0.001));
}

TEST_CASE("OFF on 4 workers: every record fed 4 times, exactly; asked for, a warning") {
  testing::TempDir dir;
  WriteData(dir, 4, 25);
  Case c = Make(fmt::format("list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord)"
                            ".batch(4)",
                            dir.path()),
                Api::kDistribute, AutoShardPolicy::kOff, 4);
  CoverageResult r = Run(c);
  REQUIRE(r.counts.exact);
  CHECK(r.counts.exact->records == 100);
  CHECK(r.counts.exact->duplicated == 100);
  CHECK(r.counts.exact->extra_feeds == 300);
  CHECK(r.counts.exact->missed == 0);
  CHECK_FALSE(r.counts.draw);
  const Finding* d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(d->severity == FindingSeverity::kError);
  CHECK(Contains(d->tensorflow, "silent"));
  CHECK(Contains(d->tensorflow, "4 times the steps"));
  CHECK(Contains(d->evidence, "all 100 records"));
  CHECK(Contains(d->evidence, "300 extra feeds"));
  CHECK(Contains(d->fix, "AutoShardPolicy.FILE"));
  CHECK(Find(r, FindingKind::kMissedRecords) == nullptr);

  // Two epochs: the counts are one epoch's.
  c.options.epochs = 2;
  r = Run(c);
  CHECK(r.counts.exact->extra_feeds == 300);
  CHECK(Contains(Find(r, FindingKind::kDuplicateRecords)->evidence, "(100 global steps"));
  CHECK(Contains(Find(r, FindingKind::kDuplicateRecords)->fix, "its own 1 of the 4 files"));
  c.options.epochs = 1;

  c.ctx.policy_given = true;
  r = Run(c);
  d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(d->severity == FindingSeverity::kWarning);

  // Fewer files than workers: the fix is DATA.
  c.options.topology.workers = 5;
  r = Run(c);
  d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(r.counts.exact->extra_feeds == 400);
  CHECK(d->fix.starts_with("the DATA policy"));
}

TEST_CASE("DATA after an unseeded shuffle on 4 workers: the fractions and a draw near them") {
  testing::TempDir dir;
  WriteData(dir, 8, 250);  // 2,000 records
  Case c = Make(fmt::format("list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord)"
                            ".shuffle(2000).batch(4)",
                            dir.path()),
                Api::kDistribute, AutoShardPolicy::kData, 4);
  c.coverage.seed = 11;
  const CoverageResult r = Run(c);
  REQUIRE(r.counts.expected);
  CHECK(r.counts.expected->missed == doctest::Approx(0.3164).epsilon(0.001));
  REQUIRE(r.counts.draw);
  const CoverageDraw& draw = *r.counts.draw;
  CHECK(draw.Complete());
  CHECK(draw.seed == 11);
  CHECK(draw.reference_records == 2000);
  CHECK(draw.counts.records == 2000);
  CHECK(draw.counts.missed + draw.once + draw.counts.duplicated == 2000);
  // Binomial(4, 1/4) per record: the draw's shares within a few standard
  // deviations (about 0.01 at 2,000 records) of the expected ones.
  const CoverageFractions x = draw.Fractions();
  CHECK(x.missed == doctest::Approx(0.316).epsilon(0.15));
  CHECK(x.once == doctest::Approx(0.422).epsilon(0.15));
  CHECK(x.duplicated == doctest::Approx(0.262).epsilon(0.2));
  // Every feed is one of the 4 workers' 500 records each.
  uint64_t feeds = draw.once + draw.counts.duplicated + draw.counts.extra_feeds;
  CHECK(feeds == 2000);

  const Finding* d = Find(r, FindingKind::kDuplicateRecords);
  const Finding* m = Find(r, FindingKind::kMissedRecords);
  const Finding* u = Find(r, FindingKind::kUnseededShuffle);
  REQUIRE(d != nullptr);
  REQUIRE(m != nullptr);
  REQUIRE(u != nullptr);
  CHECK(d->severity == FindingSeverity::kError);
  CHECK(m->severity == FindingSeverity::kError);
  CHECK(u->severity == FindingSeverity::kError);
  CHECK(Contains(d->evidence, "0.316 of the records missed"));
  CHECK(Contains(d->evidence, "0.422 fed exactly once"));
  CHECK(Contains(d->evidence, "one draw of the first epoch (run seed 11"));
  CHECK(Contains(d->evidence, "over all 2000 records"));
  CHECK(Contains(d->evidence, fmt::format("{} fed twice or more", draw.counts.duplicated)));
  CHECK(Contains(m->evidence, fmt::format("{} never", draw.counts.missed)));
  CHECK(Contains(d->tensorflow, "silent"));
  CHECK(Contains(d->fix, "`shuffle(..., seed=S)` at column"));
  CHECK(Contains(d->fix, "tf.random.set_seed(S)"));
  CHECK(Contains(u->tensorflow, "Random ops require a seed"));

  // The draw is the seed's: the same seed, the same counts; another, others.
  const CoverageResult again = Run(c);
  REQUIRE(again.counts.draw);
  CHECK(again.counts.draw->counts.missed == draw.counts.missed);
  CHECK(again.counts.draw->counts.duplicated == draw.counts.duplicated);
  c.coverage.seed = 12;
  const CoverageResult other = Run(c);
  REQUIRE(other.counts.draw);
  CHECK((other.counts.draw->counts.missed != draw.counts.missed ||
         other.counts.draw->counts.duplicated != draw.counts.duplicated));
  CHECK(other.counts.draw->Fractions().missed == doctest::Approx(0.316).epsilon(0.15));
}

TEST_CASE("the draw's sample is bounded: past the cap, a hash sample of the records") {
  testing::TempDir dir;
  WriteData(dir, 4, 500);
  Case c = Make(fmt::format("list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord)"
                            ".shuffle(2000).batch(2)",
                            dir.path()),
                Api::kDistribute, AutoShardPolicy::kData, 4);
  c.coverage.seed = 3;
  c.coverage.sample_cap = 300;
  const CoverageResult r = Run(c);
  REQUIRE(r.counts.draw);
  const CoverageDraw& draw = *r.counts.draw;
  CHECK_FALSE(draw.Complete());
  CHECK(draw.counts.records <= 300);
  CHECK(draw.counts.records >= 100);  // the limit halves only as far as it must
  CHECK(draw.reference_records == 2000);
  CHECK(draw.Fractions().missed == doctest::Approx(0.316).epsilon(0.4));
  const Finding* d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(Contains(d->evidence, fmt::format("over {} sampled records", draw.counts.records)));
  CHECK(Contains(d->evidence, "of the 2000 one worker feeds"));
}

TEST_CASE("seeded shuffles cut one permutation on every worker: no finding under DATA") {
  testing::TempDir dir;
  WriteData(dir, 4, 50);
  const std::string base =
      fmt::format("list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord)", dir.path());
  {
    Case c =
        Make(base + ".shuffle(200, seed=7).batch(4)", Api::kDistribute, AutoShardPolicy::kData, 4);
    CHECK(Run(c).findings.empty());
  }
  {
    // tf.random.set_seed(S): every unseeded shuffle takes the same op seed.
    Case c = Make(base + ".shuffle(200).batch(4)", Api::kDistribute, AutoShardPolicy::kData, 4);
    c.build.global_seed = data::GlobalSeed{42, 0};
    const CoverageResult r = Run(c);
    CHECK(r.findings.empty());
    CHECK_FALSE(r.counts.draw);
  }
  {
    // list_files' own shuffle, unseeded, under DATA: the names' order
    // differs per worker, so the records do too.
    Case c =
        Make(fmt::format("list_files(\"{}/part-*\").interleave(tfrecord).batch(4)", dir.path()),
             Api::kDistribute, AutoShardPolicy::kData, 4);
    c.coverage.seed = 1;
    const CoverageResult r = Run(c);
    const Finding* d = Find(r, FindingKind::kDuplicateRecords);
    REQUIRE(d != nullptr);
    CHECK(Contains(d->fix, "`list_files(..., seed=S)` (or `shuffle=False`)"));
    REQUIRE(r.counts.draw);
    CHECK(r.counts.draw->counts.duplicated + r.counts.draw->counts.missed > 0);
  }
}

TEST_CASE("FILE with list_files' unseeded shuffle is safe: no finding") {
  testing::TempDir dir;
  WriteData(dir, 8, 20);
  Case c = Make(fmt::format("list_files(\"{}/part-*\").interleave(tfrecord).batch(4)", dir.path()),
                Api::kDistribute, AutoShardPolicy::kFile, 4);
  const CoverageResult r = Run(c);
  CHECK(r.findings.empty());
  CHECK_FALSE(r.counts.draw);
  CHECK_FALSE(r.counts.expected);
  // A shuffle of records without a seed is order only under FILE: a warning.
  c.expr = fmt::format("list_files(\"{}/part-*\").interleave(tfrecord).shuffle(50).batch(4)",
                       dir.path());
  const CoverageResult o = Run(c);
  REQUIRE(o.findings.size() == 1);
  CHECK(o.findings[0].kind == FindingKind::kUnseededShuffle);
  CHECK(o.findings[0].severity == FindingSeverity::kWarning);
  CHECK(Contains(o.findings[0].evidence, "shuffle() at column"));
  CHECK(Contains(o.findings[0].tensorflow, "Random ops require a seed"));
  // Before 2.8 there is no op determinism to raise it.
  c.ctx.version = TfVersion{7};
  const CoverageResult old = Run(c);
  REQUIRE(old.findings.size() == 1);
  CHECK_FALSE(Contains(old.findings[0].tensorflow, "Random ops"));
  CHECK(Contains(old.findings[0].other_versions, "from 2.8"));
}

TEST_CASE("an input function that does not shard: every record fed by every worker") {
  testing::TempDir dir;
  WriteData(dir, 3, 10);
  Case c = Make(fmt::format("list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord)"
                            ".batch(2)",
                            dir.path()),
                Api::kFromFunction, AutoShardPolicy::kAuto, 3);
  const CoverageResult r = Run(c);
  REQUIRE(r.counts.exact);
  CHECK(r.counts.exact->records == 30);
  CHECK(r.counts.exact->duplicated == 30);
  CHECK(r.counts.exact->extra_feeds == 60);
  const Finding* d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(d->severity == FindingSeverity::kError);
  CHECK(Contains(d->tensorflow, "distribute_datasets_from_function"));
  CHECK(Contains(d->evidence, "every record 3 times"));
  CHECK(Contains(d->evidence, "30 of the 30 records read were read by more than one worker"));
  CHECK(Contains(d->fix,
                 "ds.shard(input_context.num_input_pipelines, "
                 "input_context.input_pipeline_id)"));
}

TEST_CASE("an input function's shard() after an unseeded shuffle of the names: a draw") {
  testing::TempDir dir;
  WriteData(dir, 12, 10);
  const std::string sharded =
      ".shard(ctx.num_input_pipelines, ctx.input_pipeline_id).interleave(tfrecord).batch(2)";
  Case c = Make(fmt::format("list_files(\"{}/part-*\"){}", dir.path(), sharded), Api::kFromFunction,
                AutoShardPolicy::kAuto, 3);
  c.coverage.seed = 9;
  const CoverageResult r = Run(c);
  REQUIRE(r.counts.draw);
  CHECK(r.counts.draw->reference_records == 120);
  CHECK(r.counts.expected->missed == doctest::Approx(8.0 / 27));
  const Finding* d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(Contains(d->evidence, "shard() at column"));
  // Whole files go together: the draw's counts are multiples of 10.
  CHECK(r.counts.draw->counts.missed % 10 == 0);
  CHECK(r.counts.draw->counts.duplicated % 10 == 0);
  // Seeded (or unshuffled) names: the shares are disjoint, no finding.
  c.expr = fmt::format("list_files(\"{}/part-*\", seed=3){}", dir.path(), sharded);
  CHECK(Run(c).findings.empty());
}

TEST_CASE("HINT with no shard(SHARD_HINT) to rewrite: every worker feeds everything, an error") {
  testing::TempDir dir;
  WriteData(dir, 4, 25);
  Case c = Make(fmt::format("list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord)"
                            ".batch(4)",
                            dir.path()),
                Api::kDistribute, AutoShardPolicy::kHint, 4);
  c.ctx.policy_given = true;  // HINT asked for shards, not for duplicates
  CoverageResult r = Run(c);
  REQUIRE(r.counts.exact);
  CHECK(r.counts.exact->extra_feeds == 300);
  const Finding* d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(d->severity == FindingSeverity::kError);
  CHECK(Contains(d->tensorflow, "HINT rewrites only"));
  CHECK(Contains(d->fix, "SHARD_HINT"));
  // With the placeholder on the file names, each worker keeps its own.
  c.expr = fmt::format(
      "list_files(\"{}/part-*\", shuffle=False).shard(SHARD_HINT, SHARD_HINT)"
      ".interleave(tfrecord).batch(4)",
      dir.path());
  r = Run(c);
  CHECK(Find(r, FindingKind::kDuplicateRecords) == nullptr);
}

TEST_CASE("parameter server: every worker makes the whole dataset; one order for all is an error") {
  testing::TempDir dir;
  WriteData(dir, 4, 25);
  // Checked as one worker's function (InputContext(1, 0)), 4 workers.
  Case c = Make(fmt::format("list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord)"
                            ".batch(4)",
                            dir.path()),
                Api::kFromFunction, AutoShardPolicy::kAuto, 1);
  c.ctx.strategy = Strategy::kParameterServer;
  c.ctx.ps_workers = 4;
  CoverageResult r = Run(c);
  const Finding* d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(d->severity == FindingSeverity::kError);
  CHECK(Contains(d->tensorflow, "InputContext(num_input_pipelines=1, input_pipeline_id=0)"));
  CHECK(Contains(d->fix, "`shuffle(buffer_size)` with no seed"));
  // Each worker its own order: the design, a warning, and no unseeded_shuffle.
  c.expr = fmt::format(
      "list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord).shuffle(50)"
      ".batch(4)",
      dir.path());
  r = Run(c);
  d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(d->severity == FindingSeverity::kWarning);
  CHECK(Find(r, FindingKind::kUnseededShuffle) == nullptr);
}

TEST_CASE("from-function: a shard of records after the reader reads everything, feeds once") {
  testing::TempDir dir;
  WriteData(dir, 4, 25);
  Case c = Make(fmt::format("list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord)"
                            ".shard(ctx.num_input_pipelines, ctx.input_pipeline_id).batch(4)",
                            dir.path()),
                Api::kFromFunction, AutoShardPolicy::kAuto, 4);
  CoverageResult r = Run(c);
  CHECK(Find(r, FindingKind::kDuplicateRecords) == nullptr);
  CHECK(Find(r, FindingKind::kMissedRecords) == nullptr);
}

TEST_CASE("OFF's fix: DATA says what else it needs; FILE only where it fits") {
  testing::TempDir dir;
  WriteData(dir, 3, 20);
  // Three files for four workers, list_files' own shuffle unseeded: FILE
  // does not fit, and DATA alone would cut a different permutation on each
  // worker, so the fix names the seed and offers no bare flag.
  Case c = Make(fmt::format("list_files(\"{}/part-*\").interleave(tfrecord).batch(4)", dir.path()),
                Api::kDistribute, AutoShardPolicy::kOff, 4);
  CoverageResult r = Run(c);
  const Finding* d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(Contains(d->fix, "AutoShardPolicy.DATA"));
  CHECK(Contains(d->fix, "`list_files(..., seed=S)`"));
  CHECK(Contains(d->fix, "FILE needs at least 4 files; 3 found"));
  CHECK(d->options.empty());
  // Seeded: DATA alone is the fix, as a flag too.
  c.expr =
      fmt::format("list_files(\"{}/part-*\", seed=1).interleave(tfrecord).batch(4)", dir.path());
  r = Run(c);
  d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK_FALSE(Contains(d->fix, "seed=S"));
  REQUIRE(d->options.size() == 1);
  CHECK(d->options[0].policy == AutoShardPolicy::kData);
  // Under DATA with the unseeded shuffle, FILE is offered only where it fits.
  c.expr = fmt::format("list_files(\"{}/part-*\").interleave(tfrecord).batch(4)", dir.path());
  c.options.policy = AutoShardPolicy::kData;
  r = Run(c);
  d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK_FALSE(Contains(d->fix, "AutoShardPolicy.FILE"));
  CHECK(d->options.empty());
  c.options.topology.workers = 3;
  r = Run(c);
  d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(Contains(d->fix, "AutoShardPolicy.FILE"));
  REQUIRE(d->options.size() == 1);
  CHECK(d->options[0].policy == AutoShardPolicy::kFile);
}

TEST_CASE("deterministic=False before DATA: duplicates and misses cannot be known") {
  testing::TempDir dir;
  WriteData(dir, 4, 10);
  const std::string expr = fmt::format(
      "list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord, cycle_length=2, "
      "num_parallel_calls=2, deterministic=False).batch(2)",
      dir.path());
  Case c = Make(expr, Api::kDistribute, AutoShardPolicy::kData, 2);
  CoverageResult r = Run(c);
  const Finding* n = Find(r, FindingKind::kNondeterministic);
  REQUIRE(n != nullptr);
  CHECK(n->severity == FindingSeverity::kError);
  CHECK(Contains(n->evidence, "cannot be known"));
  CHECK(Contains(n->fix, "`deterministic=True`"));
  CHECK(Find(r, FindingKind::kDuplicateRecords) == nullptr);
  // Under FILE each worker keeps its own files: order only.
  c.options.policy = AutoShardPolicy::kFile;
  r = Run(c);
  n = Find(r, FindingKind::kNondeterministic);
  REQUIRE(n != nullptr);
  CHECK(n->severity == FindingSeverity::kInfo);
  CHECK(r.findings.size() == 1);
}

TEST_CASE("a parallel map with deterministic=False before DATA is named as the op") {
  testing::TempDir dir;
  WriteData(dir, 4, 10);
  const std::string expr = fmt::format(
      "list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord)"
      ".map(opaque(\"f\"), num_parallel_calls=4, deterministic=False).batch(2)",
      dir.path());
  Case c = Make(expr, Api::kDistribute, AutoShardPolicy::kData, 2);
  const CoverageResult r = Run(c);
  const Finding* n = Find(r, FindingKind::kNondeterministic);
  REQUIRE(n != nullptr);
  CHECK(n->severity == FindingSeverity::kError);
  CHECK(Contains(n->evidence, "map(deterministic=False)"));
}

TEST_CASE("one worker: nothing to duplicate or miss") {
  testing::TempDir dir;
  WriteData(dir, 2, 10);
  Case c = Make(fmt::format("list_files(\"{}/part-*\").interleave(tfrecord).batch(2)", dir.path()),
                Api::kDistribute, AutoShardPolicy::kAuto, 1);
  CHECK(Run(c).findings.empty());
  c.options.policy = AutoShardPolicy::kOff;
  CHECK(Run(c).findings.empty());
}

TEST_CASE("HINT: a shard(SHARD_HINT, i) after an unseeded shuffle is drawn as DATA's is") {
  testing::TempDir dir;
  WriteData(dir, 4, 100);
  Case c = Make(fmt::format("list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord)"
                            ".shuffle(400).shard(SHARD_HINT, 0).batch(2)",
                            dir.path()),
                Api::kDistribute, AutoShardPolicy::kHint, 2);
  c.coverage.seed = 4;
  CoverageResult r = Run(c);
  REQUIRE(r.counts.draw);
  CHECK(r.counts.draw->reference_records == 400);
  CHECK(r.counts.draw->Fractions().missed == doctest::Approx(0.25).epsilon(0.3));
  const Finding* d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(Contains(d->evidence, "shard() at column"));
  // Seeded: one permutation, disjoint shares.
  c.expr = fmt::format(
      "list_files(\"{}/part-*\", shuffle=False).interleave(tfrecord)"
      ".shuffle(400, seed=1).shard(SHARD_HINT, 0).batch(2)",
      dir.path());
  CHECK(Run(c).findings.empty());
}

TEST_CASE("input functions whose workers' file lists overlap: the shared records, exactly") {
  testing::TempDir dir;
  WriteData(dir, 3, 10);
  auto pipelines = std::make_shared<std::vector<data::Pipeline>>();
  // Worker 0 reads part-00 and part-01, worker 1 part-01 and part-02.
  for (int first : {0, 1}) {
    auto p = data::ParsePipeline(
        fmt::format("tfrecord([\"{0}/part-{1:02}\", \"{0}/part-{2:02}\"]).batch(2)", dir.path(),
                    first, first + 1));
    REQUIRE_MESSAGE(p.ok(), p.status().ToString());
    pipelines->push_back(std::move(*p));
  }
  Case c = Make("", Api::kFromFunction, AutoShardPolicy::kAuto, 2);
  c.options.worker_pipelines = pipelines;
  auto summary = SummarizeLayout((*pipelines)[0], c.options, c.build);
  REQUIRE_MESSAGE(summary.ok(), summary.status().ToString());
  auto r = CoverageFindings((*pipelines)[0], c.options, c.build, *summary, c.ctx, c.coverage);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  REQUIRE(r->counts.exact);
  CHECK(r->counts.exact->duplicated == 10);  // part-01, read by both
  CHECK(r->counts.exact->extra_feeds == 10);
  const Finding* d = Find(*r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(Contains(d->evidence, "10 of the 30 records read were read by more than one worker"));
  CHECK(Contains(d->evidence, "workers 0 and 1 (10 records in common)"));
  CHECK(Contains(d->evidence, "measured, exact"));
}

TEST_CASE("a file list_files matches twice is read twice: its records duplicated") {
  testing::TempDir dir;
  WriteData(dir, 4, 10);
  Case c = Make(fmt::format("list_files([\"{0}/part-00\", \"{0}/part-*\"], shuffle=False)"
                            ".interleave(tfrecord).batch(2)",
                            dir.path()),
                Api::kDistribute, AutoShardPolicy::kFile, 2);
  CoverageResult r = Run(c);
  REQUIRE(r.counts.exact);
  CHECK(r.counts.exact->records == 40);
  CHECK(r.counts.exact->duplicated == 10);
  CHECK(r.counts.exact->extra_feeds == 10);
  const Finding* d = Find(r, FindingKind::kDuplicateRecords);
  REQUIRE(d != nullptr);
  CHECK(Contains(d->evidence, "10 of all 40 records are fed twice or more"));
  CHECK(Contains(d->evidence, "part-00 matched by more than one pattern"));
  // One worker reads it twice too.
  c.options.topology.workers = 1;
  r = Run(c);
  REQUIRE(Find(r, FindingKind::kDuplicateRecords) != nullptr);
  CHECK(r.counts.exact->duplicated == 10);
}

}  // namespace
}  // namespace tfdist::dist
