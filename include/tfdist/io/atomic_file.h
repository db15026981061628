// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Files written atomically: one file (AtomicFile), or several that appear
// together or not at all (AtomicFileSet).

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

// Several files that appear together or not at all: each is written as an
// AtomicFile and handed to the set, and Commit() renames them all into
// place, or none. A file never committed is removed with the set.
//
// Commit() first removes the files under the final names (there are some
// only when overwriting), so that the folders never hold a mix of old and
// new files, nor part of the old set. A rename that fails, or an interrupt
// (interrupt.h) before the last one, removes the files already renamed.
// While it renames, the final names are registered temporary files: a
// second signal, which forces the exit, removes the files already renamed
// along with the temporary files still waiting.
//
// Not thread-safe.
class AtomicFileSet {
 public:
  AtomicFileSet() = default;
  AtomicFileSet(const AtomicFileSet&) = delete;
  AtomicFileSet& operator=(const AtomicFileSet&) = delete;

  // Adds a file whose contents are complete; files are renamed in the order
  // added. REQUIRES: its sink was finished and destroyed; no file of the set
  // has the same path.
  void Add(std::unique_ptr<AtomicFile> file);

  size_t size() const { return files_.size(); }

  // Renames every file into place; with `sync`, then fsyncs their folders.
  // REQUIRES: not committed yet.
  // Error: Cancelled when interrupted (nothing is left renamed); Internal
  // when a rename fails (the files renamed before it are removed).
  Status Commit(bool sync);

 private:
  std::vector<std::unique_ptr<AtomicFile>> files_;
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
