//===- ManifestJson.cpp - the JSON of kernel package manifests --*- C++ -*-===//
//
// Part of normfuse. See ManifestJson.h.
//
//===----------------------------------------------------------------------===//

#include "ManifestJson.h"

#include <cctype>
#include <limits>
#include <tuple>

using namespace normfuse::runtime::json;

namespace {

/// A recursive-descent parser; `error` says what and at which byte.
class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  bool parse(Json &value, std::string &error) {
    if (!parseValue(value, 0) || (skipSpace(), pos != text.size())) {
      if (message.empty())
        message = "unexpected text";
      error = "manifest.json, byte " + std::to_string(pos) + ": " + message;
      return false;
    }
    return true;
  }

private:
  static constexpr int kMaxDepth = 64;
  const std::string &text;
  size_t pos = 0;
  std::string message;

  bool fail(const std::string &what) {
    message = what;
    return false;
  }
  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out) {
    if (!consume('"'))
      return fail("expected a string");
    while (pos < text.size() && text[pos] != '"') {
      char c = text[pos++];
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("a control character in a string");
      if (c == '\\') {
        if (pos == text.size())
          break;
        char e = text[pos++];
        switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          // \u00XX: what quote() writes for the other control characters.
          unsigned code = 0;
          for (int i = 0; i < 4; ++i) {
            char h = pos < text.size() ? text[pos++] : '\0';
            int digit = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
            if (digit < 0)
              return fail("a \\u escape without four hex digits");
            code = code * 16 + unsigned(digit);
          }
          if (code >= 0x80)
            return fail("a \\u escape beyond ASCII");
          out += char(code);
          break;
        }
        default:
          return fail("an escape the manifest does not use");
        }
        continue;
      }
      out += c;
    }
    if (pos == text.size())
      return fail("an unterminated string");
    ++pos;
    return true;
  }
  bool parseValue(Json &value, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth));
    skipSpace();
    if (pos == text.size())
      return fail("the text ends where a value should be");
    char c = text[pos];
    if (c == '{') {
      ++pos;
      value.kind = Json::Kind::Object;
      if (consume('}'))
        return true;
      do {
        std::string key;
        if (!parseString(key))
          return false;
        if (!consume(':'))
          return fail("expected ':'");
        Json member;
        if (!parseValue(member, depth + 1))
          return false;
        if (!value.object.emplace(key, std::move(member)).second)
          return fail("the key \"" + key + "\" appears twice");
      } while (consume(','));
      return consume('}') || fail("expected ',' or '}'");
    }
    if (c == '[') {
      ++pos;
      value.kind = Json::Kind::Array;
      if (consume(']'))
        return true;
      do {
        value.array.emplace_back();
        if (!parseValue(value.array.back(), depth + 1))
          return false;
      } while (consume(','));
      return consume(']') || fail("expected ',' or ']'");
    }
    if (c == '"') {
      value.kind = Json::Kind::String;
      return parseString(value.string);
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      bool negative = c == '-';
      if (negative)
        ++pos;
      if (pos == text.size() ||
          !std::isdigit(static_cast<unsigned char>(text[pos])))
        return fail("expected digits");
      uint64_t magnitude = 0;
      while (pos < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[pos]))) {
        unsigned digit = text[pos++] - '0';
        if (magnitude >
            (uint64_t(std::numeric_limits<int64_t>::max()) - digit) / 10)
          return fail("an integer beyond 64 bits");
        magnitude = magnitude * 10 + digit;
      }
      if (pos < text.size() &&
          (text[pos] == '.' || text[pos] == 'e' || text[pos] == 'E'))
        return fail("a number that is not an integer");
      value.kind = Json::Kind::Integer;
      value.integer = negative ? -int64_t(magnitude) : int64_t(magnitude);
      return true;
    }
    for (auto [word, kind, flag] : {std::tuple<const char *, Json::Kind, bool>{
                                        "true", Json::Kind::Bool, true},
                                    {"false", Json::Kind::Bool, false},
                                    {"null", Json::Kind::Null, false}}) {
      size_t n = std::char_traits<char>::length(word);
      if (text.compare(pos, n, word) == 0) {
        pos += n;
        value.kind = kind;
        value.boolean = flag;
        return true;
      }
    }
    return fail("expected a value");
  }
};

} // namespace

bool normfuse::runtime::json::parse(const std::string &text, Json &value,
                                    std::string &error) {
  return Parser(text).parse(value, error);
}
