// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Lexer and recursive-descent parser of pipeline expressions.

#include "expression.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "tfdist/base/text.h"
#include "tfdist/data/pipeline.h"

namespace tfdist::data {
namespace {

struct Token {
  enum class Kind { kName, kInt, kFloat, kString, kPunct, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;  // the name, the string's value, the punctuation, or the digits
  size_t pos = 0;
};

// The most characters of a name or a number a message quotes: the line
// quoted under it shows the rest (report.cc quotes a window of it).
constexpr size_t kQuotedChars = 40;

std::string Describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::kName:
      return fmt::format("'{}'", Abbreviate(t.text, kQuotedChars));
    case Token::Kind::kInt:
    case Token::Kind::kFloat:
      return fmt::format("the number {}", Abbreviate(t.text, kQuotedChars));
    case Token::Kind::kString:
      return "a string";
    case Token::Kind::kPunct:
      return fmt::format("'{}'", t.text);
    case Token::Kind::kEnd:
      return "the end of the expression";
  }
  return "?";
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<Chain> Parse() {
    TFDIST_RETURN_IF_ERROR(Tokenize());
    // Accept what users paste: "dataset = (tf.data...)" and outer parentheses.
    if (Peek().kind == Token::Kind::kName && Peek(1).text == "=" &&
        Peek(1).kind == Token::Kind::kPunct) {
      i_ += 2;
    }
    int parens = 0;
    while (IsPunct(Peek(), "(")) {
      ++i_;
      ++parens;
    }
    Chain chain;
    Call source;
    TFDIST_RETURN_IF_ERROR(ParseDottedName(source.name, source.pos,
                                           "a source such as "
                                           "list_files(...), tfrecord(...) or range(...)"));
    TFDIST_RETURN_IF_ERROR(ParseArgs(source));
    chain.calls.push_back(std::move(source));
    while (IsPunct(Peek(), ".")) {
      ++i_;
      const Token& name = Peek();
      if (name.kind != Token::Kind::kName) {
        return Error(name, fmt::format("expected a method name after '.'; got {}", Describe(name)));
      }
      if (chain.calls.size() > kMaxMethodCalls) {
        return Error(name, fmt::format("a pipeline takes at most {} method calls after its source",
                                       kMaxMethodCalls));
      }
      Call call;
      call.name = name.text;
      call.pos = name.pos;
      ++i_;
      TFDIST_RETURN_IF_ERROR(ParseArgs(call));
      chain.calls.push_back(std::move(call));
    }
    for (; parens > 0; --parens) TFDIST_RETURN_IF_ERROR(Expect(")", "')' to close '('"));
    if (Peek().kind != Token::Kind::kEnd) {
      return Error(Peek(),
                   fmt::format("expected '.' and a method, or the end; got {}", Describe(Peek())));
    }
    return chain;
  }

 private:
  Status Tokenize() {
    size_t p = 0;
    while (p < text_.size()) {
      const char c = text_[p];
      if (c == '#') {  // a comment runs to the end of the line
        while (p < text_.size() && text_[p] != '\n') ++p;
        continue;
      }
      if (c == '\\' && p + 1 < text_.size() && text_[p + 1] == '\n') {  // line continuation
        p += 2;
        continue;
      }
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++p;
        continue;
      }
      Token t;
      t.pos = p;
      // b"..." is a bytes literal: its value is the string's.
      const bool bytes_prefix = (c == 'b' || c == 'B') && p + 1 < text_.size() &&
                                (text_[p + 1] == '"' || text_[p + 1] == '\'');
      if (bytes_prefix) ++p;
      const char q = text_[p];
      const bool number_start = std::isdigit(static_cast<unsigned char>(c)) ||
                                (c == '.' && p + 1 < text_.size() &&
                                 std::isdigit(static_cast<unsigned char>(text_[p + 1])) &&
                                 !tokens_.empty() && tokens_.back().kind == Token::Kind::kPunct &&
                                 tokens_.back().text != ")" && tokens_.back().text != "]");
      if (bytes_prefix) {
        TFDIST_RETURN_IF_ERROR(LexString(p, q, t));
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        t.kind = Token::Kind::kName;
        while (p < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[p])) || text_[p] == '_')) {
          ++p;
        }
        t.text = std::string(text_.substr(t.pos, p - t.pos));
      } else if (number_start) {
        // An integer, or a float with a fraction or an exponent: 1.5, 2., .5, 1e-3.
        auto is_digit = [&](size_t i) {
          return i < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i]));
        };
        t.kind = Token::Kind::kInt;
        while (is_digit(p) || (p < text_.size() && text_[p] == '_')) ++p;
        if (p < text_.size() && text_[p] == '.' &&
            (p + 1 >= text_.size() || !std::isalpha(static_cast<unsigned char>(text_[p + 1])))) {
          t.kind = Token::Kind::kFloat;
          ++p;
          while (is_digit(p)) ++p;
        }
        if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
          const size_t sign = p + 1 < text_.size() && (text_[p + 1] == '-' || text_[p + 1] == '+');
          if (is_digit(p + 1 + sign)) {
            t.kind = Token::Kind::kFloat;
            p += 1 + sign;
            while (is_digit(p)) ++p;
          }
        }
        // Letters run on into the token, so "12abc" is reported whole.
        while (p < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[p])) || text_[p] == '_')) {
          ++p;
        }
        t.text = std::string(text_.substr(t.pos, p - t.pos));
      } else if (c == '"' || c == '\'') {
        TFDIST_RETURN_IF_ERROR(LexString(p, c, t));
      } else if (std::string_view("().,=[]:-{}").find(c) != std::string_view::npos) {
        t.kind = Token::Kind::kPunct;
        t.text = std::string(1, c);
        ++p;
      } else {
        return ErrorAt(p, fmt::format("unexpected character '{}'", c));
      }
      tokens_.push_back(std::move(t));
    }
    Token end;
    end.pos = text_.size();
    tokens_.push_back(end);
    return Status::OK();
  }

  // A quoted string from text_[p] (the quote `q`); leaves p after it.
  Status LexString(size_t& p, char q, Token& t) {
    t.kind = Token::Kind::kString;
    ++p;
    for (;;) {
      if (p >= text_.size() || text_[p] == '\n') {
        return ErrorAt(t.pos, "this string is not closed");
      }
      if (text_[p] == q) {
        ++p;
        return Status::OK();
      }
      if (text_[p] == '\\' && p + 1 < text_.size()) {
        const char e = text_[p + 1];
        t.text += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        p += 2;
        continue;
      }
      t.text += text_[p++];
    }
  }

  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(i_ + ahead, tokens_.size() - 1)];
  }
  static bool IsPunct(const Token& t, std::string_view p) {
    return t.kind == Token::Kind::kPunct && t.text == p;
  }

  Status ErrorAt(size_t pos, std::string what) { return PositionError(text_, pos, what); }
  Status Error(const Token& t, std::string what) { return ErrorAt(t.pos, std::move(what)); }

  Status Expect(std::string_view punct, std::string_view what) {
    if (!IsPunct(Peek(), punct)) {
      return Error(Peek(), fmt::format("expected {}; got {}", what, Describe(Peek())));
    }
    ++i_;
    return Status::OK();
  }

  Status ParseDottedName(std::string& name, size_t& pos, std::string_view what) {
    if (Peek().kind != Token::Kind::kName) {
      return Error(Peek(), fmt::format("expected {}; got {}", what, Describe(Peek())));
    }
    pos = Peek().pos;
    name = Peek().text;
    ++i_;
    while (IsPunct(Peek(), ".") && Peek(1).kind == Token::Kind::kName && !IsPunct(Peek(2), "(")) {
      name += "." + Peek(1).text;
      i_ += 2;
    }
    // The last component before "(" belongs to the name too.
    if (IsPunct(Peek(), ".") && Peek(1).kind == Token::Kind::kName && IsPunct(Peek(2), "(") &&
        !source_done_) {
      name += "." + Peek(1).text;
      i_ += 2;
    }
    source_done_ = true;
    return Status::OK();
  }

  Status ParseArgs(Call& call) {
    call.args_pos = Peek().pos;
    TFDIST_RETURN_IF_ERROR(Expect("(", fmt::format("'(' after {}", call.name)));
    while (!IsPunct(Peek(), ")")) {
      Arg arg;
      arg.pos = Peek().pos;
      if (Peek().kind == Token::Kind::kName && IsPunct(Peek(1), "=")) {
        arg.keyword = Peek().text;
        i_ += 2;
      }
      TFDIST_RETURN_IF_ERROR(ParseExpr(arg.value));
      call.args.push_back(std::move(arg));
      if (IsPunct(Peek(), ",")) {
        ++i_;
        continue;
      }
      if (!IsPunct(Peek(), ")")) {
        return Error(Peek(), fmt::format("expected ',' or ')' in the arguments of {}(); got {}",
                                         call.name, Describe(Peek())));
      }
    }
    ++i_;
    return Status::OK();
  }

  Status ParseExpr(Expr& e) {
    // Values nest (lists, calls, lambdas); a bound keeps hostile input from
    // exhausting the stack.
    constexpr int kMaxDepth = 64;
    if (depth_ >= kMaxDepth) {
      return Error(Peek(), fmt::format("values nest more than {} deep", kMaxDepth));
    }
    ++depth_;
    Status s = ParseValue(e);
    --depth_;
    return s;
  }

  Status ParseValue(Expr& e) {
    const Token& t = Peek();
    e.pos = t.pos;
    if (IsPunct(t, "-") && Peek(1).kind == Token::Kind::kInt) {
      ++i_;
      TFDIST_RETURN_IF_ERROR(ParseInt(Peek(), e, true));
      e.pos = t.pos;
      ++i_;
      return Status::OK();
    }
    if (IsPunct(t, "-") && Peek(1).kind == Token::Kind::kFloat) {
      ++i_;
      TFDIST_RETURN_IF_ERROR(ParseFloat(Peek(), e));
      e.real = -e.real;
      e.pos = t.pos;
      ++i_;
      return Status::OK();
    }
    switch (t.kind) {
      case Token::Kind::kInt:
        TFDIST_RETURN_IF_ERROR(ParseInt(t, e));
        ++i_;
        return Status::OK();
      case Token::Kind::kFloat:
        TFDIST_RETURN_IF_ERROR(ParseFloat(t, e));
        ++i_;
        return Status::OK();
      case Token::Kind::kString:
        e.kind = Expr::Kind::kString;
        e.text = t.text;
        ++i_;
        // Adjacent strings join, as in Python.
        while (Peek().kind == Token::Kind::kString) e.text += tokens_[i_++].text;
        return Status::OK();
      case Token::Kind::kName:
        if (t.text == "lambda") return ParseLambda(e);
        e.kind = Expr::Kind::kName;
        e.text = t.text;
        ++i_;
        while (IsPunct(Peek(), ".") && Peek(1).kind == Token::Kind::kName) {
          e.text += "." + Peek(1).text;
          i_ += 2;
        }
        if (IsPunct(Peek(), "(")) {
          Call call;
          call.name = e.text;
          call.pos = e.pos;
          TFDIST_RETURN_IF_ERROR(ParseArgs(call));
          if (IsMethodNext()) return ParseChainValue(std::move(call), e);
          e.kind = Expr::Kind::kCall;
          e.args = std::move(call.args);
        }
        return Status::OK();
      case Token::Kind::kPunct:
        if (t.text == "[") {
          e.kind = Expr::Kind::kList;
          ++i_;
          while (!IsPunct(Peek(), "]")) {
            Expr item;
            TFDIST_RETURN_IF_ERROR(ParseExpr(item));
            e.items.push_back(std::move(item));
            if (IsPunct(Peek(), ",")) {
              ++i_;
              continue;
            }
            if (!IsPunct(Peek(), "]")) {
              return Error(Peek(),
                           fmt::format("expected ',' or ']' in a list; got {}", Describe(Peek())));
            }
          }
          ++i_;
          return Status::OK();
        }
        if (t.text == "(") return ParseTuple(e);
        if (t.text == "{") return ParseDict(e);
        break;
      case Token::Kind::kEnd:
        break;
    }
    return Error(t, fmt::format("expected a value (a number, a string, a list or a name); got {}",
                                Describe(t)));
  }

  // ".name(" follows: a call goes on as a method chain.
  bool IsMethodNext() const {
    return IsPunct(Peek(), ".") && Peek(1).kind == Token::Kind::kName && IsPunct(Peek(2), "(");
  }

  // A method chain as a value (concatenate's dataset), from its source call.
  Status ParseChainValue(Call source, Expr& e) {
    e.kind = Expr::Kind::kChain;
    e.calls.push_back(std::move(source));
    while (IsMethodNext()) {
      if (e.calls.size() > kMaxMethodCalls) {
        return Error(Peek(1), fmt::format("a pipeline takes at most {} method calls after its "
                                          "source",
                                          kMaxMethodCalls));
      }
      Call call;
      call.name = Peek(1).text;
      call.pos = Peek(1).pos;
      i_ += 2;
      TFDIST_RETURN_IF_ERROR(ParseArgs(call));
      e.calls.push_back(std::move(call));
    }
    return Status::OK();
  }

  // "(x)" is x; "()", "(x,)" and "(x, y)" are tuples.
  Status ParseTuple(Expr& e) {
    ++i_;  // (
    std::vector<Expr> items;
    bool comma = false;
    while (!IsPunct(Peek(), ")")) {
      Expr item;
      TFDIST_RETURN_IF_ERROR(ParseExpr(item));
      items.push_back(std::move(item));
      if (IsPunct(Peek(), ",")) {
        comma = true;
        ++i_;
        continue;
      }
      if (!IsPunct(Peek(), ")")) {
        return Error(Peek(),
                     fmt::format("expected ',' or ')' in a tuple; got {}", Describe(Peek())));
      }
    }
    ++i_;
    if (items.size() == 1 && !comma) {
      e = std::move(items[0]);
      return Status::OK();
    }
    e.kind = Expr::Kind::kTuple;
    e.items = std::move(items);
    return Status::OK();
  }

  Status ParseDict(Expr& e) {
    ++i_;  // {
    e.kind = Expr::Kind::kDict;
    while (!IsPunct(Peek(), "}")) {
      Expr key, value;
      TFDIST_RETURN_IF_ERROR(ParseExpr(key));
      TFDIST_RETURN_IF_ERROR(Expect(":", "':' after a dict key"));
      TFDIST_RETURN_IF_ERROR(ParseExpr(value));
      e.items.push_back(std::move(key));
      e.items.push_back(std::move(value));
      if (IsPunct(Peek(), ",")) {
        ++i_;
        continue;
      }
      if (!IsPunct(Peek(), "}")) {
        return Error(Peek(),
                     fmt::format("expected ',' or '}}' in a dict; got {}", Describe(Peek())));
      }
    }
    ++i_;
    return Status::OK();
  }

  // `negative`: the text follows a '-' (so -9223372036854775808 fits).
  Status ParseInt(const Token& t, Expr& e, bool negative = false) {
    e.kind = Expr::Kind::kInt;
    const std::string text = (negative ? "-" : "") + t.text;
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size()) {
      return Error(t, fmt::format("'{}' is not an integer tfdist can use",
                                  Abbreviate(t.text, kQuotedChars)));
    }
    e.number = v;
    return Status::OK();
  }

  Status ParseFloat(const Token& t, Expr& e) {
    e.kind = Expr::Kind::kFloat;
    double v = 0;
    const auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || ptr != t.text.data() + t.text.size()) {
      return Error(
          t, fmt::format("'{}' is not a number tfdist can use", Abbreviate(t.text, kQuotedChars)));
    }
    e.real = v;
    return Status::OK();
  }

  Status ParseLambda(Expr& e) {
    ++i_;  // lambda
    if (Peek().kind != Token::Kind::kName) {
      return Error(Peek(),
                   fmt::format("expected the lambda's parameter name; got {}", Describe(Peek())));
    }
    e.kind = Expr::Kind::kLambda;
    e.text = Peek().text;
    ++i_;
    // More parameters (a reduce function's "key, window") join the text.
    while (IsPunct(Peek(), ",") && Peek(1).kind == Token::Kind::kName) {
      e.text += ", " + Peek(1).text;
      i_ += 2;
    }
    TFDIST_RETURN_IF_ERROR(Expect(":", "':' after the lambda's parameter"));
    Expr body;
    TFDIST_RETURN_IF_ERROR(ParseExpr(body));
    e.items.push_back(std::move(body));
    return Status::OK();
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t i_ = 0;
  int depth_ = 0;
  bool source_done_ = false;
};

}  // namespace

std::string_view SourceMarker(std::string_view text, size_t pos) {
  pos = std::min(pos, text.size());
  const size_t begin = pos == 0 ? 0 : text.rfind('\n', pos - 1);
  const size_t start = begin == std::string_view::npos || pos == 0 ? 0 : begin + 1;
  const size_t end = std::min(text.find('\n', start), text.size());
  const std::string_view line = text.substr(start, end - start);
  // The line's comment starts at its first '#' outside a string literal.
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      if (!line.substr(i).starts_with(kSourceMarker)) return {};
      return line.substr(i + kSourceMarker.size());
    }
  }
  return {};
}

std::string DescribePosition(std::string_view text, size_t pos) {
  if (const std::string_view source = SourceMarker(text, pos); !source.empty()) {
    return std::string(source);
  }
  size_t line = 1, column = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) {
      ++column;  // count characters, not UTF-8 continuation bytes
    }
  }
  const bool multiline = text.find('\n') != std::string_view::npos;
  return multiline ? fmt::format("line {}, column {}", line, column)
                   : fmt::format("column {}", column);
}

Status PositionError(std::string_view text, size_t pos, std::string_view what) {
  return Status::InvalidArgument(fmt::format("{}: {}", DescribePosition(text, pos), what))
      .WithPosition(pos);
}

Status PositionError(std::string_view text, size_t pos, Status cause) {
  return std::move(cause).Annotate(DescribePosition(text, pos)).WithPosition(pos);
}

Result<Chain> ParseChain(std::string_view text) { return Parser(text).Parse(); }

}  // namespace tfdist::data
