// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// RecordReader/RecordWriter: round trips, damage with exact offsets, fuzzing.

#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"
#include "tfdist/base/random.h"
#include "tfdist/io/byte_stream.h"
#include "tfdist/io/crc32c.h"
#include "tfdist/io/record_fetch.h"
#include "tfdist/io/record_reader.h"
#include "tfdist/io/record_writer.h"
#include "tfdist/proto/synthetic.h"

namespace tfdist::io {
namespace {

using testing::Compress;
using testing::FlipByte;
using testing::Frame;
using testing::Truncate;

struct ReadOutcome {
  std::vector<std::string> records;
  std::vector<uint64_t> offsets;
  Status status;
  std::optional<uint64_t> error_offset;
};

enum class Mode { kView, kCopy, kSkip, kScan };

ReadOutcome ReadAll(const std::string& bytes, RecordReaderOptions options,
                    Mode mode = Mode::kView) {
  ReadOutcome out;
  auto reader = RecordReader::FromSource(NewMemorySource("mem", bytes), options);
  REQUIRE(reader.ok());
  RecordReader& r = **reader;
  std::string_view view;
  std::string copy;
  const std::function<void(std::string_view)> join = [&copy](std::string_view piece) {
    copy.append(piece);
  };
  for (;;) {
    bool ok = false;
    switch (mode) {
      case Mode::kView:
        ok = r.ReadRecord(view);
        break;
      case Mode::kCopy:
        ok = r.ReadRecord(copy);
        view = copy;
        break;
      case Mode::kSkip:
        ok = r.SkipRecord();
        view = {};
        break;
      case Mode::kScan:  // the pieces joined
        copy.clear();
        ok = r.ScanRecord(join);
        view = copy;
        break;
    }
    if (!ok) break;
    out.records.emplace_back(view);
    out.offsets.push_back(r.last_record_offset());
  }
  out.status = r.status();
  out.error_offset = r.error_offset();
  // Errors are sticky and the end stays the end.
  CHECK_FALSE(r.SkipRecord());
  CHECK(r.status() == out.status);
  return out;
}

std::vector<std::string> SampleRecords() {
  std::vector<std::string> records = {"", "a", "hello", std::string(1000, 'x')};
  Rng rng(7);
  for (int i = 0; i < 40; ++i) {
    std::string r(rng.Uniform(0, 5000), '\0');
    for (char& c : r) c = static_cast<char>(rng.Next());
    records.push_back(r);
  }
  return records;
}

TEST_CASE("records round-trip through every compression, block size and read mode") {
  const std::vector<std::string> records = SampleRecords();
  const std::string raw = Frame(records);
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    for (size_t block : {size_t{64}, size_t{777}, size_t{1} << 20}) {
      for (int read_ahead : {0, 2}) {
        for (Mode mode : {Mode::kView, Mode::kCopy, Mode::kSkip, Mode::kScan}) {
          CAPTURE(CompressionName(c));
          CAPTURE(block);
          CAPTURE(read_ahead);
          CAPTURE(static_cast<int>(mode));
          RecordReaderOptions options;
          options.compression = c;
          options.block_size = block;
          options.read_ahead = read_ahead;
          ReadOutcome out = ReadAll(Compress(raw, c), options, mode);
          REQUIRE(out.status.ok());
          REQUIRE(out.records.size() == records.size());
          if (mode != Mode::kSkip) CHECK(out.records == records);
          uint64_t offset = 0;
          for (size_t i = 0; i < records.size(); ++i) {
            CHECK(out.offsets[i] == offset);
            offset += 16 + records[i].size();
          }
        }
      }
    }
  }
}

TEST_CASE("auto detection reads raw, gzip and zlib streams, and reports what it found") {
  const std::string raw = Frame({"x", "yy"});
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    RecordReaderOptions options;
    options.compression = Compression::kAuto;
    auto reader = RecordReader::FromSource(NewMemorySource("m", Compress(raw, c)), options);
    REQUIRE(reader.ok());
    CHECK((*reader)->compression() == c);
    std::string r;
    CHECK((*reader)->ReadRecord(r));
    CHECK(r == "x");
  }
}

TEST_CASE("a raw file whose first bytes look like a zlib header is still read as raw") {
  // A 376-byte record has the length bytes 78 01: a valid zlib header.
  const std::string raw = Frame({std::string(376, 'z'), "b"});
  CHECK(static_cast<unsigned char>(raw[0]) == 0x78);
  CHECK(DetectCompression(raw) == Compression::kNone);
  CHECK(DetectCompression("") == Compression::kNone);
  CHECK(DetectCompression(Compress("", Compression::kGzip)) == Compression::kGzip);
  CHECK(DetectCompression(Compress(raw, Compression::kZlib)) == Compression::kZlib);
}

TEST_CASE("the empty record has TensorFlow's exact bytes") {
  const std::string empty = Frame({""});
  const std::string want("\0\0\0\0\0\0\0\0\x29\x03\x98\x07\xd8\xea\x82\xa2", 16);
  CHECK(empty == want);
}

// Three records: "hello" at 0 (21 bytes framed), "abc" at 21, "z" at 40.
const std::string kThree = Frame({"hello", "abc", "z"});

struct Damage {
  const char* what;
  std::string bytes;
  size_t good_records;
  const char* message;  // substring
  uint64_t offset;
};

std::vector<Damage> Damages() {
  return {
      {"flipped length byte", FlipByte(kThree, 21), 1, "corrupted record at 21", 21},
      {"flipped length CRC byte", FlipByte(kThree, 21 + 9), 1, "corrupted record at 21", 21},
      {"flipped payload byte", FlipByte(kThree, 21 + 13), 1, "corrupted record at 33", 33},
      {"flipped data CRC byte", FlipByte(kThree, 21 + 12 + 3), 1, "corrupted record at 33", 33},
      {"truncated header", Truncate(kThree, 21 + 5), 1, "truncated record at 21", 21},
      {"header with nothing after it", Truncate(kThree, 21 + 12), 1, "truncated record at 21", 21},
      {"truncated payload", Truncate(kThree, 21 + 13), 1, "truncated record at 33", 33},
      {"truncated footer", Truncate(kThree, 21 + 12 + 3 + 2), 1, "truncated record at 33", 33},
      {"first header damaged", FlipByte(kThree, 0), 0, "corrupted record at 0", 0},
  };
}

TEST_CASE("every kind of damage is DataLoss at TensorFlow's offset, in every mode") {
  for (const Damage& d : Damages()) {
    for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
      for (Mode mode : {Mode::kView, Mode::kSkip, Mode::kScan}) {
        for (size_t block : {size_t{7}, size_t{1} << 20}) {
          CAPTURE(d.what);
          CAPTURE(CompressionName(c));
          CAPTURE(block);
          RecordReaderOptions options;
          options.compression = c;
          options.block_size = block;
          ReadOutcome out = ReadAll(Compress(d.bytes, c), options, mode);
          CHECK(out.records.size() == d.good_records);
          CHECK(out.status.code() == StatusCode::kDataLoss);
          CHECK(out.status.message().find(d.message) != std::string::npos);
          CHECK(out.status.message().rfind("mem: ", 0) == 0);
          CHECK(out.error_offset == d.offset);
          if (c != Compression::kNone) {
            CHECK(out.status.message().find("decompressed") != std::string::npos);
          }
        }
      }
    }
  }
}

TEST_CASE("a damaged record is still read when CRC checks are off") {
  RecordReaderOptions options;
  options.verify_checksums = false;
  ReadOutcome out = ReadAll(FlipByte(kThree, 21 + 13), options);
  CHECK(out.status.ok());
  CHECK(out.records.size() == 3);
}

TEST_CASE("zeros are a corrupted record at 0 even when CRC checks are off") {
  // Unchecked, a zero length reads as an empty record, 16 bytes at a time,
  // forever on /dev/zero or a sparse file.
  RecordReaderOptions options;
  options.verify_checksums = false;
  for (Mode mode : {Mode::kView, Mode::kCopy, Mode::kSkip}) {
    ReadOutcome out = ReadAll(std::string(4096, '\0'), options, mode);
    CHECK(out.records.empty());
    CHECK(out.status.code() == StatusCode::kDataLoss);
    CHECK(out.status.message().find("corrupted record at 0") != std::string::npos);
    CHECK(out.error_offset == 0);
  }
  // The tight scan behind count and verify, too.
  testing::TempDir dir;
  const std::string path = dir.File("zeros");
  testing::WriteFile(path, Frame({"ok"}) + std::string(1 << 20, '\0'));
  const RecordCount count = CountRecords(path, options);
  CHECK(count.records == 1);
  CHECK(count.status.code() == StatusCode::kDataLoss);
  CHECK(count.error_offset == 18);
}

TEST_CASE("a record longer than max_record_size is read through, then refused or elided") {
  const std::string big(10000, 'x');
  RecordReaderOptions options;
  options.max_record_size = 100;
  ReadOutcome out = ReadAll(Frame({"a", big, "b"}), options);
  CHECK(out.records == std::vector<std::string>{"a"});
  CHECK(out.status.code() == StatusCode::kResourceExhausted);
  CHECK(out.status.message().find("record at 17 holds 10000 bytes, more than the 100") !=
        std::string::npos);
  // Skipping and scanning hold nothing, so they have no limit.
  CHECK(ReadAll(Frame({"a", big, "b"}), options, Mode::kSkip).status.ok());
  out = ReadAll(Frame({"a", big, "b"}), options, Mode::kScan);
  CHECK(out.status.ok());
  CHECK(out.records == std::vector<std::string>{"a", big, "b"});

  options.elide_large_records = true;
  auto reader = RecordReader::FromSource(NewMemorySource("mem", Frame({"a", big, "b"})), options);
  REQUIRE(reader.ok());
  std::string_view record;
  REQUIRE((*reader)->ReadRecord(record));
  CHECK_FALSE((*reader)->last_record_elided());
  REQUIRE((*reader)->ReadRecord(record));
  CHECK((*reader)->last_record_elided());
  CHECK(record == big.substr(0, kElidedRecordPrefix));
  CHECK((*reader)->last_record_size() == big.size());
  REQUIRE((*reader)->ReadRecord(record));
  CHECK(record == "b");
  CHECK_FALSE((*reader)->last_record_elided());

  // A record cut short is a truncation whatever its size, found by reading
  // it through, not by holding it.
  options.elide_large_records = false;
  std::string header(12, '\0');
  const uint64_t length = uint64_t{1} << 40;
  std::memcpy(header.data(), &length, 8);
  const uint32_t crc = crc32c::Mask(crc32c::Value(header.data(), 8));
  std::memcpy(header.data() + 8, &crc, 4);
  out = ReadAll(Frame({"a"}) + header + std::string(1 << 20, '\0'), options, Mode::kCopy);
  CHECK(out.records.size() == 1);
  CHECK(out.status.message().find("truncated record at 29") != std::string::npos);
}

TEST_CASE("a pipe is read once: the compression is sniffed on the stream that is counted") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const std::string data = Compress(Frame(SampleRecords()), Compression::kGzip);
  std::thread writer([&] {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = write(fds[1], data.data() + done, data.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
  });
  RecordReaderOptions options;
  options.compression = Compression::kAuto;
  const RecordCount count = CountRecords("/dev/fd/" + std::to_string(fds[0]), options);
  writer.join();
  close(fds[0]);
  CHECK(count.status.ok());
  CHECK(count.compression == Compression::kGzip);
  CHECK(count.records == SampleRecords().size());
}

TEST_CASE("an empty input has no records and no error") {
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    RecordReaderOptions options;
    options.compression = c;
    ReadOutcome out = ReadAll(c == Compression::kNone ? "" : Compress("", c), options);
    CHECK(out.status.ok());
    CHECK(out.records.empty());
  }
  // A zero-byte file declared GZIP is also empty, as in TensorFlow.
  RecordReaderOptions gz;
  gz.compression = Compression::kGzip;
  CHECK(ReadAll("", gz).status.ok());
}

TEST_CASE("concatenated gzip members read as one stream") {
  const std::string a = Frame({"one", "two"});
  const std::string b = Frame({"three"});
  RecordReaderOptions options;
  options.compression = Compression::kGzip;
  ReadOutcome out =
      ReadAll(Compress(a, Compression::kGzip) + Compress(b, Compression::kGzip), options);
  CHECK(out.status.ok());
  CHECK(out.records == std::vector<std::string>{"one", "two", "three"});
}

TEST_CASE("gzip members whose boundaries fall anywhere in the reader's input chunks") {
  // Incompressible members of varied sizes, so that the ends of members land
  // at every position of the inflater's 256 KiB input chunks, some inside
  // the bytes it has read ahead into its bit buffer.
  Rng rng(7);
  std::string file;
  std::vector<std::string> want;
  for (int m = 0; m < 3000; ++m) {
    std::vector<std::string> records;
    const size_t n = rng.Below(3);  // an empty member too
    for (size_t r = 0; r < n; ++r) {
      const size_t size = m % 50 == 0 ? 100000 + rng.Below(60000) : rng.Below(m % 3 ? 40 : 2000);
      std::string payload(size, '\0');
      for (char& ch : payload) ch = static_cast<char>(rng.Next());
      records.push_back(payload);
      want.push_back(payload);
    }
    file += Compress(Frame(records), Compression::kGzip);
  }
  RecordReaderOptions options;
  options.compression = Compression::kGzip;
  ReadOutcome out = ReadAll(file, options);
  CHECK(out.status.ok());
  CHECK(out.records.size() == want.size());
  CHECK(out.records == want);
}

TEST_CASE("damaged compressed streams are DataLoss naming the compressed offset") {
  const std::string raw = Frame(SampleRecords());
  for (Compression c : {Compression::kGzip, Compression::kZlib}) {
    CAPTURE(CompressionName(c));
    const std::string z = Compress(raw, c);
    RecordReaderOptions options;
    options.compression = c;
    ReadOutcome cut = ReadAll(Truncate(z, z.size() / 2), options);
    CHECK(cut.status.code() == StatusCode::kDataLoss);
    CHECK(cut.status.message().find("truncated") != std::string::npos);
    ReadOutcome flipped = ReadAll(FlipByte(z, z.size() / 2), options);
    CHECK(flipped.status.code() == StatusCode::kDataLoss);
    // The stream check (gzip CRC-32 / zlib Adler-32) also guards the tail.
    ReadOutcome tail = ReadAll(FlipByte(z, z.size() - 2), options);
    CHECK(tail.status.code() == StatusCode::kDataLoss);
    CHECK(tail.status.message().find("compressed byte") != std::string::npos);
  }
  RecordReaderOptions zlib;
  zlib.compression = Compression::kZlib;
  ReadOutcome trailing = ReadAll(Compress(raw, Compression::kZlib) + "junk", zlib);
  CHECK(trailing.status.code() == StatusCode::kDataLoss);
  CHECK(trailing.status.message().find("after the end of the ZLIB stream") != std::string::npos);
}

TEST_CASE("a declared compression the file's first bytes disprove is InvalidArgument") {
  const std::string raw = Frame({"x", "yy"});
  for (Compression file : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    for (Compression declared : {Compression::kGzip, Compression::kZlib}) {
      CAPTURE(CompressionName(file));
      CAPTURE(CompressionName(declared));
      RecordReaderOptions options;
      options.compression = declared;
      for (int read_ahead : {0, 2}) {
        options.read_ahead = read_ahead;
        ReadOutcome out = ReadAll(Compress(raw, file), options);
        if (file == declared) {
          CHECK(out.status.ok());
          CHECK(out.records.size() == 2);
          continue;
        }
        CHECK(out.records.empty());
        CHECK(out.status.code() == StatusCode::kInvalidArgument);
        CHECK(out.status.message().find(fmt::format("read as {}-compressed, but the file is ",
                                                    CompressionName(declared))) == 5);
        CHECK(out.status.advice() ==
              Advice{Remedy::kDeclareCompression, std::string(CompressionName(file))});
      }
    }
  }
  // What proves nothing stays what it is: damage inside a file declared as
  // it is compressed, a damaged header, an empty file.
  for (Compression c : {Compression::kGzip, Compression::kZlib}) {
    CAPTURE(CompressionName(c));
    RecordReaderOptions options;
    options.compression = c;
    const std::string z = Compress(Frame(SampleRecords()), c);
    CHECK(ReadAll(FlipByte(z, 0), options).status.code() == StatusCode::kDataLoss);
    CHECK(ReadAll(FlipByte(z, z.size() / 2), options).status.code() == StatusCode::kDataLoss);
    CHECK(ReadAll(Truncate(z, 1), options).status.code() == StatusCode::kDataLoss);
    CHECK(ReadAll("", options).status.ok());
  }
  CHECK(ProvenCompression("") == Compression::kAuto);
  CHECK(ProvenCompression(Truncate(raw, 5)) == Compression::kAuto);
  CHECK(ProvenCompression(raw) == Compression::kNone);
  CHECK(ProvenCompression(Compress(raw, Compression::kZlib)) == Compression::kZlib);
}

// The bytes zlib itself inflates from a cut stream, before it runs out.
std::string InflatablePrefix(const std::string& z, Compression c) {
  z_stream zs{};
  REQUIRE(inflateInit2(&zs, c == Compression::kGzip ? 31 : 15) == Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(z.data()));
  zs.avail_in = static_cast<uInt>(z.size());
  std::string out;
  char buf[4096];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
    if (rc == Z_BUF_ERROR && zs.avail_out == sizeof buf) break;  // the input ran out
    if (rc == Z_BUF_ERROR) rc = Z_OK;
  }
  inflateEnd(&zs);
  return out;
}

TEST_CASE("a cut compressed stream yields every record before the cut, then DataLoss") {
  // As TensorFlow's reader does: the records that inflate whole come first.
  const std::vector<std::string> records = SampleRecords();
  const std::string raw = Frame(records);
  for (Compression c : {Compression::kGzip, Compression::kZlib}) {
    CAPTURE(CompressionName(c));
    const std::string z = Compress(raw, c);
    for (int read_ahead : {0, 2}) {
      CAPTURE(read_ahead);
      for (size_t cut : {z.size() / 7, z.size() / 3, z.size() / 2, z.size() - 9, z.size() - 1}) {
        CAPTURE(cut);
        const std::string available = InflatablePrefix(z.substr(0, cut), c);
        // Each record is framed by a length, its CRC and the data's CRC.
        constexpr size_t kFraming = 8 + 4 + 4;
        size_t whole = 0, end = 0;
        while (whole < records.size() &&
               end + records[whole].size() + kFraming <= available.size()) {
          end += records[whole].size() + kFraming;
          ++whole;
        }
        RecordReaderOptions options;
        options.compression = c;
        options.read_ahead = read_ahead;
        ReadOutcome got = ReadAll(Truncate(z, cut), options);
        CHECK(got.status.code() == StatusCode::kDataLoss);
        REQUIRE(got.records.size() == whole);
        for (size_t i = 0; i < whole; ++i) CHECK(got.records[i] == records[i]);
      }
    }
  }
}

TEST_CASE("a huge length with a valid CRC is a truncation, not a huge allocation") {
  std::string header(12, '\0');
  const uint64_t length = uint64_t{1} << 60;
  std::memcpy(header.data(), &length, 8);
  const uint32_t crc = crc32c::Mask(crc32c::Value(header.data(), 8));
  std::memcpy(header.data() + 8, &crc, 4);
  for (Mode mode : {Mode::kCopy, Mode::kSkip}) {
    ReadOutcome out = ReadAll(header + "some bytes", {}, mode);
    CHECK(out.status.code() == StatusCode::kDataLoss);
    CHECK(out.status.message().find("truncated record at 12") != std::string::npos);
  }
}

TEST_CASE("a truncation message counts the payload and footer bytes without wrapping at 2^64") {
  const std::pair<uint64_t, const char*> cases[] = {
      {UINT64_MAX, "18446744073709551619"},
      {UINT64_MAX - 3, "18446744073709551616"},
      {UINT64_MAX - 4, "18446744073709551615"},
      {96, "100"},
  };
  for (auto [length_binding, needed] : cases) {
    const uint64_t length = length_binding;  // (clang 14 captures no structured binding)
    CAPTURE(length);
    std::string header(12, '\0');
    std::memcpy(header.data(), &length, 8);
    const uint32_t crc = crc32c::Mask(crc32c::Value(header.data(), 8));
    std::memcpy(header.data() + 8, &crc, 4);
    for (Mode mode : {Mode::kView, Mode::kSkip}) {
      ReadOutcome out = ReadAll(header + std::string(40, 'x'), {}, mode);
      CHECK(out.status.message() ==
            fmt::format("mem: truncated record at 12: 40 of the {} payload and footer bytes "
                        "before the end of the file",
                        needed));
    }
    // FetchRecords, when an index gives the same length, says the same.
    testing::TempDir dir;
    const std::string path = dir.File("huge.tfrecord");
    testing::WriteFile(path, header + std::string(40, 'x'));
    std::vector<FetchRequest> request(1);
    request[0].payload_size = length;
    CHECK(FetchRecords(path, request).message() ==
          fmt::format("{}: truncated record at 12: 40 of the {} payload and footer bytes before "
                      "the end of the file",
                      path, needed));
  }
}

TEST_CASE("a fetch given another length than the record's says the index does not fit") {
  testing::TempDir dir;
  const std::string path = dir.File("f.tfrecord");
  testing::WriteFile(path, Frame({"abcd", "ef"}));
  std::vector<FetchRequest> request(1);
  request[0].offset = 20;
  request[0].payload_size = 3;
  const Status s = FetchRecords(path, request);
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(s.message() == fmt::format("{}: corrupted record at 20: the length field says 2 bytes, "
                                   "the index 3; the index does not describe the file",
                                   path));
  CHECK(s.advice() == Advice{Remedy::kRewriteFileIndex, path});
  request[0].payload_size = 2;
  REQUIRE(FetchRecords(path, request).ok());
  CHECK(request[0].payload == "ef");
}

TEST_CASE("the reader survives arbitrary bytes: random damage never crashes it") {
  const std::string raw = Frame(SampleRecords());
  Rng rng(1234);
  for (int trial = 0; trial < 400; ++trial) {
    std::string bytes = raw;
    const int flips = static_cast<int>(rng.Uniform(1, 8));
    for (int i = 0; i < flips; ++i) {
      bytes[rng.Uniform(0, bytes.size() - 1)] = static_cast<char>(rng.Next());
    }
    if (rng.Uniform(0, 1)) bytes.resize(rng.Uniform(0, bytes.size()));
    for (Compression c : {Compression::kNone, Compression::kAuto}) {
      RecordReaderOptions options;
      options.compression = c;
      options.block_size = 1000;
      ReadOutcome out = ReadAll(bytes, options, trial % 2 ? Mode::kCopy : Mode::kSkip);
      CHECK((out.status.ok() || out.status.code() == StatusCode::kDataLoss));
    }
  }
  for (int trial = 0; trial < 200; ++trial) {
    std::string junk(rng.Uniform(0, 300), '\0');
    for (char& ch : junk) ch = static_cast<char>(rng.Next());
    RecordReaderOptions options;
    options.compression = trial % 2 ? Compression::kAuto : Compression::kGzip;
    ReadOutcome out = ReadAll(junk, options);
    CHECK((out.status.ok() || out.status.code() == StatusCode::kDataLoss));
  }
}

TEST_CASE("files of records from 0 B to 16 MiB round-trip through every compression") {
  testing::TempDir dir;
  std::vector<std::string> records;
  Rng rng(99);
  for (size_t size :
       {size_t{0}, size_t{1}, size_t{100}, size_t{10} << 10, size_t{1} << 20, (size_t{16} << 20)}) {
    std::string r(size, '\0');
    for (size_t i = 0; i < size; i += 8) r[i] = static_cast<char>(rng.Next());
    records.push_back(std::move(r));
  }
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    CAPTURE(CompressionName(c));
    const std::string path = dir.File(std::string("f-") + std::string(CompressionName(c)));
    RecordWriterOptions wo;
    wo.compression = c;
    wo.compression_level = 1;
    auto writer = RecordWriter::Open(path, wo);
    REQUIRE(writer.ok());
    for (const std::string& r : records) REQUIRE((*writer)->Write(r).ok());
    REQUIRE((*writer)->Close().ok());

    RecordReaderOptions ro;
    ro.compression = Compression::kAuto;
    auto reader = RecordReader::Open(path, ro);
    REQUIRE(reader.ok());
    CHECK((*reader)->compression() == c);
    std::string r;
    size_t i = 0;
    while ((*reader)->ReadRecord(r)) {
      REQUIRE(i < records.size());
      CHECK(r == records[i]);
      ++i;
    }
    CHECK((*reader)->status().ok());
    CHECK(i == records.size());

    RecordCount count = CountRecords(path, ro);
    CHECK(count.status.ok());
    CHECK(count.records == records.size());
  }
}

TEST_CASE("a writer that is not closed leaves no file behind, and refuses to overwrite") {
  testing::TempDir dir;
  const std::string path = dir.File("out.tfrecord");
  {
    auto writer = RecordWriter::Open(path, {});
    REQUIRE(writer.ok());
    REQUIRE((*writer)->Write("abc").ok());
  }
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(std::filesystem::is_empty(dir.path()));
  {
    auto writer = RecordWriter::Open(path, {});
    REQUIRE(writer.ok());
    REQUIRE((*writer)->Write("abc").ok());
    REQUIRE((*writer)->Close().ok());
  }
  CHECK(testing::ReadFile(path) == Frame({"abc"}));
  auto again = RecordWriter::Open(path, {});
  CHECK(again.status().code() == StatusCode::kInvalidArgument);
  RecordWriterOptions overwrite;
  overwrite.overwrite = true;
  CHECK(RecordWriter::Open(path, overwrite).ok());
}

TEST_CASE("opening a missing file or a directory is NotFound naming the path") {
  testing::TempDir dir;
  auto missing = RecordReader::Open(dir.File("nope"), {});
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message().find("nope") != std::string::npos);
  auto folder = RecordReader::Open(dir.path(), {});
  CHECK(folder.status().code() == StatusCode::kNotFound);
  CHECK(folder.status().message().find("directory") != std::string::npos);
}

TEST_CASE("compression names parse in TensorFlow's and lower-case spellings") {
  CHECK(*ParseCompression("") == Compression::kNone);
  CHECK(*ParseCompression("GZIP") == Compression::kGzip);
  CHECK(*ParseCompression("zlib") == Compression::kZlib);
  CHECK(*ParseCompression("Auto") == Compression::kAuto);
  CHECK(ParseCompression("lz4").status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tfdist::io

namespace tfdist::io {
namespace {

// Records of mixed sizes; some payloads are themselves framed records, so a
// scan that starts in the middle of the file finds false record starts with
// valid CRCs.
std::vector<std::string> TrickyRecords(Rng& rng, size_t count) {
  std::vector<std::string> records;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t kind = rng.Uniform(0, 9);
    std::string r;
    if (kind < 2) {
      r = testing::Frame({std::string(rng.Uniform(0, 50), 'n'), "nested"});
    } else if (kind < 3) {
      r.assign(rng.Uniform(2000, 20000), '\0');
    } else {
      r.assign(rng.Uniform(0, 300), '\0');
    }
    if (kind >= 2) {
      for (char& c : r) c = static_cast<char>(rng.Next());
    }
    records.push_back(std::move(r));
  }
  return records;
}

RecordCount Sequential(const std::string& path) {
  RecordCount count;
  auto reader = RecordReader::Open(path, {});
  REQUIRE(reader.ok());
  std::string_view r;
  while ((*reader)->ReadRecord(r)) count.payload_bytes += r.size();
  count.records = (*reader)->records_read();
  count.status = (*reader)->status();
  count.error_offset = (*reader)->error_offset();
  return count;
}

TEST_CASE("the tight scan and the parallel scan agree with one record at a time") {
  testing::TempDir dir;
  Rng rng(2024);
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    std::string bytes = Frame(TrickyRecords(rng, rng.Uniform(0, 120)));
    const uint64_t damage = rng.Uniform(0, 3);
    if (!bytes.empty() && damage == 1) bytes = FlipByte(bytes, rng.Uniform(0, bytes.size() - 1));
    if (damage == 2) bytes.resize(rng.Uniform(0, bytes.size()));
    const std::string path = dir.File(fmt::format("f{}", trial));
    testing::WriteFile(path, bytes);
    const RecordCount want = Sequential(path);
    for (uint64_t part : {uint64_t{512}, uint64_t{4096}, uint64_t{1} << 20}) {
      for (size_t max_parts : {size_t{2}, size_t{7}}) {
        CAPTURE(part);
        CAPTURE(max_parts);
        const RecordCount got = CountRecords(path, {}, part, max_parts);
        CHECK(got.records == want.records);
        CHECK(got.payload_bytes == want.payload_bytes);
        CHECK(got.status == want.status);
        CHECK(got.error_offset == want.error_offset);
      }
    }
    // SkipRecords in blocks of any size gives the same answer too.
    RecordReaderOptions small;
    small.block_size = 333;
    auto reader = RecordReader::FromSource(NewMemorySource(path, bytes), small);
    REQUIRE(reader.ok());
    const uint64_t skipped = (*reader)->SkipRecords(std::numeric_limits<uint64_t>::max());
    CHECK(skipped == want.payload_bytes);
    CHECK((*reader)->records_read() == want.records);
    CHECK((*reader)->status() == want.status);
  }
}

TEST_CASE("byte ranges counted apart and joined give the sequential count, errors included") {
  testing::TempDir dir;
  Rng rng(77);
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    std::string bytes = Frame(TrickyRecords(rng, rng.Uniform(0, 150)));
    const uint64_t damage = rng.Uniform(0, 3);
    if (!bytes.empty() && damage == 1) bytes = FlipByte(bytes, rng.Uniform(0, bytes.size() - 1));
    if (damage == 2) bytes.resize(rng.Uniform(0, bytes.size()));
    const std::string path = dir.File(fmt::format("f{}", trial));
    testing::WriteFile(path, bytes);
    const RecordCount want = Sequential(path);
    for (size_t ranges : {size_t{1}, size_t{2}, size_t{3}, size_t{8}}) {
      CAPTURE(ranges);
      // Cuts anywhere, in records or between them, some ranges empty.
      std::vector<uint64_t> cuts = {0, bytes.size()};
      for (size_t r = 1; r < ranges; ++r) cuts.push_back(rng.Uniform(0, bytes.size()));
      std::sort(cuts.begin(), cuts.end());
      std::vector<RangeCount> counted;
      for (size_t r = 0; r + 1 < cuts.size(); ++r) {
        counted.push_back(CountFileRange(path, {}, cuts[r], cuts[r + 1], 512, 3));
      }
      const RecordCount got = JoinCountedRanges(path, {}, counted);
      CHECK(got.records == want.records);
      CHECK(got.payload_bytes == want.payload_bytes);
      CHECK(got.status == want.status);
      CHECK(got.error_offset == want.error_offset);
    }
  }
  RecordReaderOptions gzip;
  gzip.compression = Compression::kGzip;
  CHECK(CountFileRange(dir.File("f0"), gzip, 0, 10).count.status.code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("SkipRecords stops before the first record at or after the stop offset") {
  const std::string bytes = Frame({"a", "bb", "ccc", "dddd"});  // at 0, 17, 35, 54
  auto reader = RecordReader::FromSource(NewMemorySource("m", bytes), {});
  REQUIRE(reader.ok());
  CHECK((*reader)->SkipRecords(18) == 3);
  CHECK((*reader)->position() == 35);
  CHECK((*reader)->records_read() == 2);
  CHECK((*reader)->last_record_offset() == 17);
  CHECK((*reader)->SkipRecords(1000) == 7);
  CHECK((*reader)->records_read() == 4);
  CHECK((*reader)->status().ok());
}

}  // namespace
}  // namespace tfdist::io
