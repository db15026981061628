// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Status annotation and the interrupted status.

#include "tfdist/base/status.h"

#include <doctest/doctest.h>

#include <string>

#include "tfdist/base/result.h"

namespace tfdist {
namespace {

TEST_CASE("Annotate names the context first and keeps code, position and advice") {
  const Status cause = Status::InvalidArgument("column 4: no files match 'x*'")
                           .WithPosition(3)
                           .WithAdvice(Remedy::kFewerWorkers, "2");
  const Status s = cause.Annotate("list_files");
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() == "list_files: column 4: no files match 'x*'");
  CHECK(s.position() == std::optional<size_t>(3));
  CHECK(s.advice() == Advice{Remedy::kFewerWorkers, "2"});
  CHECK(s.ToString() ==
        "INVALID_ARGUMENT: list_files: column 4: no files match 'x*' "
        "(use 2 workers or fewer)");
  // The const& form leaves the cause as it was.
  CHECK(cause.message() == "column 4: no files match 'x*'");
}

TEST_CASE("Annotate nests, the outermost context first") {
  Status s = Status::DataLoss("a.tfrecord: corrupted record at 12")
                 .WithAdvice(Remedy::kRewriteFileIndex, "a.tfrecord");
  s = std::move(s).Annotate("batch 3").Annotate("replica 1");
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(s.message() == "replica 1: batch 3: a.tfrecord: corrupted record at 12");
  CHECK(s.advice().remedy == Remedy::kRewriteFileIndex);
  CHECK(s.advice().subject == "a.tfrecord");
  CHECK_FALSE(s.position());
}

TEST_CASE("an OK status stays OK, without a message") {
  const Status s = Status::OK().Annotate("replica 1");
  CHECK(s.ok());
  CHECK(s.message().empty());
  CHECK(s == Status::OK());
}

Result<int> Even(int x) {
  if (x % 2 != 0) return Status::InvalidArgument(fmt::format("{} is odd", x)).WithPosition(7);
  return x;
}

TEST_CASE("Result's Annotate annotates an error and passes a value") {
  Result<int> bad = Even(3).Annotate("--records");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "--records: 3 is odd");
  CHECK(bad.status().position() == std::optional<size_t>(7));
  Result<int> good = Even(4).Annotate("--records");
  REQUIRE(good.ok());
  CHECK(*good == 4);
}

TEST_CASE("Interrupted is Cancelled, in one wording, and exits as a signal does") {
  const Status s = Status::Interrupted();
  CHECK(s.code() == StatusCode::kCancelled);
  CHECK(s.message() == "interrupted");
  CHECK(s == Status::Cancelled("interrupted"));
  CHECK(ExitCodeFor(s) == 130);
  CHECK(s.Annotate("waiting for the output folder's lock").message() ==
        "waiting for the output folder's lock: interrupted");
}

}  // namespace
}  // namespace tfdist
