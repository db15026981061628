// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// S3's XML (listings, errors, STS's answers), read with expat: a streaming
// parser calls back per element, so a page of 1,000 keys becomes its
// ObjectInfos without a document tree in between, and a DTD (entity
// expansion) is refused outright.

#include <expat.h>
#include <fmt/format.h>

#include <charconv>
#include <ctime>
#include <string>
#include <vector>

#include "storage_s3_internal.h"

namespace tfdist::io::s3 {
namespace {

// Calls `on_end(path, text)` at the end of each element: `path` is the names
// from the root ("ListBucketResult/Contents/Key"), `text` its own
// characters. Returns false for a body that is not well-formed XML or has a
// DTD, with `error` saying why.
class XmlWalker {
 public:
  using OnEnd = std::function<void(const std::string& path, std::string& text)>;

  static bool Walk(std::string_view xml, const OnEnd& on_end, std::string& error) {
    XmlWalker w(on_end);
    XML_Parser parser = XML_ParserCreate("UTF-8");
    if (parser == nullptr) {
      error = "out of memory";
      return false;
    }
    XML_SetUserData(parser, &w);
    XML_SetElementHandler(parser, &XmlWalker::Start, &XmlWalker::End);
    XML_SetCharacterDataHandler(parser, &XmlWalker::Text);
    XML_SetStartDoctypeDeclHandler(parser, &XmlWalker::Doctype);
    w.parser_ = parser;
    const bool ok =
        XML_Parse(parser, xml.data(), static_cast<int>(xml.size()), XML_TRUE) == XML_STATUS_OK;
    if (!ok) {
      error = w.doctype_ ? std::string("it has a DTD")
                         : fmt::format("{} at line {}", XML_ErrorString(XML_GetErrorCode(parser)),
                                       XML_GetCurrentLineNumber(parser));
    }
    XML_ParserFree(parser);
    return ok;
  }

 private:
  explicit XmlWalker(const OnEnd& on_end) : on_end_(on_end) {}

  static void Start(void* data, const XML_Char* name, const XML_Char**) {
    auto* w = static_cast<XmlWalker*>(data);
    w->lengths_.push_back(w->path_.size());
    if (!w->path_.empty()) w->path_ += '/';
    std::string_view local = name;  // namespaces are not split: strip none
    w->path_ += local;
    w->texts_.emplace_back();
  }
  static void End(void* data, const XML_Char*) {
    auto* w = static_cast<XmlWalker*>(data);
    w->on_end_(w->path_, w->texts_.back());
    w->texts_.pop_back();
    w->path_.resize(w->lengths_.back());
    w->lengths_.pop_back();
  }
  static void Text(void* data, const XML_Char* s, int len) {
    auto* w = static_cast<XmlWalker*>(data);
    if (!w->texts_.empty()) w->texts_.back().append(s, static_cast<size_t>(len));
  }
  static void Doctype(void* data, const XML_Char*, const XML_Char*, const XML_Char*, int) {
    auto* w = static_cast<XmlWalker*>(data);
    w->doctype_ = true;
    XML_StopParser(w->parser_, XML_FALSE);
  }

  const OnEnd& on_end_;
  XML_Parser parser_ = nullptr;
  std::string path_;
  std::vector<size_t> lengths_;
  std::vector<std::string> texts_;
  bool doctype_ = false;
};

}  // namespace

Result<ListPage> ParseListPage(std::string_view xml, std::string_view bucket,
                               std::string_view url) {
  ListPage page;
  struct Entry {
    std::optional<std::string> key;
    std::optional<uint64_t> size;
    std::string etag;
  } entry;
  bool url_encoded = false, is_list = false;
  std::string bad;                // the first malformed field
  std::vector<std::string> keys;  // raw, decoded after the whole page (EncodingType may follow)
  std::vector<ObjectInfo> objects;
  auto on_end = [&](const std::string& path, std::string& text) {
    if (path == "ListBucketResult") {
      is_list = true;
    } else if (path == "ListBucketResult/IsTruncated") {
      page.truncated = text == "true";
    } else if (path == "ListBucketResult/NextContinuationToken") {
      page.next_token = std::move(text);
    } else if (path == "ListBucketResult/EncodingType") {
      url_encoded = text == "url";
    } else if (path == "ListBucketResult/Contents/Key") {
      entry.key = std::move(text);
    } else if (path == "ListBucketResult/Contents/Size") {
      uint64_t size = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), size);
      if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
        if (bad.empty()) bad = fmt::format("a Size of '{}'", text);
      } else {
        entry.size = size;
      }
    } else if (path == "ListBucketResult/Contents/ETag") {
      entry.etag = std::move(text);
    } else if (path == "ListBucketResult/Contents") {
      if ((!entry.key || !entry.size) && bad.empty()) bad = "a Contents without Key or Size";
      if (entry.key && entry.size) {
        keys.push_back(std::move(*entry.key));
        objects.push_back(ObjectInfo{"", *entry.size, std::move(entry.etag)});
      }
      entry = Entry();
    }
  };
  std::string error;
  if (!XmlWalker::Walk(xml, on_end, error)) {
    return Status::DataLoss(fmt::format("{}: the listing is not XML: {}", url, error));
  }
  if (!is_list) {
    return Status::DataLoss(fmt::format("{}: the answer is not a ListBucketResult", url));
  }
  if (!bad.empty()) {
    return Status::DataLoss(fmt::format("{}: the listing has {}", url, bad));
  }
  if (page.truncated && page.next_token.empty()) {
    return Status::DataLoss(fmt::format(
        "{}: the listing says it is truncated but gives no NextContinuationToken", url));
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    objects[i].name =
        fmt::format("s3://{}/{}", bucket,
                    url_encoded ? PercentDecode(keys[i], /*plus_is_space=*/true) : keys[i]);
  }
  page.objects = std::move(objects);
  return page;
}

std::pair<std::string, std::string> ParseErrorXml(std::string_view xml) {
  std::pair<std::string, std::string> out;
  auto on_end = [&](const std::string& path, std::string& text) {
    if (path == "Error/Code" || path == "ErrorResponse/Error/Code") out.first = std::move(text);
    if (path == "Error/Message" || path == "ErrorResponse/Error/Message") {
      out.second = std::move(text);
    }
  };
  // What came before a malformed part is kept: S3's Code and Message come
  // first, and a proxy's error may put an unescaped '&' (a listing's query)
  // in the Resource after them.
  std::string error;
  if (!xml.empty()) XmlWalker::Walk(xml, on_end, error);
  return out;
}

Result<Credentials> ParseStsCredentials(std::string_view xml, std::string_view url) {
  Credentials c;
  std::string expiration;
  const std::string prefix =
      "AssumeRoleWithWebIdentityResponse/AssumeRoleWithWebIdentityResult/Credentials/";
  auto on_end = [&](const std::string& path, std::string& text) {
    if (!path.starts_with(prefix)) return;
    std::string_view field = std::string_view(path).substr(prefix.size());
    if (field == "AccessKeyId") c.access_key_id = std::move(text);
    if (field == "SecretAccessKey") c.secret_access_key = std::move(text);
    if (field == "SessionToken") c.session_token = std::move(text);
    if (field == "Expiration") expiration = std::move(text);
  };
  std::string error;
  if (!XmlWalker::Walk(xml, on_end, error)) {
    return Status::DataLoss(fmt::format("{}: the STS answer is not XML: {}", url, error));
  }
  if (c.access_key_id.empty() || c.secret_access_key.empty() || c.session_token.empty()) {
    return Status::DataLoss(fmt::format(
        "{}: the STS answer has no Credentials (AccessKeyId, SecretAccessKey, SessionToken)", url));
  }
  if (!expiration.empty()) {
    c.expiration = ParseIsoTime(expiration);
    if (!c.expiration) {
      return Status::DataLoss(
          fmt::format("{}: the STS answer's Expiration '{}' is not a time", url, expiration));
    }
  }
  return c;
}

std::optional<std::chrono::system_clock::time_point> ParseIsoTime(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS, then fractional seconds, then Z or +00:00.
  std::tm tm{};
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || text[13] != ':' ||
      text[16] != ':') {
    return std::nullopt;
  }
  auto number = [&](size_t at, size_t len, int& out) {
    auto [end, ec] = std::from_chars(text.data() + at, text.data() + at + len, out);
    return ec == std::errc() && end == text.data() + at + len;
  };
  if (!number(0, 4, tm.tm_year) || !number(5, 2, tm.tm_mon) || !number(8, 2, tm.tm_mday) ||
      !number(11, 2, tm.tm_hour) || !number(14, 2, tm.tm_min) || !number(17, 2, tm.tm_sec)) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::string_view rest = text.substr(19);
  if (rest.starts_with('.')) {
    rest.remove_prefix(1);
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') rest.remove_prefix(1);
  }
  int offset_seconds = 0;
  if (rest == "Z" || rest == "z" || rest.empty()) {
  } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
    int hours = 0, minutes = 0;
    auto [e1, c1] = std::from_chars(rest.data() + 1, rest.data() + 3, hours);
    auto [e2, c2] = std::from_chars(rest.data() + 4, rest.data() + 6, minutes);
    if (c1 != std::errc() || c2 != std::errc()) return std::nullopt;
    offset_seconds = (rest[0] == '+' ? 1 : -1) * (hours * 3600 + minutes * 60);
  } else {
    return std::nullopt;
  }
  const std::time_t t = timegm(&tm);
  if (t == -1) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t - offset_seconds);
}

}  // namespace tfdist::io::s3
