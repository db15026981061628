// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// RecordWriter: writes TFRecord files, optionally compressed, atomically.

#ifndef TFDIST_IO_RECORD_WRITER_H_
#define TFDIST_IO_RECORD_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/io/atomic_file.h"
#include "tfdist/io/byte_stream.h"

namespace tfdist::io {

// Appends one framed record (header, payload, footer, with masked CRCs).
void AppendRecord(std::string* out, std::string_view payload);

struct RecordWriterOptions {
  // Default: kNone. REQUIRES: not kAuto.
  Compression compression = Compression::kNone;
  // zlib level, -1 (zlib's default, 6) to 9. Default: -1.
  int compression_level = -1;
  // Replace an existing file. Default: false (InvalidArgument if it exists).
  bool overwrite = false;
  // fsync the file before it is renamed into place. Default: true.
  bool sync = true;
};

// Writes records to a file. The file is written under a temporary name and
// appears at `path` only when Close() succeeds; a writer destroyed without a
// successful Close() (an error, an interrupt) removes its temporary file,
// unless its file was handed over (TakeFile).
// Not thread-safe.
class RecordWriter {
 public:
  static Result<std::unique_ptr<RecordWriter>> Open(std::string path,
                                                    const RecordWriterOptions& options);
  // Writes into `file`, made by the caller (OutputSet::Create). `options`'s
  // overwrite is the caller's to check.
  static Result<std::unique_ptr<RecordWriter>> Open(std::unique_ptr<AtomicFile> file,
                                                    const RecordWriterOptions& options);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  Status Write(std::string_view record);

  // Flushes, fsyncs and closes the temporary file, without renaming it yet.
  Status Finish();

  // Hands over the finished file, for a command that writes several files
  // and commits them together (OutputSet). REQUIRES: Finish() succeeded;
  // called once.
  std::unique_ptr<AtomicFile> TakeFile() { return std::move(file_); }

  // Finish(), then renames the file into place.
  Status Close();

  uint64_t records_written() const { return records_; }
  // Framed bytes written, before compression.
  uint64_t bytes_written() const { return bytes_; }

 private:
  RecordWriter(std::unique_ptr<AtomicFile> file, std::unique_ptr<ByteSink> sink)
      : file_(std::move(file)), sink_(std::move(sink)) {}

  std::unique_ptr<AtomicFile> file_;
  std::unique_ptr<ByteSink> sink_;
  uint64_t records_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace tfdist::io

#endif  // TFDIST_IO_RECORD_WRITER_H_
