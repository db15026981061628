// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Atomic files: renamed into place whole, or removed. (Sets of files:
// output_set_test.cc.)

#include "tfdist/io/atomic_file.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.h"
#include "tfdist/base/interrupt.h"

namespace tfdist::io {
namespace {

// An atomic file at `path` holding `text`, written and closed.
std::unique_ptr<AtomicFile> Written(const std::string& path, const std::string& text,
                                    bool overwrite = false) {
  auto file = AtomicFile::Create(path, overwrite);
  REQUIRE(file.ok());
  std::unique_ptr<ByteSink> sink = (*file)->TakeSink(/*sync=*/false);
  REQUIRE(sink->Write(text).ok());
  REQUIRE(sink->Finish().ok());
  sink.reset();
  REQUIRE((*file)->CloseFile().ok());
  return std::move(*file);
}

TEST_CASE("an existing file is refused unless overwriting") {
  testing::TempDir dir;
  for (const char* name : {"a", "b", "c"}) testing::WriteFile(dir.File(name), "old");
  const std::vector<std::string> paths = {dir.File("a"), dir.File("b")};
  Status exists = CheckNewFiles(paths, /*overwrite=*/false);
  CHECK(exists.code() == StatusCode::kInvalidArgument);
  CHECK(exists.message() == dir.File("a") + ": already exists");
  CHECK(exists.advice() == Advice{Remedy::kOverwrite, ""});
  auto file = AtomicFile::Create(dir.File("b"), /*overwrite=*/false);
  CHECK(file.status().message() == dir.File("b") + ": already exists");
  CHECK(file.status().advice() == Advice{Remedy::kOverwrite, ""});
  CHECK(CheckNewFiles(paths, /*overwrite=*/true).ok());
  auto replaced = Written(dir.File("a"), "new", /*overwrite=*/true);
  REQUIRE(replaced->Commit().ok());
  CHECK(testing::ReadFile(dir.File("a")) == "new");
  CHECK(testing::Listing(dir.path()).size() == 3);
}

TEST_CASE("the folders are checked before anything is written") {
  testing::TempDir dir;
  testing::WriteFile(dir.File("file"), "");
  auto check = [](const std::string& path) {
    return CheckNewFiles(std::vector<std::string>{path}, false).message();
  };
  CHECK(check(dir.File("no/x")) == dir.File("no") + ": the output folder does not exist");
  CHECK(check(dir.File("file/x")) == dir.File("file") + ": is not a folder");
  CHECK(CheckNewFiles(std::vector<std::string>{dir.File("x")}, false).ok());
}

TEST_CASE("a file never committed leaves nothing") {
  testing::TempDir dir;
  { auto file = Written(dir.File("a"), "a"); }
  CHECK(testing::Listing(dir.path()).empty());
}

}  // namespace
}  // namespace tfdist::io
