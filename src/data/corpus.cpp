#include "strata/data/corpus.h"

#include <array>
#include <string>

#include "strata/error.h"
#include "strata/util/random.h"

namespace strata::train {
namespace {

// Regular nouns and verbs only, so agreement is always "+s": singular
// subjects take "verb+s", plural subjects "noun+s" and the bare verb.
constexpr std::array<const char*, 10> kNouns = {"cat",   "dog",    "bird",    "farmer", "robot",
                                                "horse", "sailor", "teacher", "baker",  "painter"};
constexpr std::array<const char*, 8> kVerbs = {"sleep", "sing", "wait", "work",
                                               "dance", "read", "walk", "rest"};
constexpr std::array<const char*, 8> kAdjectives = {"old",   "young", "quiet", "happy",
                                                    "small", "tall",  "tired", "clever"};
constexpr std::array<const char*, 6> kPrepositions = {"near",  "behind", "inside",
                                                      "under", "beside", "past"};
constexpr std::array<const char*, 8> kPlaces = {"river",  "market", "bridge", "garden",
                                                "harbor", "church", "school", "forest"};
// Person i always lives in kCities[i] and likes kFoods[(3 i) mod 8].
constexpr std::array<const char*, 8> kNames = {"mara", "tomas", "ines", "kofi",
                                               "yuki", "olga",  "ravi", "lena"};
constexpr std::array<const char*, 8> kCities = {"lisbon", "oslo",  "cairo", "lima",
                                                "kyoto",  "quito", "perth", "riga"};
constexpr std::array<const char*, 8> kFoods = {"apples", "bread", "rice", "figs",
                                               "soup",   "plums", "fish", "cheese"};

template <size_t N>
const char* pick(util::SplitMix64& rng, const std::array<const char*, N>& words) {
  return words[rng.below(N)];
}

std::string agreementSentence(util::SplitMix64& rng) {
  bool plural = rng.below(2) == 1;
  std::string noun = pick(rng, kNouns);
  std::string verb = pick(rng, kVerbs);
  std::string adjective = pick(rng, kAdjectives);
  // A plural subject takes the bare verb, a singular one verb + "s".
  std::string subject = "the " + adjective + " " + noun + (plural ? "s" : "");
  std::string predicate = verb + (plural ? "" : "s");
  return subject + " " + predicate + " " + pick(rng, kPrepositions) + " the " + pick(rng, kPlaces) +
         ".";
}

std::string factSentence(util::SplitMix64& rng) {
  size_t person = rng.below(kNames.size());
  if (rng.below(2) == 0) return std::string(kNames[person]) + " lives in " + kCities[person] + ".";
  return std::string(kNames[person]) + " likes " + kFoods[(3 * person) % kFoods.size()] + ".";
}

std::string arithmeticSentence(util::SplitMix64& rng) {
  auto a = static_cast<int>(rng.below(50));
  auto b = static_cast<int>(rng.below(50));
  if (rng.below(2) == 0)
    return std::to_string(a) + " + " + std::to_string(b) + " = " + std::to_string(a + b) + ".";
  if (a < b) std::swap(a, b);
  return std::to_string(a) + " - " + std::to_string(b) + " = " + std::to_string(a - b) + ".";
}

std::string countingSentence(util::SplitMix64& rng) {
  auto start = static_cast<int>(rng.below(20));
  auto length = 3 + static_cast<int>(rng.below(4));
  std::string text = "count";
  for (int i = 0; i < length; ++i) text += " " + std::to_string(start + i);
  return text + ".";
}

std::string sentence(util::SplitMix64& rng) {
  // Grammar 40%, facts 25%, arithmetic 25%, counting 10%.
  uint64_t kind = rng.below(20);
  if (kind < 8) return agreementSentence(rng);
  if (kind < 13) return factSentence(rng);
  if (kind < 18) return arithmeticSentence(rng);
  return countingSentence(rng);
}

}  // namespace

std::string generateCorpus(uint64_t seed, int64_t bytes) {
  if (bytes < 0) throw ConfigError("corpus size must be >= 0 bytes, got " + std::to_string(bytes));
  util::SplitMix64 rng(util::mixSeed(seed, 0xc0));
  std::string text;
  text.reserve(static_cast<size_t>(bytes) + 128);
  while (static_cast<int64_t>(text.size()) < bytes) {
    int sentences = 3 + static_cast<int>(rng.below(4));
    for (int i = 0; i < sentences; ++i) text += (i ? " " : "") + sentence(rng);
    text += "\n";
  }
  text.resize(static_cast<size_t>(bytes));
  return text;
}

}  // namespace strata::train
