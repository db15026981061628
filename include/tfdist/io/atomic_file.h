// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A file written atomically: under a temporary name, renamed into place.
// (Several files that replace an old set together: output_set.h.)

#ifndef TFDIST_IO_ATOMIC_FILE_H_
#define TFDIST_IO_ATOMIC_FILE_H_

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/io/byte_stream.h"

namespace tfdist::io {

// A file written under a temporary name in the destination folder and renamed
// into place by Commit(): readers never see a partial file, and a file that is
// never committed (an error, an interrupt) is removed by the destructor.
class AtomicFile {
 public:
  // Error: InvalidArgument when `path` exists and !overwrite ("PATH: already
  // exists", advice Remedy::kOverwrite), or when its folder is missing or
  // cannot be written.
  static Result<std::unique_ptr<AtomicFile>> Create(std::string path, bool overwrite);
  // The same, staged at `temp_path` (on the file system of `path`), which
  // must not exist. For OutputSet, which renames it itself.
  static Result<std::unique_ptr<AtomicFile>> CreateAt(std::string path, std::string temp_path);
  // A file another process wrote and closed at `temp_path`, now this
  // one's: removed by the destructor unless committed or released.
  static std::unique_ptr<AtomicFile> Adopt(std::string path, std::string temp_path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // A sink that writes the temporary file; Finish() flushes it and, when
  // `sync`, fsyncs it. REQUIRES: called once, and the sink destroyed before
  // this object.
  std::unique_ptr<ByteSink> TakeSink(bool sync = true);

  // Closes the temporary file. REQUIRES: the sink was finished and destroyed.
  Status CloseFile();

  // Closes the temporary file if still open, then renames it to its final path.
  // REQUIRES: the sink was finished and destroyed.
  Status Commit();

  // The temporary name is someone else's now (OutputSet renamed it): the
  // destructor leaves it. REQUIRES: closed.
  void Release();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  AtomicFile(std::string path, std::string temp_path, int fd)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {}
  std::string path_;
  std::string temp_path_;
  int fd_;
  bool committed_ = false;
};

// Checks, before anything is written, that files can be created at `paths`:
// none exists (unless `overwrite`), and their folders exist and can be
// written in.
// Error: InvalidArgument "PATH: already exists" (advice Remedy::kOverwrite),
// "DIR: the output folder does not exist", "DIR: is not a folder" or "DIR:
// cannot write in the output folder".
Status CheckNewFiles(std::span<const std::string> paths, bool overwrite);

}  // namespace tfdist::io

#endif  // TFDIST_IO_ATOMIC_FILE_H_
