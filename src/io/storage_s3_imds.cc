// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The EC2 instance metadata service (IMDSv2) for an instance role's
// credentials. Its own libcurl handle, not the engine's: off EC2 nothing
// answers, and the SDKs give up after one attempt of one second
// (AWS_METADATA_SERVICE_TIMEOUT, AWS_METADATA_SERVICE_NUM_ATTEMPTS) where
// the engine would retry a store for minutes.

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "storage_s3_internal.h"
#include "tfdist/base/json.h"

namespace tfdist::io::s3 {
namespace {

size_t Append(char* data, size_t size, size_t count, void* out) {
  auto* body = static_cast<std::string*>(out);
  if (body->size() + size * count > (size_t{64} << 10)) return 0;  // metadata is small
  body->append(data, size * count);
  return size * count;
}

struct Answer {
  long status = 0;
  std::string body;
};

// One request to the metadata service; an error for no answer at all.
Result<Answer> Ask(const ImdsSettings& imds, const std::string& method, const std::string& path,
                   const std::vector<std::string>& headers) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Status::Internal("curl_easy_init failed");
  Answer answer;
  curl_slist* list = nullptr;
  for (const std::string& h : headers) list = curl_slist_append(list, h.c_str());
  const std::string url = imds.endpoint + path;
  const long timeout_ms = static_cast<long>(imds.timeout_seconds * 1000);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "PUT") curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
  if (method == "PUT") curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");  // the link-local address is never proxied
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer.body);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  CURLcode code = CURLE_OK;
  for (int attempt = 0; attempt < std::max(1, imds.attempts); ++attempt) {
    answer.body.clear();
    code = curl_easy_perform(curl);
    if (code == CURLE_OK) break;
  }
  if (code == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  if (code != CURLE_OK) {
    return Status::Unavailable(fmt::format("{} {}: {}", method, url, curl_easy_strerror(code)));
  }
  return answer;
}

}  // namespace

ImdsSettings ImdsSettingsFrom(const Environment& env) {
  ImdsSettings s;
  s.disabled = env("AWS_EC2_METADATA_DISABLED").value_or("") == "true";
  s.endpoint = env("AWS_EC2_METADATA_SERVICE_ENDPOINT").value_or("");
  if (s.endpoint.empty()) s.endpoint = "http://169.254.169.254";
  while (s.endpoint.ends_with('/')) s.endpoint.pop_back();
  if (auto t = env("AWS_METADATA_SERVICE_TIMEOUT")) {
    char* end = nullptr;
    const double v = std::strtod(t->c_str(), &end);
    if (end != t->c_str() && v > 0) s.timeout_seconds = v;
  }
  if (auto n = env("AWS_METADATA_SERVICE_NUM_ATTEMPTS")) {
    const int v = std::atoi(n->c_str());
    if (v > 0) s.attempts = v;
  }
  return s;
}

Result<Credentials> FetchImdsCredentials(const ImdsSettings& imds) {
  // IMDSv2: a session token first; a service that refuses the PUT (IMDSv1
  // only) is asked without one.
  std::vector<std::string> headers;
  TFDIST_ASSIGN_OR_RETURN(const Answer token, Ask(imds, "PUT", "/latest/api/token",
                                                  {"X-aws-ec2-metadata-token-ttl-seconds: 21600"}));
  if (token.status == 200) {
    headers.push_back("X-aws-ec2-metadata-token: " + token.body);
  } else if (token.status != 403 && token.status != 404 && token.status != 405) {
    return Status::Unavailable(
        fmt::format("{}/latest/api/token answered HTTP {}", imds.endpoint, token.status));
  }
  const std::string base = "/latest/meta-data/iam/security-credentials/";
  TFDIST_ASSIGN_OR_RETURN(const Answer roles, Ask(imds, "GET", base, headers));
  if (roles.status != 200) {
    return Status::Unavailable(fmt::format("{}{} answered HTTP {} (no instance role attached?)",
                                           imds.endpoint, base, roles.status));
  }
  std::string role = roles.body.substr(0, roles.body.find('\n'));
  while (!role.empty() && (role.back() == '\r' || role.back() == ' ')) role.pop_back();
  if (role.empty()) {
    return Status::Unavailable(fmt::format("{}{} names no instance role", imds.endpoint, base));
  }
  TFDIST_ASSIGN_OR_RETURN(const Answer answer,
                          Ask(imds, "GET", base + AwsUriEncode(role, false), headers));
  const std::string where = fmt::format("{}{}{}", imds.endpoint, base, role);
  if (answer.status != 200) {
    return Status::Unavailable(fmt::format("{} answered HTTP {}", where, answer.status));
  }
  // Never quote the answer: it holds the secret.
  const nlohmann::json j = ParseJson(answer.body);
  auto text = [&](const char* key) -> std::string {
    if (!j.is_object()) return "";
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : "";
  };
  if (text("Code") != "Success" || text("AccessKeyId").empty() || text("SecretAccessKey").empty()) {
    return Status::Unavailable(
        fmt::format("{} gave no credentials (Code '{}', or no AccessKeyId and SecretAccessKey)",
                    where, text("Code")));
  }
  Credentials c{text("AccessKeyId"), text("SecretAccessKey"), text("Token"), std::nullopt};
  if (const std::string expiration = text("Expiration"); !expiration.empty()) {
    c.expiration = ParseIsoTime(expiration);
  }
  return c;
}

}  // namespace tfdist::io::s3
