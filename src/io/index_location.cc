// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The index folder of a data folder: the one named, or the cache's.

#include "tfdist/io/index_location.h"

#include <fmt/format.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "fs_util.h"
#include "tfdist/io/directory_index.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/storage.h"

namespace tfdist::io {
namespace {

struct IndexPlaces {
  std::mutex mu;
  std::string explicit_folder;
  std::unordered_map<std::string, std::string> resolved;  // data folder -> index folder
};

IndexPlaces& TheLocation() {
  static IndexPlaces* location = new IndexPlaces();
  return *location;
}

// Creates `folder` and its missing parents.
Status MakeFolders(const std::string& folder) {
  for (size_t at = 1; at <= folder.size(); ++at) {
    if (at != folder.size() && folder[at] != '/') continue;
    const std::string part = folder.substr(0, at);
    if (mkdir(part.c_str(), 0755) == 0 || errno == EEXIST) continue;
    return ErrnoError(errno, StatusCode::kInvalidArgument,
                      fmt::format("{}: cannot create the index folder", part));
  }
  struct stat st;
  if (stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(fmt::format("{}: is not a folder", folder));
  }
  return Status::OK();
}

// The cache's folder for the objects under `url` ("s3://b/d"):
// "/s3:/b/d", each part of the key a folder; an empty part, "." and ".."
// spelled with '%' escapes ("%", "%2E", "%2E%2E", '%' itself "%25"), so that
// no key reaches out of the cache or onto another key's folder.
std::string CacheKeyOf(std::string_view url) {
  const size_t scheme = url.find("://");
  std::string key = fmt::format("/{}:", url.substr(0, scheme));
  std::string_view rest = url.substr(scheme + 3);
  for (;;) {
    const size_t slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    key += '/';
    if (part.empty()) {
      key += '%';
    } else if (part == ".") {
      key += "%2E";
    } else if (part == "..") {
      key += "%2E%2E";
    } else {
      for (char c : part) {
        if (c == '%') {
          key += "%25";
        } else {
          key += c;
        }
      }
    }
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return key;
}

}  // namespace

void SetIndexFolder(std::string folder) {
  IndexPlaces& l = TheLocation();
  std::lock_guard<std::mutex> lock(l.mu);
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  l.explicit_folder = std::move(folder);
  l.resolved.clear();
}

std::string ExplicitIndexFolder() {
  IndexPlaces& l = TheLocation();
  std::lock_guard<std::mutex> lock(l.mu);
  return l.explicit_folder;
}

std::string IndexCacheRoot() {
  const char* cache = getenv("XDG_CACHE_HOME");
  if (cache != nullptr && cache[0] == '/') return JoinPath(cache, "tfdist/index");
  const char* home = getenv("HOME");
  if (home != nullptr && home[0] != '\0') return JoinPath(home, ".cache/tfdist/index");
  return "";
}

std::string IndexFolderFor(std::string_view data_dir) {
  IndexPlaces& l = TheLocation();
  std::lock_guard<std::mutex> lock(l.mu);
  if (!l.explicit_folder.empty()) return l.explicit_folder;
  const std::string dir(data_dir.empty() ? "." : data_dir);
  if (auto it = l.resolved.find(dir); it != l.resolved.end()) return it->second;
  std::string folder;
  char resolved[PATH_MAX];
  if (IsRemote(dir)) {
    if (const std::string root = IndexCacheRoot(); !root.empty()) folder = root + CacheKeyOf(dir);
  } else if (const std::string root = IndexCacheRoot();
             !root.empty() && realpath(dir.c_str(), resolved)) {
    folder = root + (std::string_view(resolved) == "/" ? "" : resolved);
  }
  l.resolved.emplace(dir, folder);
  return folder;
}

Result<std::string> MakeIndexFolderFor(std::string_view data_dir) {
  std::string folder = IndexFolderFor(data_dir);
  if (folder.empty()) {
    if (IndexCacheRoot().empty()) {
      return Status::InvalidArgument(
                 "no folder for index files: neither XDG_CACHE_HOME nor HOME is set")
          .WithAdvice(Remedy::kIndexFolder);
    }
    return Status::InvalidArgument(fmt::format("{}: cannot open the folder: {}",
                                               data_dir.empty() ? "." : data_dir,
                                               std::strerror(ENOENT)));
  }
  TFDIST_RETURN_IF_ERROR(MakeFolders(folder));
  return folder;
}

bool IsIndexFileName(std::string_view name) {
  return name == kDirectoryIndexName ||
         (name.starts_with(kDirectoryIndexName) && name.find(".tmp-") != std::string_view::npos) ||
         name.ends_with(".idx") || name.ends_with(std::string(".idx") + kIndexStampSuffix);
}

Status CheckNoIndexFiles(std::string_view pattern, std::span<const std::string_view> matches) {
  for (const std::string_view path : matches) {
    const std::string_view name = BaseName(path);
    if (!IsIndexFileName(name)) continue;
    const std::string where = DirName(path).empty() ? "." : std::string(DirName(path));
    if (!name.ends_with(".idx") && !name.ends_with(kIndexStampSuffix)) {
      return Status::InvalidArgument(
                 fmt::format("'{}' matches {}, tfdist's directory index, which is not TFRecord "
                             "data (TensorFlow's list_files would match it too)",
                             pattern, path))
          .WithAdvice(Remedy::kMoveIndexes, where);
    }
    // NAME.idx is an index when NAME is a file beside it; NAME.idx.stamp
    // its stamp.
    const bool stamp = !name.ends_with(".idx");
    const std::string_view data =
        path.substr(0, path.size() - 4 - (stamp ? sizeof kIndexStampSuffix - 1 : 0));
    struct stat st;
    const bool beside = std::binary_search(matches.begin(), matches.end(), data) ||
                        (stat(std::string(data).c_str(), &st) == 0 && S_ISREG(st.st_mode));
    if (!beside) continue;
    return Status::InvalidArgument(
               fmt::format("'{}' matches {}, the record index{} of {}, which is not TFRecord "
                           "data (TensorFlow's list_files would match it too)",
                           pattern, path, stamp ? "'s stamp" : "", data))
        .WithAdvice(Remedy::kMoveIndexes, where);
  }
  return Status::OK();
}

}  // namespace tfdist::io
