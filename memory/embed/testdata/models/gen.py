#!/usr/bin/python3
"""gen.py writes the random-weight ONNX models the dense embedder tests run.

It needs Debian's python3-onnx and python3-numpy (apt-get install python3-onnx); run it with
/usr/bin/python3 (another python3 on PATH may lack numpy). The tests run it into a temporary
directory; nothing it writes is committed.

    gen.py bert --out model.onnx --vocab 3000 --hidden 512 --layers 1 --heads 8 \
        --intermediate 512 [--max-pos 512] [--seed 1]
        A BERT encoder with the inputs and output of the bge-small-zh-v1.5 and
        multilingual-e5-small ONNX exports: input_ids, attention_mask and token_type_ids
        (int64 [batch_size, sequence_length]) in, last_hidden_state (float32
        [batch_size, sequence_length, hidden]) out. Embeddings (word, position, token type) and
        LayerNorm, then per layer multi-head self-attention with the attention mask, add & norm,
        a GELU feed-forward, add & norm. Weights are random (normal, sd 0.02, like BERT's init).

    gen.py clip --out model.onnx --tokenizer tokenizer.json [--dim 512] [--size 224]
        A two-tower text+image model with the inputs and outputs of a combined CLIP export:
        input_ids and attention_mask (int64 [batch_size, sequence_length]) and pixel_values
        (float32 [image_batch_size, 3, size, size]) in, text_embeds and image_embeds (float32
        [.., dim]) out. Its weights are designed, not random: the image tower averages each
        colour channel of the (CLIP-normalised) pixels and places the three means on the first
        three axes; the text tower is the masked mean of token vectors in which each colour word
        (red/红, green/绿/草, blue/蓝/天/sky) is the normalised pixel of its pure colour and other
        words are zero. So a text naming a colour is nearest to the image of that colour.
        tokenizer.json is the matching BERT WordPiece tokenizer.
"""

import argparse
import json

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # LayerNormalization needs 17; python3-onnx 1.12 writes up to 17.

# OpenAI CLIP's (and Chinese-CLIP's) image normalisation.
CLIP_MEAN = np.array([0.48145466, 0.4578275, 0.40821073], dtype=np.float32)
CLIP_STD = np.array([0.26862954, 0.26130258, 0.27577711], dtype=np.float32)


class Graph:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, base, array):
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, base=None, **attrs):
        out = self.name(base or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out


def bert(args):
    rng = np.random.default_rng(args.seed)
    h, heads = args.hidden, args.heads
    if h % heads:
        raise SystemExit("hidden must be a multiple of heads")
    dh = h // heads
    g = Graph()

    def w(*shape):
        return g.const("w", (rng.standard_normal(shape) * 0.02).astype(np.float32))

    def zeros(*shape):
        return g.const("b", np.zeros(shape, np.float32))

    def ones(*shape):
        return g.const("g", np.ones(shape, np.float32))

    def layer_norm(x):
        return g.op("LayerNormalization", [x, ones(h), zeros(h)], axis=-1, epsilon=1e-12)

    def linear(x, n_in, n_out):
        return g.op("Add", [g.op("MatMul", [x, w(n_in, n_out)]), zeros(n_out)])

    word = g.op("Gather", [w(args.vocab, h), "input_ids"])
    ttype = g.op("Gather", [w(2, h), "token_type_ids"])
    seq = g.op("Slice", [g.op("Shape", ["input_ids"]), g.const("i", np.array([1])), g.const("i", np.array([2])), g.const("i", np.array([0]))])
    pos = g.op("Slice", [w(args.max_pos, h), g.const("i", np.array([0])), seq, g.const("i", np.array([0]))])
    x = layer_norm(g.op("Add", [g.op("Add", [word, ttype]), pos]))

    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = g.op("Unsqueeze", [mask, g.const("i", np.array([1, 2]))])  # [b, 1, 1, s]
    bias = g.op("Mul", [g.op("Sub", [g.const("f", np.array(1, np.float32)), mask]), g.const("f", np.array(-10000, np.float32))])
    split_shape = g.const("i", np.array([0, 0, heads, dh]))
    merge_shape = g.const("i", np.array([0, 0, h]))
    scale = g.const("f", np.array(1 / np.sqrt(dh), np.float32))

    for _ in range(args.layers):
        def heads_of(t, perm):
            return g.op("Transpose", [g.op("Reshape", [t, split_shape])], perm=perm)

        q = heads_of(linear(x, h, h), [0, 2, 1, 3])  # [b, heads, s, dh]
        k = heads_of(linear(x, h, h), [0, 2, 3, 1])  # [b, heads, dh, s]
        v = heads_of(linear(x, h, h), [0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), bias])
        ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merge_shape])
        x = layer_norm(g.op("Add", [x, linear(ctx, h, h)]))
        ff = linear(x, h, args.intermediate)
        # GELU (erf form, as BERT): 0.5 x (1 + erf(x / sqrt 2)).
        erf = g.op("Erf", [g.op("Mul", [ff, g.const("f", np.array(1 / np.sqrt(2), np.float32))])])
        ff = g.op("Mul", [g.op("Mul", [ff, g.op("Add", [erf, g.const("f", np.array(1, np.float32))])]), g.const("f", np.array(0.5, np.float32))])
        x = layer_norm(g.op("Add", [x, linear(ff, args.intermediate, h)]))
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))

    ints = lambda name: helper.make_tensor_value_info(name, TensorProto.INT64, ["batch_size", "sequence_length"])
    graph = helper.make_graph(
        g.nodes, "bert", [ints("input_ids"), ints("attention_mask"), ints("token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch_size", "sequence_length", h])],
        g.inits)
    save(graph, args.out)


COLOURS = {
    "red": (np.array([1, 0, 0], np.float32), ["red", "红"]),
    "green": (np.array([0, 1, 0], np.float32), ["green", "grass", "绿", "草"]),
    "blue": (np.array([0, 0, 1], np.float32), ["blue", "sky", "蓝", "天"]),
}
OTHER_WORDS = ["a", "the", "photo", "of", "and", "色", "的", "花", "空", "地", "一", "张", "照", "片", "apple", "##s"]


def clip(args):
    d = args.dim
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    table = [np.zeros(d, np.float32) for _ in vocab]
    for rgb, words in COLOURS.values():
        pixel = (rgb - CLIP_MEAN) / CLIP_STD  # a pure colour after CLIP normalisation
        row = np.zeros(d, np.float32)
        row[:3] = pixel
        for word in words:
            vocab.append(word)
            table.append(row)
    for word in OTHER_WORDS:
        vocab.append(word)
        table.append(np.zeros(d, np.float32))
    g = Graph()
    emb = g.op("Gather", [g.const("table", np.stack(table)), "input_ids"])  # [b, s, d]
    mask = g.op("Unsqueeze", [g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT), g.const("i", np.array([2]))])
    axis1 = g.const("i", np.array([1]))
    total = g.op("ReduceSum", [g.op("Mul", [emb, mask]), axis1], keepdims=0)
    count = g.op("ReduceSum", [mask, axis1], keepdims=0)
    g.nodes.append(helper.make_node("Div", [total, count], ["text_embeds"]))
    proj = np.zeros((3, d), np.float32)
    proj[0, 0] = proj[1, 1] = proj[2, 2] = 1
    pooled = g.op("Flatten", [g.op("GlobalAveragePool", ["pixel_values"])], axis=1)  # [n, 3]
    g.nodes.append(helper.make_node("MatMul", [pooled, g.const("proj", proj)], ["image_embeds"]))
    ints = lambda name: helper.make_tensor_value_info(name, TensorProto.INT64, ["batch_size", "sequence_length"])
    graph = helper.make_graph(
        g.nodes, "clip",
        [ints("input_ids"), ints("attention_mask"),
         helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, ["image_batch_size", 3, args.size, args.size])],
        [helper.make_tensor_value_info("text_embeds", TensorProto.FLOAT, ["batch_size", d]),
         helper.make_tensor_value_info("image_embeds", TensorProto.FLOAT, ["image_batch_size", d])],
        g.inits)
    save(graph, args.out)
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, t in enumerate(vocab[:5])],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": {t: i for i, t in enumerate(vocab)}},
    }
    with open(args.tokenizer, "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False)


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="hologram-embed-test")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="kind", required=True)
    b = sub.add_parser("bert")
    b.add_argument("--out", required=True)
    b.add_argument("--vocab", type=int, required=True)
    b.add_argument("--hidden", type=int, required=True)
    b.add_argument("--layers", type=int, default=1)
    b.add_argument("--heads", type=int, default=8)
    b.add_argument("--intermediate", type=int, default=512)
    b.add_argument("--max-pos", type=int, default=512)
    b.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("clip")
    c.add_argument("--out", required=True)
    c.add_argument("--tokenizer", required=True)
    c.add_argument("--dim", type=int, default=512)
    c.add_argument("--size", type=int, default=224)
    args = p.parse_args()
    {"bert": bert, "clip": clip}[args.kind](args)


if __name__ == "__main__":
    main()
