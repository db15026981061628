// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Where bytes live: local files, or objects in S3 (s3://BUCKET/KEY) and
// Cloud Storage (gs://BUCKET/KEY). One interface, as TensorFlow's FileSystem:
// list, stat (size and version) and open for positioned reads, with a local
// implementation and one per store. Everything above this layer names a
// file by one string, a path or a URL, and never asks where its bytes come
// from; only the storage_*.cc files of io speak HTTP, TLS or a store's
// protocol (the module check enforces it).

#ifndef TFDIST_IO_STORAGE_H_
#define TFDIST_IO_STORAGE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/io/byte_stream.h"

namespace tfdist::io {

enum class Scheme {
  kLocal,  // a path of the local file system ("-" is standard input)
  kS3,     // s3://BUCKET/KEY
  kGcs,    // gs://BUCKET/KEY
};

// A file's name split by its scheme.
struct Location {
  Scheme scheme = Scheme::kLocal;
  std::string bucket;  // empty for kLocal
  std::string key;     // the object's key (may be empty: the whole bucket); the path for kLocal
  std::string text;    // the name as given

  // "s3://b/k", "gs://b/k", or the path.
  std::string Url() const;
};

// Whether `name` is an object-store URL tfdist reads ("s3://", "gs://").
// Cheap; no validation.
bool IsRemote(std::string_view name);

// Splits `name`. A name with "SCHEME://" is a URL: s3 and gs are read; any
// other scheme (hdfs://, az://, http://, file://) is InvalidArgument naming
// the supported ones. A URL needs a bucket ("s3://" alone, "s3:///k" are
// InvalidArgument). Anything else is a local path, unchanged.
Result<Location> ParseLocation(std::string_view name);

// InvalidArgument when `name` is a URL (or an unsupported scheme): outputs are
// local files and folders. `what` names the output ("the output folder").
Status CheckLocalOutput(std::string_view name, std::string_view what);

// An object or file as a listing or a stat sees it.
struct ObjectInfo {
  std::string name;     // the full name: a URL, or the path
  uint64_t size = 0;    // bytes
  std::string version;  // the store's version of these bytes: S3's ETag (with
                        // its quotes), Cloud Storage's generation; empty for
                        // a local file
};

// An object opened for positioned reads, pinned to the version it was opened
// at: a read of another version (the object was replaced) is an error, never
// a mix of two versions. Thread-safe: several ranges may be read at once.
class RandomAccessObject {
 public:
  virtual ~RandomAccessObject() = default;

  // Reads exactly dst.size() bytes at `offset` into dst, retried as the
  // retry policy says (RemoteOptions), resumed at the exact byte after a cut
  // connection.
  // Error: OutOfRange when the object ends before offset + dst.size() (the
  // bytes up to its end are not returned); DataLoss naming the URL when the
  // object was replaced (its version differs from info().version);
  // NotFound for 404, PermissionDenied for 401 and 403 (exit 3 both; naming where the credentials
  // came from, never their value); Unavailable when every attempt failed or the time ran out
  // (naming the URL, the byte range, the HTTP status, the server's error
  // code and message); Cancelled when interrupted.
  virtual Status ReadAt(uint64_t offset, std::span<char> dst) = 0;

  // ReadAt, started now; `done` is called once with its outcome, from any
  // thread (a remote store's engine thread). dst must stay valid until then.
  // By default ReadAt, then `done`, on the calling thread.
  virtual void ReadAtAsync(uint64_t offset, std::span<char> dst, std::function<void(Status)> done) {
    done(ReadAt(offset, dst));
  }

  virtual const ObjectInfo& info() const = 0;
};

// One store, or the local file system.
class Storage {
 public:
  virtual ~Storage() = default;

  // Calls `page` with the objects whose names start with `prefix` (a full
  // name: "s3://b/train-", "gs://b/", "data/part-"), in byte order of their
  // names, a page at a time; stops at the first error `page` returns.
  // A bucket that does not exist is NotFound.
  virtual Status List(std::string_view prefix,
                      const std::function<Status(std::span<const ObjectInfo>)>& page) = 0;

  // The object `name` now. Error: NotFound (missing, or 403 as ReadAt).
  virtual Result<ObjectInfo> Stat(std::string_view name) = 0;

  // Opens `info` (from Stat or List) for positioned reads of that version.
  virtual Result<std::unique_ptr<RandomAccessObject>> Open(const ObjectInfo& info) = 0;
};

// The storage of a scheme, one per process (thread-safe).
Storage& StorageFor(Scheme scheme);

// The object `name` as a listing of this process last saw it (a glob's
// expansion lists size and version of every match), else Stat: opening the
// matches of a glob costs no request per object.
Result<ObjectInfo> StatObject(std::string_view name);

// A sequential source over `object` from byte `offset` on, reading ahead
// within the process's read-ahead (RemoteOptions): a large object by several
// concurrent ranges. name() is the object's URL; size() what lies past
// `offset`. Read errors are ReadAt's.
std::unique_ptr<ByteSource> NewObjectSource(std::unique_ptr<RandomAccessObject> object,
                                            uint64_t offset);

// How remote reads behave, for the whole process (the CLI sets it once,
// before any read). Memory: the bytes a process buffers from object stores
// stay within read_ahead_bytes, plus one range (range_bytes) per source open
// at once: a source may always ask one range, so that no reader waits for
// another to finish; with N sources open the bound is
// read_ahead_bytes + N * range_bytes. A range's bytes are held from when it
// is asked until the reader took them (or, for a source closed early,
// until its request ends).
struct RemoteOptions {
  // Attempts of one request (the first included) before it fails, and the
  // time one request may take with all its attempts and backoff.
  int max_attempts = 10;
  double max_seconds = 300;
  // A connection that does not connect, or a response that sends no byte,
  // for this long is cut and retried.
  double connect_timeout_seconds = 10;
  double stall_timeout_seconds = 30;
  // The bytes of object data read ahead of the readers, all objects
  // together; a large object is read by several concurrent ranges of
  // range_bytes each, and many small objects concurrently.
  uint64_t read_ahead_bytes = uint64_t{64} << 20;
  uint64_t range_bytes = uint64_t{8} << 20;
  // S3: send no signature (public buckets); the AWS CLI's --no-sign-request.
  bool no_sign_request = false;
};
void SetRemoteOptions(const RemoteOptions& options);
const RemoteOptions& GetRemoteOptions();

// A hint: `names` (URLs; local paths are ignored) will be opened for
// sequential reading from their first byte, in this order. Their first
// ranges are fetched ahead, as many at once as half the read-ahead allows, so
// that a reader going from one small object to the next does not wait for
// each in turn (NewObjectSource at offset 0 of the same version takes the
// range). Replaces the previous hint; the ranges of the previous one that
// no source took are let go (their bytes held until then).
void PrefetchObjects(std::span<const std::string> names);

// What the stores made since the last call found worth a warning when they
// read their configuration (S3_VERIFY_SSL=0 on an https:// endpoint), each
// once, oldest first; the list is emptied. The CLI prints them
// ("tfdist: warning: ...") and puts them in its JSON "warnings".
std::vector<std::string> TakeRemoteWarnings();

// For tests: replaces the storage of `scheme` (nullptr restores the real
// one). Not thread-safe; call before any read.
void SetStorageForTesting(Scheme scheme, std::unique_ptr<Storage> storage);

}  // namespace tfdist::io

#endif  // TFDIST_IO_STORAGE_H_
