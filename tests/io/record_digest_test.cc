// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// RecordDigest: the same records give the same digests however they are cut
// into files, framed or compressed; the ordered digest sees the order, the
// unordered one sees each record as often as it is there.

#include "tfdist/io/record_digest.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace tfdist::io {
namespace {

RecordDigest Of(const std::vector<std::string>& records) {
  RecordDigest d;
  for (const std::string& r : records) d.Add(r);
  return d;
}

std::vector<std::string> Records(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(std::string(i % 7, 'x') + std::to_string(i));
  return out;
}

TEST_CASE("RecordHash is XXH3-64 with seed 0: digests printed today compare with later ones") {
  CHECK(RecordHash("") == 0x2d06800538d394c2);
}

TEST_CASE("Append of the parts is the digest of the whole, at every cut") {
  const std::vector<std::string> records = Records(40);
  const RecordDigest whole = Of(records);
  for (size_t cut = 0; cut <= records.size(); ++cut) {
    RecordDigest d = Of({records.begin(), records.begin() + static_cast<std::ptrdiff_t>(cut)});
    d.Append(Of({records.begin() + static_cast<std::ptrdiff_t>(cut), records.end()}));
    CHECK(d == whole);
  }
  RecordDigest three = Of({records.begin(), records.begin() + 5});
  three.Append(Of({}));
  three.Append(Of({records.begin() + 5, records.begin() + 30}));
  three.Append(Of({records.begin() + 30, records.end()}));
  CHECK(three == whole);
  CHECK(whole.records == 40);
}

TEST_CASE("Order changes the ordered digest only") {
  std::vector<std::string> records = Records(10);
  const RecordDigest before = Of(records);
  std::swap(records[2], records[7]);
  const RecordDigest after = Of(records);
  CHECK(after.unordered == before.unordered);
  CHECK(after.ordered != before.ordered);
  CHECK(after.records == before.records);
  CHECK(after.payload_bytes == before.payload_bytes);
}

TEST_CASE("A record there twice changes both digests, where an XOR of the hashes would not") {
  const std::vector<std::string> once = {"a", "b", "c"};
  const std::vector<std::string> doubled_b = {"a", "b", "b", "b", "c"};
  uint64_t xor_once = 0, xor_doubled = 0;
  for (const std::string& r : once) xor_once ^= RecordHash(r);
  for (const std::string& r : doubled_b) xor_doubled ^= RecordHash(r);
  REQUIRE(xor_once == xor_doubled);  // what a XOR misses
  CHECK(Of(doubled_b).unordered != Of(once).unordered);
  CHECK(Of(doubled_b).ordered != Of(once).ordered);
  // An empty record counts too.
  CHECK(Of({"a", ""}).unordered != Of({"a"}).unordered);
}

TEST_CASE("DigestFiles: framing, compression and file boundaries aside; errors with offsets") {
  testing::TempDir dir;
  const std::vector<std::string> records = Records(25);
  const std::string raw = dir.File("raw"), gz = dir.File("gz"), zl = dir.File("zl"),
                    a = dir.File("a"), b = dir.File("b"), bad = dir.File("bad");
  testing::WriteFile(raw, testing::Frame(records));
  testing::WriteFile(gz, testing::Compress(testing::Frame(records), Compression::kGzip));
  testing::WriteFile(zl, testing::Compress(testing::Frame(records), Compression::kZlib));
  testing::WriteFile(a, testing::Frame({records.begin(), records.begin() + 11}));
  testing::WriteFile(b, testing::Frame({records.begin() + 11, records.end()}));
  testing::WriteFile(bad, testing::FlipByte(testing::Frame({"one", "two"}), 12 + 3 + 4 + 12 + 1));
  RecordReaderOptions options;
  options.compression = Compression::kAuto;
  const std::vector<std::string> files = {raw, gz, zl, a, b, bad};
  const std::vector<FileDigest> d = DigestFiles(files, options);
  REQUIRE(d.size() == 6);
  const RecordDigest expected = Of(records);
  CHECK(d[0].digest == expected);
  CHECK(d[1].digest == expected);
  CHECK(d[1].compression == Compression::kGzip);
  CHECK(d[2].digest == expected);
  RecordDigest joined = d[3].digest;
  joined.Append(d[4].digest);
  CHECK(joined == expected);
  for (size_t i = 0; i < 5; ++i) CHECK(d[i].status.ok());
  CHECK(d[5].status.code() == StatusCode::kDataLoss);
  CHECK(d[5].digest.records == 1);
  REQUIRE(d[5].error_offset.has_value());
  CHECK(*d[5].error_offset == 19 + 12);
  CHECK(d[5].status.message().find(bad) != std::string::npos);
}

TEST_CASE("A file digested in parallel parts gives the sequential digest, errors included") {
  testing::TempDir dir;
  std::vector<std::string> records;
  for (size_t i = 0; i < 500; ++i) records.push_back(std::string(i % 37, 'a' + i % 26));
  const std::string good = dir.File("good"), bad = dir.File("bad");
  const std::string framed = testing::Frame(records);
  testing::WriteFile(good, framed);
  // A payload byte of a record about two thirds in: a data CRC mismatch.
  const size_t at = framed.size() * 2 / 3;
  testing::WriteFile(bad, testing::FlipByte(framed, at));
  RecordReaderOptions options;
  const std::vector<std::string> files = {good, bad};
  const std::vector<FileDigest> sequential = DigestFiles(files, options, uint64_t{1} << 40, 1);
  CHECK(sequential[0].digest == Of(records));
  REQUIRE(!sequential[1].status.ok());
  for (const size_t parts : {2, 3, 7, 16}) {
    CAPTURE(parts);
    const std::vector<FileDigest> d = DigestFiles(files, options, 64, parts);
    CHECK(d[0].status.ok());
    CHECK(d[0].digest == sequential[0].digest);
    CHECK(d[1].digest == sequential[1].digest);
    CHECK(d[1].status.message() == sequential[1].status.message());
    CHECK(d[1].error_offset == sequential[1].error_offset);
  }
}

TEST_CASE("byte ranges digested apart and joined give the sequential digest, errors included") {
  testing::TempDir dir;
  std::vector<std::string> records;
  for (size_t i = 0; i < 700; ++i) records.push_back(std::string(i % 53, 'a' + i % 26));
  const std::string framed = testing::Frame(records);
  const std::string good = dir.File("good"), bad = dir.File("bad");
  testing::WriteFile(good, framed);
  testing::WriteFile(bad, testing::FlipByte(framed, framed.size() / 2));
  for (const std::string& path : {good, bad}) {
    CAPTURE(path);
    const FileDigest want = DigestFiles({&path, 1}, {}, uint64_t{1} << 40, 1)[0];
    for (size_t ranges : {1, 2, 3, 5}) {
      CAPTURE(ranges);
      std::vector<RangeDigest> parts;
      for (size_t r = 0; r < ranges; ++r) {
        // Cuts at 37-byte steps off the records' boundaries.
        const uint64_t from = framed.size() / ranges * r + (r ? 37 : 0);
        const uint64_t to = r + 1 == ranges ? framed.size() : framed.size() / ranges * (r + 1) + 37;
        parts.push_back(DigestFileRange(path, {}, from, to, 256, 4));
      }
      const FileDigest got = JoinDigestedRanges(path, {}, parts);
      CHECK(got.digest == want.digest);
      CHECK(got.status.message() == want.status.message());
      CHECK(got.error_offset == want.error_offset);
    }
  }
}

}  // namespace
}  // namespace tfdist::io
