#!/usr/bin/python3
"""gen.py trains the tiny SentencePiece Unigram models in this folder and writes cases.json,
the ids SentencePiece itself gives for the test texts.

Run it with Debian's python3-sentencepiece (apt-get install python3-sentencepiece):

    /usr/bin/python3 gen.py [JIEBA_DICT]

The training corpus is made here, deterministically: English from the licence texts in
/usr/share/common-licenses, Chinese sentences drawn (seeded) from the 300 most frequent words of jieba's dictionary
(JIEBA_DICT, by default gojieba's copy in the Go module cache), and some mixed lines.

Models:
  nfkc.model     nmt_nfkc normaliser, byte fallback, defaults otherwise (like XLM-R's model
                 plus byte fallback)
  cf.model       nmt_nfkc_cf (case folding), no byte fallback (runs of unknown characters
                 become one <unk>), no dummy prefix, extra whitespace kept, two user-defined
                 symbols
  identity.model no normalisation at all (empty charsmap), byte fallback

For each model and text, cases.json holds SentencePiece's ids and pieces; for nfkc.model also
the ids as Hugging Face's XLMRobertaTokenizer maps them (fairseq: <s>=0 <pad>=1 </s>=2 <unk>=3,
every other piece id + 1), the mapping multilingual-e5 uses.
"""

import glob
import json
import os
import random
import subprocess
import sys

import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))


def jieba_dict():
    if len(sys.argv) > 1:
        return sys.argv[1]
    modcache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    return os.path.join(modcache, "github.com/yanyiwu/gojieba@v1.4.6/deps/cppjieba/dict/jieba.dict.utf8")


def corpus_lines():
    rng = random.Random(20240601)
    lines = []
    for path in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                lines += [l.strip() for l in f if l.strip()]
    words, weights = [], []
    with open(jieba_dict(), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and all("\u4e00" <= c <= "\u9fff" for c in parts[0]):
                words.append(parts[0])
                weights.append(int(parts[1]))
    # The 300 most frequent words keep the character inventory (and so the vocabulary) small.
    top = sorted(zip(weights, words), reverse=True)[:300]
    words, weights = [w for _, w in top], [c for c, _ in top]
    punct = ["，", "。", "！", "？", "、", "；"]
    for _ in range(12000):
        n = rng.randint(4, 14)
        s = "".join(rng.choices(words, weights=weights, k=n))
        lines.append(s + rng.choice(punct))
    english = [w for l in lines[:3000] for w in l.split() if w.isalpha()]
    for _ in range(3000):
        zh = "".join(rng.choices(words, weights=weights, k=rng.randint(2, 6)))
        en = " ".join(rng.choices(english, k=rng.randint(1, 4)))
        lines.append(f"{zh} {en} {rng.randint(0, 9999)} {zh[:2]}")
    rng.shuffle(lines)
    return lines


MODELS = {
    "nfkc": dict(vocab_size=1200, normalization_rule_name="nmt_nfkc", byte_fallback=True),
    "cf": dict(vocab_size=900, normalization_rule_name="nmt_nfkc_cf", byte_fallback=False,
               add_dummy_prefix=False, remove_extra_whitespaces=False,
               user_defined_symbols=["<memo>", "HologramAgent"]),
    "identity": dict(vocab_size=700, normalization_rule_name="identity", byte_fallback=True),
}

TEXTS = [
    "",
    "   ",
    "Hello world",
    "  leading, trailing   and    inner   spaces  ",
    "The quick brown fox jumps over the lazy dog.",
    "我爱北京天安门",
    "今天天气很好，我们去公园散步吧！",
    "记忆是思考的残留。长期记忆需要提炼。",
    "mixed 中文English混合text测试123",
    "HologramAgent 是一个自托管的个人 AI 智能体",
    "<memo> remember the <memo>milk</memo>",
    "emoji 🥰 👍🏽 👨\u200d👩\u200d👧 ❤️ ok",
    "龘龘靐 rare characters 𠀋",
    "ＦＵＬＬＷＩＤＴＨ ｆｕｌｌ１２３ ｶﾀｶﾅ ① ㍿ ﬁnance Ⅻ",
    "tabs\tand\nnewlines\r\nhere",
    "control\u0000chars\u0007and\u200bzero\u200dwidth\u00a0nbsp\u3000ideographic",
    "Café naïve résumé ÀÉÎÕÜ İstanbul ß",
    "UPPER lower MiXeD",
    "numbers 3.14159 1,000,000 2024-06-01",
    ("长文本 long input " * 80).strip(),
]


def fairseq_ids(sp, pieces):
    # transformers' XLMRobertaTokenizer._convert_token_to_id, piece by piece.
    special = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    out = []
    for p in pieces:
        if p in special:
            out.append(special[p])
            continue
        i = sp.piece_to_id(p)
        out.append(i + 1 if i else 3)
    return out


def main():
    lines = corpus_lines()
    corpus = os.path.join(HERE, "corpus.tmp")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    cases = []
    try:
        for name, opts in MODELS.items():
            spm.SentencePieceTrainer.train(
                input=corpus, model_prefix=os.path.join(HERE, name), model_type="unigram",
                character_coverage=0.9995, seed_sentencepiece_size=100000, num_threads=1,
                input_sentence_size=0, shuffle_input_sentence=False, minloglevel=2, **opts)
            os.remove(os.path.join(HERE, name + ".vocab"))
            sp = spm.SentencePieceProcessor(model_file=os.path.join(HERE, name + ".model"))
            for text in TEXTS:
                ids = sp.encode(text)
                pieces = sp.encode(text, out_type=str)
                case = {"model": name, "text": text, "ids": ids, "pieces": pieces,
                        "bos_eos_ids": sp.encode(text, add_bos=True, add_eos=True)}
                if name == "nfkc":
                    case["fairseq_ids"] = fairseq_ids(sp, pieces)
                cases.append(case)
    finally:
        os.remove(corpus)
    with open(os.path.join(HERE, "cases.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": f"sentencepiece {spm.__version__}", "cases": cases}, f, ensure_ascii=False, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
