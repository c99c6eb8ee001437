//===- JsonTest.cpp - Tests of the JSON parser ----------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Json.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tfc::rt;

namespace {

JsonValue parseOk(const std::string &text) {
  JsonValue v;
  std::string err;
  size_t at = 0;
  EXPECT_TRUE(parseJson(text.data(), text.size(), v, err, at))
      << text << ": " << err;
  return v;
}

/// "offset: message" of a parse that must fail.
std::string parseFail(const std::string &text) {
  JsonValue v;
  std::string err;
  size_t at = 0;
  EXPECT_FALSE(parseJson(text.data(), text.size(), v, err, at)) << text;
  return std::to_string(at) + ": " + err;
}

TEST(Json, Literals) {
  EXPECT_EQ(parseOk("null").kind, JsonValue::Null);
  EXPECT_TRUE(parseOk(" true ").boolean);
  EXPECT_EQ(parseOk("false").kind, JsonValue::Bool);
  EXPECT_FALSE(parseOk("false").boolean);
}

TEST(Json, Numbers) {
  JsonValue v = parseOk("42");
  EXPECT_EQ(v.kind, JsonValue::Number);
  EXPECT_TRUE(v.isInteger);
  EXPECT_EQ(v.integer, 42);
  v = parseOk("-0");
  EXPECT_TRUE(v.isInteger);
  EXPECT_EQ(v.integer, 0);
  v = parseOk("4.0");
  EXPECT_FALSE(v.isInteger);
  EXPECT_EQ(v.number, 4.0);
  EXPECT_EQ(parseOk("-1.5e3").number, -1500.0);
  EXPECT_EQ(parseOk("2E-2").number, 0.02);
  v = parseOk("9223372036854775807");
  EXPECT_TRUE(v.isInteger);
  EXPECT_EQ(v.integer, INT64_MAX);
  v = parseOk("18446744073709551616"); // 2^64: a number, not an int64.
  EXPECT_FALSE(v.isInteger);
  EXPECT_EQ(v.number, 18446744073709551616.0);
  EXPECT_EQ(parseFail("01"), "1: unexpected text after the JSON value");
  EXPECT_EQ(parseFail("1."), "0: invalid number: digits expected after '.'");
  EXPECT_EQ(parseFail("-"), "0: invalid number");
  EXPECT_EQ(parseFail("1e"), "0: invalid number: digits expected in exponent");
  EXPECT_EQ(parseFail("+1"), "0: unexpected character '+'");
  EXPECT_EQ(parseFail("1e400"), "0: number out of range");
}

TEST(Json, StringEscapes) {
  EXPECT_EQ(parseOk(R"("a\"b\\c\/d\b\f\n\r\t")").string, "a\"b\\c/d\b\f\n\r\t");
  // \u escapes become UTF-8: U+00E9 (2 bytes), U+20AC (3 bytes).
  EXPECT_EQ(parseOk(R"("caf\u00e9 \u20AC")").string,
            "caf\xc3\xa9 \xe2\x82\xac");
  // A surrogate pair: U+1F600 = \ud83d\ude00 -> F0 9F 98 80.
  EXPECT_EQ(parseOk(R"("\ud83d\ude00!")").string, "\xf0\x9f\x98\x80!");
  // Unpaired surrogates become U+FFFD (EF BF BD); the escape after a lone
  // high surrogate is still decoded.
  EXPECT_EQ(parseOk(R"("\ud83dx")").string, "\xef\xbf\xbdx");
  EXPECT_EQ(parseOk(R"("\ude00")").string, "\xef\xbf\xbd");
  EXPECT_EQ(parseOk(R"("\ud83d\u0041")").string, "\xef\xbf\xbd"
                                                 "A");
  EXPECT_EQ(parseOk(R"("\u0000")").string, std::string(1, '\0'));
  // Raw UTF-8 passes through.
  EXPECT_EQ(parseOk("\"\xc3\xa9\"").string, "\xc3\xa9");
  EXPECT_EQ(parseFail(R"("\x")"), "1: invalid escape '\\x'");
  EXPECT_EQ(parseFail(R"("\u12g4")"), "5: invalid hex digit in \\u escape");
  EXPECT_EQ(parseFail(R"("\u12")"), "3: truncated \\u escape");
  EXPECT_EQ(parseFail("\"abc"), "0: unterminated string");
  EXPECT_EQ(parseFail("\"a\nb\""),
            "2: raw control character in string (must be escaped)");
}

TEST(Json, ObjectsAndArrays) {
  JsonValue v = parseOk(R"({"text": "hi", "label": 1,
      "images": [{"url": "x", "sizes": [1, 2, {"a": null}]}], "x": {}})");
  ASSERT_EQ(v.kind, JsonValue::Object);
  EXPECT_EQ(v.members.size(), 4u);
  EXPECT_EQ(v.find("text")->string, "hi");
  EXPECT_EQ(v.find("label")->integer, 1);
  EXPECT_EQ(v.find("images")->items.size(), 1u);
  EXPECT_EQ(v.find("images")->items[0].find("sizes")->items[2].find("a")->kind,
            JsonValue::Null);
  EXPECT_EQ(v.find("missing"), nullptr);
  // Repeated keys: the last wins.
  EXPECT_EQ(parseOk(R"({"a": 1, "a": 2})").find("a")->integer, 2);
  EXPECT_EQ(parseOk("[]").items.size(), 0u);
  EXPECT_EQ(parseOk("[1, [2, [3]]]").items[1].items[1].items[0].integer, 3);
}

TEST(Json, SyntaxErrors) {
  EXPECT_EQ(parseFail(""), "0: unexpected end of input, expected a value");
  EXPECT_EQ(parseFail("{\"a\" 1}"), "5: expected ':' after object key");
  EXPECT_EQ(parseFail("{\"a\": 1,}"), "8: expected a string key in object");
  EXPECT_EQ(parseFail("{a: 1}"), "1: expected a string key in object");
  EXPECT_EQ(parseFail("[1, 2"), "5: expected ',' or ']' in array");
  EXPECT_EQ(parseFail("[1,]"), "3: unexpected character ']'");
  EXPECT_EQ(parseFail("{\"a\": 1 \"b\": 2}"),
            "8: expected ',' or '}' in object");
  EXPECT_EQ(parseFail("tru"), "0: invalid literal");
  EXPECT_EQ(parseFail("nul1"), "0: invalid literal");
  EXPECT_EQ(parseFail("{} {}"), "3: unexpected text after the JSON value");
  EXPECT_EQ(parseFail("\x01"), "0: unexpected character '\\x01'");
}

TEST(Json, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '[');
  EXPECT_EQ(parseFail(deep), "513: nesting too deep");
  std::string ok = std::string(500, '[') + std::string(500, ']');
  parseOk(ok);
}

TEST(Json, Writing) {
  EXPECT_EQ(jsonQuote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(jsonNumber(3), "3");
  EXPECT_EQ(jsonNumber(0.1), "0.1");
  EXPECT_EQ(jsonNumber(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(jsonNumber(2.5e-7), "2.5e-07");
  EXPECT_EQ(jsonNumber(NAN), "null");
  EXPECT_EQ(jsonNumber(-INFINITY), "null");
  // What we write, we read back.
  EXPECT_EQ(parseOk(jsonQuote("x\ty\"\x1f")).string, "x\ty\"\x1f");
  EXPECT_EQ(parseOk(jsonNumber(1.0 / 3)).number, 1.0 / 3);
}

} // namespace
