// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// ExpandFilePatterns: list_files' byte-wise order and its error for no match.

#include "tfdist/io/file_list.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fnmatch.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "test_util.h"

namespace tfdist::io {
namespace {

TEST_CASE("matches of all patterns are sorted together byte-wise, duplicates kept") {
  testing::TempDir dir;
  for (const char* name : {"x.2", "x.10", "x.1", "y.1", ".hidden", "B"}) {
    testing::WriteFile(dir.File(name), "");
  }
  const std::vector<std::string> patterns = {dir.File("y.*"), dir.File("x.*"), dir.File("x.1")};
  auto files = ExpandFilePatterns(patterns);
  REQUIRE(files.ok());
  CHECK(*files == std::vector<std::string>{dir.File("x.1"), dir.File("x.1"), dir.File("x.10"),
                                           dir.File("x.2"), dir.File("y.1")});
  // A wildcard matches a leading dot, as TensorFlow's fnmatch does; upper
  // case sorts before lower case.
  auto all = ExpandFilePatterns(std::vector<std::string>{dir.File("*")});
  REQUIRE(all.ok());
  CHECK(all->front() == dir.File(".hidden"));
  CHECK((*all)[1] == dir.File("B"));
}

TEST_CASE("a pattern that matches nothing is InvalidArgument naming it") {
  testing::TempDir dir;
  testing::WriteFile(dir.File("a"), "");
  auto files = ExpandFilePatterns(std::vector<std::string>{dir.File("a"), dir.File("nope*")});
  CHECK(files.status().code() == StatusCode::kInvalidArgument);
  CHECK(files.status().message().find("nope*") != std::string::npos);
  // No pattern matches no file, as TensorFlow's MatchingFiles says.
  auto none = ExpandFilePatterns(std::vector<std::string>{});
  CHECK(none.status().code() == StatusCode::kInvalidArgument);
  CHECK(none.status().message() == "no files match an empty list of patterns");
}

TEST_CASE("a path too long to open is said to be, not to match nothing") {
  testing::TempDir dir;
  const std::string deep = dir.File(std::string(5000, 'a') + "/x.tfrecord");
  const std::string long_name = dir.File(std::string(300, 'n'));
  for (const std::string& pattern : {deep, long_name, dir.File(std::string(300, 'n') + "*"),
                                     dir.File("[ab]" + std::string(5000, '?'))}) {
    for (MatchRule rule : {MatchRule::kEveryPattern, MatchRule::kAnyPattern}) {
      auto files = ExpandFilePatterns(std::vector<std::string>{pattern}, rule);
      REQUIRE_FALSE(files.ok());
      CHECK(files.status().code() == StatusCode::kNotFound);
      CHECK(files.status().message().find("the path is too long to open") != std::string::npos);
      CHECK(files.status().message().find("File name too long") != std::string::npos);
      CHECK(files.status().message().size() < 500);  // the path shown by its ends
    }
  }
  // Wildcards that can match fewer bytes than they take: a pattern of 5,000
  // bytes whose shortest match is short matches nothing, as any other.
  for (const std::string& pattern :
       {dir.File(std::string(5000, '*')), dir.File(std::string(300, '*') + "x"),
        dir.File("[" + std::string(300, 'a') + "]")}) {
    auto files = ExpandFilePatterns(std::vector<std::string>{pattern});
    REQUIRE_FALSE(files.ok());
    CHECK(files.status().code() == StatusCode::kInvalidArgument);
    CHECK(files.status().message().starts_with("no files match"));
  }
}

TEST_CASE("list_files' rule: only patterns that together match nothing are an error") {
  testing::TempDir dir;
  testing::WriteFile(dir.File("a"), "");
  testing::WriteFile(dir.File("b"), "");
  // The unmatched pattern adds nothing; a name matched twice stays twice.
  const std::vector<std::string> some = {dir.File("nope*"), dir.File("[ab]"), dir.File("b")};
  auto files = ExpandFilePatterns(some, MatchRule::kAnyPattern);
  REQUIRE(files.ok());
  CHECK(*files == std::vector<std::string>{dir.File("a"), dir.File("b"), dir.File("b")});
  CHECK_FALSE(ExpandFilePatterns(some).ok());  // kEveryPattern
  // None matches: TensorFlow's message, every pattern joined by ", ".
  const std::vector<std::string> none = {dir.File("nope*"), dir.File("c"), dir.File("x/*")};
  auto empty = ExpandFilePatterns(none, MatchRule::kAnyPattern);
  CHECK(empty.status().code() == StatusCode::kInvalidArgument);
  CHECK(empty.status().message() ==
        fmt::format("No files matched pattern: {}, {}, {}", none[0], none[1], none[2]));
  // The same through a folder's listing.
  FolderListings listings;
  listings[dir.path()] = {"a", "b"};
  auto listed = ExpandFilePatterns(some, listings, MatchRule::kAnyPattern);
  REQUIRE(listed.ok());
  CHECK(*listed == *files);
  CHECK(ExpandFilePatterns(none, listings, MatchRule::kAnyPattern).status() == empty.status());
}

// What list_files gave when every pattern went through glob(3): its
// matches without "." and "..", all sorted together byte-wise.
std::vector<std::string> GlobReference(const std::vector<std::string>& patterns) {
  std::vector<std::string> files;
  for (const std::string& pattern : patterns) {
    glob_t g{};
    if (glob(pattern.c_str(), GLOB_PERIOD | GLOB_NOSORT, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) {
        const std::string path = g.gl_pathv[i];
        const std::string base = path.substr(path.rfind('/') + 1);
        if (base != "." && base != "..") files.push_back(path);
      }
    }
    globfree(&g);
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST_CASE("a match in a writer's staging folder is an error saying what it is") {
  testing::TempDir dir;
  const std::string d = dir.path();
  for (const char* folder :
       {"/data", "/.tfdist-staging.data", "/data/.tfdist-staging", "/.tfdist-staging-x"}) {
    REQUIRE(mkdir((d + folder).c_str(), 0755) == 0);
  }
  for (const char* n : {"/data/a", "/.tfdist-staging.data/owner", "/data/.tfdist-staging/new-0",
                        "/.tfdist-staging-x/y"}) {
    testing::WriteFile(d + n, "");
  }
  auto error = [](const std::string& pattern) {
    auto got = ExpandFilePatterns(std::vector<std::string>{pattern});
    return got.ok() ? std::string() : got.status().message();
  };
  CHECK(error(d + "/data/a") == "");
  CHECK(error(d + "/.tfdist-staging-x/y") == "");  // not tfdist's name
  CHECK(error(d + "/.tfdist-staging.*/*") ==
        d + "/.tfdist-staging.*/* matches " + d +
            "/.tfdist-staging.data/owner, in the staging folder of a tfdist "
            "writer (files it is writing, or left when it died: the next "
            "writer into that folder removes them); they are no data: narrow "
            "the pattern");
  CHECK(error(d + "/data/*").find("matches " + d + "/data/.tfdist-staging,") != std::string::npos);
  CHECK(error(d + "/data/.tfdist-staging/new-0").find("staging folder") != std::string::npos);
}

TEST_CASE("a pattern that matches an index file in its data folder is an error naming both") {
  testing::TempDir dir;
  for (const char* n : {"train-0", "train-0.idx", "train-1", "notes.idx", ".tfdist-index"}) {
    testing::WriteFile(dir.File(n), "");
  }
  const std::string d = dir.path();
  struct Case {
    std::string pattern;
    std::string error;  // "" when it expands
  };
  const Case cases[] = {
      {d + "/train-*", "'" + d + "/train-*' matches " + d + "/train-0.idx, the record index of " +
                           d +
                           "/train-0, which is not TFRecord data (TensorFlow's list_files "
                           "would match it too)"},
      {d + "/*.idx", "'" + d + "/*.idx' matches " + d + "/train-0.idx, the record index of " + d +
                         "/train-0, which is not TFRecord data (TensorFlow's list_files would "
                         "match it too)"},
      {d + "/.t*", "'" + d + "/.t*' matches " + d +
                       "/.tfdist-index, tfdist's directory index, "
                       "which is not TFRecord data (TensorFlow's list_files would match it too)"},
      {d + "/train-?", ""},
      {d + "/notes.idx", ""},  // no file "notes" beside it
      {d + "/*/x", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.pattern);
    auto got = ExpandFilePatterns(std::vector<std::string>{c.pattern});
    if (c.error.empty()) {
      CHECK((got.ok() || got.status().message().starts_with("no files match")));
      continue;
    }
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == StatusCode::kInvalidArgument);
    CHECK(got.status().message() == c.error);
    CHECK(got.status().advice() == Advice{Remedy::kMoveIndexes, d});
  }
}

TEST_CASE("expansion matches glob(3) on tricky names and patterns") {
  testing::TempDir dir;
  const std::vector<std::string> names = {".hidden",
                                          "..double",
                                          ".a.tfrecord",
                                          "a.tfrecord",
                                          "b.idx",  // no file "b": not an index
                                          "b[1].tfrecord",
                                          "b1.tfrecord",
                                          "[",
                                          "]",
                                          "x*y",
                                          "x?y",
                                          "with space",
                                          "caf\xc3\xa9",
                                          "\xff\x01",
                                          "A",
                                          "a",
                                          "aa",
                                          "aaa",
                                          "-",
                                          "part-00001-of-00002",
                                          "part-00000-of-00002"};
  for (const auto& n : names) testing::WriteFile(dir.File(n), "");
  REQUIRE(mkdir(dir.File("sub").c_str(), 0755) == 0);
  REQUIRE(mkdir(dir.File("sub2").c_str(), 0755) == 0);
  REQUIRE(mkdir(dir.File(".subhidden").c_str(), 0755) == 0);
  for (const char* n : {"p.tfrecord", ".q", "r"}) {
    testing::WriteFile(dir.File(std::string("sub/") + n), "");
    testing::WriteFile(dir.File(std::string("sub2/") + n), "");
    testing::WriteFile(dir.File(std::string(".subhidden/") + n), "");
  }
  const std::string d = dir.path();
  const std::vector<std::vector<std::string>> cases = {
      {d + "/*"},
      {d + "/.*"},
      {d + "/?"},
      {d + "/*.tfrecord"},
      {d + "/b[1].tfrecord"},    // a bracket expression, matching "b1.tfrecord"
      {d + "/b[[]1].tfrecord"},  // brackets with a literal '['
      {d + "/b[1]*"},
      {d + "/[*"},     // an unclosed '[' with a wildcard
      {d + "/x\\*y"},  // an escaped star: glob(3)'s path
      {d + "/*y"},
      {d + "/*/*"},  // wildcards in two components: glob(3)'s path
      {d + "/*/.*"},
      {d + "/sub*/p.tfrecord"},
      {d + "/a*", d + "/a*", d + "/aa"},  // duplicates kept
      {d + "/part-*", d + "/a.*", d + "/sub/*"},
      {d + "//*"},
      {d + "/sub/../a*"},
      {d + "/*a*a*"},
      {d + "/caf?*"},
      {d + "/with *"},
  };
  for (const auto& patterns : cases) {
    CAPTURE(patterns.front());
    const std::vector<std::string> want = GlobReference(patterns);
    REQUIRE_FALSE(want.empty());
    auto got = ExpandFilePatterns(patterns);
    REQUIRE(got.ok());
    CHECK(*got == want);
  }
  // Relative to the current folder, with no folder in the pattern.
  const std::string cwd = std::filesystem::current_path();
  std::filesystem::current_path(d);
  auto here = ExpandFilePatterns(std::vector<std::string>{"*.tfrecord", "./a*"});
  const std::vector<std::string> want_here = GlobReference({"*.tfrecord", "./a*"});
  std::filesystem::current_path(cwd);
  REQUIRE(here.ok());
  CHECK(*here == want_here);
  CHECK(std::find(here->begin(), here->end(), ".a.tfrecord") != here->end());
}

TEST_CASE("a folder pattern splits at its last '/' and matches names as fnmatch does") {
  auto f = FolderPattern::Split("data/train/part-*");
  REQUIRE(f.has_value());
  CHECK(f->dir == "data/train");
  CHECK(f->prefix == "data/train/");
  CHECK(f->base == "part-*");
  auto root = FolderPattern::Split("/x?");
  REQUIRE(root.has_value());
  CHECK(root->dir == "/");
  CHECK(root->prefix == "/");
  auto here = FolderPattern::Split("*.tfrecord");
  REQUIRE(here.has_value());
  CHECK(here->dir.empty());
  CHECK(here->prefix.empty());
  // Left to glob(3): wildcards in the folder, escapes, only brackets, none.
  for (const char* p : {"a*/b*", "a/x\\*", "a/b[12]", "a/plain", "a//*"}) {
    CAPTURE(p);
    CHECK_FALSE(FolderPattern::Split(p).has_value());
  }
  const std::vector<std::string> names = {"",     ".",  "..",  ".a",  "a", "ab", "abc", "a.b",
                                          "b[1]", "b1", "x*y", "xzy", "*", "?",  "[",   "a]"};
  for (const char* base : {"*", "?", "a*", "*b", "a?c", "*.*", "?*?", "b[1]*", "b[[]1]*", "x*y",
                           "[*", "*]", "*a*b*c*"}) {
    auto p = FolderPattern::Split(std::string("d/") + base);
    REQUIRE(p.has_value());
    for (const std::string& name : names) {
      CAPTURE(base);
      CAPTURE(name);
      const bool want = name != "." && name != ".." && fnmatch(base, name.c_str(), 0) == 0;
      CHECK(p->Matches(name) == want);
    }
  }
}

TEST_CASE("SortBytewise orders as std::sort does, stems and ties included") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 6; ++trial) {
    std::vector<std::string> names;
    const size_t n = trial < 2 ? 100 : 20000;
    const std::string stem = trial % 2 ? "/data/train/part-" : "";
    for (size_t i = 0; i < n; ++i) {
      std::string s = stem;
      // Short, long, prefix-of-another, equal for 8+ bytes, high bytes.
      const size_t len = rng() % 24;
      const uint64_t alphabet = trial >= 4 ? 3 : 255;
      for (size_t k = 0; k < len; ++k) s += static_cast<char>(1 + rng() % alphabet);
      names.push_back(s);
      if (rng() % 5 == 0) names.push_back(s);  // duplicates
    }
    std::vector<std::string_view> views(names.begin(), names.end());
    std::vector<std::string_view> want = views;
    std::sort(want.begin(), want.end());
    SortBytewise(views);
    CHECK(views == want);
  }
}

TEST_CASE("'-' stands for standard input and is passed through") {
  auto files = ExpandFilePatterns(std::vector<std::string>{"-"});
  REQUIRE(files.ok());
  CHECK(*files == std::vector<std::string>{"-"});
}

TEST_CASE("many patterns over one folder read it once, and match as one pattern each would") {
  testing::TempDir dir;
  constexpr int kFiles = 2000;
  std::vector<std::string> patterns;
  for (int i = 0; i < kFiles; ++i) {
    const std::string name = fmt::format("part-{:05}", i);
    testing::WriteFile(dir.File(name), "");
    // One wildcard each, so that each pattern is a folder pattern; every
    // tenth named twice (its matches twice, as MatchingFiles keeps them).
    patterns.push_back(dir.File(fmt::format("part-{:05}*", i)));
    if (i % 10 == 0) patterns.push_back(dir.File(fmt::format("part-{:04}?", i / 10)));
  }
  testing::WriteFile(dir.File("other"), "");
  const uint64_t before = FoldersListedForTesting();
  auto files = ExpandFilePatterns(patterns);
  // Each pattern listing the folder again made 2,200 readdir passes over
  // 2,001 names: 35 s for 10,000 patterns over 10,000 files.
  CHECK(FoldersListedForTesting() - before == 1);
  REQUIRE(files.ok());
  size_t expected = 0;
  for (const std::string& p : patterns) expected += ExpandFilePatterns(std::span(&p, 1))->size();
  CHECK(files->size() == expected);
  CHECK(std::is_sorted(files->begin(), files->end()));
  CHECK((*files)[0] == dir.File("part-00000"));
  // A pattern that matches nothing among them is still named.
  patterns.push_back(dir.File("nope-*"));
  auto missing = ExpandFilePatterns(patterns);
  CHECK(missing.status().message() == fmt::format("no files match '{}'", dir.File("nope-*")));
  // Two folders: each read once.
  testing::TempDir other;
  testing::WriteFile(other.File("x1"), "");
  const uint64_t two = FoldersListedForTesting();
  auto both = ExpandFilePatterns(std::vector<std::string>{dir.File("part-0000*"), other.File("x*"),
                                                          dir.File("oth*"), other.File("?1")});
  REQUIRE(both.ok());
  CHECK(FoldersListedForTesting() - two == 2);
  CHECK(both->size() == 13);
}

TEST_CASE("a folder that exists but cannot be listed is an error naming it, not 'no match'") {
  testing::TempDir dir;
  // A symbolic link loop: opendir fails with ELOOP (as root, unlike a
  // folder without read permission, which root reads anyway).
  REQUIRE(symlink("b", dir.File("a").c_str()) == 0);
  REQUIRE(symlink("a", dir.File("b").c_str()) == 0);
  for (const std::string& pattern : {dir.File("a/*"), dir.File("a/x[12]"), dir.File("a/*/x")}) {
    CAPTURE(pattern);
    auto files = ExpandFilePatterns(std::vector<std::string>{pattern}, MatchRule::kAnyPattern);
    CHECK(files.status().code() == StatusCode::kNotFound);
    CHECK(files.status().message().find(
              "cannot list the folder: Too many levels of symbolic links") != std::string::npos);
    CHECK(files.status().message().starts_with(dir.path()));
  }
  // A folder that is not there, or a file where a folder would be, holds no match.
  testing::WriteFile(dir.File("f"), "");
  for (const std::string& pattern : {dir.File("none/*"), dir.File("f/*"), dir.File("none/*/x")}) {
    CAPTURE(pattern);
    auto files = ExpandFilePatterns(std::vector<std::string>{pattern});
    CHECK(files.status().code() == StatusCode::kInvalidArgument);
    CHECK(files.status().message() == fmt::format("no files match '{}'", pattern));
  }
}

TEST_CASE("a folder that links to itself is matched as deep as the pattern goes, no deeper") {
  testing::TempDir dir;
  std::filesystem::create_directory(dir.File("d"));
  testing::WriteFile(dir.File("d/x"), "");
  REQUIRE(symlink(".", dir.File("d/self").c_str()) == 0);
  REQUIRE(symlink(dir.path().c_str(), dir.File("d/up").c_str()) == 0);
  auto files = ExpandFilePatterns(std::vector<std::string>{dir.File("d/*/*/x")});
  REQUIRE(files.ok());
  CHECK(*files == std::vector<std::string>{dir.File("d/self/self/x"), dir.File("d/up/d/x")});
}

}  // namespace
}  // namespace tfdist::io
