// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Glob patterns over object-store URLs, expanded by listing (file_list.cc's
// ExpandFilePatterns calls it for its URL patterns). Private to io.

#ifndef TFDIST_IO_REMOTE_GLOB_H_
#define TFDIST_IO_REMOTE_GLOB_H_

#include <span>
#include <string>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/io/storage.h"

namespace tfdist::io {

// The literal start of a pattern and whether a wildcard follows it.
struct ListPrefixes {
  // The names every match starts with: the bytes before the first wildcard,
  // escapes resolved; a bracket of a few bytes there ("train-[ab]*") gives
  // one prefix per byte, each extended by the literal bytes after it.
  std::vector<std::string> prefixes;
  bool wildcard = false;  // false: the pattern is one name, prefixes[0]
};
ListPrefixes ListPrefixesOf(std::string_view pattern);

// Whether `name` matches `pattern` as a local glob's path would: `*` and `?`
// do not match '/', brackets, '\' escapes, a leading dot matched by a
// wildcard (fnmatch(3) with FNM_PATHNAME).
bool MatchesPath(const std::string& pattern, const std::string& name);

// The matches of each of `patterns` (URLs of one or several stores; each
// pattern's matches in no particular order): a pattern with a wildcard by
// listing its prefixes (Storage::List, page by page; the prefixes of all
// patterns listed concurrently, a prefix that another one starts with not
// listed again), one without by Stat (missing: no match). Records every
// match for StatObject.
// Error: InvalidArgument for an unsupported scheme or a wildcard in a
// bucket's name; the stores' (NotFound for a missing bucket, Unavailable
// after every retry); Cancelled when interrupted.
Result<std::vector<std::vector<std::string>>> ExpandRemotePatterns(
    std::span<const std::string> patterns);

// How many Storage::List calls the expansions of this process made, and the
// most that ran at once, for tests.
struct ListingCounts {
  uint64_t listings = 0;
  uint64_t most_at_once = 0;
};
ListingCounts ListingCountsForTesting();

}  // namespace tfdist::io

#endif  // TFDIST_IO_REMOTE_GLOB_H_
