// Strata's chat templates and conversation tokenizer against transformers'
// apply_chat_template (Jinja2) on the cases reference/chat_reference.py
// writes: the engine on small templates over every construct it implements,
// and four published templates (Llama 3, Mistral 7B v0.3, Qwen 2.5,
// SmolLM 2) on conversations, text and ids equal, with the tokens marked the
// assistant's decoding to each assistant turn.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/data/chat.h"
#include "strata/data/chat_template.h"
#include "strata/data/hf_tokenizer.h"
#include "strata/error.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

fs::path referenceDir() {
  const char* dir = std::getenv("STRATA_CHAT_REFERENCE");
  if (dir == nullptr)
    throw std::runtime_error(
        "STRATA_CHAT_REFERENCE is not set (the chat_reference fixture sets it)");
  return dir;
}

std::vector<std::string> lines(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

TEST(ChatReference, EngineRendersAsJinja2) {
  int rendered = 0, refused = 0;
  for (const std::string& line : lines(referenceDir() / "engine.jsonl")) {
    const Json c = Json::parse(line);
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const ChatTemplate chatTemplate(c["template"].get<std::string>(), name);
    if (c.contains("text")) {
      EXPECT_EQ(chatTemplate.render(c["variables"], "2024-07-26").text,
                c["text"].get<std::string>());
      ++rendered;
    } else {
      EXPECT_THROW(chatTemplate.render(c["variables"], "2024-07-26"), ConfigError)
          << "Jinja2: " << c["error"];
      ++refused;
    }
  }
  EXPECT_GT(rendered, 35);
  EXPECT_EQ(refused, 3);
}

TEST(ChatReference, EngineErrorsNameTheProblem) {
  auto message = [](const std::string& source) {
    try {
      ChatTemplate(source, "t.jinja").render(Json{{"messages", Json::array()}});
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message("{{ raise_exception('roles must alternate') }}"),
            "t.jinja: the template refused the conversation: roles must alternate");
  EXPECT_EQ(message("\n{{ missing.attribute }}"), "t.jinja:2: 'missing' is undefined");
  EXPECT_EQ(message("{% macro m() %}x{% endmacro %}"),
            "t.jinja:1: the template uses '{% macro %}', which Strata's chat templates do not "
            "implement (they "
            "implement if, for, set, break, continue and generation)");
  EXPECT_EQ(message("{{ x | wordwrap }}"),
            "t.jinja:1: the filter 'wordwrap' is not implemented by Strata's chat templates");
  EXPECT_EQ(message("\n\n{% if x is prime %}{% endif %}"),
            "t.jinja:3: the test 'prime' is not implemented by Strata's chat templates");
  EXPECT_EQ(message("{% if true %}open"),
            "t.jinja:1: '{% if %}' is never closed (expected '{% endif %}')");
  EXPECT_EQ(message("{{ 'unterminated }}"), "t.jinja:1: a string opened here is never closed");
  EXPECT_EQ(message("{{ 1 + }}"), "t.jinja:1: expected an expression, found the end of the tag");
  EXPECT_THROW(ChatTemplate("{{ strftime_now('%d') }}", "t").render(Json::object(), "2024-13-45"),
               ConfigError);
  EXPECT_THROW(checkChatDate("26 Jul 2024"), ConfigError);
  EXPECT_NO_THROW(checkChatDate("2024-07-26"));
}

TEST(ChatReference, GenerationBlocksMarkTheAssistantsText) {
  const ChatTemplate chatTemplate(
      "{% for m in messages %}<{{ m.role }}>{% if m.role == 'assistant' %}{% generation %}{{ "
      "m.content }}"
      "</s>{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endfor %}",
      "generation");
  EXPECT_TRUE(chatTemplate.marksGeneration());
  const Json messages = Json::array({{{"role", "user"}, {"content", "q"}},
                                     {{"role", "assistant"}, {"content", "a"}},
                                     {{"role", "user"}, {"content", "q2"}},
                                     {{"role", "assistant"}, {"content", "b"}}});
  const ChatTemplate::Output out = chatTemplate.render(Json{{"messages", messages}});
  ASSERT_EQ(out.text, "<user>q<assistant>a</s><user>q2<assistant>b</s>");
  ASSERT_EQ(out.generation.size(), 2u);
  EXPECT_EQ(
      out.text.substr(out.generation[0].first, out.generation[0].second - out.generation[0].first),
      "a</s>");
  EXPECT_EQ(
      out.text.substr(out.generation[1].first, out.generation[1].second - out.generation[1].first),
      "b</s>");
}

// The assistant-marked tokens' runs, each decoded.
std::vector<std::string> assistantRuns(const ChatTokens& tokens, const HfTokenizer& tokenizer) {
  std::vector<std::string> runs;
  std::vector<int64_t> run;
  for (size_t k = 0; k <= tokens.ids.size(); ++k) {
    if (k < tokens.ids.size() && tokens.assistant[k]) {
      run.push_back(tokens.ids[k]);
    } else if (!run.empty()) {
      runs.push_back(tokenizer.decode(run));
      run.clear();
    }
  }
  return runs;
}

void checkFamily(const std::string& family) {
  const fs::path folder = referenceDir() / family;
  const ChatEncoder encoder(folder.string());
  const std::vector<std::string> conversations = lines(folder / "conversations.jsonl");
  const std::vector<std::string> expected = lines(folder / "expected.jsonl");
  ASSERT_EQ(conversations.size(), expected.size());
  int compared = 0;
  for (size_t i = 0; i < conversations.size(); ++i) {
    SCOPED_TRACE(family + " conversation " + std::to_string(i + 1));
    const Json want = Json::parse(expected[i]);
    const std::string where = "conversations.jsonl:" + std::to_string(i + 1);
    if (want.contains("error")) {
      try {
        encoder.encode(conversations[i], where);
        ADD_FAILURE() << "transformers refused it: " << want["error"];
      } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find(want["error"].get<std::string>()), std::string::npos)
            << e.what();
        EXPECT_EQ(std::string(e.what()).rfind(where, 0), 0u) << e.what();
      }
      continue;
    }
    const ChatTokens tokens = encoder.encode(conversations[i], where);
    EXPECT_EQ(tokens.text, want["text"].get<std::string>());
    EXPECT_EQ(tokens.ids, want["ids"].get<std::vector<int64_t>>());
    const std::vector<std::string> runs = assistantRuns(tokens, encoder.tokenizer());
    ASSERT_EQ(runs.size(), want["turns"].size());
    for (size_t t = 0; t < runs.size(); ++t) {
      if (want["turns"][t].is_null()) {  // a tool call: its JSON, to the end of the turn
        EXPECT_EQ(runs[t].rfind("<tool_call>", 0), 0u) << runs[t];
        continue;
      }
      // The run is the turn, or the turn after whitespace that one token
      // shares between the prompt's end and the answer's start.
      const std::string turn = want["turns"][t];
      ASSERT_GE(runs[t].size(), turn.size()) << runs[t];
      const size_t extra = runs[t].size() - turn.size();
      EXPECT_EQ(runs[t].substr(extra), turn);
      EXPECT_EQ(runs[t].substr(0, extra).find_first_not_of(" \n"), std::string::npos) << runs[t];
    }
    ++compared;
  }
  EXPECT_GE(compared, 7);
}

TEST(ChatReference, Llama3) { checkFamily("llama3"); }
TEST(ChatReference, Mistral) { checkFamily("mistral"); }
TEST(ChatReference, Qwen25) { checkFamily("qwen2.5"); }
TEST(ChatReference, SmolLM2) { checkFamily("smollm2"); }

}  // namespace
}  // namespace strata::train
