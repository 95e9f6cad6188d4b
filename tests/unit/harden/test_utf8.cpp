// Item 8: bytes that are not UTF-8 are recorded escaped, and the file says which fields.
#include "core/result.hpp"
#include "core/utf8.hpp"
#include "test_support.hpp"

namespace ccbench::harden_test {
namespace {

TEST(Utf8, Validity) {
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));  // é € 😀
  EXPECT_FALSE(is_valid_utf8("caf\xE9"));                                   // Latin-1 é
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));                                  // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));                              // surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));                          // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));                                  // truncated
}

TEST(Utf8, EscapesOnlyTheBadBytes) {
  EXPECT_EQ(escape_invalid_utf8("caf\xE9 ok \xC3\xA9"), "caf\\xE9 ok \xC3\xA9");
  EXPECT_EQ(escape_invalid_utf8("\xFF\xFE"), "\\xFF\\xFE");
  EXPECT_EQ(escape_invalid_utf8("\xE2\x82"), "\\xE2\\x82");
}

TEST(Utf8, AResultFileWithLatin1MetadataIsWrittenAndSaysSo) {
  ResultFile f;
  f.run.label = "lab\xE9l";
  f.environment = {{"NCCL_X", "a\xFF"}, {"OK", "fine"}};
  f.config = {{"json_path", "/tmp/r\xE9sultat.json"}};
  const nlohmann::json j = to_json(f);
  const std::string text = j.dump();  // would throw type_error 316 on raw bytes
  EXPECT_EQ(j["run"]["label"], "lab\\xE9l");
  EXPECT_EQ(j["environment"]["NCCL_X"], "a\\xFF");
  EXPECT_EQ(j["environment"]["OK"], "fine");
  EXPECT_EQ(j["run"]["non_utf8_escaped"],
            nlohmann::json::array({"/config/json_path", "/environment/NCCL_X", "/run/label"}));  // key order
  // Escaped object keys too (an environment variable name).
  nlohmann::json keys = {{"B\xE9", 1}};
  EXPECT_EQ(escape_invalid_utf8(keys), std::vector<std::string>{"/B\\xE9"});
  EXPECT_TRUE(keys.contains("B\\xE9"));
}

}  // namespace
}  // namespace ccbench::harden_test
