// gen.js writes cases.json: the reference ids of tokenizer.json (all-MiniLM-L6-v2's BERT
// WordPiece, copied from the Go module github.com/clems4ever/all-minilm-l6-v2-go@v0.0.9,
// Apache-2.0, see LICENSE) for the texts below, computed by Hugging Face's own tokenizers
// library (Rust, through its Node binding), an implementation independent of ours.
//
// Regenerate (network: the npm registry only):
//   d=$(mktemp -d) && (cd $d && npm install --no-save --no-audit --no-fund tokenizers@0.23.2)
//   NODE_PATH=$d/node_modules node gen.js > cases.json
"use strict";
const path = require("path");
const { Tokenizer } = require("tokenizers");

const long = "Memory is the residue of thought. 记忆是思考的残留。 ".repeat(60);
const longWord = "pneumono" + "ultramicroscopic".repeat(7); // > 100 characters: one [UNK]

const texts = [
  "",
  "   \t\n ",
  "Hello, world!",
  "The quick brown fox jumps over the lazy dog.",
  "unaffable naïve café Élodie résumé ÀÉÎÕÜ",
  "我爱北京天安门",
  "今天天气很好，我们去公园散步吧！",
  "HologramAgent 是一个自托管的个人 AI 智能体 (self-hosted agent) v0.3.1",
  "emoji: 🥰 👍🏽 👨‍👩‍👧 ❤️ 🇨🇳 ok",
  "control\u0000chars\u0007and\u200bzero\u200dwidth\u00a0nbsp\u3000ideographic space",
  "ＦＵＬＬＷＩＤＴＨ ｆｕｌｌ１２３ and ｶﾀｶﾅ",
  "日本語のテキストとカタカナ、한국어 텍스트",
  "special tokens: [CLS] x [SEP] y [MASK][PAD] [unk] [UNK]",
  "punctuation!!! ...what? $100 + 5% = <tag> a_b c-d e/f 'q' \"dq\" `bt` ~t^ |p|",
  "numbers 3.14159 1,000,000 2024-06-01T12:00:00Z",
  "https://example.com/path?q=1&r=two#frag user@example.org",
  "Ǆemal İstanbul ß ΣΊΣΥΦΟΣ ﬁnancé",
  "mixed 中文English混合text测试123",
  "tabs\tand\nnewlines\r\nand  many   spaces",
  longWord + " short",
  long,
];
const maxLens = [0, 8, 16, 128, 512];

(async () => {
  const tok = Tokenizer.fromFile(path.join(__dirname, "tokenizer.json"));
  tok.disablePadding();
  const cases = [];
  for (const text of texts) {
    for (const maxLen of maxLens) {
      if (maxLen === 0) {
        tok.disableTruncation();
      } else {
        tok.setTruncation(maxLen);
      }
      const enc = await tok.encode(text);
      cases.push({ text, max_len: maxLen, ids: enc.getIds(), tokens: enc.getTokens() });
    }
  }
  process.stdout.write(JSON.stringify({ generator: "tokenizers@0.23.2 (npm)", cases }, null, 1) + "\n");
})();
