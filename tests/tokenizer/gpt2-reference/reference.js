// node reference.js OUT_FILE [TEXT_FILE...]
//
// Writes the cases of the GPT2Reference.* tests to OUT_FILE, one JSON object
// a line: {"text": ..., "pieces": [...], "ids": [...]}, where `pieces` are
// the matches of GPT-2's pre-tokenizer pattern and `ids` the token ids, both
// from the npm package gpt-3-encoder (installed here from the lock file), the
// reference. The texts are
//  - 3000 lines generated from a fixed seed out of fragments chosen to cover
//    what GPT-2's pattern tells apart: contractions, letters of many scripts
//    (accents, combining marks, CJK, astral-plane letters), digits and other
//    numbers, punctuation runs, runs of every kind of white space, emoji;
//  - every line of each TEXT_FILE (real English prose, Markdown and code);
//  - one document: the first 500 generated lines joined by newlines.
// Fails when the package's own decode does not give a text back.
// Prints the number of texts and tokens.
'use strict';
const fs = require('fs');
const { encode, decode } = require('gpt-3-encoder');

const [outFile, ...textFiles] = process.argv.slice(2);
if (!outFile) {
  console.error('usage: node reference.js OUT_FILE [TEXT_FILE...]');
  process.exit(2);
}

// mulberry32: a small seeded generator, so the lines are the same every run.
let seed = 0x5eed1234;
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (list) => list[Math.floor(random() * list.length)];

const words = [
  'the', 'The', 'THE', 'quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', 'model',
  'parallel', 'pipeline', 'Strata', 'tokenizer', 'GPT', 'a', 'I', 'x', 'hello', 'World',
  'internationalization', 'e.g.', 'i.e.', 'U.S.A.', 'Mr.', 'don\'t', 'I\'m', 'they\'re',
  'we\'ve', 'you\'ll', 'he\'d', 'it\'s', 'can\'t', 'O\'Neil', 'rock\'n\'roll', 'DON\'T',
  'IT\'S', '\'tis', '\'s', '\'t', '\'re', '\'ve', '\'m', '\'ll', '\'d', '\'S', '\'x', '\'',
  '\'\'', 'ol\'', 'cats\'', 'snake_case', 'camelCase', 'e-mail', 'C++', 'C#', 'node.js',
];
const numbers = [
  '0', '7', '42', '1999', '3.14159', '1,000,000', '2024-01-05', '12:30', '-17', '+3', '1e-5',
  '0x1F', '007', '٣٤٥', '१२३', '১২', '½', '²', '³', 'Ⅻ', 'ⅷ', '１２３', '①', '𝟙𝟚𝟛', '߁', '〇',
  '42nd', 'v2', 'x86_64', 'MP3', '4K', '3D',
];
const punctuation = [
  '.', ',', '!', '?', '?!', '...', '…', '—', '–', '-', '«', '»', '“', '”', '„', '‘', '’', '"',
  '(', ')', '[', ']', '{', '}', '<|endoftext|>', '#', '@user', '$5', '100%', 'a/b', '\\', '|',
  '`code`', '~~', ';', ':', ':-)', '&&', '||', '=>', '->', '==', '!=', '<=', '**', '//', '/*',
  '*/', '<div class="x">', '</div>', 'http://example.com/a?b=c&d=e', '¿', '¡', '§', '¶', '•',
  '、', '。', '，', '：', '！', '？', '「', '」', '©', '®', '™', '°', '±', '×', '÷', '∑', '∞', '→',
  '€', '£', '¥', '₿', '∀', '∈', 'ℝ',
];
const spaces = [
  ' ', ' ', ' ', '  ', '   ', '    ', '\t', '\t\t', '\n', '\n\n', '\r\n', ' \n', '\n ', ' \n ',
  '\u00a0', '\u3000', '\u2028', '\u2029', '\u2003', '\u2009', '\u202f', '\u205f', '\u1680',
  '\ufeff', '\u000b', '\u000c', '\r', ' \t ', '\u200b', '\u0085', '\u001f', '\u00a0 ', ' \u00a0',
];
const letters = [
  'café', 'naïve', 'résumé', 'Ångström', 'Straße', 'façade', 'piñata', 'Zürich', 'São',
  'Dvořák', 'łódź', 'Œuvre', 'e\u0301', 'cafe\u0301', 'n\u0303', 'ǅemal', 'ﬁne', 'Ǆ',
  'Καλημέρα', 'κόσμε', 'Привет', 'мир', 'Ёлка', 'שלום', 'עולם', 'مرحبا', 'بالعالم', 'नमस्ते',
  'दुनिया', 'สวัสดี', 'ชาวโลก', '你好', '世界', '中文字符', 'こんにちは', 'カタカナ', 'ｶﾀｶﾅ', '안녕하세요',
  '세계', 'გამარჯობა', 'Բարեւ', 'வணக்கம்', 'ᐊᐃᓐᓇᐃ', 'ⴰⵣⵓⵍ', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '𐍈', '𓀀', 'ꙮ', 'ǂ',
  'ʰ', 'ː', 'ª', 'º', 'µ', 'ß', 'ĳ',
];
const emoji = [
  '😀', '👍', '👍🏽', '👨‍👩‍👧‍👦', '🇫🇷', '🇯🇵', '❤️', '❤', '🤖', '✨', '🧑‍💻', '🏳️‍🌈', '☃', '♥', '⚡',
  '🎉🎉🎉', '🙂🙃', '#️⃣', '1️⃣',
];
const code = [
  'int main() { return 0; }', 'def f(x):\n    return x**2', '    indented', '\t\tif (a && b) {',
  '// comment', 'SELECT * FROM t WHERE id = 1;', 'for (int i = 0; i < n; ++i)', '#include <vector>',
  'x = [1, 2, 3]', '{"key": "value", "n": [1,2]}', '$ make test -j2', 'foo(bar, baz);',
  '  - item', '| a | b |', '**bold** _it_',
];
const pools = [words, words, words, numbers, punctuation, letters, letters, emoji, code];

function line() {
  let text = random() < 0.15 ? pick(spaces) : '';
  const fragments = 1 + Math.floor(random() * 12);
  for (let i = 0; i < fragments; ++i) {
    text += pick(pick(pools));
    const r = random();
    if (i + 1 < fragments) text += r < 0.6 ? ' ' : r < 0.75 ? '' : pick(spaces);
  }
  if (random() < 0.1) text += pick(spaces);
  return text;
}

const texts = [];
for (let i = 0; i < 3000; ++i) texts.push(line());
const generated = texts.slice();
for (const file of textFiles)
  for (const l of fs.readFileSync(file, 'utf8').split('\n')) if (l.length > 0) texts.push(l);
// (Not all of them: the package's encode() is quadratic in a text's tokens.)
texts.push(generated.slice(0, 500).join('\n'));

// GPT-2's pattern, as Encoder.js of gpt-3-encoder 1.1.4 spells it.
const pattern = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
const lines = [];
let tokens = 0;
for (const text of texts) {
  const ids = encode(text);
  if (ids.some((id) => typeof id !== 'number'))
    throw new Error('gpt-3-encoder gave a non-number id for ' + JSON.stringify(text));
  // (Its TextDecoder drops a byte-order mark that starts the text.)
  const back = decode(ids);
  if (back !== text && '\ufeff' + back !== text)
    throw new Error('gpt-3-encoder does not decode ' + JSON.stringify(text));
  const pieces = Array.from(text.matchAll(pattern), (m) => m[0]);
  if (pieces.join('') !== text) throw new Error('the pattern does not cover ' + JSON.stringify(text));
  tokens += ids.length;
  lines.push(JSON.stringify({ text, pieces, ids }) + '\n');
}
fs.writeFileSync(outFile, lines.join(''));
console.log(`${texts.length} texts, ${tokens} tokens from gpt-3-encoder ` +
            `${require('gpt-3-encoder/package.json').version} (Unicode ${process.versions.unicode})`);
