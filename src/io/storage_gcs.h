// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The Cloud Storage store's parts (storage_gcs.cc, storage_gcs_auth.cc):
// where requests go, where OAuth 2 tokens come from, and how the JSON API's
// answers are read. Private to io; declared here for the unit tests.

#ifndef TFDIST_IO_STORAGE_GCS_H_
#define TFDIST_IO_STORAGE_GCS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage_http.h"
#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/io/storage.h"

namespace tfdist::io::gcs {

// Where the JSON API is served: https://storage.googleapis.com, or the
// emulator named by STORAGE_EMULATOR_HOST ("host:port" gets "http://"), in
// which case requests carry no credentials, as Google's clients do.
struct Endpoint {
  std::string base;       // scheme and host, no trailing '/'
  bool emulator = false;  // STORAGE_EMULATOR_HOST was set
};
Endpoint EndpointFromEnvironment();

// An OAuth 2 access token and the time it stops being good.
struct AccessToken {
  std::string value;
  std::chrono::steady_clock::time_point expiry;
};

// Reads a token endpoint's answer ({"access_token": ..., "expires_in": S});
// `now` is when the request was sent. Messages never quote the body.
Result<AccessToken> ParseTokenResponse(std::string_view body,
                                       std::chrono::steady_clock::time_point now,
                                       std::string_view source);

// A service-account key file's fields that sign a token request.
struct ServiceAccountKey {
  std::string client_email;
  std::string private_key;     // PEM
  std::string private_key_id;  // the JWT's "kid"; may be empty
  std::string token_uri;       // where the JWT is exchanged
};

// The JWT bearer assertion of RFC 7523 for `key`: header
// {"alg":"RS256","typ":"JWT","kid":...}, claims iss, scope (read-only
// storage), aud = token_uri, iat = `now_seconds`, exp one hour later;
// signed with the key (RSASSA-PKCS1-v1_5 over SHA-256, OpenSSL EVP).
// Error: InvalidArgument when the key cannot be read (the message names
// `source`, never the key).
Result<std::string> MakeJwt(const ServiceAccountKey& key, int64_t now_seconds,
                            std::string_view source);

// Base64url without padding (RFC 4648 section 5), as JWTs use.
std::string Base64Url(std::string_view bytes);

// Where a process's access tokens come from. It is also the HttpStore of the
// token requests themselves (they carry their own secrets, and their errors
// are OAuth's {"error", "error_description"}). Thread-safe.
class Credentials : public http::HttpStore {
 public:
  explicit Credentials(std::string source) : source_(std::move(source)) {}

  // The "Authorization" header's value ("Bearer TOKEN"), or "" when requests
  // go unsigned (anonymous, an emulator). A token is fetched on first use
  // and again shortly before it expires, by one thread while the others
  // wait for it.
  Result<std::string> Header();

  Status Authorize(http::Request&) override { return Status::OK(); }
  std::pair<std::string, std::string> ParseError(const http::Response& response) const override;
  std::string CredentialSource() const override { return source_; }

 protected:
  // A new token; nullopt-like empty value when requests go unsigned.
  virtual Result<AccessToken> FetchToken() = 0;
  virtual bool Anonymous() const { return false; }

 private:
  std::string source_;
  std::mutex mutex_;
  bool have_token_ = false;
  AccessToken token_;
  std::chrono::steady_clock::duration lifetime_{};
};

// The credentials the environment names, in the order Google's clients use:
//  1. GOOGLE_APPLICATION_CREDENTIALS: a service-account key or an
//     authorized-user file (its refresh token); an unreadable file or
//     another type (external_account, impersonated_service_account, ...) is
//     InvalidArgument naming it;
//  2. the application-default file gcloud writes
//     ($CLOUDSDK_CONFIG or ~/.config/gcloud, application_default_credentials.json);
//  3. the metadata server: at GCE_METADATA_HOST when set; else at
//     metadata.google.internal when NO_GCE_CHECK is not "true" and that name
//     resolves (it does only on Google Cloud);
//  4. anonymous (public buckets).
// With an emulator (endpoint.emulator), none: requests go unsigned.
Result<std::unique_ptr<Credentials>> CredentialsFromEnvironment(const Endpoint& endpoint);

// The credentials of a key file, as GOOGLE_APPLICATION_CREDENTIALS or the
// application-default file names it (`how` says which, for messages).
Result<std::unique_ptr<Credentials>> CredentialsFromFile(const std::string& path,
                                                         std::string_view how);

// A Cloud Storage JSON error ({"error": {"code", "message", "errors":
// [{"reason"}]}}) as (reason, message); a plain-text or HTML body (the
// emulator's 404 of a download) as ("", its first line); ("", "") when empty.
std::pair<std::string, std::string> ParseGcsError(std::string_view body);

// One page of an objects listing: its objects ("gs://BUCKET/NAME", size,
// generation) appended to `objects`, and its nextPageToken ("" on the last
// page). Error: DataLoss naming `shown` when the page is not the API's JSON.
Status ParseListPage(std::string_view body, std::string_view bucket, std::string_view shown,
                     std::vector<ObjectInfo>& objects, std::string& next_page_token);

// An object's metadata (GET .../o/NAME) as an ObjectInfo.
Result<ObjectInfo> ParseObjectMetadata(std::string_view body, std::string_view bucket,
                                       std::string_view shown);

// "gs://BUCKET/OBJECT" split; OBJECT may be empty. Error: InvalidArgument
// when `name` is not a gs:// URL with a bucket.
Result<std::pair<std::string, std::string>> SplitUrl(std::string_view name);

struct StoreOptions {
  int page_size = 1000;  // maxResults of a listing page (tests page by less)
  // Where requests go instead of Google's endpoint, signed with the
  // environment's credentials as Google's would be (tests: a local fake).
  std::string endpoint_for_testing;
};

// The store, configured from the environment as NewGcsStorage; errors of
// the configuration (a bad credentials file) come back from each call.
std::unique_ptr<Storage> NewStore(const StoreOptions& options);

}  // namespace tfdist::io::gcs

#endif  // TFDIST_IO_STORAGE_GCS_H_
