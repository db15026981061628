// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// JSON with names that are not UTF-8: written and read as Python's
// surrogate escapes; nesting checked before a parse.

#include "tfdist/base/json.h"

#include <vector>

#include "tfdist/base/text.h"

namespace tfdist {

namespace {

template <class Json>
void AppendJson(std::string& out, const Json& j, bool ascii) {
  if (j.is_string()) {
    AppendJsonString(out, j.template get_ref<const std::string&>(), ascii);
  } else if (j.is_object()) {
    out += '{';
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it != j.begin()) out += ',';
      AppendJsonString(out, it.key(), ascii);
      out += ':';
      AppendJson(out, it.value(), ascii);
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it != j.begin()) out += ',';
      AppendJson(out, *it, ascii);
    }
    out += ']';
  } else {
    out += j.dump(-1, ' ', ascii);
  }
}

template <class Json>
std::string DumpAny(const Json& j, bool ascii) {
  if (j.is_string()) {  // an element label: no exception per name that is not UTF-8
    std::string out;
    AppendJsonString(out, j.template get_ref<const std::string&>(), ascii);
    return out;
  }
  try {
    return j.dump(-1, ' ', ascii, Json::error_handler_t::strict);
  } catch (const nlohmann::json::type_error& e) {
    if (e.id != 316) throw;  // 316: a string that is not UTF-8
  }
  std::string out;
  AppendJson(out, j, ascii);
  return out;
}

}  // namespace

std::string DumpJson(const nlohmann::ordered_json& j, bool ascii) { return DumpAny(j, ascii); }
std::string DumpJson(const nlohmann::json& j, bool ascii) { return DumpAny(j, ascii); }

bool JsonNestsDeeperThan(std::string_view text, size_t limit) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote included
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

nlohmann::json ParseJson(std::string text) {
  if (JsonNestsDeeperThan(text, kMaxJsonDepth))
    return nlohmann::json(nlohmann::json::value_t::discarded);
  const bool marked = MarkJsonByteEscapes(text);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!marked || j.is_discarded()) return j;
  // Every string and key, without recursion (the text is not trusted).
  std::vector<nlohmann::json*> todo = {&j};
  while (!todo.empty()) {
    nlohmann::json& v = *todo.back();
    todo.pop_back();
    if (v.is_string()) {
      UnmarkJsonBytes(v.get_ref<std::string&>());
    } else if (v.is_array()) {
      for (nlohmann::json& item : v) todo.push_back(&item);
    } else if (v.is_object()) {
      std::vector<std::string> keys;
      for (auto it = v.begin(); it != v.end(); ++it) keys.push_back(it.key());
      for (const std::string& key : keys) {
        std::string bytes = key;
        UnmarkJsonBytes(bytes);
        if (bytes != key) {
          nlohmann::json moved = std::move(v[key]);
          v.erase(key);
          v[bytes] = std::move(moved);
        }
      }
      for (auto it = v.begin(); it != v.end(); ++it) todo.push_back(&it.value());
    }
  }
  return j;
}

nlohmann::json StatusToJson(const Status& status) {
  nlohmann::json j;
  j["code"] = static_cast<int>(status.code());
  j["message"] = status.message();
  if (status.position()) j["position"] = *status.position();
  if (status.advice().remedy != Remedy::kNone) {
    j["remedy"] = static_cast<int>(status.advice().remedy);
    j["subject"] = status.advice().subject;
  }
  return j;
}

std::optional<Status> StatusFromJson(const nlohmann::json& j) {
  auto has = [&](const char* key, bool (nlohmann::json::*is)() const noexcept) {
    return j.contains(key) && (j[key].*is)();
  };
  if (!j.is_object() || !has("code", &nlohmann::json::is_number_integer) ||
      !has("message", &nlohmann::json::is_string)) {
    return std::nullopt;
  }
  Status s(static_cast<StatusCode>(j["code"].get<int>()), j["message"].get<std::string>());
  if (has("position", &nlohmann::json::is_number_unsigned)) {
    s = std::move(s).WithPosition(j["position"].get<size_t>());
  }
  if (has("remedy", &nlohmann::json::is_number_integer) &&
      has("subject", &nlohmann::json::is_string)) {
    s = std::move(s).WithAdvice(static_cast<Remedy>(j["remedy"].get<int>()),
                                j["subject"].get<std::string>());
  }
  return s;
}

}  // namespace tfdist
