// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Small text helpers shared by record labels, cat and the reports.

#ifndef TFDIST_BASE_TEXT_H_
#define TFDIST_BASE_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tfdist/base/result.h"

namespace tfdist {

// True when `s` is valid UTF-8 (no overlong forms or surrogates).
bool IsValidUtf8(std::string_view s);

// True when `s` is valid UTF-8 without control characters (tab excepted;
// C1 controls, line separators and bidirectional overrides count as
// controls): safe to print as a label.
bool IsPrintableUtf8(std::string_view s);

// IsPrintableUtf8 of a text given in pieces, cut anywhere (a character may
// be split between pieces): memory holds at most one unfinished character.
class PrintableUtf8Scan {
 public:
  // The next piece of the text.
  void Add(std::string_view piece);
  // Whether the pieces so far, joined, are printable UTF-8.
  bool printable() const { return printable_ && pending_.empty(); }

 private:
  bool printable_ = true;
  std::string pending_;  // the bytes of a character the last piece cut (at most 3)
};

// `s` between double quotes with C escapes (\n, \", \\, \xNN for bytes that
// are not printable UTF-8).
std::string QuoteBytes(std::string_view s);

// Text as tfdist shows it on a terminal (doc/names.md): a name or a message
// whose control characters are shown, never sent. Printable UTF-8 stays as
// it is; a backslash is doubled; newline, carriage return and tab become
// \n, \r, \t; every other byte of a control character (C0, DEL, the C1
// controls U+0080..U+009F, U+2028/U+2029 and the bidirectional overrides
// and isolates U+202A..U+202E, U+2066..U+2069) and every byte that is not
// part of valid UTF-8 becomes \xNN (lower-case hex). The escape is
// unambiguous: the bytes can be read back from it.
std::string TerminalText(std::string_view s);

// TerminalText for text of several lines: each line escaped, the newlines
// between them kept.
std::string TerminalLines(std::string_view s);

// True when TerminalText(s) == s.
bool IsTerminalSafe(std::string_view s);

// Appends `s` as a JSON string literal, quotes included. Bytes that are not
// part of valid UTF-8 (a file name can hold any) become Python's surrogate
// escapes: byte XX (always 0x80..0xff) is the lone surrogate U+DCXX,
// written \udcXX. Python's json.loads then os.fsencode (or
// .encode("utf-8", "surrogateescape")) give the exact bytes back;
// os.fsdecode makes the same string of them. Valid UTF-8 is written as
// nlohmann::json writes it; with `ascii`, every character past U+007E as
// \uXXXX (a surrogate pair past U+FFFF).
void AppendJsonString(std::string& out, std::string_view s, bool ascii);

// A JSON parser that reads Unicode (nlohmann::json among them) rejects a
// lone surrogate escape, which is how Python's json module writes a byte of
// a name that is not UTF-8 (AppendJsonString's \udcXX). These two let such a
// parser read them:
//  * MarkJsonByteEscapes rewrites, in the JSON text `json`, each lone
//    \udc80..\udcff escape as two escapes that the parser accepts: U+FDD0
//    (a noncharacter) then \u00XX; an U+FDD0 already there (raw or escaped)
//    becomes two. Returns whether it changed anything (when not, the parsed
//    strings need no UnmarkJsonBytes).
//  * UnmarkJsonBytes, on each string (and object key) the parser made of the
//    marked text, turns each U+FDD0 U+00XX back into byte XX and each
//    U+FDD0 U+FDD0 into one U+FDD0.
bool MarkJsonByteEscapes(std::string& json);
void UnmarkJsonBytes(std::string& s);

// `s` when it has at most `max_chars` characters (UTF-8 lead bytes), else
// its first `max_chars` characters and "...": a name or a number a message
// quotes from input of any length.
std::string Abbreviate(std::string_view s, size_t max_chars);

// Lower-case hex of `s`, bytes separated by spaces.
std::string HexBytes(std::string_view s);

// Standard base64 with padding.
std::string Base64(std::string_view s);

// The value of the variable `name`, `text`, as a non-negative integer (a
// launcher's rank or size). Error: InvalidArgument "NAME='TEXT' is not a
// non-negative integer".
Result<int64_t> ParseNonNegative(std::string_view name, std::string_view text);

}  // namespace tfdist

#endif  // TFDIST_BASE_TEXT_H_
