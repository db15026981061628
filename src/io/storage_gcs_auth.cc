// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Cloud Storage's OAuth 2 access tokens, found the way Google's own clients
// find them. RS256 is OpenSSL's (EVP), JSON is nlohmann-json's: signing and
// parsing are where hand-written code goes wrong quietly.

#include <fmt/format.h>
#include <netdb.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "storage_gcs.h"

namespace tfdist::io::gcs {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kDefaultTokenUri = "https://oauth2.googleapis.com/token";
constexpr std::string_view kReadOnlyScope = "https://www.googleapis.com/auth/devstorage.read_only";
constexpr std::string_view kMetadataTokenPath =
    "/computeMetadata/v1/instance/service-accounts/default/token";

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string WithScheme(std::string host) {
  if (host.find("://") == std::string::npos) host = "http://" + host;
  while (!host.empty() && host.back() == '/') host.pop_back();
  return host;
}

std::string FormEncode(
    std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
  std::string body;
  for (const auto& [name, value] : fields) {
    if (!body.empty()) body += '&';
    body += name;
    body += '=';
    body += http::UriEncode(value, /*keep_slash=*/false);
  }
  return body;
}

// A JSON string member, or "" when absent or not a string.
std::string StringField(const Json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// POSTs a form to a token endpoint and reads its answer.
Result<AccessToken> ExchangeAtTokenEndpoint(Credentials& store, const std::string& token_uri,
                                            std::string body) {
  http::Request request;
  request.method = "POST";
  request.url = token_uri;
  request.shown = token_uri;
  request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  request.body = std::move(body);
  const Clock::time_point sent = Clock::now();
  TFDIST_ASSIGN_OR_RETURN(http::Response response, http::Client::Get().Fetch(store, request));
  return ParseTokenResponse(response.body, sent, store.CredentialSource());
}

class AnonymousCredentials : public Credentials {
 public:
  using Credentials::Credentials;

 protected:
  Result<AccessToken> FetchToken() override { return AccessToken{}; }
  bool Anonymous() const override { return true; }
};

class ServiceAccountCredentials : public Credentials {
 public:
  ServiceAccountCredentials(std::string source, ServiceAccountKey key)
      : Credentials(std::move(source)), key_(std::move(key)) {}

 protected:
  Result<AccessToken> FetchToken() override {
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    TFDIST_ASSIGN_OR_RETURN(std::string jwt, MakeJwt(key_, now, CredentialSource()));
    return ExchangeAtTokenEndpoint(
        *this, key_.token_uri,
        FormEncode(
            {{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"}, {"assertion", jwt}}));
  }

 private:
  ServiceAccountKey key_;
};

class AuthorizedUserCredentials : public Credentials {
 public:
  AuthorizedUserCredentials(std::string source, std::string client_id, std::string client_secret,
                            std::string refresh_token, std::string token_uri)
      : Credentials(std::move(source)),
        client_id_(std::move(client_id)),
        client_secret_(std::move(client_secret)),
        refresh_token_(std::move(refresh_token)),
        token_uri_(std::move(token_uri)) {}

 protected:
  Result<AccessToken> FetchToken() override {
    return ExchangeAtTokenEndpoint(*this, token_uri_,
                                   FormEncode({{"grant_type", "refresh_token"},
                                               {"client_id", client_id_},
                                               {"client_secret", client_secret_},
                                               {"refresh_token", refresh_token_}}));
  }

 private:
  std::string client_id_, client_secret_, refresh_token_, token_uri_;
};

class MetadataCredentials : public Credentials {
 public:
  MetadataCredentials(std::string source, std::string base)
      : Credentials(std::move(source)), base_(std::move(base)) {}

 protected:
  Result<AccessToken> FetchToken() override {
    http::Request request;
    request.url = base_ + std::string(kMetadataTokenPath);
    request.shown = request.url;
    request.headers.emplace_back("Metadata-Flavor", "Google");
    const Clock::time_point sent = Clock::now();
    TFDIST_ASSIGN_OR_RETURN(http::Response response, http::Client::Get().Fetch(*this, request));
    return ParseTokenResponse(response.body, sent, CredentialSource());
  }

 private:
  std::string base_;
};

Result<std::string> ReadSmallFile(const std::string& path, std::string_view how) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::InvalidArgument(
        fmt::format("cannot read the Cloud Storage credentials file {} ({}): {}", path, how,
                    std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether the metadata server's name resolves: only inside Google Cloud
// does it, so elsewhere no request is sent and no connect waits out a timeout.
bool MetadataServerResolves() {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo("metadata.google.internal", "80", &hints, &found) != 0) return false;
  freeaddrinfo(found);
  return true;
}

}  // namespace

std::string Base64Url(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 |
                       uint8_t(bytes[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
  } else if (i + 2 == bytes.size()) {
    const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

Result<std::string> MakeJwt(const ServiceAccountKey& key, int64_t now_seconds,
                            std::string_view source) {
  Json header = {{"alg", "RS256"}, {"typ", "JWT"}};
  if (!key.private_key_id.empty()) header["kid"] = key.private_key_id;
  const Json claims = {{"iss", key.client_email},
                       {"scope", kReadOnlyScope},
                       {"aud", key.token_uri},
                       {"iat", now_seconds},
                       {"exp", now_seconds + 3600}};
  std::string signing_input = Base64Url(header.dump()) + "." + Base64Url(claims.dump());

  const auto bad_key = [&](std::string_view what) {
    ERR_clear_error();  // OpenSSL's queue may quote the key's bytes: never shown
    return Status::InvalidArgument(
        fmt::format("the private_key of {} {}; expected an RSA key in PEM", source, what));
  };
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(key.private_key.data(), int(key.private_key.size())), BIO_free);
  if (!bio) return Status::ResourceExhausted("out of memory reading a private key");
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> pkey(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  if (!pkey) return bad_key("cannot be read");
  if (EVP_PKEY_base_id(pkey.get()) != EVP_PKEY_RSA) return bad_key("is not an RSA key");
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  size_t size = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, pkey.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &size,
                     reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1) {
    return bad_key("cannot sign");
  }
  std::string signature(size, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1) {
    return bad_key("cannot sign");
  }
  signature.resize(size);
  return signing_input + "." + Base64Url(signature);
}

Result<AccessToken> ParseTokenResponse(std::string_view body, Clock::time_point now,
                                       std::string_view source) {
  const Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  const auto bad = [&](std::string_view what) {
    return Status::Unavailable(
        fmt::format("the token endpoint of {} answered {}; expected JSON with access_token and "
                    "expires_in",
                    source, what));
  };
  if (!json.is_object()) return bad("something that is not a JSON object");
  AccessToken token;
  token.value = StringField(json, "access_token");
  if (token.value.empty()) return bad("no access_token");
  const auto expires = json.find("expires_in");
  int64_t seconds = 3600;  // RFC 6749: optional; Google's endpoints always send it
  if (expires != json.end()) {
    if (expires->is_number()) {
      seconds = expires->get<int64_t>();
    } else if (expires->is_string()) {
      seconds = std::atoll(expires->get<std::string>().c_str());
    } else {
      return bad("an expires_in that is not a number");
    }
  }
  token.expiry = now + std::chrono::seconds(std::max<int64_t>(seconds, 0));
  return token;
}

Result<std::string> Credentials::Header() {
  if (Anonymous()) return std::string();
  std::lock_guard lock(mutex_);
  const Clock::time_point now = Clock::now();
  // Refreshed 5 minutes before it expires (google-auth's margin), or half
  // its life before when it is short-lived; the other threads wait here and
  // then use the one new token.
  const Clock::duration margin = std::min<Clock::duration>(std::chrono::minutes(5), lifetime_ / 2);
  if (!have_token_ || now + margin >= token_.expiry) {
    have_token_ = false;
    Result<AccessToken> token = FetchToken();
    if (!token.ok()) return token.status();
    token_ = std::move(*token);
    lifetime_ = token_.expiry - now;
    have_token_ = true;
  }
  return "Bearer " + token_.value;
}

std::pair<std::string, std::string> Credentials::ParseError(const http::Response& response) const {
  // OAuth 2 (RFC 6749 section 5.2): {"error": "invalid_grant",
  // "error_description": "..."}; the metadata server answers plain text.
  const Json json = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (json.is_object() && json.contains("error") && json["error"].is_string()) {
    return {json["error"].get<std::string>(), StringField(json, "error_description")};
  }
  return ParseGcsError(response.body);
}

Result<std::unique_ptr<Credentials>> CredentialsFromFile(const std::string& path,
                                                         std::string_view how) {
  TFDIST_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, how));
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) {
    return Status::InvalidArgument(
        fmt::format("the Cloud Storage credentials file {} ({}) is not a JSON object", path, how));
  }
  const std::string type = StringField(json, "type");
  const std::string source = fmt::format("{} file {} ({})", type, path, how);
  const auto missing = [&](std::string_view field) {
    return Status::InvalidArgument(fmt::format(
        "the Cloud Storage credentials file {} ({}) of type {} has no {}", path, how, type, field));
  };
  if (type == "service_account") {
    ServiceAccountKey key;
    key.client_email = StringField(json, "client_email");
    key.private_key = StringField(json, "private_key");
    key.private_key_id = StringField(json, "private_key_id");
    key.token_uri = StringField(json, "token_uri");
    if (key.client_email.empty()) return missing("client_email");
    if (key.private_key.empty()) return missing("private_key");
    if (key.token_uri.empty()) key.token_uri = kDefaultTokenUri;
    return std::unique_ptr<Credentials>(
        std::make_unique<ServiceAccountCredentials>(source, std::move(key)));
  }
  if (type == "authorized_user") {
    std::string client_id = StringField(json, "client_id");
    std::string client_secret = StringField(json, "client_secret");
    std::string refresh_token = StringField(json, "refresh_token");
    std::string token_uri = StringField(json, "token_uri");
    if (client_id.empty()) return missing("client_id");
    if (client_secret.empty()) return missing("client_secret");
    if (refresh_token.empty()) return missing("refresh_token");
    if (token_uri.empty()) token_uri = kDefaultTokenUri;
    return std::unique_ptr<Credentials>(std::make_unique<AuthorizedUserCredentials>(
        source, std::move(client_id), std::move(client_secret), std::move(refresh_token),
        std::move(token_uri)));
  }
  const std::string kind = type.empty() ? "has no \"type\"" : fmt::format("is of type '{}'", type);
  return Status::InvalidArgument(
      fmt::format("the Cloud Storage credentials file {} ({}) {}, which tfdist does not support; "
                  "supported: service_account (a key file), authorized_user (gcloud auth "
                  "application-default login)",
                  path, how, kind));
}

Result<std::unique_ptr<Credentials>> CredentialsFromEnvironment(const Endpoint& endpoint) {
  if (endpoint.emulator) {
    return std::unique_ptr<Credentials>(std::make_unique<AnonymousCredentials>(
        fmt::format("none: requests to the emulator at {} (STORAGE_EMULATOR_HOST) are not signed",
                    http::RedactUserinfo(endpoint.base))));
  }
  if (const std::string path = Env("GOOGLE_APPLICATION_CREDENTIALS"); !path.empty()) {
    return CredentialsFromFile(path, "GOOGLE_APPLICATION_CREDENTIALS");
  }
  std::string adc;
  if (const std::string config = Env("CLOUDSDK_CONFIG"); !config.empty()) {
    adc = config + "/application_default_credentials.json";
  } else if (const std::string home = Env("HOME"); !home.empty()) {
    adc = home + "/.config/gcloud/application_default_credentials.json";
  }
  if (!adc.empty() && access(adc.c_str(), F_OK) == 0) {
    return CredentialsFromFile(adc, "the application-default credentials of gcloud");
  }
  if (const std::string host = Env("GCE_METADATA_HOST"); !host.empty()) {
    std::string base = WithScheme(host);
    return std::unique_ptr<Credentials>(std::make_unique<MetadataCredentials>(
        fmt::format("the metadata server at {} (GCE_METADATA_HOST)", http::RedactUserinfo(base)),
        base));
  }
  std::string no_gce = Env("NO_GCE_CHECK");
  std::transform(no_gce.begin(), no_gce.end(), no_gce.begin(), ::tolower);
  if (no_gce != "true" && MetadataServerResolves()) {
    return std::unique_ptr<Credentials>(std::make_unique<MetadataCredentials>(
        "the metadata server at http://metadata.google.internal",
        "http://metadata.google.internal"));
  }
  return std::unique_ptr<Credentials>(std::make_unique<AnonymousCredentials>(fmt::format(
      "anonymous (no credentials: GOOGLE_APPLICATION_CREDENTIALS unset, no {}, {})",
      adc.empty() ? std::string("application-default credentials file") : adc,
      no_gce == "true" ? "no metadata server checked (NO_GCE_CHECK=true)"
                       : "not on Google Cloud (metadata.google.internal does not resolve)")));
}

Endpoint EndpointFromEnvironment() {
  if (const std::string host = Env("STORAGE_EMULATOR_HOST"); !host.empty()) {
    return Endpoint{WithScheme(host), true};
  }
  return Endpoint{"https://storage.googleapis.com", false};
}

}  // namespace tfdist::io::gcs
