// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// RecordWriter: framing plus an optional deflate stage over an atomic file.

#include "tfdist/io/record_writer.h"

#include "record_format.h"

namespace tfdist::io {

namespace {

void EncodeHeader(char* header, uint64_t length) {
  EncodeFixed64(header, length);
  EncodeFixed32(header + 8, crc32c::Mask(crc32c::Value(header, sizeof(uint64_t))));
}

void EncodeFooter(char* footer, std::string_view payload) {
  EncodeFixed32(footer, crc32c::Mask(crc32c::Value(payload.data(), payload.size())));
}

}  // namespace

void AppendRecord(std::string* out, std::string_view payload) {
  char header[kRecordHeaderSize];
  EncodeHeader(header, payload.size());
  char footer[kRecordFooterSize];
  EncodeFooter(footer, payload);
  out->append(header, sizeof header);
  out->append(payload);
  out->append(footer, sizeof footer);
}

Result<std::unique_ptr<RecordWriter>> RecordWriter::Open(std::string path,
                                                         const RecordWriterOptions& options) {
  if (options.compression == Compression::kAuto) {
    return Status::InvalidArgument("a writer needs an explicit compression, not auto");
  }
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file,
                          AtomicFile::Create(std::move(path), options.overwrite));
  return Open(std::move(file), options);
}

Result<std::unique_ptr<RecordWriter>> RecordWriter::Open(std::unique_ptr<AtomicFile> file,
                                                         const RecordWriterOptions& options) {
  if (options.compression == Compression::kAuto) {
    return Status::InvalidArgument("a writer needs an explicit compression, not auto");
  }
  std::unique_ptr<ByteSink> sink = file->TakeSink(options.sync);
  if (options.compression != Compression::kNone) {
    sink = NewDeflatingSink(std::move(sink), options.compression, options.compression_level);
  }
  return std::unique_ptr<RecordWriter>(new RecordWriter(std::move(file), std::move(sink)));
}

RecordWriter::~RecordWriter() {
  sink_.reset();  // before the file it writes to
}

Status RecordWriter::Write(std::string_view record) {
  if (!sink_) return Status::FailedPrecondition("write after Close()");
  // Three writes rather than one framed copy: payloads can be large.
  char header[kRecordHeaderSize];
  EncodeHeader(header, record.size());
  char footer[kRecordFooterSize];
  EncodeFooter(footer, record);
  TFDIST_RETURN_IF_ERROR(sink_->Write({header, sizeof header}));
  TFDIST_RETURN_IF_ERROR(sink_->Write(record));
  TFDIST_RETURN_IF_ERROR(sink_->Write({footer, sizeof footer}));
  ++records_;
  bytes_ += kRecordHeaderSize + record.size() + kRecordFooterSize;
  return Status::OK();
}

Status RecordWriter::Finish() {
  if (!sink_) return Status::FailedPrecondition("Finish() called twice");
  Status s = sink_->Finish();
  sink_.reset();
  TFDIST_RETURN_IF_ERROR(s);
  return file_->CloseFile();
}

Status RecordWriter::Close() {
  TFDIST_RETURN_IF_ERROR(Finish());
  return file_->Commit();
}

}  // namespace tfdist::io
