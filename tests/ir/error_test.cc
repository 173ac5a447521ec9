#include "collage/ir/error.h"

#include <gtest/gtest.h>

#include <string>

namespace collage {
namespace {

TEST(QuoteUntrustedTest, PutsTextInSingleQuotes) {
  EXPECT_EQ(quote_untrusted("conv_1"), "'conv_1'");
  EXPECT_EQ(quote_untrusted(""), "''");
}

TEST(QuoteUntrustedTest, EscapesControlCharactersQuotesAndBackslashes) {
  EXPECT_EQ(quote_untrusted("a\nb\tc\rd"), "'a\\nb\\tc\\rd'");
  EXPECT_EQ(quote_untrusted("\x1b[31mred"), "'\\x1b[31mred'");
  EXPECT_EQ(quote_untrusted(std::string("nul\0byte", 8)), "'nul\\x00byte'");
  EXPECT_EQ(quote_untrusted("del\x7f"), "'del\\x7f'");
  EXPECT_EQ(quote_untrusted("it's a\\b"), "'it\\'s a\\\\b'");
}

TEST(QuoteUntrustedTest, CutsLongTextAndSaysSoAfterTheQuote) {
  EXPECT_EQ(quote_untrusted(std::string(200, 'a')), "'" + std::string(160, 'a') + "'...");
  EXPECT_EQ(quote_untrusted("abcdef", 3), "'abc'...");
  EXPECT_EQ(quote_untrusted("abc", 3), "'abc'");
}

TEST(QuoteUntrustedTest, CutsAtTheStartOfAUtf8Character) {
  // "é" is the two bytes C3 A9; cutting after 2 bytes would split it.
  EXPECT_EQ(quote_untrusted("a\xc3\xa9z", 2), "'a'...");
  EXPECT_EQ(quote_untrusted("a\xc3\xa9z", 3), "'a\xc3\xa9'...");
}

TEST(EscapeControlTest, EscapesControlCharactersButNeitherQuotesNorCuts) {
  EXPECT_EQ(escape_control("line\none\x1b"), "line\\none\\x1b");
  EXPECT_EQ(escape_control("it's a\\b"), "it's a\\b");
  const std::string long_text(500, 'x');
  EXPECT_EQ(escape_control(long_text), long_text);
}

TEST(ErrorTest, TheMessageStartsWithFileNodeAndField) {
  Error error("expected 4 values", {.file = "model.onnx", .node = "conv1", .field = "pads"});
  EXPECT_STREQ(error.what(), "model.onnx: node 'conv1': pads: expected 4 values");
  EXPECT_EQ(error.message(), "expected 4 values");
  EXPECT_EQ(error.where().file, "model.onnx");
  EXPECT_EQ(error.where().node, "conv1");
  EXPECT_EQ(error.where().field, "pads");
}

TEST(ErrorTest, EmptyLocationFieldsAreLeftOut) {
  EXPECT_STREQ(Error("bad").what(), "bad");
  EXPECT_STREQ(Error("bad", {.field = "axis"}).what(), "axis: bad");
  EXPECT_STREQ(Error("bad", {.file = "m.onnx", .field = "axis"}).what(), "m.onnx: axis: bad");
  EXPECT_STREQ(Error("bad", {.node = "n"}).what(), "node 'n': bad");
}

TEST(ErrorTest, ANodeNameFromTheModelIsQuotedEscapedAndCut) {
  Error error("bad", {.node = "x'\n" + std::string(300, 'n')});
  EXPECT_EQ(std::string(error.what()), "node 'x\\'\\n" + std::string(157, 'n') + "'...: bad");
}

TEST(ErrorTest, TheWholeMessageStaysOnOneLine) {
  Error error("line one\nline two", {.file = "dir\n/m.onnx", .field = "a\rb"});
  EXPECT_STREQ(error.what(), "dir\\n/m.onnx: a\\rb: line one\\nline two");
  EXPECT_EQ(error.message(), "line one\nline two");
}

// A caller may pass any text as a path: Session(model, plan=<a whole JSON
// document that does not start with '{'>) once echoed all 200 KB of it.
TEST(ErrorTest, ALongFileNameIsCutLikeUntrustedText) {
  Error error("no such file", {.file = std::string(200000, 'p')});
  EXPECT_EQ(std::string(error.what()), std::string(160, 'p') + "...: no such file");
  EXPECT_EQ(error.where().file.size(), 200000u);
}

TEST(ErrorTest, InFileFillsTheFileOnlyWhenItIsMissing) {
  Error deep("bad", {.node = "n"});
  Error located = deep.in_file("m.onnx");
  EXPECT_STREQ(located.what(), "m.onnx: node 'n': bad");
  EXPECT_EQ(located.where().node, "n");
  Error already("bad", {.file = "first.onnx"});
  EXPECT_EQ(already.in_file("second.onnx").where().file, "first.onnx");
}

}  // namespace
}  // namespace collage
