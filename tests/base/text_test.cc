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
