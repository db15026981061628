// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Text helpers and Status: UTF-8 checks, quoting, base64, exit codes.

#include "tfdist/base/text.h"

#include <doctest/doctest.h>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"

namespace tfdist {
namespace {

TEST_CASE("UTF-8 validity and printability are told apart") {
  CHECK(IsValidUtf8("plain"));
  CHECK(IsValidUtf8("caf\xc3\xa9"));
  CHECK_FALSE(IsValidUtf8("\xc3"));          // cut short
  CHECK_FALSE(IsValidUtf8("\xc0\xaf"));      // overlong
  CHECK_FALSE(IsValidUtf8("\xed\xa0\x80"));  // surrogate
  CHECK(IsPrintableUtf8("a\tb"));
  CHECK_FALSE(IsPrintableUtf8("a\nb"));
  CHECK(IsValidUtf8("a\nb"));
}

TEST_CASE("printability of a text in pieces is that of the whole, wherever it is cut") {
  const std::string texts[] = {
      "plain",
      "caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80!",  // 2-, 3- and 4-byte characters
      "a\nb",                                        // a control
      "a\xe2\x80\xae-cba",                           // U+202E split anywhere
      "\xc3",                                        // cut short at the end
      "\xc3\xa9\xa9",                                // a stray continuation byte
      "\xed\xa0\x80",                                // a surrogate
      "\xf0\x9f\x98",                                // a 4-byte character cut short
      "\xff",
      "",
  };
  for (const std::string& t : texts) {
    CAPTURE(t);
    // Every cut into two and three pieces, and one piece per byte.
    for (size_t i = 0; i <= t.size(); ++i) {
      for (size_t j = i; j <= t.size(); ++j) {
        PrintableUtf8Scan scan;
        scan.Add(std::string_view(t).substr(0, i));
        scan.Add(std::string_view(t).substr(i, j - i));
        scan.Add(std::string_view(t).substr(j));
        CHECK(scan.printable() == IsPrintableUtf8(t));
      }
    }
    PrintableUtf8Scan bytes;
    for (char c : t) bytes.Add(std::string_view(&c, 1));
    CHECK(bytes.printable() == IsPrintableUtf8(t));
  }
}

TEST_CASE("Abbreviate keeps the first characters, never cutting one in two") {
  CHECK(Abbreviate("short", 5) == "short");
  CHECK(Abbreviate("longer", 4) == "long...");
  CHECK(Abbreviate("", 0) == "");
  CHECK(Abbreviate("x", 0) == "...");
  CHECK(Abbreviate("\xc3\xa9\xc3\xa9\xc3\xa9", 2) == "\xc3\xa9\xc3\xa9...");
  CHECK(Abbreviate("\xc3\xa9\xc3\xa9", 2) == "\xc3\xa9\xc3\xa9");
  CHECK(Abbreviate(std::string(1 << 20, 'a'), 40) == std::string(40, 'a') + "...");
}

TEST_CASE("quoting escapes controls and invalid bytes but keeps UTF-8") {
  CHECK(QuoteBytes("a\"b\\c\n") == "\"a\\\"b\\\\c\\n\"");
  CHECK(QuoteBytes(std::string("\x00\xff", 2)) == "\"\\x00\\xff\"");
  CHECK(QuoteBytes("caf\xc3\xa9") == "\"caf\xc3\xa9\"");
  CHECK(HexBytes("\x01\xab") == "01 ab");
}

TEST_CASE("printable labels hold no C1 control, separator or bidirectional override") {
  CHECK_FALSE(IsPrintableUtf8("a\x1b[31mred"));
  CHECK_FALSE(IsPrintableUtf8(std::string("a\xc2\x9b") + "31mred"));  // U+009B, the 8-bit CSI
  CHECK_FALSE(
      IsPrintableUtf8(std::string("a\xe2\x80\xae") + "cba"));  // U+202E RIGHT-TO-LEFT OVERRIDE
  CHECK_FALSE(IsPrintableUtf8("a\xe2\x80\xa8"));               // U+2028 LINE SEPARATOR
  CHECK(IsPrintableUtf8("\xc2\xa0\xe2\x80\x94 caf\xc3\xa9"));  // U+00A0, U+2014 stay
  CHECK(QuoteBytes("\xc2\x9b") == "\"\\xc2\\x9b\"");
}

TEST_CASE("terminal text shows control characters and stray bytes, never sends them") {
  CHECK(TerminalText("data/train-00001.tfrecord") == "data/train-00001.tfrecord");
  CHECK(TerminalText("caf\xc3\xa9 \xe6\x97\xa5") == "caf\xc3\xa9 \xe6\x97\xa5");
  CHECK(TerminalText("a\x1b[31mred") == "a\\x1b[31mred");
  CHECK(TerminalText("line\nbreak\r\ttab") == "line\\nbreak\\r\\ttab");
  CHECK(TerminalText("\xff\xfe.tfrecord") == "\\xff\\xfe.tfrecord");
  CHECK(TerminalText(std::string("\xc2\x9b") + "2J") == "\\xc2\\x9b2J");
  CHECK(TerminalText("\xe2\x80\xae") == "\\xe2\\x80\\xae");
  CHECK(TerminalText(std::string("nul\x00", 4)) == "nul\\x00");
  CHECK(TerminalText("del\x7f") == "del\\x7f");
  // A backslash is doubled: "\x1b" as four characters is not ESC.
  CHECK(TerminalText("a\\x1b") == "a\\\\x1b");
  CHECK(TerminalText("\"quoted\"") == "\"quoted\"");
  CHECK(TerminalText("\xe2\x82") == "\\xe2\\x82");  // cut short
  CHECK(IsTerminalSafe("plain name"));
  CHECK_FALSE(IsTerminalSafe("tab\there"));
  CHECK_FALSE(IsTerminalSafe("back\\slash"));
  CHECK(TerminalLines("one\x1b\ntwo\\\n") == "one\\x1b\ntwo\\\\\n");
  // No byte below 0x20 or 0x7f..0x9f survives, whatever the input.
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  for (const char c : TerminalText(all + "\xc2\x80\xc2\x9f")) {
    const auto b = static_cast<unsigned char>(c);
    CHECK((b >= 0x20 && b != 0x7f));
  }
}

std::string JsonString(std::string_view s, bool ascii = false) {
  std::string out;
  AppendJsonString(out, s, ascii);
  return out;
}

TEST_CASE("JSON strings carry stray bytes as Python's surrogate escapes") {
  CHECK(JsonString("plain") == "\"plain\"");
  CHECK(JsonString("q\"b\\\n\t\x01") == "\"q\\\"b\\\\\\n\\t\\u0001\"");
  CHECK(JsonString("caf\xc3\xa9") == "\"caf\xc3\xa9\"");
  CHECK(JsonString("caf\xc3\xa9", true) == "\"caf\\u00e9\"");
  CHECK(JsonString("\xf0\x9f\x98\x80", true) == "\"\\ud83d\\ude00\"");
  // os.fsdecode(b"\xff\xfe.tfrecord") == "\udcff\udcfe.tfrecord"
  CHECK(JsonString("\xff\xfe.tfrecord") == "\"\\udcff\\udcfe.tfrecord\"");
  CHECK(JsonString("\xff\xfe.tfrecord", true) == "\"\\udcff\\udcfe.tfrecord\"");
  // A sequence cut short: each of its bytes, as Python's decoder does.
  CHECK(JsonString(std::string("\xe2\x82") + "a") == "\"\\udce2\\udc82a\"");
  CHECK(JsonString("\xed\xa0\x80") == "\"\\udced\\udca0\\udc80\"");  // an encoded surrogate
}

TEST_CASE("lone surrogate escapes are marked for a strict parser and read back as bytes") {
  std::string text = R"({"a\udcff": "x\udcff\udcfey", "pair": "\ud800\udc80", "esc": "\\udcff"})";
  REQUIRE(MarkJsonByteEscapes(text));
  CHECK(text.find("\\udcff") == text.find("\\\\udcff") + 1);  // only the escaped backslash's
  CHECK(text.find("\\ud800\\udc80") != std::string::npos);    // a pair stays
  std::string marked = "x\xef\xb7\x90\xc3\xbf\xef\xb7\x90\xc3\xbey";  // as a parser decodes it
  UnmarkJsonBytes(marked);
  CHECK(marked == "x\xff\xfey");
  // U+FDD0 already in the text survives the round trip, raw or escaped.
  std::string with_marker = "[\"\xef\xb7\x90\", \"\\uFDD0\\udc80\"]";
  REQUIRE(MarkJsonByteEscapes(with_marker));
  CHECK(with_marker == "[\"\\ufdd0\\ufdd0\", \"\\ufdd0\\ufdd0\\ufdd0\\u0080\"]");
  std::string decoded = "\xef\xb7\x90\xef\xb7\x90\xef\xb7\x90\xc2\x80";
  UnmarkJsonBytes(decoded);
  CHECK(decoded == "\xef\xb7\x90\x80");
  std::string plain = R"({"a": "b\n\u00e9\ud83d\ude00"})";
  const std::string before = plain;
  CHECK_FALSE(MarkJsonByteEscapes(plain));
  CHECK(plain == before);
}

TEST_CASE("base64 matches RFC 4648's test vectors") {
  CHECK(Base64("") == "");
  CHECK(Base64("f") == "Zg==");
  CHECK(Base64("fo") == "Zm8=");
  CHECK(Base64("foo") == "Zm9v");
  CHECK(Base64("foobar") == "Zm9vYmFy");
}

TEST_CASE("status codes map to the exit codes of the spec") {
  CHECK(ExitCodeFor(Status::OK()) == 0);
  CHECK(ExitCodeFor(Status::InvalidArgument("x")) == 2);
  CHECK(ExitCodeFor(Status::DataLoss("x")) == 3);
  CHECK(ExitCodeFor(Status::NotFound("x")) == 3);
  CHECK(ExitCodeFor(Status::Cancelled("x")) == 130);
  CHECK(Status::DataLoss("f: bad").ToString() == "DATA_LOSS: f: bad");
  CHECK(fmt::format("{}", Status::OK()) == "OK");
}

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument(fmt::format("{} is odd", x));
  return x / 2;
}

Result<int> Quarter(int x) {
  TFDIST_ASSIGN_OR_RETURN(int h, Half(x));
  TFDIST_RETURN_IF_ERROR(Half(h));
  return h / 2;
}

TEST_CASE("the error macros propagate the first failure") {
  CHECK(*Quarter(8) == 2);
  CHECK(Quarter(6).status().message() == "3 is odd");
  CHECK(Quarter(5).status().message() == "5 is odd");
}

}  // namespace
}  // namespace tfdist
