// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Cloud Storage over its JSON API: listings, metadata and ranged media
// downloads pinned to a generation. JSON is read with nlohmann-json.

#include "storage_gcs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "storage_s3_internal.h"
#include "storage_stores.h"

namespace tfdist::io {
namespace gcs {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kScheme = "gs://";

// Sizes and generations are int64 carried as JSON strings.
bool ParseInt64(const Json& object, const char* name, uint64_t& out) {
  const auto it = object.find(name);
  if (it == object.end()) return false;
  if (it->is_number_unsigned()) {
    out = it->get<uint64_t>();
    return true;
  }
  if (!it->is_string()) return false;
  const std::string& text = it->get_ref<const std::string&>();
  if (text.empty() || text.size() > 20 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  out = std::strtoull(text.c_str(), nullptr, 10);
  return true;
}

Result<ObjectInfo> ObjectFromJson(const Json& item, std::string_view bucket,
                                  std::string_view shown) {
  const auto bad = [&](std::string_view what) {
    return Status::DataLoss(
        fmt::format("{}: Cloud Storage answered an object {}; expected name, size and generation",
                    shown, what));
  };
  if (!item.is_object()) return bad("that is not a JSON object");
  const auto name = item.find("name");
  if (name == item.end() || !name->is_string()) return bad("without a name");
  uint64_t size = 0, generation = 0;
  if (!ParseInt64(item, "size", size)) return bad("without a size");
  if (!ParseInt64(item, "generation", generation)) return bad("without a generation");
  ObjectInfo info;
  info.name = fmt::format("{}{}/{}", kScheme, bucket, name->get_ref<const std::string&>());
  info.size = size;
  info.version = std::to_string(generation);
  return info;
}

}  // namespace

std::pair<std::string, std::string> ParseGcsError(std::string_view body) {
  const Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_object()) {
    const auto error = json.find("error");
    if (error != json.end() && error->is_object()) {
      std::string reason, message;
      if (const auto m = error->find("message"); m != error->end() && m->is_string()) {
        message = m->get<std::string>();
      }
      if (const auto errors = error->find("errors");
          errors != error->end() && errors->is_array() && !errors->empty()) {
        const Json& first = (*errors)[0];
        if (const auto r = first.find("reason");
            first.is_object() && r != first.end() && r->is_string()) {
          reason = r->get<std::string>();
        }
      }
      return {reason, message};
    }
  }
  size_t begin = 0;
  while (begin < body.size() && std::isspace(static_cast<unsigned char>(body[begin]))) ++begin;
  // Cloud Storage's XML API, and its front ends' errors (a 503 from the
  // load balancer), answer <Error><Code>..</Code><Message>..</Message>.
  if (body.substr(begin).starts_with('<')) {
    auto xml = s3::ParseErrorXml(body.substr(begin));
    if (!xml.first.empty() || !xml.second.empty()) return xml;
  }
  // The emulator's downloads (and proxies) answer plain text or HTML: its
  // first line, trimmed, is the message.
  std::string_view line = body.substr(begin);
  line = line.substr(0, std::min(line.find('\n'), size_t{300}));
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
    line.remove_suffix(1);
  }
  return {"", std::string(line)};
}

Status ParseListPage(std::string_view body, std::string_view bucket, std::string_view shown,
                     std::vector<ObjectInfo>& objects, std::string& next_page_token) {
  const Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) {
    return Status::DataLoss(
        fmt::format("{}: Cloud Storage answered a listing page that is not a JSON object", shown));
  }
  next_page_token.clear();
  if (const auto token = json.find("nextPageToken"); token != json.end()) {
    if (!token->is_string()) {
      return Status::DataLoss(
          fmt::format("{}: Cloud Storage answered a nextPageToken that is not a string", shown));
    }
    next_page_token = token->get<std::string>();
  }
  const auto items = json.find("items");
  if (items == json.end()) return Status::OK();  // an empty page
  if (!items->is_array()) {
    return Status::DataLoss(
        fmt::format("{}: Cloud Storage answered a listing whose items are not an array", shown));
  }
  for (const Json& item : *items) {
    TFDIST_ASSIGN_OR_RETURN(ObjectInfo info, ObjectFromJson(item, bucket, shown));
    objects.push_back(std::move(info));
  }
  return Status::OK();
}

Result<ObjectInfo> ParseObjectMetadata(std::string_view body, std::string_view bucket,
                                       std::string_view shown) {
  const Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  return ObjectFromJson(json, bucket, shown);
}

Result<std::pair<std::string, std::string>> SplitUrl(std::string_view name) {
  if (!name.starts_with(kScheme)) {
    return Status::InvalidArgument(fmt::format("{} is not a gs:// URL", name));
  }
  std::string_view rest = name.substr(kScheme.size());
  const size_t slash = rest.find('/');
  std::string bucket(rest.substr(0, slash));
  if (bucket.empty()) {
    return Status::InvalidArgument(
        fmt::format("{} names no bucket; expected gs://BUCKET/OBJECT", name));
  }
  std::string object = slash == std::string_view::npos ? "" : std::string(rest.substr(slash + 1));
  return std::make_pair(std::move(bucket), std::move(object));
}

namespace {

class GcsStore;

// One object, read by ranged media downloads of its generation. Real Cloud
// Storage answers 412 to ifGenerationMatch once the object is replaced; the
// emulator ignores the precondition, so each response's x-goog-generation
// is checked too.
class GcsObject : public RandomAccessObject {
 public:
  GcsObject(GcsStore& store, ObjectInfo info, std::string media_url)
      : store_(store), info_(std::move(info)), media_url_(std::move(media_url)) {}

  Status ReadAt(uint64_t offset, std::span<char> dst) override;
  void ReadAtAsync(uint64_t offset, std::span<char> dst, std::function<void(Status)> done) override;
  const ObjectInfo& info() const override { return info_; }

 private:
  // The request, or the error that stops it before it is sent.
  Result<http::Request> Prepare(uint64_t offset, size_t size);
  std::function<Status(const http::Response&)> Check() const;
  Status Pinned(Status status) const;

  GcsStore& store_;
  ObjectInfo info_;
  std::string media_url_;
};

class GcsStore : public Storage, public http::HttpStore {
 public:
  explicit GcsStore(const StoreOptions& options)
      : options_(options), endpoint_(EndpointFromEnvironment()) {
    if (!options.endpoint_for_testing.empty()) endpoint_ = {options.endpoint_for_testing, false};
    Result<std::unique_ptr<Credentials>> credentials = CredentialsFromEnvironment(endpoint_);
    if (credentials.ok()) {
      credentials_ = std::move(*credentials);
    } else {
      credentials_error_ = credentials.status();
    }
  }

  // The caller's thread fetches or refreshes the token, so that the engine's
  // thread (Authorize of an async read) finds it cached.
  Status EnsureToken() {
    if (!credentials_) return credentials_error_;
    return credentials_->Header().status();
  }

  Status Authorize(http::Request& request) override {
    if (!credentials_) return credentials_error_;
    TFDIST_ASSIGN_OR_RETURN(std::string header, credentials_->Header());
    if (!header.empty()) request.headers.emplace_back("Authorization", std::move(header));
    return Status::OK();
  }

  std::pair<std::string, std::string> ParseError(const http::Response& response) const override {
    return ParseGcsError(response.body);
  }

  std::string CredentialSource() const override {
    return credentials_ ? credentials_->CredentialSource() : "no usable credentials";
  }

  Status List(std::string_view prefix,
              const std::function<Status(std::span<const ObjectInfo>)>& page) override {
    TFDIST_ASSIGN_OR_RETURN(auto split, SplitUrl(prefix));
    const auto& [bucket, object_prefix] = split;
    TFDIST_RETURN_IF_ERROR(EnsureToken());
    const std::string list_url = fmt::format(
        "{}/storage/v1/b/{}/o?prefix={}&maxResults={}&fields={}", endpoint_.base,
        http::UriEncode(bucket, false), http::UriEncode(object_prefix, false), options_.page_size,
        http::UriEncode("items(name,size,generation),nextPageToken", false));
    std::string token;
    std::vector<ObjectInfo> objects;
    do {
      http::Request request;
      request.url = list_url;
      if (!token.empty()) request.url += "&pageToken=" + http::UriEncode(token, false);
      request.shown = fmt::format("gs://{}/ (listing {})", bucket, prefix);
      TFDIST_ASSIGN_OR_RETURN(http::Response response, http::Client::Get().Fetch(*this, request));
      objects.clear();
      const std::string previous = token;
      TFDIST_RETURN_IF_ERROR(ParseListPage(response.body, bucket, prefix, objects, token));
      if (!token.empty() && token == previous) {
        return Status::DataLoss(fmt::format(
            "{}: Cloud Storage answered the same nextPageToken twice; the listing would not end",
            prefix));
      }
      if (!objects.empty()) TFDIST_RETURN_IF_ERROR(page(objects));
    } while (!token.empty());
    return Status::OK();
  }

  Result<ObjectInfo> Stat(std::string_view name) override {
    TFDIST_ASSIGN_OR_RETURN(auto split, SplitUrl(name));
    const auto& [bucket, object] = split;
    if (object.empty()) {
      return Status::NotFound(fmt::format("{} is a bucket, not an object", name));
    }
    TFDIST_RETURN_IF_ERROR(EnsureToken());
    http::Request request;
    request.url = fmt::format("{}?fields={}", ObjectUrl(bucket, object),
                              http::UriEncode("name,size,generation", false));
    request.shown = std::string(name);
    TFDIST_ASSIGN_OR_RETURN(http::Response response, http::Client::Get().Fetch(*this, request));
    return ParseObjectMetadata(response.body, bucket, name);
  }

  Result<std::unique_ptr<RandomAccessObject>> Open(const ObjectInfo& info) override {
    ObjectInfo pinned = info;
    if (pinned.version.empty()) {
      TFDIST_ASSIGN_OR_RETURN(pinned, Stat(info.name));
    }
    TFDIST_ASSIGN_OR_RETURN(auto split, SplitUrl(pinned.name));
    std::string media_url = fmt::format("{}?alt=media&ifGenerationMatch={}",
                                        ObjectUrl(split.first, split.second), pinned.version);
    return std::unique_ptr<RandomAccessObject>(
        std::make_unique<GcsObject>(*this, std::move(pinned), std::move(media_url)));
  }

 private:
  // Object names are one path segment: '/', '+', '%', '#', '?', spaces and
  // non-ASCII bytes all percent-encoded.
  std::string ObjectUrl(std::string_view bucket, std::string_view object) const {
    return fmt::format("{}/storage/v1/b/{}/o/{}", endpoint_.base, http::UriEncode(bucket, false),
                       http::UriEncode(object, false));
  }

  StoreOptions options_;
  Endpoint endpoint_;
  std::unique_ptr<Credentials> credentials_;
  Status credentials_error_;
};

Result<http::Request> GcsObject::Prepare(uint64_t offset, size_t size) {
  if (offset > info_.size || size > info_.size - offset) {
    // The generation's size is known: a read past its end needs no request
    // (and the emulator would answer 200 with the whole object).
    return Status::OutOfRange(
        fmt::format("{}: bytes {}-{} are past the end of the object ({} bytes, generation {})",
                    info_.name, offset, offset + size, info_.size, info_.version));
  }
  TFDIST_RETURN_IF_ERROR(store_.EnsureToken());
  http::Request request;
  request.url = media_url_;
  request.shown = info_.name;
  return request;
}

std::function<Status(const http::Response&)> GcsObject::Check() const {
  // Only 2xx heads come here: the engine makes a 412 DataLoss (Pinned).
  return [this](const http::Response& head) -> Status {
    if (const auto generation = head.Header("x-goog-generation");
        generation && *generation != info_.version) {
      return Status::DataLoss(fmt::format(
          "{} was replaced while it was read: opened at generation {}, Cloud Storage now "
          "serves generation {}",
          info_.name, info_.version, *generation));
    }
    return Status::OK();
  };
}

// The engine's DataLoss for a 412 to ifGenerationMatch (real Cloud Storage:
// the generation is gone) says which generation was asked for.
Status GcsObject::Pinned(Status status) const {
  if (status.code() != StatusCode::kDataLoss ||
      status.message().find("opened at generation") != std::string::npos) {
    return status;
  }
  return Status::DataLoss(
      fmt::format("{}; it was opened at generation {}", status.message(), info_.version));
}

Status GcsObject::ReadAt(uint64_t offset, std::span<char> dst) {
  if (dst.empty()) return offset <= info_.size ? Status::OK() : Prepare(offset, 0).status();
  TFDIST_ASSIGN_OR_RETURN(http::Request request, Prepare(offset, dst.size()));
  return Pinned(http::Client::Get().ReadRange(store_, std::move(request), offset, dst, Check()));
}

void GcsObject::ReadAtAsync(uint64_t offset, std::span<char> dst,
                            std::function<void(Status)> done) {
  if (dst.empty()) {
    done(ReadAt(offset, dst));
    return;
  }
  Result<http::Request> request = Prepare(offset, dst.size());
  if (!request.ok()) {
    done(request.status());
    return;
  }
  http::Client::Get().ReadRangeAsync(
      store_, std::move(*request), offset, dst, Check(),
      [this, done = std::move(done)](Status status) { done(Pinned(std::move(status))); });
}

}  // namespace

std::unique_ptr<Storage> NewStore(const StoreOptions& options) {
  return std::make_unique<GcsStore>(options);
}

}  // namespace gcs

std::unique_ptr<Storage> NewGcsStorage() { return gcs::NewStore(gcs::StoreOptions{}); }

}  // namespace tfdist::io
