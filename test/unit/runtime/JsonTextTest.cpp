//===- JsonTextTest.cpp - Tests of the runtime's JSON text ----------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/JsonText.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tfc::rt;

namespace {

Json parseOk(const std::string &text) {
  Json v;
  std::string err;
  size_t at = 0;
  EXPECT_TRUE(parseJson(text.data(), text.size(), v, err, at))
      << text << ": " << err;
  return v;
}

/// "byte: message" of a parse that must fail.
std::string parseFail(const std::string &text) {
  Json v = 1;
  std::string err;
  size_t at = 0;
  EXPECT_FALSE(parseJson(text.data(), text.size(), v, err, at)) << text;
  EXPECT_TRUE(v.is_null()) << text;
  return std::to_string(at) + ": " + err;
}

TEST(JsonText, ParsesInFileOrder) {
  Json v = parseOk(R"( {"b": 1, "a": [2.5, "x\u00e9\ud83d\ude00", null]} )");
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.begin().key(), "b");
  EXPECT_TRUE(v["b"].is_number_integer());
  EXPECT_EQ(v["a"][0], 2.5);
  EXPECT_EQ(v["a"][1], "x\xc3\xa9\xf0\x9f\x98\x80");
  // Repeated keys: the last wins.
  EXPECT_EQ(parseOk(R"({"a": 1, "a": 2})")["a"], 2);
}

TEST(JsonText, ErrorsAreOneLineWithTheirByte) {
  EXPECT_EQ(parseFail(""), "1: syntax error while parsing value - unexpected "
                           "end of input; expected '[', '{', or a literal");
  EXPECT_EQ(parseFail("{\"a\" 1}"),
            "6: syntax error while parsing object separator - unexpected "
            "number literal; expected ':'");
  EXPECT_EQ(parseFail("{} {}"), "4: syntax error while parsing value - "
                                "unexpected '{'; expected end of input");
  EXPECT_EQ(parseFail("\"a\nb\""),
            "3: syntax error while parsing value - invalid string: control "
            "character U+000A (LF) must be escaped to \\u000A or \\n; last "
            "read: '\"a<U+000A>'");
  // RFC 8259: UTF-8 only, and surrogate escapes in pairs.
  EXPECT_EQ(parseFail("\"\xff\""), "2: syntax error while parsing value - "
                                   "invalid string: ill-formed UTF-8 byte; "
                                   "last read: '\"\xff'");
  EXPECT_EQ(parseFail(R"("\ud83dx")"),
            "8: syntax error while parsing value - invalid string: surrogate "
            "U+D800..U+DBFF must be followed by U+DC00..U+DFFF; last read: "
            "'\"\\ud83dx'");
  // A number beyond double: no position.
  EXPECT_EQ(parseFail("[1e400]"), "0: number overflow parsing '1e400'");
}

TEST(JsonText, DeepNestingIsNotACrash) {
  std::string open(100000, '[');
  EXPECT_EQ(parseFail(open).substr(0, 8), "100001: ");
  Json deep = parseOk(open + std::string(100000, ']'));
  EXPECT_TRUE(deep.is_array());
}

TEST(JsonText, Numbers) {
  EXPECT_EQ(jsonText(jsonNumber(3)), "3");
  EXPECT_EQ(jsonText(jsonNumber(-42)), "-42");
  EXPECT_EQ(jsonText(jsonNumber(0.1)), "0.1");
  EXPECT_EQ(jsonText(jsonNumber(1.0 / 3)), "0.3333333333333333");
  EXPECT_EQ(jsonText(jsonNumber(0.1 + 0.2)), "0.30000000000000004");
  EXPECT_EQ(jsonText(jsonNumber(2.5e-7)), "2.5e-07");
  EXPECT_EQ(jsonText(jsonNumber(1e15)), "1e+15");
  EXPECT_EQ(jsonText(jsonNumber(123456789012.5)), "123456789012.5");
  EXPECT_EQ(jsonText(jsonNumber(NAN)), "null");
  EXPECT_EQ(jsonText(jsonNumber(-INFINITY)), "null");
  // What we write, we read back.
  EXPECT_EQ(parseOk(jsonText(jsonNumber(1.0 / 3))).get<double>(), 1.0 / 3);
}

TEST(JsonText, Text) {
  Json v = {{"s", "a\"b\\c\n\x01"}, {"n", {1, 2}}};
  EXPECT_EQ(jsonText(v), R"({"s":"a\"b\\c\n\u0001","n":[1,2]})");
  // Bytes that are not UTF-8 become U+FFFD instead of an exception.
  EXPECT_EQ(jsonText(Json("a\xffz")), "\"a\xef\xbf\xbdz\"");
}

TEST(JsonText, KindNames) {
  EXPECT_STREQ(jsonKindName(Json()), "null");
  EXPECT_STREQ(jsonKindName(Json(true)), "a boolean");
  EXPECT_STREQ(jsonKindName(Json(-1)), "a number");
  EXPECT_STREQ(jsonKindName(Json(1u)), "a number");
  EXPECT_STREQ(jsonKindName(Json(0.5)), "a number");
  EXPECT_STREQ(jsonKindName(Json("x")), "a string");
  EXPECT_STREQ(jsonKindName(Json::array()), "an array");
  EXPECT_STREQ(jsonKindName(Json::object()), "an object");
}

} // namespace
