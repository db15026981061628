// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The local file system as a Storage: readdir, stat and pread.

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "fs_util.h"
#include "storage_stores.h"
#include "tfdist/base/interrupt.h"

namespace tfdist::io {
namespace {

constexpr size_t kPageSize = 1000;

class LocalObject final : public RandomAccessObject {
 public:
  LocalObject(ObjectInfo info, int fd) : info_(std::move(info)), fd_(fd) {}
  ~LocalObject() override { close(fd_); }

  Status ReadAt(uint64_t offset, std::span<char> dst) override {
    size_t done = 0;
    while (done < dst.size()) {
      const ssize_t n =
          pread(fd_, dst.data() + done, dst.size() - done, static_cast<off_t>(offset + done));
      if (n == 0) {
        return Status::OutOfRange(fmt::format("{}: ends at byte {}, before byte {}", info_.name,
                                              offset + done, offset + dst.size()));
      }
      if (n < 0) {
        if (errno == EINTR) {
          if (Interrupted()) return Status::Interrupted();
          continue;
        }
        return ErrnoError(errno, StatusCode::kNotFound,
                          fmt::format("{}: read failed at byte {}", info_.name, offset + done));
      }
      done += static_cast<size_t>(n);
    }
    return Status::OK();
  }

  const ObjectInfo& info() const override { return info_; }

 private:
  ObjectInfo info_;
  int fd_;
};

class LocalStorage final : public Storage {
 public:
  // The regular files under `prefix`'s folder whose paths start with it, the
  // folders below followed.
  Status List(std::string_view prefix,
              const std::function<Status(std::span<const ObjectInfo>)>& page) override {
    const size_t slash = prefix.rfind('/');
    const std::string dir =
        slash == std::string_view::npos ? "" : std::string(prefix.substr(0, slash + 1));
    std::vector<ObjectInfo> found;
    TFDIST_RETURN_IF_ERROR(Walk(dir, prefix, found));
    std::sort(found.begin(), found.end(),
              [](const ObjectInfo& a, const ObjectInfo& b) { return a.name < b.name; });
    for (size_t at = 0; at < found.size(); at += kPageSize) {
      const size_t n = std::min(kPageSize, found.size() - at);
      TFDIST_RETURN_IF_ERROR(page(std::span<const ObjectInfo>(found).subspan(at, n)));
    }
    return Status::OK();
  }

  Result<ObjectInfo> Stat(std::string_view name) override {
    const std::string path(name);
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
      return ErrnoError(errno, StatusCode::kNotFound, fmt::format("{}: cannot stat", path));
    }
    if (S_ISDIR(st.st_mode)) {
      return Status::NotFound(fmt::format("{}: is a directory, not a TFRecord file", path));
    }
    return ObjectInfo{path, static_cast<uint64_t>(st.st_size), ""};
  }

  Result<std::unique_ptr<RandomAccessObject>> Open(const ObjectInfo& info) override {
    const int fd = open(info.name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return ErrnoError(errno, StatusCode::kNotFound, fmt::format("{}: cannot open", info.name));
    }
    return std::unique_ptr<RandomAccessObject>(std::make_unique<LocalObject>(info, fd));
  }

 private:
  // Adds the files below `dir` ("" or ending in '/') whose paths start
  // with `prefix` (or which `prefix` starts with, for folders).
  static Status Walk(const std::string& dir, std::string_view prefix,
                     std::vector<ObjectInfo>& found) {
    DIR* d = opendir(dir.empty() ? "." : dir.c_str());
    if (d == nullptr) {
      if (errno == ENOENT || errno == ENOTDIR) return Status::OK();
      return ErrnoError(errno, StatusCode::kNotFound,
                        fmt::format("{}: cannot list the folder", dir.empty() ? "." : dir));
    }
    std::vector<std::string> folders;
    for (;;) {
      errno = 0;
      const dirent* e = readdir(d);
      if (e == nullptr) break;
      const std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string path = dir + std::string(name);
      struct stat st;
      if (stat(path.c_str(), &st) != 0) continue;  // gone, or a dangling link
      if (S_ISDIR(st.st_mode)) {
        path += '/';
        const size_t n = std::min(path.size(), prefix.size());
        if (path.compare(0, n, prefix, 0, n) == 0) folders.push_back(std::move(path));
      } else if (S_ISREG(st.st_mode) && path.starts_with(prefix)) {
        found.push_back(ObjectInfo{std::move(path), static_cast<uint64_t>(st.st_size), ""});
      }
    }
    const int err = errno;
    closedir(d);
    if (err != 0) {
      return ErrnoError(err, StatusCode::kNotFound,
                        fmt::format("{}: cannot list the folder", dir.empty() ? "." : dir));
    }
    for (const std::string& folder : folders) TFDIST_RETURN_IF_ERROR(Walk(folder, prefix, found));
    return Status::OK();
  }
};

}  // namespace

std::unique_ptr<Storage> NewLocalStorage() { return std::make_unique<LocalStorage>(); }

}  // namespace tfdist::io
