// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Glob expansion with list_files' ordering.

#include "tfdist/io/file_list.h"

#include <dirent.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <malloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "fs_util.h"
#include "remote_glob.h"
#include "tfdist/io/index_location.h"
#include "tfdist/io/storage.h"

namespace tfdist::io {
namespace {

bool IsDotEntry(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return base == "." || base == "..";
}

// `*` and `?` only, byte-wise, a leading dot matched like any byte: fnmatch
// with no flags in the C locale, for the patterns FolderPattern accepts.
bool MatchStarQuestion(std::string_view pattern, std::string_view name) {
  size_t p = 0, n = 0;
  size_t star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

// glob(3) lists one folder for such a pattern and matches the names with
// fnmatch, which readdir and the same match do with less work. Escapes, and
// brackets that are not the only wildcards, are left to glob(3), whose rules
// for them (an unclosed '[' is literal) are subtle.
std::optional<FolderPattern> FolderPattern::Split(const std::string& pattern) {
  const size_t slash = pattern.rfind('/');
  FolderPattern s;
  if (slash == std::string::npos) {
    s.base = pattern;
  } else {
    s.dir = pattern.substr(0, slash == 0 ? 1 : slash);
    s.prefix = pattern.substr(0, slash + 1);
    s.base = pattern.substr(slash + 1);
    // "a//*" and the like: glob's own joining of the parts decides.
    if (slash > 0 && pattern[slash - 1] == '/') return std::nullopt;
    if (s.dir.find_first_of("*?[\\") != std::string::npos) return std::nullopt;
  }
  if (s.base.find('\\') != std::string::npos) return std::nullopt;
  if (s.base.find_first_of("*?") == std::string::npos) return std::nullopt;
  s.brackets = s.base.find('[') != std::string::npos;
  return s;
}

bool FolderPattern::Matches(std::string_view name) const {
  if (name == "." || name == "..") return false;
  if (!brackets) return MatchStarQuestion(base, name);
  char terminated[NAME_MAX + 1];
  if (name.size() > NAME_MAX) return false;  // no such file name
  std::memcpy(terminated, name.data(), name.size());
  terminated[name.size()] = '\0';
  return fnmatch(base.c_str(), terminated, 0) == 0;
}

namespace {

// Matches, their bytes back to back in large blocks (few allocations and
// no copies for many names).
class Matches {
 public:
  void Add(std::string_view prefix, std::string_view name) {
    const size_t size = prefix.size() + name.size();
    if (blocks_.empty() || used_ + size > block_size_) {
      block_size_ = std::max<size_t>(size, 1 << 20);
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_size_));
      used_ = 0;
    }
    char* at = blocks_.back().get() + used_;
    std::memcpy(at, prefix.data(), prefix.size());
    std::memcpy(at + prefix.size(), name.data(), name.size());
    names_.emplace_back(at, size);
    used_ += size;
  }
  std::vector<std::string_view>& names() { return names_; }

 private:
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_size_ = 0;
  size_t used_ = 0;
  std::vector<std::string_view> names_;
};

std::atomic<uint64_t> folders_listed{0};

// Whether a folder that cannot be read holds no match rather than being an
// error: it is not there, or not a folder (as glob(3) without GLOB_ERR
// says). Any other reason (no permission, a symbolic link loop, no file
// descriptor left) would pass for "no files match" and hide the cause.
bool IsNoFolder(int err) { return err == ENOENT || err == ENOTDIR; }

Status CannotList(std::string_view dir, int err) {
  return ErrnoError(err, StatusCode::kNotFound,
                    fmt::format("{}: cannot list the folder", dir.empty() ? "." : dir));
}

// Calls each(name) for the names of folder `dir` ("" for the current one),
// "." and ".." left out; none for a folder that IsNoFolder.
template <typename Each>
Status ReadFolder(const std::string& dir, Each&& each) {
  DIR* d = opendir(dir.empty() ? "." : dir.c_str());
  if (d == nullptr) return IsNoFolder(errno) ? Status::OK() : CannotList(dir, errno);
  folders_listed.fetch_add(1, std::memory_order_relaxed);
  for (;;) {
    errno = 0;
    const dirent* e = readdir(d);
    if (e == nullptr) break;
    const std::string_view name = e->d_name;
    if (name != "." && name != "..") each(name);
  }
  const int err = errno;
  closedir(d);
  return err == 0 ? Status::OK() : CannotList(dir, err);
}

// Adds the matches of `s`; returns how many.
Result<size_t> ListFolder(const FolderPattern& s, Matches& out) {
  size_t matched = 0;
  TFDIST_RETURN_IF_ERROR(ReadFolder(s.dir, [&](std::string_view name) {
    if (!s.Matches(name)) return;
    out.Add(s.prefix, name);
    ++matched;
  }));
  return matched;
}

// ListFolder over names known to be the folder's.
size_t MatchListed(const FolderPattern& s, std::span<const std::string_view> names, Matches& out) {
  size_t matched = 0;
  for (std::string_view name : names) {
    if (!s.Matches(name)) continue;
    out.Add(s.prefix, name);
    ++matched;
  }
  return matched;
}

// The first folder that glob(3) could not read (but for IsNoFolder) in
// this thread's current ListWithGlob; glob's callback takes no argument.
thread_local std::optional<Status> glob_error;

int OnGlobError(const char* path, int err) {
  if (IsNoFolder(err)) return 0;
  glob_error = CannotList(path, err);
  return 1;  // stop: the pattern's matches cannot be known
}

Result<size_t> ListWithGlob(const std::string& pattern, Matches& out) {
  glob_t g{};
  glob_error.reset();
  // GLOB_NOSORT: the matches of all patterns are sorted together afterwards.
  const int rc = glob(pattern.c_str(), GLOB_PERIOD | GLOB_NOSORT, OnGlobError, &g);
  if (rc == GLOB_ABORTED && glob_error) {
    globfree(&g);
    return *std::exchange(glob_error, std::nullopt);
  }
  if (rc == GLOB_NOSPACE) {
    globfree(&g);
    return Status::ResourceExhausted(fmt::format("{}: out of memory expanding it", pattern));
  }
  size_t matched = 0;
  if (rc == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      if (IsDotEntry(g.gl_pathv[i])) continue;
      out.Add("", g.gl_pathv[i]);
      ++matched;
    }
  }
  globfree(&g);
  return matched;
}

// The length of the shortest path `pattern` can match, and of its longest
// name: each wildcard or escape as the fewest bytes it matches (`*` none,
// `?`, `[...]` and `\x` one), any other byte itself.
struct ShortestMatch {
  size_t path = 0;
  size_t longest_name = 0;
};
ShortestMatch ShortestMatchOf(std::string_view pattern) {
  ShortestMatch m;
  size_t name = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '/') {
      ++m.path;
      name = 0;
      continue;
    }
    if (c == '*') continue;
    if (c == '\\' && i + 1 < pattern.size()) {
      ++i;
    } else if (c == '[') {
      // A bracket expression: "]" first (or after "!" or "^") is a member.
      size_t j = i + 1;
      if (j < pattern.size() && (pattern[j] == '!' || pattern[j] == '^')) ++j;
      if (j < pattern.size() && pattern[j] == ']') ++j;
      const size_t close = pattern.find(']', j);
      if (close != std::string_view::npos &&
          pattern.substr(i, close - i).find('/') == std::string_view::npos) {
        i = close;
      }
    }
    ++m.path;
    m.longest_name = std::max(m.longest_name, ++name);
  }
  return m;
}

// The error of a pattern that matched nothing because whatever it matches
// is too long a path for the system to open (ENAMETOOLONG): over PATH_MAX
// bytes, or a name over NAME_MAX. The file may well be there (reached
// through deep folders one at a time): "no files match" would mislead.
Status CheckPathLength(std::string_view pattern) {
  const ShortestMatch m = ShortestMatchOf(pattern);
  if (m.path < PATH_MAX && m.longest_name <= NAME_MAX) return Status::OK();
  // The path shown by its ends: it may be thousands of bytes long.
  const std::string shown =
      pattern.size() <= 120
          ? std::string(pattern)
          : fmt::format("{}...{}", pattern.substr(0, 60), pattern.substr(pattern.size() - 50));
  return ErrnoError(
      ENAMETOOLONG, StatusCode::kNotFound,
      fmt::format("{}: the path is too long to open ({} bytes; the system takes paths of at most "
                  "{} bytes and names of at most {}; give a shorter path, relative to a folder "
                  "nearer the file)",
                  shown, pattern.size(), PATH_MAX - 1, NAME_MAX));
}

// Eight bytes of `s` from `at` as a big-endian number, zero-padded: the
// order of the keys is the byte-wise order of those bytes (names hold no NUL).
uint64_t KeyAt(std::string_view s, size_t at) {
  uint64_t key = 0;
  for (size_t i = 0; i < 8; ++i) {
    key = (key << 8) | (at + i < s.size() ? static_cast<unsigned char>(s[at + i]) : 0u);
  }
  return key;
}

// CheckNoIndexFiles for the (unsorted) matches of one pattern, sorted only
// when one of them could be an index file.
Status CheckIndexFiles(std::string_view pattern, std::span<const std::string_view> matched) {
  if (std::none_of(matched.begin(), matched.end(),
                   [](std::string_view path) { return IsIndexFileName(BaseName(path)); })) {
    return Status::OK();
  }
  std::vector<std::string_view> sorted(matched.begin(), matched.end());
  std::sort(sorted.begin(), sorted.end());
  return CheckNoIndexFiles(pattern, sorted);
}

// Whether `path` is, or is inside, a writer's staging folder
// (".tfdist-staging" or ".tfdist-staging.NAME", doc/outputs.md).
bool IsStagingPath(std::string_view path) {
  constexpr std::string_view kStaging = ".tfdist-staging";
  for (size_t at = path.find(kStaging); at != std::string_view::npos;
       at = path.find(kStaging, at + 1)) {
    const size_t end = at + kStaging.size();
    if ((at == 0 || path[at - 1] == '/') &&
        (end == path.size() || path[end] == '/' || path[end] == '.')) {
      return true;
    }
  }
  return false;
}

// Staged files are no data: a match in a staging folder is an error that
// says what it is, never read as records.
Status CheckStagingFiles(std::string_view pattern, std::span<const std::string_view> matched) {
  for (std::string_view path : matched) {
    if (!IsStagingPath(path)) continue;
    return Status::InvalidArgument(fmt::format(
        "{} matches {}, in the staging folder of a tfdist writer (files it is writing, or left "
        "when it died: the next writer into that folder removes them); they are no data: narrow "
        "the pattern",
        pattern, path));
  }
  return Status::OK();
}

// Matches from which ExpandFilePatterns gives its memory back.
constexpr size_t kTrimAfter = 1 << 16;

// One pattern over a folder whose sorted names are known: its matches,
// sorted too, straight into the list (no copy of them to sort). nullopt
// for other patterns, no match, or a match that may be an index file
// (ExpandFilePatterns words those errors).
std::optional<StringList> FromOneListing(std::span<const std::string> patterns,
                                         const FolderListings& listings) {
  if (patterns.size() != 1 || patterns[0] == "-") return std::nullopt;
  const std::optional<FolderPattern> folder = FolderPattern::Split(patterns[0]);
  if (!folder) return std::nullopt;
  const auto listed = listings.find(folder->dir);
  if (listed == listings.end()) return std::nullopt;
  size_t count = 0, bytes = 0;  // sized first: the list is not grown by doubling
  for (std::string_view name : listed->second) {
    if (!folder->Matches(name)) continue;
    if (IsIndexFileName(name) || IsStagingPath(name)) return std::nullopt;
    ++count;
    bytes += folder->prefix.size() + name.size();
  }
  StringList::Builder out;
  out.Reserve(count, bytes);
  std::string path = folder->prefix;
  for (std::string_view name : listed->second) {
    if (!folder->Matches(name)) continue;
    path.resize(folder->prefix.size());
    path += name;
    out.Add(path);
  }
  StringList list = std::move(out).Finish();
  if (list.empty()) return std::nullopt;
  return list;
}

}  // namespace

void SortBytewise(std::vector<std::string_view>& names) {
  const size_t n = names.size();
  // Names from a directory index's listing come sorted: one pass tells.
  if (std::is_sorted(names.begin(), names.end())) return;
  if (n < 4096 || n > std::numeric_limits<uint32_t>::max()) {
    std::sort(names.begin(), names.end());
    return;
  }
  // Matches share their folder and usually a stem: key on the 8 bytes after
  // the common prefix, radix-sort the keys (one pass per byte that differs),
  // and compare whole names only within runs of equal keys.
  size_t common = names[0].size();
  for (size_t i = 1; i < n && common > 0; ++i) {
    const std::string_view s = names[i];
    common = std::min(common, s.size());
    common = static_cast<size_t>(
        std::mismatch(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(common), names[0].begin())
            .first -
        s.begin());
  }
  struct Keyed {
    uint64_t key;
    uint32_t index;
  };
  std::vector<Keyed> a(n), b(n);
  for (size_t i = 0; i < n; ++i) a[i] = {KeyAt(names[i], common), static_cast<uint32_t>(i)};
  for (int shift = 0; shift < 64; shift += 8) {
    std::array<size_t, 257> start{};
    for (const Keyed& k : a) ++start[((k.key >> shift) & 0xff) + 1];
    if (std::find(start.begin() + 1, start.end(), n) != start.end()) continue;  // one bucket
    std::partial_sum(start.begin(), start.end(), start.begin());
    for (const Keyed& k : a) b[start[(k.key >> shift) & 0xff]++] = k;
    a.swap(b);
  }
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && a[j].key == a[i].key) ++j;
    if (j - i > 1) {
      std::sort(a.begin() + static_cast<std::ptrdiff_t>(i),
                a.begin() + static_cast<std::ptrdiff_t>(j),
                [&](const Keyed& x, const Keyed& y) { return names[x.index] < names[y.index]; });
    }
    i = j;
  }
  std::vector<std::string_view> sorted(n);
  for (size_t i = 0; i < n; ++i) sorted[i] = names[a[i].index];
  names.swap(sorted);
}

Result<StringList> ExpandFilePatterns(std::span<const std::string> patterns, MatchRule rule) {
  return ExpandFilePatterns(patterns, FolderListings(), rule);
}

namespace {

// ExpandFilePatterns, but for giving back the memory it used.
Result<StringList> Expand(std::span<const std::string> patterns, const FolderListings& listings,
                          MatchRule rule) {
  // As TensorFlow's MatchingFiles: no pattern matches no file.
  if (patterns.empty()) return Status::InvalidArgument("no files match an empty list of patterns");
  if (std::optional<StringList> direct = FromOneListing(patterns, listings)) return *direct;
  // Each folder is read once however many patterns name it: thousands of
  // patterns over one large folder would otherwise list it thousands of
  // times (quadratic). A folder only one pattern names is matched as it is
  // read, its names not kept.
  std::vector<std::optional<FolderPattern>> folders;
  folders.reserve(patterns.size());
  std::map<std::string, size_t, std::less<>> patterns_per_folder;
  for (const std::string& pattern : patterns) {
    folders.push_back(pattern == "-" || IsRemote(pattern) ? std::nullopt
                                                          : FolderPattern::Split(pattern));
    if (folders.back() && !listings.contains(folders.back()->dir)) {
      ++patterns_per_folder[folders.back()->dir];
    }
  }
  // URLs: listed together first, their prefixes concurrently.
  std::vector<std::string> urls;
  std::vector<size_t> url_of(patterns.size(), SIZE_MAX);
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (patterns[i].find("://") == std::string::npos) continue;
    TFDIST_ASSIGN_OR_RETURN(const Location loc, ParseLocation(patterns[i]));
    if (loc.scheme == Scheme::kLocal) continue;
    url_of[i] = urls.size();
    urls.push_back(patterns[i]);
  }
  std::vector<std::vector<std::string>> url_matches;
  if (!urls.empty()) {
    TFDIST_ASSIGN_OR_RETURN(url_matches, ExpandRemotePatterns(urls));
  }
  std::map<std::string, Matches, std::less<>> read;  // names of folders several patterns name
  Matches matches;
  std::vector<std::string> unmatched;
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::string& pattern = patterns[i];
    if (pattern == "-") {
      matches.Add("", pattern);
      continue;
    }
    const std::optional<FolderPattern>& folder = folders[i];
    const size_t first = matches.names().size();
    size_t matched;
    if (url_of[i] != SIZE_MAX) {
      const std::vector<std::string>& names = url_matches[url_of[i]];
      for (const std::string& name : names) matches.Add("", name);
      matched = names.size();
      if (matched == 0) {
        unmatched.push_back(pattern);
        continue;
      }
    } else if (!folder) {
      TFDIST_ASSIGN_OR_RETURN(matched, ListWithGlob(pattern, matches));
    } else if (auto listed = listings.find(folder->dir); listed != listings.end()) {
      matched = MatchListed(*folder, listed->second, matches);
    } else if (patterns_per_folder.find(folder->dir)->second > 1) {
      auto names = read.find(folder->dir);
      if (names == read.end()) {
        names = read.emplace(folder->dir, Matches()).first;
        Matches& all = names->second;
        TFDIST_RETURN_IF_ERROR(
            ReadFolder(folder->dir, [&](std::string_view name) { all.Add("", name); }));
      }
      matched = MatchListed(*folder, names->second.names(), matches);
    } else {
      TFDIST_ASSIGN_OR_RETURN(matched, ListFolder(*folder, matches));
    }
    if (matched == 0) {
      TFDIST_RETURN_IF_ERROR(CheckPathLength(pattern));
      unmatched.push_back(pattern);
    }
    TFDIST_RETURN_IF_ERROR(CheckIndexFiles(pattern, std::span(matches.names()).subspan(first)));
    TFDIST_RETURN_IF_ERROR(CheckStagingFiles(pattern, std::span(matches.names()).subspan(first)));
  }
  std::vector<std::string_view>& names = matches.names();
  if (rule == MatchRule::kEveryPattern && !unmatched.empty()) {
    std::string list;
    for (const std::string& p : unmatched)
      list += fmt::format("{}'{}'", list.empty() ? "" : ", ", p);
    return Status::InvalidArgument(fmt::format("no files match {}", list));
  }
  // list_files asserts on the pooled matches, and its message joins every
  // pattern with ", ".
  if (names.empty()) {
    return Status::InvalidArgument(
        fmt::format("No files matched pattern: {}", fmt::join(patterns, ", ")));
  }
  SortBytewise(names);
  return StringList(std::span<const std::string_view>(names));
}

}  // namespace

std::vector<std::pair<size_t, size_t>> SameFiles(const StringList& files, bool by_inode) {
  std::vector<std::pair<size_t, size_t>> out;
  // A sorted list (list_files', the file arguments') holds a name's copies
  // side by side: no table of names.
  const bool sorted = std::is_sorted(files.begin(), files.end());
  std::unordered_map<std::string_view, size_t> by_name;
  std::map<std::pair<dev_t, ino_t>, size_t> by_id;
  size_t run = 0;  // sorted: the first of the current name's copies
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string_view name = files[i];
    if (sorted) {
      if (i > 0 && name == files[i - 1]) {
        if (name != "-") out.emplace_back(i, run);
        continue;
      }
      run = i;
    }
    if (name == "-") continue;
    if (!sorted) {
      auto [named, new_name] = by_name.emplace(name, i);
      if (!new_name) {
        out.emplace_back(i, named->second);
        continue;
      }
    }
    struct stat st;
    if (!by_inode || stat(std::string(name).c_str(), &st) != 0) continue;
    auto [id, new_id] = by_id.emplace(std::make_pair(st.st_dev, st.st_ino), i);
    if (!new_id) out.emplace_back(i, id->second);
  }
  return out;
}

namespace {

// A shard's name split: PREFIX-NNNNN-of-MMMMM[SUFFIX], or false.
bool SplitShardName(std::string_view path, std::string_view& prefix, std::string_view& total,
                    std::string_view& suffix) {
  const size_t slash = path.rfind('/');
  const size_t base = slash == std::string_view::npos ? 0 : slash + 1;
  auto digits = [&](size_t from) {
    size_t to = from;
    while (to < path.size() && path[to] >= '0' && path[to] <= '9') ++to;
    return to - from;
  };
  for (size_t of = path.rfind("-of-"); of != std::string_view::npos && of > base;
       of = of == 0 ? std::string_view::npos : path.rfind("-of-", of - 1)) {
    const size_t m = digits(of + 4);
    if (m == 0) continue;
    size_t dash = of;
    while (dash > base && path[dash - 1] >= '0' && path[dash - 1] <= '9') --dash;
    if (dash == of || dash <= base || path[dash - 1] != '-') continue;
    prefix = path.substr(0, dash - 1);
    total = path.substr(of + 4, m);
    suffix = path.substr(of + 4 + m);
    return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> ShardSetWarnings(const StringList& files) {
  // Per prefix, its sets in the order first seen: "of" count and suffix.
  std::map<std::string_view, std::vector<std::pair<std::string_view, std::string_view>>> sets;
  std::vector<std::string_view> order;
  for (std::string_view name : files) {
    std::string_view prefix, total, suffix;
    if (!SplitShardName(name, prefix, total, suffix)) continue;
    auto [it, added] = sets.try_emplace(prefix);
    if (added) order.push_back(prefix);
    auto& seen = it->second;
    if (std::none_of(seen.begin(), seen.end(), [&](const auto& s) { return s.first == total; })) {
      seen.emplace_back(total, suffix);
    }
  }
  std::vector<std::string> out;
  for (std::string_view prefix : order) {
    const auto& seen = sets[prefix];
    if (seen.size() < 2) continue;
    std::string names;
    for (size_t i = 0; i < seen.size(); ++i) {
      names += fmt::format("{}{}-*-of-{}{}",
                           i == 0                 ? ""
                           : i + 1 == seen.size() ? " and "
                                                  : ", ",
                           prefix, seen[i].first, seen[i].second);
    }
    out.push_back(fmt::format(
        "{}: {} sets of shards of {}; the dataset is counted {}", names,
        seen.size() == 2 ? std::string("two") : fmt::format("{}", seen.size()), prefix,
        seen.size() == 2 ? std::string("twice") : fmt::format("{} times", seen.size())));
  }
  return out;
}

Result<FileArguments> ExpandFileArguments(std::span<const std::string> patterns) {
  FileArguments out;
  TFDIST_ASSIGN_OR_RETURN(StringList files, ExpandFilePatterns(patterns));
  // One pattern's matches are distinct names of one listing; several
  // patterns may name one file twice, also by different spellings.
  const std::vector<std::pair<size_t, size_t>> same = SameFiles(files, patterns.size() > 1);
  out.warnings = ShardSetWarnings(files);
  if (same.empty()) {
    out.files = std::move(files);
    return out;
  }
  // Named one by one up to a few; the rest counted.
  constexpr size_t kNamed = 10;
  std::vector<bool> drop(files.size(), false);
  for (size_t k = 0; k < same.size(); ++k) {
    const auto [i, first] = same[k];
    drop[i] = true;
    if (k >= kNamed) continue;
    if (files[i] == files[first]) {
      out.warnings.push_back(
          fmt::format("{} matched by more than one pattern; read once", files[i]));
    } else {
      out.warnings.push_back(
          fmt::format("{} matched by more than one pattern (the same file as {}); read once",
                      files[i], files[first]));
    }
  }
  if (same.size() > kNamed) {
    out.warnings.push_back(fmt::format(
        "{} more files matched by more than one pattern; each read once", same.size() - kNamed));
  }
  StringList::Builder kept;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!drop[i]) kept.Add(files[i]);
  }
  out.files = std::move(kept).Finish();
  return out;
}

uint64_t FoldersListedForTesting() { return folders_listed.load(std::memory_order_relaxed); }

Result<StringList> ExpandFilePatterns(std::span<const std::string> patterns,
                                      const FolderListings& listings, MatchRule rule) {
  Result<StringList> list = Expand(patterns, listings, rule);
  // A large glob's transient memory (its matches, copied and sorted: tens of
  // megabytes for a million names) goes back to the system now. The process
  // would keep it otherwise: main() raises glibc's trim threshold for the
  // readers, and what comes next (a directory index, the pipeline) would
  // hold its own memory on top of it.
  if (list.ok() && list->size() >= kTrimAfter) malloc_trim(0);
  return list;
}

std::optional<uint64_t> FileSize(const std::string& name) {
  if (IsRemote(name)) {
    // What the listing saw: no request.
    Result<ObjectInfo> info = StatObject(name);
    return info.ok() ? std::optional<uint64_t>(info->size) : std::nullopt;
  }
  struct stat st;
  if (name == "-" || stat(name.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<uint64_t>(st.st_size);
}

std::vector<int> SplitByBytes(std::span<const uint64_t> sizes, int parts) {
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  std::vector<uint64_t> load(static_cast<size_t>(std::max(parts, 1)), 0);
  std::vector<int> part(sizes.size(), 0);
  for (size_t i : order) {
    const auto p = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    part[i] = static_cast<int>(p);
    load[p] += sizes[i];
  }
  return part;
}

}  // namespace tfdist::io
