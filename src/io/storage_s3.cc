// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The S3 store: ListObjectsV2, HEAD and ranged GETs pinned by If-Match,
// signed with Signature Version 4, over the HTTP engine (storage_http.h).

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <mutex>
#include <string>
#include <utility>

#include "storage_http.h"
#include "storage_s3_internal.h"
#include "storage_stores.h"

namespace tfdist::io {
namespace s3 {
namespace {

std::atomic<int> list_page_size{1000};

struct S3Name {
  std::string bucket, key;
};

Result<S3Name> SplitName(std::string_view name) {
  if (!name.starts_with("s3://")) {
    return Status::InvalidArgument(fmt::format("{} is not an s3:// URL", name));
  }
  std::string_view rest = name.substr(5);
  const size_t slash = rest.find('/');
  S3Name n{std::string(rest.substr(0, slash)),
           slash == std::string_view::npos ? std::string() : std::string(rest.substr(slash + 1))};
  if (n.bucket.empty()) {
    return Status::InvalidArgument(fmt::format("{} names no bucket (s3://BUCKET/KEY)", name));
  }
  return n;
}

// `now`: the ETag the store holds now, empty when it is not known (the
// store refused the one opened, HTTP 412 to If-Match, and was not asked
// again).
std::string Replaced(std::string_view url, std::string_view opened, std::string_view now) {
  const std::string what =
      now.empty() ? fmt::format(
                        "its ETag was {} when opened, and the store no longer serves that "
                        "version (HTTP 412 to If-Match)",
                        opened)
                  : fmt::format("its ETag was {} when opened and is {} now", opened, now);
  return fmt::format(
      "{}: the object was replaced while it was read: {}; read it again from the "
      "start",
      url, what);
}

class S3Store;

class S3Object final : public RandomAccessObject {
 public:
  S3Object(S3Store& store, ObjectInfo info, std::string url)
      : store_(store), info_(std::move(info)), url_(std::move(url)) {}

  Status ReadAt(uint64_t offset, std::span<char> dst) override;
  void ReadAtAsync(uint64_t offset, std::span<char> dst, std::function<void(Status)> done) override;
  const ObjectInfo& info() const override { return info_; }

 private:
  // The request and the check of each response for [offset, offset + size).
  http::Request MakeRequest() const;
  std::function<Status(const http::Response&)> Check() const;
  // OutOfRange without a request when the pinned version ends before the range.
  std::optional<Status> PastEnd(uint64_t offset, size_t size) const;

  S3Store& store_;
  ObjectInfo info_;
  std::string url_;
};

class S3Store final : public Storage, public http::HttpStore {
 public:
  S3Store(Environment env, bool no_sign_request)
      : env_(std::move(env)), no_sign_request_(no_sign_request) {}

  // ---- HttpStore
  Status Authorize(http::Request& request) override {
    TFDIST_ASSIGN_OR_RETURN(std::optional<Credentials> credentials, credentials_->Get());
    if (!credentials) return Status::OK();
    return SignV4(request, *credentials, config_.region, AmzDate(std::chrono::system_clock::now()));
  }
  std::pair<std::string, std::string> ParseError(const http::Response& response) const override {
    return ParseErrorXml(response.body);
  }
  std::string CredentialSource() const override {
    return credentials_ ? credentials_->Source() : "no credentials";
  }
  std::string CaFile() const override { return config_.ca_bundle; }
  bool VerifyTls() const override { return config_.verify_tls; }

  // ---- Storage
  Status List(std::string_view prefix,
              const std::function<Status(std::span<const ObjectInfo>)>& page) override {
    TFDIST_RETURN_IF_ERROR(Init());
    TFDIST_ASSIGN_OR_RETURN(const S3Name name, SplitName(prefix));
    std::string token, last;
    for (;;) {
      std::string query;
      if (!token.empty()) query = "continuation-token=" + AwsUriEncode(token, false) + "&";
      query += fmt::format("encoding-type=url&list-type=2&max-keys={}&prefix={}",
                           list_page_size.load(), AwsUriEncode(name.key, false));
      http::Request request;
      request.url = ObjectUrl(config_, name.bucket, "", query);
      request.shown = fmt::format("s3://{}/ (listing {})", name.bucket, prefix);
      TFDIST_ASSIGN_OR_RETURN(const http::Response response,
                              http::Client::Get().Fetch(*this, std::move(request)));
      TFDIST_ASSIGN_OR_RETURN(ListPage listed, ParseListPage(response.body, name.bucket, prefix));
      // S3 lists in UTF-8 byte order; a store that does not (s3rver sorts
      // by UTF-16 code units) is put in order within a page, and a page that
      // would go back before the last one is an error rather than a glob's
      // wrong order.
      std::sort(listed.objects.begin(), listed.objects.end(),
                [](const ObjectInfo& a, const ObjectInfo& b) { return a.name < b.name; });
      if (!listed.objects.empty()) {
        if (!last.empty() && listed.objects.front().name <= last) {
          return Status::Internal(
              fmt::format("listing {}: the store's pages are not in byte order ({} after {})",
                          prefix, listed.objects.front().name, last));
        }
        last = listed.objects.back().name;
        TFDIST_RETURN_IF_ERROR(page(listed.objects));
      }
      if (!listed.truncated) return Status::OK();
      if (listed.next_token == token) {
        return Status::Internal(
            fmt::format("listing {}: the store gave the same continuation token twice", prefix));
      }
      token = std::move(listed.next_token);
    }
  }

  Result<ObjectInfo> Stat(std::string_view name) override {
    TFDIST_RETURN_IF_ERROR(Init());
    TFDIST_ASSIGN_OR_RETURN(const S3Name n, SplitName(name));
    if (n.key.empty()) {
      return Status::InvalidArgument(fmt::format("{} names a bucket, not an object", name));
    }
    http::Request request;
    request.method = "HEAD";
    request.url = ObjectUrl(config_, n.bucket, n.key);
    request.shown = std::string(name);
    TFDIST_ASSIGN_OR_RETURN(const http::Response response,
                            http::Client::Get().Fetch(*this, std::move(request)));
    ObjectInfo info;
    info.name = std::string(name);
    const std::optional<std::string_view> length = response.Header("content-length");
    if (!length) {
      return Status::DataLoss(fmt::format("{}: the store's HEAD gave no Content-Length", name));
    }
    auto [end, ec] = std::from_chars(length->data(), length->data() + length->size(), info.size);
    if (ec != std::errc() || end != length->data() + length->size()) {
      return Status::DataLoss(
          fmt::format("{}: the store's HEAD gave a Content-Length of '{}'", name, *length));
    }
    info.version = std::string(response.Header("etag").value_or(""));
    return info;
  }

  Result<std::unique_ptr<RandomAccessObject>> Open(const ObjectInfo& info) override {
    TFDIST_RETURN_IF_ERROR(Init());
    TFDIST_ASSIGN_OR_RETURN(const S3Name n, SplitName(info.name));
    if (n.key.empty()) {
      return Status::InvalidArgument(fmt::format("{} names a bucket, not an object", info.name));
    }
    return std::unique_ptr<RandomAccessObject>(
        std::make_unique<S3Object>(*this, info, ObjectUrl(config_, n.bucket, n.key)));
  }

 private:
  // The configuration and credentials, read on first use: a process that
  // never reads s3:// never fails for a bad AWS setting.
  Status Init() {
    std::call_once(once_, [&] {
      init_ = [&]() -> Status {
        TFDIST_ASSIGN_OR_RETURN(const Profile profile, LoadProfile(env_));
        TFDIST_ASSIGN_OR_RETURN(config_, LoadConfig(env_, profile));
        // Said once per process: the store is made once (StorageFor).
        for (std::string& w : config_.warnings) AddRemoteWarning(std::move(w));
        config_.warnings.clear();
        TFDIST_ASSIGN_OR_RETURN(credentials_,
                                ResolveCredentials(env_, profile, config_, no_sign_request_));
        return Status::OK();
      }();
    });
    return init_;
  }

  Environment env_;
  bool no_sign_request_;
  std::once_flag once_;
  Status init_;
  Config config_;
  std::unique_ptr<CredentialProvider> credentials_;
};

http::Request S3Object::MakeRequest() const {
  http::Request request;
  request.url = url_;
  request.shown = info_.name;
  // The version pinned: S3 answers 412 for another one.
  if (!info_.version.empty()) request.headers.emplace_back("If-Match", info_.version);
  return request;
}

std::function<Status(const http::Response&)> S3Object::Check() const {
  // Stores that ignore If-Match (s3rver does) still send the ETag of what
  // they send.
  return [this](const http::Response& head) -> Status {
    const std::optional<std::string_view> etag = head.Header("etag");
    if (!info_.version.empty() && etag && *etag != info_.version) {
      return Status::DataLoss(Replaced(info_.name, info_.version, *etag));
    }
    return Status::OK();
  };
}

std::optional<Status> S3Object::PastEnd(uint64_t offset, size_t size) const {
  if (offset <= info_.size && size <= info_.size - offset) return std::nullopt;
  return Status::OutOfRange(fmt::format("{}: bytes {}-{} are past its end ({} bytes)", info_.name,
                                        offset, offset + size, info_.size));
}

// The engine's DataLoss for a 412 (If-Match refused) names no ETag.
bool IsRefusedIfMatch(const Status& status, std::string_view name) {
  return status.code() == StatusCode::kDataLoss &&
         !status.message().starts_with(fmt::format("{}: the object was replaced", name));
}

Status S3Object::ReadAt(uint64_t offset, std::span<char> dst) {
  if (dst.empty()) return Status::OK();
  if (auto past = PastEnd(offset, dst.size())) return *past;
  Status status = http::Client::Get().ReadRange(store_, MakeRequest(), offset, dst, Check());
  if (IsRefusedIfMatch(status, info_.name)) {
    // Name the version the store holds now, when it can be had.
    Result<ObjectInfo> now = store_.Stat(info_.name);
    return Status::DataLoss(Replaced(info_.name, info_.version, now.ok() ? now->version : ""));
  }
  return status;
}

void S3Object::ReadAtAsync(uint64_t offset, std::span<char> dst, std::function<void(Status)> done) {
  if (dst.empty()) return done(Status::OK());
  if (auto past = PastEnd(offset, dst.size())) return done(*past);
  // On the engine's thread, which must not wait for a HEAD: the ETag it
  // was opened at is named, the new one is not known.
  http::Client::Get().ReadRangeAsync(
      store_, MakeRequest(), offset, dst, Check(), [this, done = std::move(done)](Status status) {
        if (IsRefusedIfMatch(status, info_.name)) {
          status = Status::DataLoss(Replaced(info_.name, info_.version, ""));
        }
        done(std::move(status));
      });
}

}  // namespace

std::unique_ptr<Storage> NewS3StorageFrom(const Environment& env, bool no_sign_request) {
  return std::make_unique<S3Store>(env, no_sign_request);
}

void SetListPageSizeForTesting(int max_keys) { list_page_size = max_keys; }

}  // namespace s3

std::unique_ptr<Storage> NewS3Storage() {
  return s3::NewS3StorageFrom(s3::ProcessEnvironment(), GetRemoteOptions().no_sign_request);
}

}  // namespace tfdist::io
