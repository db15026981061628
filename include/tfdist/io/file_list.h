// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// File patterns expanded the way tf.data.Dataset.list_files does.

#ifndef TFDIST_IO_FILE_LIST_H_
#define TFDIST_IO_FILE_LIST_H_

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/string_list.h"

namespace tfdist::io {

// Which patterns must match a file.
enum class MatchRule {
  // Every pattern: one that matches nothing is an error naming each such
  // pattern (tfdist's file arguments: a mistyped one is not lost quietly).
  kEveryPattern,
  // The patterns together, as tf.data.Dataset.list_files: only an empty
  // pool of matches is an error, worded as TensorFlow's ("No files matched
  // pattern: a, b").
  kAnyPattern,
};

// Expands each pattern (`*`, `?`, `[...]`, `\` escapes; a wildcard also
// matches a leading dot, as TensorFlow's fnmatch-based matcher does), then
// sorts the matches of all patterns together byte-wise ("x.10" before "x.2"),
// keeping duplicates, as TensorFlow's MatchingFiles op does. "-" (standard
// input) passes through unexpanded.
// A pattern whose wildcards are all in its last component ("data/part-*")
// lists its folder (readdir) and matches the names there, each folder read
// once for all the patterns in it; other patterns go through glob(3). Both
// give the same matches. A folder that does not exist holds no match.
// Error: InvalidArgument for no match, as `rule` says, or for an empty list
// of patterns (which matches nothing); for a match that may be an index file
// (Remedy::kMoveIndexes), or that is in a writer's staging folder
// (".tfdist-staging", ".tfdist-staging.NAME": doc/outputs.md). A folder that exists but cannot be
// listed (no permission, a symbolic link loop) is NotFound naming it and the reason, or
// ResourceExhausted when out of file descriptors or memory.
Result<StringList> ExpandFilePatterns(std::span<const std::string> patterns,
                                      MatchRule rule = MatchRule::kEveryPattern);

// tfdist's own file arguments (count, verify, cat, index, reshard,
// convert), expanded: the files, each once, and what the expansion warns of.
struct FileArguments {
  StringList files;
  std::vector<std::string> warnings;  // sentences, without "warning: "
};

// ExpandFilePatterns(patterns, kEveryPattern), then a file that several
// patterns match is taken once (the first of its names in the sorted list),
// with a warning naming it: the same name, or with several patterns the
// same device and inode (another spelling, "d/./x", a hard or symbolic
// link). Warns too of two -of-N sets of one prefix (ShardSetWarnings).
// Error: ExpandFilePatterns'.
Result<FileArguments> ExpandFileArguments(std::span<const std::string> patterns);

// For each name of `files` that is the same file as an earlier one: its
// index and the earlier one's. By name; with `by_inode`, also by device and
// inode (names that cannot be stat'ed are compared by name alone).
std::vector<std::pair<size_t, size_t>> SameFiles(const StringList& files, bool by_inode);

// Warnings for names of the form PREFIX-NNNNN-of-MMMMM[SUFFIX] with two or
// more different M for one PREFIX: "d/s-*-of-00016 and d/s-*-of-00008: two
// sets of shards of d/s; the dataset is counted twice".
std::vector<std::string> ShardSetWarnings(const StringList& files);

// Folders whose names are known without listing them (a directory index's
// listing, io::DirectoryIndex::Listing), by FolderPattern::dir.
using FolderListings = std::map<std::string, std::vector<std::string_view>, std::less<>>;

// ExpandFilePatterns, matching a folder pattern against `listings`' names
// for its folder when they are there, instead of reading the folder.
Result<StringList> ExpandFilePatterns(std::span<const std::string> patterns,
                                      const FolderListings& listings,
                                      MatchRule rule = MatchRule::kEveryPattern);

// A pattern whose wildcards are all in its last component ("data/part-*"),
// split there: every match is `prefix` + a name in folder `dir` that
// matches `base`.
struct FolderPattern {
  std::string dir;     // "" for the current folder
  std::string prefix;  // "" or the pattern up to its last '/', inclusive
  std::string base;    // the last component
  bool brackets = false;

  // nullopt for other patterns (wildcards in several components, escapes,
  // brackets as the only wildcards), which glob(3) expands.
  static std::optional<FolderPattern> Split(const std::string& pattern);
  // Whether `name` (a base name) matches `base`, as glob(3) would match it.
  bool Matches(std::string_view name) const;
};

// How many folders the expansions of this process have read with readdir
// (glob(3)'s own reads aside), so that a test can tell each folder is
// read once however many patterns name it.
uint64_t FoldersListedForTesting();

// The size of file or object `name`: stat's, or the object's as a listing
// saw it (StatObject); nullopt for standard input ("-"), what is not a
// regular file, and what cannot be stat'ed.
std::optional<uint64_t> FileSize(const std::string& name);

// Splits files of `sizes` bytes across `parts` workers, each file whole:
// the largest first, each to the part with the fewest bytes so far (the
// lowest such part), which keeps the largest share within one file of the
// smallest. Each file's part, from 0.
std::vector<int> SplitByBytes(std::span<const uint64_t> sizes, int parts);

// Sorts `names` byte-wise (std::string_view's operator<). For many names
// with a common stem (a glob's matches) it radix-sorts the bytes after the
// stem, several times faster than std::sort; the result is the same.
void SortBytewise(std::vector<std::string_view>& names);

}  // namespace tfdist::io

#endif  // TFDIST_IO_FILE_LIST_H_
