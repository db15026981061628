// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Glob patterns over object-store URLs: list by the literal prefix, match
// as local globs do.

#include "remote_glob.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <utility>

#include "storage_listed.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/io/url_glob.h"

namespace tfdist::io {
namespace {

// Brackets of up to this many bytes split a prefix; larger ones end it.
constexpr size_t kMostBracketBytes = 16;
// Listings run at once at most.
constexpr size_t kMostListings = 8;

std::atomic<uint64_t> listings_made{0};
std::atomic<uint64_t> listings_running{0};
std::atomic<uint64_t> listings_most{0};

bool IsWildcard(char c) { return c == '*' || c == '?' || c == '['; }

// The bytes of the bracket expression at pattern[at] ('['), when it is a
// plain set of a few bytes ("[ab]", "[0-3]"): no negation, no class, no
// '/', no escape. Empty otherwise; `end` is the index past its ']'.
std::string BracketBytes(std::string_view pattern, size_t at, size_t& end) {
  std::string bytes;
  size_t i = at + 1;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^' || pattern[i] == ']'))
    return {};
  for (; i < pattern.size() && pattern[i] != ']'; ++i) {
    const char c = pattern[i];
    if (c == '/' || c == '\\' || c == '[') return {};
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      const unsigned char lo = static_cast<unsigned char>(c);
      const unsigned char hi = static_cast<unsigned char>(pattern[i + 2]);
      if (hi < lo || static_cast<size_t>(hi - lo) >= kMostBracketBytes || pattern[i + 2] == '/' ||
          pattern[i + 2] == '\\') {
        return {};
      }
      for (unsigned v = lo; v <= hi; ++v) bytes += static_cast<char>(v);
      i += 2;
    } else {
      bytes += c;
    }
    if (bytes.size() > kMostBracketBytes) return {};
  }
  if (i >= pattern.size() || bytes.empty()) return {};
  end = i + 1;
  std::sort(bytes.begin(), bytes.end());
  bytes.erase(std::unique(bytes.begin(), bytes.end()), bytes.end());
  return bytes;
}

}  // namespace

ListPrefixes ListPrefixesOf(std::string_view pattern) {
  ListPrefixes out;
  out.prefixes.emplace_back();
  bool split = false;  // one bracket split the prefix already
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      c = pattern[++i];
    } else if (IsWildcard(c)) {
      out.wildcard = true;
      size_t end = 0;
      const std::string bytes = c == '[' && !split ? BracketBytes(pattern, i, end) : "";
      if (bytes.empty()) return out;
      std::vector<std::string> wider;
      for (const std::string& p : out.prefixes) {
        for (char b : bytes) wider.push_back(p + b);
      }
      out.prefixes = std::move(wider);
      split = true;
      i = end - 1;
      continue;
    }
    for (std::string& p : out.prefixes) p += c;
  }
  return out;
}

bool MatchesPath(const std::string& pattern, const std::string& name) {
  return fnmatch(pattern.c_str(), name.c_str(), FNM_PATHNAME) == 0;
}

ListingCounts ListingCountsForTesting() {
  return {listings_made.load(std::memory_order_relaxed),
          listings_most.load(std::memory_order_relaxed)};
}

namespace {

// One prefix to list and the patterns whose matches lie under it.
struct Listing {
  std::string prefix;
  std::vector<size_t> patterns;
  Status status;
  std::vector<std::pair<size_t, ObjectInfo>> matched;  // pattern, object
};

Status RunListing(Listing& l, std::span<const std::string> patterns) {
  TFDIST_ASSIGN_OR_RETURN(const Location loc, ParseLocation(l.prefix));
  const uint64_t now = listings_running.fetch_add(1, std::memory_order_relaxed) + 1;
  listings_made.fetch_add(1, std::memory_order_relaxed);
  uint64_t most = listings_most.load(std::memory_order_relaxed);
  while (now > most && !listings_most.compare_exchange_weak(most, now)) {
  }
  const Status status =
      StorageFor(loc.scheme).List(l.prefix, [&](std::span<const ObjectInfo> page) -> Status {
        if (Interrupted()) return Status::Interrupted();
        for (const ObjectInfo& info : page) {
          // A folder's marker ("dir/") is no object to read.
          if (info.name.ends_with('/')) continue;
          for (size_t p : l.patterns) {
            if (MatchesPath(patterns[p], info.name)) l.matched.emplace_back(p, info);
          }
        }
        return Status::OK();
      });
  listings_running.fetch_sub(1, std::memory_order_relaxed);
  return status;
}

}  // namespace

Result<std::vector<std::vector<std::string>>> ExpandRemotePatterns(
    std::span<const std::string> patterns) {
  std::vector<std::vector<std::string>> out(patterns.size());
  std::vector<ObjectInfo> seen;
  // The prefixes to list, each with the patterns under it.
  std::vector<std::pair<std::string, size_t>> wanted;  // prefix, pattern
  for (size_t p = 0; p < patterns.size(); ++p) {
    TFDIST_ASSIGN_OR_RETURN(const Location loc, ParseLocation(patterns[p]));
    if (loc.scheme == Scheme::kLocal) {
      return Status::InvalidArgument(fmt::format("{}: not a URL", patterns[p]));
    }
    const ListPrefixes lp = ListPrefixesOf(patterns[p]);
    // The bucket must be literal: a listing is of one bucket.
    const size_t bucket_end = patterns[p].find('/', patterns[p].find("://") + 3);
    if (lp.wildcard &&
        (bucket_end == std::string::npos || lp.prefixes[0].size() <= bucket_end ||
         std::string_view(patterns[p]).substr(0, bucket_end).find_first_of("*?[\\") !=
             std::string_view::npos)) {
      return Status::InvalidArgument(fmt::format(
          "{}: a wildcard in the bucket's name; name the bucket, wildcards go in the key",
          patterns[p]));
    }
    if (!lp.wildcard) {
      Result<ObjectInfo> info = StorageFor(loc.scheme).Stat(lp.prefixes[0]);
      if (!info.ok()) {
        if (info.status().code() == StatusCode::kNotFound) continue;  // no match
        return info.status();
      }
      out[p].push_back(info->name);
      seen.push_back(*std::move(info));
      continue;
    }
    for (const std::string& prefix : lp.prefixes) wanted.emplace_back(prefix, p);
  }
  std::sort(wanted.begin(), wanted.end());
  std::vector<Listing> listings;
  for (auto& [prefix, p] : wanted) {
    // Under the last listing's prefix (sorted: it comes right before).
    if (!listings.empty() && prefix.starts_with(listings.back().prefix)) {
      std::vector<size_t>& under = listings.back().patterns;
      if (under.back() != p && std::find(under.begin(), under.end(), p) == under.end()) {
        under.push_back(p);
      }
      continue;
    }
    listings.push_back(Listing{prefix, {p}, Status::OK(), {}});
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < listings.size();) {
      listings[i].status = RunListing(listings[i], patterns);
    }
  };
  const size_t threads = std::min(kMostListings, listings.size());
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    for (size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  }
  for (Listing& l : listings) {
    TFDIST_RETURN_IF_ERROR(l.status);
    for (auto& [p, info] : l.matched) {
      out[p].push_back(info.name);
      seen.push_back(std::move(info));
    }
  }
  RememberListed(std::move(seen));
  return out;
}

Result<std::vector<std::string>> GlobUrl(const std::string& pattern) {
  TFDIST_ASSIGN_OR_RETURN(std::vector<std::vector<std::string>> matches,
                          ExpandRemotePatterns(std::span<const std::string>(&pattern, 1)));
  std::sort(matches[0].begin(), matches[0].end());
  return std::move(matches[0]);
}

}  // namespace tfdist::io
