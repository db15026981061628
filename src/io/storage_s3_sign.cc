// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// AWS Signature Version 4 for S3, with OpenSSL's HMAC-SHA256 and SHA-256
// (a well-kept implementation of both, already on every system that has
// libcurl with TLS; hand-written hashes would be one more thing to trust).

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "storage_s3_internal.h"

namespace tfdist::io::s3 {
namespace {

std::string Hex(const unsigned char* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(size * 2, '\0');
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 15];
  }
  return out;
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &size);
  return std::string(reinterpret_cast<const char*>(out), size);
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// A header value as SigV4 canonicalises it: trimmed, inner runs of spaces one.
std::string TrimValue(std::string_view value) {
  std::string out;
  bool space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

struct SplitUrl {
  std::string scheme, host, path, query;
};

Result<SplitUrl> Split(std::string_view url) {
  SplitUrl s;
  const size_t colon = url.find("://");
  if (colon == std::string_view::npos) {
    return Status::InvalidArgument(fmt::format("cannot sign a request for {}: no scheme", url));
  }
  s.scheme = Lower(url.substr(0, colon));
  std::string_view rest = url.substr(colon + 3);
  const size_t path_at = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_at);
  rest = path_at == std::string_view::npos ? std::string_view() : rest.substr(path_at);
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority = authority.substr(at + 1);
  s.host = Lower(authority);
  // curl leaves the scheme's own port out of the Host header it sends.
  const std::string default_port = s.scheme == "https" ? ":443" : ":80";
  if (s.host.size() > default_port.size() && s.host.ends_with(default_port)) {
    s.host.resize(s.host.size() - default_port.size());
  }
  if (s.host.empty()) {
    return Status::InvalidArgument(fmt::format("cannot sign a request for {}: no host", url));
  }
  const size_t q = rest.find('?');
  s.path = std::string(rest.substr(0, q));
  if (q != std::string_view::npos) s.query = std::string(rest.substr(q + 1));
  const size_t hash = s.query.find('#');
  if (hash != std::string::npos) s.query.resize(hash);
  return s;
}

std::string CanonicalUri(std::string_view path) {
  if (path.empty()) return "/";
  return AwsUriEncode(PercentDecode(path, false), true);
}

std::string CanonicalQuery(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> params;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (param.empty()) continue;
    const size_t eq = param.find('=');
    std::string_view key = param.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : param.substr(eq + 1);
    params.emplace_back(AwsUriEncode(PercentDecode(key, false), false),
                        AwsUriEncode(PercentDecode(value, false), false));
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [key, value] : params) {
    if (!out.empty()) out += '&';
    out += key;
    out += '=';
    out += value;
  }
  return out;
}

void RemoveHeader(http::Request& request, std::string_view name) {
  std::erase_if(request.headers, [&](const auto& h) { return Lower(h.first) == name; });
}

}  // namespace

// Returns the value of hex digit `c`, or -1.
static int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
        HexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else if (plus_is_space && text[i] == '+') {
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return Hex(digest, sizeof digest);
}

std::string AmzDate(std::chrono::system_clock::time_point time) {
  const std::time_t t = std::chrono::system_clock::to_time_t(time);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%Y%m%dT%H%M%SZ", &tm);
  return out;
}

std::string AwsUriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kDigits[c >> 4];
      out += kDigits[c & 15];
    }
  }
  return out;
}

Status SignV4(http::Request& request, const Credentials& credentials, std::string_view region,
              std::string_view amz_date) {
  TFDIST_ASSIGN_OR_RETURN(const SplitUrl url, Split(request.url));
  for (std::string_view name :
       {"authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"}) {
    RemoveHeader(request, name);
  }
  request.headers.emplace_back("x-amz-date", std::string(amz_date));
  request.headers.emplace_back("x-amz-content-sha256", Sha256Hex(request.body));
  if (!credentials.session_token.empty()) {
    request.headers.emplace_back("x-amz-security-token", credentials.session_token);
  }

  // Signed: host and every x-amz-* header (what curl --aws-sigv4 signs too);
  // Range and If-Match travel unsigned, which S3 allows.
  std::vector<std::pair<std::string, std::string>> signed_headers = {{"host", url.host}};
  for (const auto& [name, value] : request.headers) {
    std::string lower = Lower(name);
    if (lower.starts_with("x-amz-"))
      signed_headers.emplace_back(std::move(lower), TrimValue(value));
  }
  std::sort(signed_headers.begin(), signed_headers.end());
  std::string canonical_headers, signed_names;
  for (const auto& [name, value] : signed_headers) {
    canonical_headers += fmt::format("{}:{}\n", name, value);
    if (!signed_names.empty()) signed_names += ';';
    signed_names += name;
  }
  const std::string canonical = fmt::format(
      "{}\n{}\n{}\n{}\n{}\n{}", request.method, CanonicalUri(url.path), CanonicalQuery(url.query),
      canonical_headers, signed_names, Sha256Hex(request.body));
  const std::string_view date = amz_date.substr(0, 8);
  const std::string scope = fmt::format("{}/{}/s3/aws4_request", date, region);
  const std::string to_sign =
      fmt::format("AWS4-HMAC-SHA256\n{}\n{}\n{}", amz_date, scope, Sha256Hex(canonical));
  std::string key = HmacSha256("AWS4" + credentials.secret_access_key, date);
  key = HmacSha256(key, region);
  key = HmacSha256(key, "s3");
  key = HmacSha256(key, "aws4_request");
  const std::string signature = HmacSha256(key, to_sign);
  request.headers.emplace_back(
      "Authorization",
      fmt::format("AWS4-HMAC-SHA256 Credential={}/{}, SignedHeaders={}, Signature={}",
                  credentials.access_key_id, scope, signed_names,
                  Hex(reinterpret_cast<const unsigned char*>(signature.data()), signature.size())));
  return Status::OK();
}

}  // namespace tfdist::io::s3
