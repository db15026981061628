// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// UTF-8 checks, quoting, terminal and JSON escapes, hex and base64.

#include "tfdist/base/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace tfdist {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not valid.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

constexpr char kHex[] = "0123456789abcdef";

bool IsControl(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }

// The code point of the valid `n`-byte sequence at s[i].
uint32_t CodePoint(std::string_view s, size_t i, size_t n) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (n == 1) return c;
  uint32_t cp = c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  return cp;
}

// Characters of more than one byte that a terminal acts on or that change
// how a line reads: the C1 controls (U+0080..U+009F: 8-bit CSI, OSC, ...),
// the line and paragraph separators, and the bidirectional overrides and
// isolates (text shown in another order than it is stored).
bool IsWideControl(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8Length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool IsPrintableUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8Length(s, i);
    if (n == 0 || (n == 1 && IsControl(static_cast<unsigned char>(s[i]))) ||
        (n > 1 && IsWideControl(CodePoint(s, i, n)))) {
      return false;
    }
    i += n;
  }
  return true;
}

namespace {

// The bytes of the UTF-8 sequence that lead byte `c` starts (1 for a byte
// that starts none: Utf8Length rejects it).
size_t SequenceLength(unsigned char c) {
  if ((c & 0xe0) == 0xc0) return 2;
  if ((c & 0xf0) == 0xe0) return 3;
  if ((c & 0xf8) == 0xf0) return 4;
  return 1;
}

}  // namespace

void PrintableUtf8Scan::Add(std::string_view piece) {
  if (!printable_) return;
  if (!pending_.empty()) {  // the character the last piece cut, finished
    const size_t need = SequenceLength(static_cast<unsigned char>(pending_[0]));
    const size_t take = std::min(need - pending_.size(), piece.size());
    pending_.append(piece.substr(0, take));
    piece.remove_prefix(take);
    if (pending_.size() < need) return;
    printable_ = IsPrintableUtf8(pending_);
    pending_.clear();
    if (!printable_) return;
  }
  // A character cut at the end waits for the next piece: a lead byte in the
  // last 3 whose sequence runs past the end.
  size_t end = piece.size();
  for (size_t k = 1; k <= 3 && k <= piece.size(); ++k) {
    const auto c = static_cast<unsigned char>(piece[piece.size() - k]);
    if ((c & 0xc0) == 0x80) continue;  // a continuation byte
    if (SequenceLength(c) > k) end = piece.size() - k;
    break;
  }
  printable_ = IsPrintableUtf8(piece.substr(0, end));
  if (printable_) pending_.assign(piece.substr(end));
}

namespace {

void AppendHexEscape(std::string& out, unsigned char c) {
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

// Appends `s` with C escapes: a backslash doubled, \n \r \t, and \xNN for
// each byte of a control character or of no valid UTF-8 sequence; `quote`
// (when not 0) is escaped too.
void AppendEscaped(std::string& out, std::string_view s, char quote) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8Length(s, i);
    const auto c = static_cast<unsigned char>(s[i]);
    if (n > 1) {
      if (IsWideControl(CodePoint(s, i, n))) {
        for (size_t k = 0; k < n; ++k) AppendHexEscape(out, static_cast<unsigned char>(s[i + k]));
      } else {
        out.append(s.substr(i, n));
      }
      i += n;
      continue;
    }
    if (quote != 0 && c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += quote;
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (n == 0 || IsControl(c)) {
      AppendHexEscape(out, c);
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
}

}  // namespace

std::string QuoteBytes(std::string_view s) {
  std::string out = "\"";
  AppendEscaped(out, s, '"');
  out += '"';
  return out;
}

bool IsTerminalSafe(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {  // the common case: printable ASCII
      ++i;
      continue;
    }
    const size_t n = Utf8Length(s, i);
    if (n <= 1 || IsWideControl(CodePoint(s, i, n))) return false;
    i += n;
  }
  return true;
}

std::string TerminalText(std::string_view s) {
  if (IsTerminalSafe(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  AppendEscaped(out, s, 0);
  return out;
}

std::string TerminalLines(std::string_view s) {
  if (IsTerminalSafe(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t start = 0; start < s.size();) {
    const size_t end = std::min(s.find('\n', start), s.size());
    AppendEscaped(out, s.substr(start, end - start), 0);
    if (end < s.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

void AppendJsonString(std::string& out, std::string_view s, bool ascii) {
  auto u = [&out](uint32_t v) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(v >> shift) & 15];
  };
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = Utf8Length(s, i);
    if (n == 0) {
      u(0xdc00 + c);  // a stray byte (always >= 0x80): Python's surrogate escape
      ++i;
      continue;
    }
    if (n > 1) {
      const uint32_t cp = CodePoint(s, i, n);
      if (!ascii) {
        out.append(s.substr(i, n));
      } else if (cp < 0x10000) {
        u(cp);
      } else {
        u(0xd800 + ((cp - 0x10000) >> 10));
        u(0xdc00 + ((cp - 0x10000) & 0x3ff));
      }
      i += n;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || (ascii && c == 0x7f)) {
          u(c);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

namespace {

// U+FDD0, a noncharacter (Unicode keeps them for a program's internal use),
// in UTF-8 and as a JSON escape.
constexpr std::string_view kByteMarker = "\xef\xb7\x90";
constexpr std::string_view kByteMarkerEscape = "\\ufdd0";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of the \uXXXX escape at json[i], or -1.
int32_t UnicodeEscapeAt(std::string_view json, size_t i) {
  if (i + 6 > json.size() || json[i] != '\\' || json[i + 1] != 'u') return -1;
  int32_t v = 0;
  for (size_t k = i + 2; k < i + 6; ++k) {
    const int h = HexValue(json[k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

}  // namespace

bool MarkJsonByteEscapes(std::string& json) {
  std::string out;
  size_t copied = 0;  // json[copied, i) is still to append to `out`
  auto replace = [&](size_t i, size_t length, std::string_view with) {
    out.append(json, copied, i - copied);
    out += with;
    copied = i + length;
  };
  bool after_high = false;  // the last thing seen was a \ud800..\udbff escape
  for (size_t i = 0; i < json.size();) {
    if (json[i] == '\\' && i + 1 < json.size()) {
      const int32_t v = UnicodeEscapeAt(json, i);
      if (v < 0) {  // another escape (\n, \\, \", ...)
        i += 2;
        after_high = false;
        continue;
      }
      if (v >= 0xdc80 && v <= 0xdcff && !after_high) {
        const char byte[] = {'\\', 'u', '0', '0', kHex[(v >> 4) & 15], kHex[v & 15]};
        replace(i, 6, std::string(kByteMarkerEscape) + std::string(byte, sizeof(byte)));
      } else if (v == 0xfdd0) {
        replace(i, 6, std::string(kByteMarkerEscape) + std::string(kByteMarkerEscape));
      }
      after_high = v >= 0xd800 && v <= 0xdbff;
      i += 6;
      continue;
    }
    if (json.compare(i, kByteMarker.size(), kByteMarker) == 0) {
      replace(i, kByteMarker.size(),
              std::string(kByteMarkerEscape) + std::string(kByteMarkerEscape));
      i += kByteMarker.size();
    } else {
      ++i;
    }
    after_high = false;
  }
  if (copied == 0) return false;
  out.append(json, copied);
  json = std::move(out);
  return true;
}

void UnmarkJsonBytes(std::string& s) {
  const size_t first = s.find(kByteMarker);
  if (first == std::string::npos) return;
  std::string out(s, 0, first);
  for (size_t i = first; i < s.size();) {
    if (s.compare(i, kByteMarker.size(), kByteMarker) == 0) {
      const size_t next = i + kByteMarker.size();
      if (s.compare(next, kByteMarker.size(), kByteMarker) == 0) {
        out += kByteMarker;
        i = next + kByteMarker.size();
        continue;
      }
      if (next + 1 < s.size()) {
        const auto a = static_cast<unsigned char>(s[next]);
        const auto b = static_cast<unsigned char>(s[next + 1]);
        if ((a == 0xc2 || a == 0xc3) && (b & 0xc0) == 0x80) {  // U+0080..U+00FF
          out += static_cast<char>(((a & 0x1f) << 6) | (b & 0x3f));
          i = next + 2;
          continue;
        }
      }
    }
    out += s[i++];
  }
  s = std::move(out);
}

std::string Abbreviate(std::string_view s, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xc0) == 0x80) continue;  // a continuation byte
    if (chars++ == max_chars) return fmt::format("{}...", s.substr(0, i));
  }
  return std::string(s);
}

std::string HexBytes(std::string_view s) {
  std::string out;
  out.reserve(s.size() * 3);
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0) out += ' ';
    out += fmt::format("{:02x}", static_cast<unsigned char>(s[i]));
  }
  return out;
}

std::string Base64(std::string_view s) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((s.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= s.size(); i += 3) {
    const uint32_t v = (static_cast<unsigned char>(s[i]) << 16) |
                       (static_cast<unsigned char>(s[i + 1]) << 8) |
                       static_cast<unsigned char>(s[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < s.size()) {
    uint32_t v = static_cast<unsigned char>(s[i]) << 16;
    if (i + 1 < s.size()) v |= static_cast<unsigned char>(s[i + 1]) << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < s.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<int64_t> ParseNonNegative(std::string_view name, std::string_view text) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < 0) {
    return Status::InvalidArgument(
        fmt::format("{}='{}' is not a non-negative integer", name, text));
  }
  return v;
}

}  // namespace tfdist
