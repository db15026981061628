// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The AWS configuration as the AWS CLI and SDKs read it: the shared files,
// the environment, the endpoint and the addressing of buckets.

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "storage_s3_internal.h"

namespace tfdist::io::s3 {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A file's text; empty when it does not exist.
Result<std::string> ReadIfExists(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT || errno == ENOTDIR) return std::string();
    return Status::NotFound(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A path of the environment with "~/" read as the home folder, as the AWS
// CLI does.
std::string ExpandHome(const Environment& env, std::string path) {
  if (path == "~" || path.starts_with("~/")) {
    path = env("HOME").value_or("") + path.substr(1);
  }
  return path;
}

std::optional<std::string> NonEmpty(const Environment& env, const std::string& name) {
  std::optional<std::string> value = env(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

// "https://host:port/base" split; error naming `source` otherwise. A user
// or password in it is refused and never shown; so is a query or fragment,
// which no request could keep.
Result<Endpoint> ParseEndpoint(std::string_view url, std::string source) {
  Endpoint e;
  e.custom = true;
  e.source = std::move(source);
  const std::string shown = http::RedactUserinfo(url);
  const size_t colon = url.find("://");
  if (colon == std::string_view::npos) {
    return Status::InvalidArgument(fmt::format(
        "{} is '{}': an endpoint URL starts with http:// or https://", e.source, shown));
  }
  e.scheme = Lower(url.substr(0, colon));
  if (e.scheme != "http" && e.scheme != "https") {
    return Status::InvalidArgument(fmt::format(
        "{} is '{}': an endpoint URL starts with http:// or https://", e.source, shown));
  }
  std::string_view rest = url.substr(colon + 3);
  const size_t slash = rest.find('/');
  e.host = std::string(rest.substr(0, slash));
  if (e.host.find('@') != std::string::npos) {
    return Status::InvalidArgument(
        fmt::format("{} is '{}': an endpoint URL has no user or password (scheme://host[:port])",
                    e.source, shown));
  }
  if (slash != std::string_view::npos) {
    std::string_view base = rest.substr(slash);
    while (base.ends_with('/')) base.remove_suffix(1);
    e.base_path = std::string(base);
  }
  if (url.find_first_of("?#") != std::string_view::npos) {
    return Status::InvalidArgument(fmt::format(
        "{} is '{}': an endpoint URL has no query or fragment (scheme://host[:port][/path])",
        e.source, shown));
  }
  if (e.host.empty() || e.host.find_first_of(" ") != std::string::npos) {
    return Status::InvalidArgument(
        fmt::format("{} is '{}': not an endpoint URL (scheme://host[:port])", e.source, shown));
  }
  return e;
}

// tensorflow-io's boolean variables: "0" and "false" are false.
bool FlagValue(std::string_view value) {
  const std::string v = Lower(Trim(value));
  return !(v == "0" || v == "false" || v == "no" || v == "off");
}

}  // namespace

Environment ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

IniSections ParseIni(std::string_view text) {
  IniSections sections;
  std::map<std::string, std::string, std::less<>>* section = nullptr;
  std::string nested;  // the key of an open nested block ("s3")
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    const bool indented = !line.empty() && (line.front() == ' ' || line.front() == '\t');
    line = Trim(line);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      const size_t close = line.find(']');
      const std::string name(
          Trim(line.substr(1, close == std::string_view::npos ? line.size() - 1 : close - 1)));
      section = &sections[name];
      nested.clear();
      continue;
    }
    if (section == nullptr) continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string key = Lower(Trim(line.substr(0, eq)));
    std::string_view value = Trim(line.substr(eq + 1));
    if (indented && !nested.empty()) {
      (*section)[nested + "." + key] = std::string(value);
      continue;
    }
    nested.clear();
    if (value.empty()) {
      nested = key;  // "s3 =" opens a block of indented keys
      continue;
    }
    // An inline comment needs a space before it, as the AWS CLI reads them.
    for (std::string_view mark : {" #", " ;", "\t#", "\t;"}) {
      const size_t at = value.find(mark);
      if (at != std::string_view::npos) value = Trim(value.substr(0, at));
    }
    (*section)[key] = std::string(value);
  }
  return sections;
}

const std::string* Profile::Find(std::string_view key) const {
  auto it = keys.find(key);
  return it == keys.end() ? nullptr : &it->second;
}

Result<Profile> LoadProfile(const Environment& env) {
  Profile p;
  p.name = NonEmpty(env, "AWS_PROFILE")
               .value_or(NonEmpty(env, "AWS_DEFAULT_PROFILE").value_or("default"));
  p.credentials_file =
      ExpandHome(env, NonEmpty(env, "AWS_SHARED_CREDENTIALS_FILE").value_or("~/.aws/credentials"));
  p.config_file = ExpandHome(env, NonEmpty(env, "AWS_CONFIG_FILE").value_or("~/.aws/config"));
  TFDIST_ASSIGN_OR_RETURN(const std::string config_text, ReadIfExists(p.config_file));
  TFDIST_ASSIGN_OR_RETURN(const std::string credentials_text, ReadIfExists(p.credentials_file));
  const IniSections config = ParseIni(config_text);
  // The config file names a profile "[profile NAME]", the default "[default]"
  // (or "[profile default]").
  for (const std::string& section :
       {p.name == "default" ? std::string("default") : std::string(), "profile " + p.name}) {
    auto it = config.find(section);
    if (section.empty() || it == config.end()) continue;
    p.found = true;
    for (const auto& [key, value] : it->second) p.keys[key] = value;
  }
  const IniSections credentials = ParseIni(credentials_text);
  if (auto it = credentials.find(p.name); it != credentials.end()) {
    p.found = true;
    for (const auto& [key, value] : it->second) {
      p.keys[key] = value;
      p.credentials_keys[key] = value;
    }
  }
  return p;
}

Result<Config> LoadConfig(const Environment& env, const Profile& profile) {
  Config c;
  if (auto v = NonEmpty(env, "AWS_REGION")) {
    c.region = *v, c.region_source = "AWS_REGION";
  } else if (auto d = NonEmpty(env, "AWS_DEFAULT_REGION")) {
    c.region = *d, c.region_source = "AWS_DEFAULT_REGION";
  } else if (const std::string* r = profile.Find("region"); r != nullptr && !r->empty()) {
    c.region = *r;
    c.region_source = fmt::format("profile '{}' of {}", profile.name, profile.config_file);
  } else {
    c.region = "us-east-1", c.region_source = "the default";
  }
  if (c.region.find_first_of("/ \t\n") != std::string::npos) {
    return Status::InvalidArgument(
        fmt::format("the region '{}' (from {}) is not a region name", c.region, c.region_source));
  }

  // The endpoint: the AWS variables, the profile, tensorflow-io's, AWS's own.
  const std::string profile_where =
      fmt::format("endpoint_url of profile '{}' in {}", profile.name, profile.config_file);
  if (auto v = NonEmpty(env, "AWS_ENDPOINT_URL_S3")) {
    TFDIST_ASSIGN_OR_RETURN(c.endpoint, ParseEndpoint(*v, "AWS_ENDPOINT_URL_S3"));
  } else if (auto u = NonEmpty(env, "AWS_ENDPOINT_URL")) {
    TFDIST_ASSIGN_OR_RETURN(c.endpoint, ParseEndpoint(*u, "AWS_ENDPOINT_URL"));
  } else if (const std::string* s = profile.Find("s3.endpoint_url"); s != nullptr && !s->empty()) {
    TFDIST_ASSIGN_OR_RETURN(c.endpoint,
                            ParseEndpoint(*s, fmt::format("s3 endpoint_url of profile '{}' in {}",
                                                          profile.name, profile.config_file)));
  } else if (const std::string* e = profile.Find("endpoint_url"); e != nullptr && !e->empty()) {
    TFDIST_ASSIGN_OR_RETURN(c.endpoint, ParseEndpoint(*e, profile_where));
  } else if (auto t = NonEmpty(env, "S3_ENDPOINT")) {
    // tensorflow-io's: a host[:port] (a scheme is allowed), HTTPS unless
    // S3_USE_HTTPS=0.
    std::string url = *t;
    if (url.find("://") == std::string::npos) {
      const bool https = FlagValue(env("S3_USE_HTTPS").value_or("1"));
      url = (https ? "https://" : "http://") + url;
    }
    TFDIST_ASSIGN_OR_RETURN(c.endpoint, ParseEndpoint(url, "S3_ENDPOINT"));
  } else {
    c.endpoint.scheme = "https";
    c.endpoint.host = fmt::format("s3.{}.amazonaws.com", c.region);
    c.endpoint.source = "AWS's endpoint for region " + c.region;
  }

  if (const std::string* style = profile.Find("s3.addressing_style")) {
    const std::string s = Lower(*style);
    if (s == "path") {
      c.addressing = AddressingStyle::kPath;
    } else if (s == "virtual") {
      c.addressing = AddressingStyle::kVirtual;
    } else if (s == "auto" || s.empty()) {
      c.addressing = AddressingStyle::kAuto;
    } else {
      return Status::InvalidArgument(fmt::format(
          "s3 addressing_style of profile '{}' in {} is '{}'; it is auto, path or virtual",
          profile.name, profile.config_file, *style));
    }
  }

  if (auto bundle = NonEmpty(env, "AWS_CA_BUNDLE")) {
    c.ca_bundle = ExpandHome(env, *bundle);
  } else if (const std::string* b = profile.Find("ca_bundle"); b != nullptr && !b->empty()) {
    c.ca_bundle = ExpandHome(env, *b);
  }

  // tensorflow-io's S3_VERIFY_SSL=0: only where an endpoint was named, never
  // for AWS's own; over http:// there is nothing to verify.
  if (auto verify = NonEmpty(env, "S3_VERIFY_SSL"); verify && !FlagValue(*verify)) {
    if (!c.endpoint.custom) {
      return Status::InvalidArgument(
          "S3_VERIFY_SSL=0 turns off the checking of TLS certificates, which tfdist does only "
          "for an endpoint named by AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, endpoint_url or "
          "S3_ENDPOINT; none is set, so AWS's endpoint would be read unverified");
    }
    if (c.endpoint.scheme == "https") {
      c.verify_tls = false;
      c.warnings.push_back(
          fmt::format("S3_VERIFY_SSL=0: the TLS certificate of {} (from {}) is not verified",
                      c.endpoint.host, c.endpoint.source));
    }
  }
  return c;
}

bool IsVirtualHostable(std::string_view bucket, bool https) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(bucket.front()) || !alnum(bucket.back())) return false;
  bool all_digits_and_dots = true;
  for (size_t i = 0; i < bucket.size(); ++i) {
    const char c = bucket[i];
    if (!alnum(c) && c != '-' && c != '.') return false;
    if (c == '.' &&
        (https || bucket[i - 1] == '.' || bucket[i - 1] == '-' || bucket[i + 1] == '-')) {
      return false;
    }
    if (c != '.' && !(c >= '0' && c <= '9')) all_digits_and_dots = false;
  }
  return !all_digits_and_dots;  // "192.168.1.1" would be an address
}

bool UsesPathStyle(const Config& config, std::string_view bucket) {
  const bool hostable = IsVirtualHostable(bucket, config.endpoint.scheme == "https");
  switch (config.addressing) {
    case AddressingStyle::kPath:
      return true;
    case AddressingStyle::kVirtual:
      return !hostable;  // a name that cannot be a host label has only the path
    case AddressingStyle::kAuto:
      break;
  }
  // S3-compatible stores (MinIO, Ceph, s3rver) rarely resolve BUCKET.host.
  return config.endpoint.custom || !hostable;
}

std::string ObjectUrl(const Config& config, std::string_view bucket, std::string_view key,
                      std::string_view query) {
  const Endpoint& e = config.endpoint;
  std::string url;
  if (UsesPathStyle(config, bucket)) {
    // The bucket itself (a listing) is "/BUCKET", without a slash after it.
    url = fmt::format("{}://{}{}/{}", e.scheme, e.host, e.base_path, AwsUriEncode(bucket, false));
    if (!key.empty()) url += "/" + AwsUriEncode(key, true);
  } else {
    url = fmt::format("{}://{}.{}{}/{}", e.scheme, bucket, e.host, e.base_path,
                      AwsUriEncode(key, true));
  }
  if (!query.empty()) {
    url += '?';
    url += query;
  }
  return url;
}

}  // namespace tfdist::io::s3
