// `strata data prepare --chat` (prepareData with chat on) over the Llama 3
// tokenizer folder of the chat_reference fixture: tokens and loss mask as
// the encoder gives them, every bad line named by file and line with
// nothing written, and conversations over the limit counted.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "strata/data/chat.h"
#include "strata/data/hf_tokenizer.h"
#include "strata/data/prepare.h"
#include "strata/data/prepared_data.h"
#include "strata/error.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

const std::string kHello =
    R"({"messages": [{"role": "user", "content": "Hello!"}, {"role": "assistant", "content": "Hi."}]})";
const std::string kLonger =
    R"({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name three colours."},)"
    R"( {"role": "assistant", "content": "Red, green and blue."}, {"role": "user", "content": "One more?"},)"
    R"( {"role": "assistant", "content": "Yellow."}]})";
const std::string kPromptCompletion = R"({"prompt": "Hello!", "completion": "Hi."})";

class PrepareChat : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* reference = std::getenv("STRATA_CHAT_REFERENCE");
    ASSERT_NE(reference, nullptr) << "STRATA_CHAT_REFERENCE is not set";
    tokenizer_ = (fs::path(reference) / "llama3").string();
    dir_ = fs::temp_directory_path() /
           ("strata-chat-prepare-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::vector<std::string>& lines) {
    const fs::path path = dir_ / name;
    std::ofstream out(path);
    for (const std::string& line : lines) out << line << "\n";
    return path.string();
  }
  PrepareOptions options(const std::string& input) {
    PrepareOptions o;
    o.tokenizer = tokenizer_;
    o.inputs = {input};
    o.output = (dir_ / "out" / "sft").string();
    o.chat = true;
    o.threads = 2;
    return o;
  }

  std::string tokenizer_;
  fs::path dir_;
};

TEST_F(PrepareChat, WritesTheEncodersTokensAndLossMask) {
  const std::string input = write("chats.jsonl", {kHello, "", kLonger, kPromptCompletion});
  const PrepareSummary summary = prepareData(options(input));
  const ChatEncoder encoder(tokenizer_);
  std::vector<int64_t> ids;
  std::vector<uint8_t> mask;
  for (const std::string& line : {kHello, kLonger, kPromptCompletion}) {
    const ChatTokens tokens = encoder.encode(line, "test");
    ids.insert(ids.end(), tokens.ids.begin(), tokens.ids.end());
    mask.insert(mask.end(), tokens.assistant.begin(), tokens.assistant.end());
  }
  EXPECT_EQ(encoder.encode(kPromptCompletion, "t").ids, encoder.encode(kHello, "t").ids);
  const PreparedData data(options(input).output);
  ASSERT_EQ(data.documents(), 3);
  ASSERT_EQ(data.tokens(), static_cast<int64_t>(ids.size()));
  ASSERT_TRUE(data.hasLossMask());
  std::vector<int64_t> readIds(ids.size());
  std::vector<uint8_t> readMask(mask.size());
  data.read(0, data.tokens(), readIds.data());
  data.readLossMask(0, data.tokens(), readMask.data());
  EXPECT_EQ(readIds, ids);
  EXPECT_EQ(readMask, mask);
  EXPECT_EQ(summary.assistantTokens, std::count(mask.begin(), mask.end(), 1));
  EXPECT_GT(summary.assistantTokens, 0);
  EXPECT_LT(summary.assistantTokens, summary.tokens);
}

TEST_F(PrepareChat, EveryBadLineIsNamedByFileAndLineAndNothingIsWritten) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "not a JSON line"},
      {R"(["a list"])", "expected a JSON object, got array"},
      {R"({"text": "a document"})", R"(expected "messages", or "prompt" and "completion")"},
      {R"({"messages": [{"content": "x"}, {"role": "assistant", "content": "y"}]})",
       R"(message 0 has no "role" string)"},
      {R"({"messages": [{"role": "user"}, {"role": "assistant", "content": "y"}]})",
       R"(message 0 (user) has no "content")"},
      {R"({"messages": [{"role": "bot", "content": "x"}, {"role": "assistant", "content": "y"}]})",
       "message 0 has the role 'bot'; the roles are system, user, assistant and tool"},
      {R"({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": " \n"}]})",
       "message 1 is an empty assistant turn"},
      {R"({"messages": [{"role": "user", "content": "q"}]})",
       "the conversation has no assistant turn"},
      {R"({"messages": [{"role": "user", "content": ["part"]}, {"role": "assistant", "content": "y"}]})",
       R"("content" must be a string, not array)"},
      {R"({"messages": [{"role": "assistant", "content": "first"}]})", "opens the conversation"},
  };
  for (const auto& [line, problem] : cases) {
    SCOPED_TRACE(line);
    const std::string input = write("bad.jsonl", {kHello, "", line});
    const std::string where =
        input + ":3 (byte offset " + std::to_string(kHello.size() + 2) + "): ";
    try {
      prepareData(options(input));
      ADD_FAILURE() << "no error";
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(where, 0), 0u) << what;
      EXPECT_NE(what.find(problem), std::string::npos) << what;
    }
    EXPECT_FALSE(fs::exists(options(input).output + ".idx"));
    EXPECT_FALSE(fs::exists(options(input).output + ".mask"));
    EXPECT_FALSE(fs::exists(options(input).output + ".mask.partial"));
  }
}

TEST_F(PrepareChat, LongConversationsAreDroppedOrTruncatedCountedAndNamed) {
  const std::string input = write("chats.jsonl", {kHello, kLonger, kHello, kLonger});
  const ChatEncoder encoder(tokenizer_);
  const int64_t shortSize = static_cast<int64_t>(encoder.encode(kHello, "t").ids.size());
  const int64_t longSize = static_cast<int64_t>(encoder.encode(kLonger, "t").ids.size());
  ASSERT_LT(shortSize, longSize);

  PrepareOptions drop = options(input);
  drop.maxTokens = shortSize;
  const PrepareSummary dropped = prepareData(drop);
  EXPECT_EQ(dropped.documents, 2);
  EXPECT_EQ(dropped.dropped, 2);
  EXPECT_EQ(dropped.truncated, 0);
  ASSERT_EQ(dropped.tooLongExamples.size(), 2u);
  EXPECT_EQ(dropped.tooLongExamples[0], input + ":2 (" + std::to_string(longSize) + " tokens)");
  EXPECT_EQ(dropped.tooLongExamples[1], input + ":4 (" + std::to_string(longSize) + " tokens)");

  PrepareOptions truncate = options(input);
  truncate.maxTokens = longSize - 3;  // cuts the last turn; the first answer stays
  truncate.tooLong = TooLong::kTruncate;
  const PrepareSummary truncated = prepareData(truncate);
  EXPECT_EQ(truncated.documents, 4);
  EXPECT_EQ(truncated.truncated, 2);
  EXPECT_EQ(truncated.tokens, 2 * shortSize + 2 * (longSize - 3));
  const PreparedData data(truncate.output);
  EXPECT_EQ(data.documentStart(2) - data.documentStart(1), longSize - 3);

  // Truncated before any answer: dropped, not kept without one.
  PrepareOptions tooShort = options(input);
  tooShort.maxTokens = 5;
  tooShort.tooLong = TooLong::kTruncate;
  try {
    prepareData(tooShort);
    ADD_FAILURE() << "every conversation dropped, yet no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("every conversation is longer than 5 tokens"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(PrepareChat, AMaskLeftByAnEarlierPreparationIsRemoved) {
  const std::string input = write("chats.jsonl", {kHello});
  prepareData(options(input));
  ASSERT_TRUE(fs::exists(options(input).output + ".mask"));
  const std::string text = write("doc.txt", {"plain text"});
  PrepareOptions plain;
  plain.tokenizer = tokenizer_;
  plain.inputs = {text};
  plain.output = options(input).output;
  prepareData(plain);
  EXPECT_FALSE(fs::exists(plain.output + ".mask"));
  EXPECT_FALSE(PreparedData(plain.output).hasLossMask());
}

// A template given with --chat-template wins over the folder's, and one that
// marks the assistant's text with {% generation %} decides the mask itself:
// here only the answers, not their end-of-turn token.
TEST_F(PrepareChat, AGenerationMarkingTemplateGivenExplicitlyDecidesTheMask) {
  const std::string templateFile =
      write("marked.jinja",
            {"{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n"
             "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}"
             "{% else %}{{ m.content }}{% endif %}<|eot_id|>{% endfor %}"});
  const ChatEncoder encoder(tokenizer_, templateFile);
  EXPECT_EQ(encoder.chatTemplate().origin(), templateFile);
  const ChatTokens tokens = encoder.encode(kLonger, "t");
  EXPECT_EQ(
      tokens.text.rfind("<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>", 0),
      0u);
  std::vector<int64_t> marked;
  for (size_t k = 0; k < tokens.ids.size(); ++k)
    if (tokens.assistant[k]) marked.push_back(tokens.ids[k]);
  EXPECT_EQ(encoder.tokenizer().decode(marked), "Red, green and blue.Yellow.");
  PrepareOptions o = options(write("chats.jsonl", {kLonger}));
  o.chatTemplate = templateFile;
  EXPECT_EQ(prepareData(o).assistantTokens, static_cast<int64_t>(marked.size()));
}

}  // namespace
}  // namespace strata::train
