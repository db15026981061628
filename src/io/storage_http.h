// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The HTTP engine under the object stores (storage_s3.cc, storage_gcs.cc):
// libcurl, connections reused, requests retried with backoff and jitter,
// ranged GETs resumed at the exact byte. A store says how to address and
// sign a request and how to read its errors (HttpStore); the engine does the
// rest. Private to io.

#ifndef TFDIST_IO_STORAGE_HTTP_H_
#define TFDIST_IO_STORAGE_HTTP_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"

namespace tfdist::io::http {

struct Request {
  std::string method = "GET";  // GET, HEAD or POST
  std::string url;             // absolute: scheme, host, path, query (encoded)
  std::vector<std::pair<std::string, std::string>> headers;  // sent as given
  std::string body;                                          // POST only
  // Bytes [begin, end) of the object ("Range: bytes=begin-(end-1)"); the
  // engine sets the header, and moves begin on when it resumes.
  std::optional<std::pair<uint64_t, uint64_t>> range;
  // Where messages say the request went: the object's URL ("s3://b/k"),
  // never the signed one.
  std::string shown;
  // Statuses >= 300 that Fetch returns as a success (304); 2xx always are.
  std::vector<long> accept;
};

struct Response {
  long status = 0;                                           // HTTP status
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;  // the whole body (Fetch), or an error's body (ReadRange)

  // The first header `name` (lower case), or nullopt.
  std::optional<std::string_view> Header(std::string_view name) const;
};

// What a store contributes to each request.
class HttpStore {
 public:
  virtual ~HttpStore() = default;

  // Adds what authorises `request` (a signature, a token), before each
  // attempt: signatures carry a time, tokens expire. An error here (no
  // credentials can be had) ends the request without retries.
  virtual Status Authorize(Request& request) = 0;

  // The server's own error code and message from an error response
  // ("NoSuchKey", "The specified key does not exist."); empty when the body
  // has none.
  virtual std::pair<std::string, std::string> ParseError(const Response& response) const = 0;

  // Where the credentials came from, for messages of 401/403/404: "the
  // environment (AWS_ACCESS_KEY_ID)", "profile 'ci' of /home/u/.aws/credentials",
  // "anonymous (no signature)". Never a credential's value.
  virtual std::string CredentialSource() const = 0;

  // TLS: the peer's certificate and name are verified against the system's
  // store, or the bundle CaFile() names (a private CA: AWS_CA_BUNDLE).
  // VerifyTls() false turns the check off (S3_VERIFY_SSL=0, which the store
  // allows only for an endpoint the user named, and warns about).
  virtual std::string CaFile() const { return {}; }
  virtual bool VerifyTls() const { return true; }
};

// Statuses worth another attempt: 408, 429, 500, 502, 503, 504 (and
// timeouts, resets, cut connections, which have no status).
bool IsRetryable(long status);

// Performs requests with the process's RemoteOptions. Thread-safe; one per
// process (a curl multi handle on a thread of its own: connections are
// pooled and reused, and many transfers run at once).
class Client {
 public:
  static Client& Get();

  // Performs `request` and returns the response with its whole body (a
  // listing page, metadata, a token). Retries IsRetryable statuses and
  // transport failures. A final status >= 300 is an error:
  //  * 404 -> NotFound, 401/403 -> PermissionDenied, both naming store.CredentialSource();
  //    neither retried;
  //  * other 4xx -> InvalidArgument;
  //  * every attempt failed -> Unavailable: "GET s3://b/k [bytes B-E]
  //    failed after N attempts in S s: HTTP 503 SlowDown: Please reduce
  //    your request rate." (or the transport error: "Couldn't connect to
  //    server (...)"); the time ran out (the next backoff would pass
  //    max_seconds) -> Unavailable: "GET s3://b/k failed: no success within
  //    the time limit of 300 s (N attempts in S s); last: ...". Backoff:
  //    uniform in [0, min(10 s, 0.1 s * 2^(attempt-1))], at least a 429's
  //    or 503's Retry-After (up to 10 s);
  //  * 412 (an If-Match or generation condition failed) -> DataLoss: the
  //    object was replaced;
  //  * Cancelled when interrupted (a signal, tfdist/base/interrupt.h): a
  //    transfer in progress is ended within a fraction of a second.
  // request.accept lets a store take a status as success (304).
  // REQUIRES: not called on the engine's thread (from a `done` or `check`).
  Result<Response> Fetch(HttpStore& store, Request request);

  // A ranged GET of [offset, offset + dst.size()) into dst, exactly: a
  // connection cut mid-body is resumed at the first byte not yet received,
  // so nothing is repeated or skipped. `check` sees each 2xx response's
  // status and headers before its body is taken (version pinning: an ETag or
  // generation that differs is its error, returned as is, not retried); it
  // runs on the engine's thread and must not block. A 206 whose
  // Content-Range starts before the first byte asked has the extra bytes
  // skipped, a 200 (the whole object) has the bytes before `offset`
  // skipped; one that starts past it is retried; one that ends before the
  // range and the object do is continued (a server that caps ranges). A
  // 416, or a body that ends with the object before dst is full, is
  // OutOfRange (the bytes received are in dst).
  // Errors as Fetch. request.range is set from offset and dst.
  Status ReadRange(HttpStore& store, Request request, uint64_t offset, std::span<char> dst,
                   const std::function<Status(const Response& head)>& check);

  // ReadRange, started now and finished on the engine's thread; `done` is
  // called there, once, with the outcome (or on the calling thread, when
  // the request could not be started). For read-ahead. `store` must outlive
  // the call to `done`; `done` must not block (it may start other reads).
  // Retries wait on a thread of the engine's, so a store's Authorize may
  // itself Fetch (a token).
  void ReadRangeAsync(HttpStore& store, Request request, uint64_t offset, std::span<char> dst,
                      std::function<Status(const Response& head)> check,
                      std::function<void(Status)> done);

 private:
  Client();
  ~Client();
  struct Impl;
  Impl* impl_;
};

// Percent-encodes `text` as RFC 3986 unreserved characters allow
// (A-Z a-z 0-9 - . _ ~); '/' kept when `keep_slash`.
std::string UriEncode(std::string_view text, bool keep_slash);

// `url` with the user and password of its authority ("http://user:pw@host")
// replaced by "***", for every message that shows an endpoint: a secret
// given in an endpoint variable is never printed.
std::string RedactUserinfo(std::string_view url);

}  // namespace tfdist::io::http

#endif  // TFDIST_IO_STORAGE_HTTP_H_
