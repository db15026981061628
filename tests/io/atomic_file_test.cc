// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Atomic files and sets of them: all appear or none, whatever fails or
// interrupts the commit.

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

TEST_CASE("a file set appears whole at its commit, and not before") {
  testing::TempDir dir;
  AtomicFileSet set;
  for (const char* name : {"a", "b", "c"}) set.Add(Written(dir.File(name), name));
  CHECK(set.size() == 3);
  CHECK(testing::Listing(dir.path()).size() == 3);  // three temporary files
  for (const std::string& name : testing::Listing(dir.path()))
    CHECK(name.find(".tmp-") != std::string::npos);
  REQUIRE(set.Commit(/*sync=*/true).ok());
  CHECK(testing::Listing(dir.path()) == std::vector<std::string>{"a", "b", "c"});
  CHECK(testing::ReadFile(dir.File("b")) == "b");
}

TEST_CASE("a file set never committed leaves nothing") {
  testing::TempDir dir;
  {
    AtomicFileSet set;
    for (const char* name : {"a", "b"}) set.Add(Written(dir.File(name), name));
  }
  CHECK(testing::Listing(dir.path()).empty());
}

TEST_CASE("overwriting, the old set goes whole: no mix of old and new files") {
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
  AtomicFileSet set;
  for (const std::string& p : paths) set.Add(Written(p, "new", /*overwrite=*/true));
  REQUIRE(set.Commit(false).ok());
  CHECK(testing::ReadFile(dir.File("a")) == "new");
  CHECK(testing::ReadFile(dir.File("b")) == "new");
  CHECK(testing::ReadFile(dir.File("c")) == "old");  // not in the set
  CHECK(testing::Listing(dir.path()).size() == 3);
}

TEST_CASE("a rename that fails part way removes the files renamed before it") {
  testing::TempDir dir;
  AtomicFileSet set;
  set.Add(Written(dir.File("a"), "a"));
  set.Add(Written(dir.File("b"), "b"));
  set.Add(Written(dir.File("c"), "c"));
  // "b" becomes a folder with a file in it: the set cannot replace it.
  REQUIRE(mkdir(dir.File("b").c_str(), 0755) == 0);
  testing::WriteFile(dir.File("b/keep"), "keep");
  const Status s = set.Commit(false);
  CHECK(s.code() == StatusCode::kInternal);
  CHECK(s.message().find("cannot rename") != std::string::npos);
  struct stat st;
  CHECK(stat(dir.File("a").c_str(), &st) != 0);
  CHECK(stat(dir.File("c").c_str(), &st) != 0);
  CHECK(S_ISDIR((stat(dir.File("b").c_str(), &st), st.st_mode)));
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

// Runs `child` in a child process with the interrupt handlers installed;
// returns its exit status (-signal when a signal ended it).
template <typename Child>
int InChild(Child child) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    InstallInterruptHandlers();
    _exit(child());
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST_CASE("interrupted before its commit, a set renames nothing; forced out, it leaves nothing") {
  testing::TempDir dir;
  // The first signal: Commit says Cancelled, and nothing appears.
  CHECK(InChild([&] {
          AtomicFileSet set;
          set.Add(Written(dir.File("a"), "a"));
          set.Add(Written(dir.File("b"), "b"));
          raise(SIGINT);
          const Status s = set.Commit(false);
          return s.code() == StatusCode::kCancelled ? 0 : 1;
        }) == 0);
  CHECK(testing::Listing(dir.path()).empty());
  // A second signal exits at once (130), removing the temporary files.
  CHECK(InChild([&] {
          AtomicFileSet set;
          set.Add(Written(dir.File("a"), "a"));
          set.Add(Written(dir.File("b"), "b"));
          raise(SIGINT);
          raise(SIGINT);
          return 0;
        }) == 130);
  CHECK(testing::Listing(dir.path()).empty());
}

TEST_CASE("forced out while it renames, a set leaves all its files or none") {
  constexpr int kFiles = 3000;
  for (int attempt = 0; attempt < 3; ++attempt) {
    testing::TempDir dir;
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      InstallInterruptHandlers();
      bool ok = false;
      {
        AtomicFileSet set;
        for (int i = 0; i < kFiles; ++i) set.Add(Written(dir.File(fmt::format("f{:05}", i)), "x"));
        ok = set.Commit(false).ok();
      }
      _exit(ok ? 0 : 1);
    }
    // The signals once the first file is renamed into place (or the child
    // is done): the first stops the commit, or the second (a moment later,
    // so that the two are not merged into one) forces the exit during the
    // renames, or they come after them.
    const std::string first = dir.File("f00000");
    struct stat st;
    int status = 0;
    while (stat(first.c_str(), &st) != 0 && waitpid(pid, &status, WNOHANG) == 0) usleep(100);
    kill(pid, SIGINT);
    usleep(static_cast<useconds_t>(attempt * 500));
    kill(pid, SIGINT);
    waitpid(pid, &status, 0);
    const std::vector<std::string> left = testing::Listing(dir.path());
    CAPTURE(attempt);
    CAPTURE(left.size());
    CHECK((left.empty() || left.size() == kFiles));
    for (const std::string& name : left) CHECK(name.find(".tmp-") == std::string::npos);
  }
}

}  // namespace
}  // namespace tfdist::io
