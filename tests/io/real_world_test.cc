// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The real-world files of ../shared/tfdata, written by TensorFlow, Beam,
// Hadoop and Scio: every record read with both CRCs, counts as documented.

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <map>
#include <string>

#include "tfdist/io/file_list.h"
#include "tfdist/io/record_reader.h"
#include "tfdist/proto/example_format.h"

namespace tfdist {
namespace {

std::string Dir() {
  const char* env = std::getenv("TFDIST_TFDATA");
  return env != nullptr ? env : "../shared/tfdata";
}

struct Expected {
  const char* file;
  io::Compression compression;
  uint64_t records;
  proto::PayloadKind kind;  // of the first record
};

// Counts and compressions from the folder's README (confirmed there by
// several independent readers).
const Expected kFiles[] = {
    {"dareblopy_test-small-r00.tfrecords", io::Compression::kNone, 50,
     proto::PayloadKind::kExample},
    {"dareblopy_test-small-gzip-r00.tfrecords_ZLIB", io::Compression::kZlib, 50,
     proto::PayloadKind::kExample},
    {"tfx_mnist.tfrecord", io::Compression::kNone, 1000, proto::PayloadKind::kExample},
    {"tfx_penguin_train_data_tfrecord-00000-of-00001.gz", io::Compression::kGzip, 234,
     proto::PayloadKind::kExample},
    {"tfx_csv_example_gen_train_data_tfrecord-00000-of-00012.gz", io::Compression::kGzip, 826,
     proto::PayloadKind::kExample},
    {"tfx_tfrecord_sequence_eval.gz", io::Compression::kGzip, 4500,
     proto::PayloadKind::kSequenceExample},
    {"tfx_external_tfrecord_sequence-00000-of-00001.gz", io::Compression::kGzip, 15000,
     proto::PayloadKind::kSequenceExample},
    {"tfx_tfjs_next_page_data.tfrecord.gz", io::Compression::kGzip, 100,
     proto::PayloadKind::kExample},
    {"ecosystem_hadoop_part-m-00000", io::Compression::kNone, 5, proto::PayloadKind::kExample},
    {"ecosystem_hadoop_part-m-00000.gz", io::Compression::kGzip, 5, proto::PayloadKind::kExample},
    {"magenta_notesequences.tfrecord", io::Compression::kNone, 46, proto::PayloadKind::kRaw},
    {"DERIVED_magenta_notesequences.tfrecord.zlib", io::Compression::kZlib, 46,
     proto::PayloadKind::kRaw},
    {"magenta_tfrecord_iterator_test.tfrecord", io::Compression::kNone, 3,
     proto::PayloadKind::kRaw},
    {"spotify_train_5shards/part-00000-of-00005.tfrecords", io::Compression::kNone, 158,
     proto::PayloadKind::kExample},
    {"spotify_train_5shards/part-00001-of-00005.tfrecords", io::Compression::kNone, 158,
     proto::PayloadKind::kExample},
    {"spotify_train_5shards/part-00002-of-00005.tfrecords", io::Compression::kNone, 159,
     proto::PayloadKind::kExample},
    {"spotify_train_5shards/part-00003-of-00005.tfrecords", io::Compression::kNone, 159,
     proto::PayloadKind::kExample},
    {"spotify_train_5shards/part-00004-of-00005.tfrecords", io::Compression::kNone, 158,
     proto::PayloadKind::kExample},
    {"spotify_taxi_part-00000-of-00004.tfrecords.gz", io::Compression::kGzip, 3750,
     proto::PayloadKind::kExample},
};

std::vector<std::string> ReadAll(const std::string& path, io::Compression c) {
  io::RecordReaderOptions options;
  options.compression = c;
  auto reader = io::RecordReader::Open(path, options);
  REQUIRE(reader.ok());
  std::vector<std::string> records;
  std::string r;
  while ((*reader)->ReadRecord(r)) records.push_back(r);
  CHECK((*reader)->status().ok());
  return records;
}

TEST_CASE("every real-world file is detected, read and counted as documented") {
  for (const Expected& e : kFiles) {
    CAPTURE(e.file);
    const std::string path = Dir() + "/" + e.file;
    io::RecordReaderOptions options;
    options.compression = io::Compression::kAuto;
    io::RecordCount count = io::CountRecords(path, options);
    CHECK(count.status.ok());
    CHECK(count.compression == e.compression);
    CHECK(count.records == e.records);
    // With the compression declared as TensorFlow users would, too.
    const std::vector<std::string> records = ReadAll(path, e.compression);
    REQUIRE(records.size() == e.records);
    CHECK(proto::ClassifyPayload(records.front()) == e.kind);
    CHECK(proto::ClassifyPayload(records.back()) == e.kind);
  }
}

TEST_CASE("compressed and uncompressed copies hold the same records") {
  const std::pair<const char*, const char*> pairs[] = {
      {"dareblopy_test-small-r00.tfrecords", "dareblopy_test-small-gzip-r00.tfrecords_ZLIB"},
      {"ecosystem_hadoop_part-m-00000", "ecosystem_hadoop_part-m-00000.gz"},
      {"magenta_notesequences.tfrecord", "DERIVED_magenta_notesequences.tfrecord.zlib"},
  };
  for (const auto& pair : pairs) {
    const char* plain = pair.first;
    const char* packed = pair.second;
    CAPTURE(packed);
    const auto a = ReadAll(Dir() + "/" + plain, io::Compression::kAuto);
    const auto b = ReadAll(Dir() + "/" + packed, io::Compression::kAuto);
    REQUIRE(a.size() == b.size());
    // Compare decoded Examples: map order on the wire is not fixed.
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(proto::PayloadToJson(a[i]) == proto::PayloadToJson(b[i]));
    }
  }
}

TEST_CASE("decoded content matches what the folder's README describes") {
  const auto dare = ReadAll(Dir() + "/dareblopy_test-small-r00.tfrecords", io::Compression::kNone);
  for (const std::string& r : dare) {
    CHECK(r.size() == 3111);
    const auto j = proto::PayloadToJson(r);
    CHECK(j["features"]["shape"]["int64_list"] == nlohmann::ordered_json({3, 32, 32}));
  }
  const auto mnist = ReadAll(Dir() + "/tfx_mnist.tfrecord", io::Compression::kNone);
  const auto m = proto::PayloadToJson(mnist[0]);
  CHECK(m["features"]["image_floats"]["float_list"].size() == 784);
  CHECK(m["features"]["image_class"]["int64_list"].size() == 1);
  const auto magenta =
      ReadAll(Dir() + "/magenta_tfrecord_iterator_test.tfrecord", io::Compression::kNone);
  for (const std::string& r : magenta) {
    CHECK(r.size() >= 5);
    CHECK(r.size() <= 11);
  }
  // Some csv_example_gen features are an empty Feature with no kind set.
  const auto csv = ReadAll(Dir() + "/tfx_csv_example_gen_train_data_tfrecord-00000-of-00012.gz",
                           io::Compression::kGzip);
  bool saw_empty = false;
  for (const std::string& r : csv) {
    const auto j = proto::PayloadToJson(r);
    for (const auto& f : j["features"]) {
      if (f.empty()) saw_empty = true;
    }
  }
  CHECK(saw_empty);
}

}  // namespace
}  // namespace tfdist

int main(int argc, char** argv) {
  struct stat st;
  if (stat(tfdist::Dir().c_str(), &st) != 0) {
    std::fprintf(stderr, "skipped: %s not found\n", tfdist::Dir().c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
