#!/usr/bin/python3
"""gen.py writes the Whisper-shaped ONNX model and the reference features the stt tests use.

It needs Debian's python3-onnx and python3-numpy; run it with /usr/bin/python3. The tests run it
into a temporary directory; nothing it writes is committed.

    gen.py whisper --dir DIR [--mels 80]
        DIR/onnx/encoder_model.onnx, DIR/onnx/decoder_model.onnx and DIR/tokenizer.json with
        the inputs, outputs and file layout of Hugging Face's Whisper ONNX exports (see
        memory/stt.Config). The weights are designed, not trained, so that the plumbing can be
        checked end to end: the encoder pairs frames (1500 of 3000, like Whisper's stride-2
        convolution) and puts the mean log-mel of each pair on its first axis; the decoder is
        a fixed chain of next tokens (after <|notimestamps|>: "Hello", ",", " world", " ",
        then 你好 as two byte-level tokens that split 你 between them, then <|endoftext|>),
        except after <|startoftranscript|>, where the language depends on the audio: the
        mean log-mel of the chunk above -1 (any sound) makes it <|zh|>, silence <|en|>.

    gen.py mel --in SAMPLES.f32 --out FEATURES.f32 [--mels 80]
        Whisper's log-mel features of 16 kHz float32 samples, computed with numpy apart from
        the Go code (rfft over reflect-padded Hann frames, librosa's Slaney mel filters), as
        float32 [mels, 3000].
"""

import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SR, N_FFT, HOP, N_SAMPLES, N_FRAMES = 16000, 400, 160, 480000, 3000


def mel_filters(n_mels):
    # librosa.filters.mel(sr=16000, n_fft=400, n_mels=n_mels, htk=False, norm="slaney")
    def hz_to_mel(f):
        f = np.asanyarray(f, dtype=np.float64)
        lin = f / (200.0 / 3)
        log = 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0)
        return np.where(f >= 1000.0, log, lin)

    def mel_to_hz(m):
        m = np.asanyarray(m, dtype=np.float64)
        lin = m * (200.0 / 3)
        log = 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0))
        return np.where(m >= 15.0, log, lin)

    fftfreqs = np.fft.rfftfreq(N_FFT, 1.0 / SR)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(SR / 2), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    weights = np.zeros((n_mels, len(fftfreqs)))
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2 : n_mels + 2] - mel_f[:n_mels]))[:, None]
    return weights


def log_mel(samples, n_mels):
    audio = np.zeros(N_SAMPLES, dtype=np.float64)
    n = min(len(samples), N_SAMPLES)
    audio[:n] = samples[:n]
    padded = np.pad(audio, N_FFT // 2, mode="reflect")
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)
    idx = np.arange(N_FFT)[None, :] + HOP * np.arange(N_FRAMES + 1)[:, None]
    spec = np.abs(np.fft.rfft(padded[idx] * window, axis=1)) ** 2  # [frames, bins]
    mel = mel_filters(n_mels) @ spec.T  # [mels, frames]
    log_spec = np.log10(np.maximum(mel, 1e-10))[:, :-1]
    log_spec = np.maximum(log_spec, log_spec.max() - 8.0)
    return ((log_spec + 4.0) / 4.0).astype(np.float32)


def mel(args):
    samples = np.fromfile(args.inp, dtype="<f4")
    log_mel(samples, args.mels).astype("<f4").tofile(args.out)


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


def whisper(args):
    b2u = bytes_to_unicode()
    piece = lambda bs: "".join(b2u[b] for b in bs)
    vocab = {piece([b]): b for b in range(256)}
    words = ["Hello", " world", "你".encode()[:2], "你".encode()[2:] + "好".encode()]
    word_ids = []
    for w in words:
        bs = w.encode() if isinstance(w, str) else w
        vocab[piece(bs)] = len(vocab)
        word_ids.append(vocab[piece(bs)])
    specials = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|zh|>", "<|translate|>", "<|transcribe|>",
                "<|startoflm|>", "<|startofprev|>", "<|nocaptions|>", "<|notimestamps|>", "<|0.00|>", "<|0.02|>"]
    sid = {s: len(vocab) + i for i, s in enumerate(specials)}
    V = len(vocab) + len(specials)
    tok = {
        "version": "1.0",
        "added_tokens": [{"id": sid[s], "content": s, "special": True} for s in specials],
        "model": {"type": "BPE", "vocab": vocab, "merges": []},
    }
    os.makedirs(os.path.join(args.dir, "onnx"), exist_ok=True)
    with open(os.path.join(args.dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)

    D = 8
    # Encoder: [b, mels, 3000] → [b, 3000, mels] → [b, 1500, 2·mels] → [b, 1500, D].
    w = np.zeros((2 * args.mels, D), np.float32)
    w[:, 0] = 1.0 / (2 * args.mels)
    nodes = [
        helper.make_node("Transpose", ["input_features"], ["t"], perm=[0, 2, 1]),
        helper.make_node("Reshape", ["t", "pairs_shape"], ["pairs"]),
        helper.make_node("MatMul", ["pairs", "w"], ["last_hidden_state"]),
    ]
    inits = [numpy_helper.from_array(np.array([0, 1500, 2 * args.mels], np.int64), "pairs_shape"), numpy_helper.from_array(w, "w")]
    graph = helper.make_graph(
        nodes, "whisper-encoder",
        [helper.make_tensor_value_info("input_features", TensorProto.FLOAT, ["batch_size", args.mels, N_FRAMES])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch_size", 1500, D])], inits)
    save(graph, os.path.join(args.dir, "onnx", "encoder_model.onnx"))

    # Decoder: logits = chain[input_ids] + (mean(hidden[..., 0]) + 1) · lang.
    chain = np.zeros((V, V), np.float32)
    seq = [sid["<|notimestamps|>"], word_ids[0], ord(","), word_ids[1], ord(" "), word_ids[2], word_ids[3], sid["<|endoftext|>"]]
    for a, b in zip(seq, seq[1:]):
        chain[a, b] = 10.0
    chain[sid["<|startoftranscript|>"], sid["<|en|>"]] = 5.0
    chain[sid["<|startoftranscript|>"], sid["<|zh|>"]] = 5.0
    lang = np.zeros(V, np.float32)
    lang[sid["<|en|>"]], lang[sid["<|zh|>"]] = -4.0, 4.0
    nodes = [
        helper.make_node("Gather", ["chain", "input_ids"], ["scores"], axis=0),
        helper.make_node("Slice", ["encoder_hidden_states", "s0", "s1", "s2"], ["first"]),
        helper.make_node("ReduceMean", ["first"], ["energy"], axes=[1, 2], keepdims=1),
        helper.make_node("Add", ["energy", "one"], ["shifted"]),
        helper.make_node("Mul", ["shifted", "lang"], ["bias"]),
        helper.make_node("Add", ["scores", "bias"], ["logits"]),
    ]
    inits = [numpy_helper.from_array(chain, "chain"), numpy_helper.from_array(lang, "lang"),
             numpy_helper.from_array(np.array([1.0], np.float32), "one"),
             numpy_helper.from_array(np.array([0], np.int64), "s0"), numpy_helper.from_array(np.array([1], np.int64), "s1"),
             numpy_helper.from_array(np.array([2], np.int64), "s2")]
    graph = helper.make_graph(
        nodes, "whisper-decoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "decoder_sequence_length"]),
         helper.make_tensor_value_info("encoder_hidden_states", TensorProto.FLOAT, ["batch_size", "encoder_sequence_length", D])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "decoder_sequence_length", V])], inits)
    save(graph, os.path.join(args.dir, "onnx", "decoder_model.onnx"))


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="hologram-stt-test")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="kind", required=True)
    w = sub.add_parser("whisper")
    w.add_argument("--dir", required=True)
    w.add_argument("--mels", type=int, default=80)
    m = sub.add_parser("mel")
    m.add_argument("--in", dest="inp", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--mels", type=int, default=80)
    args = p.parse_args()
    {"whisper": whisper, "mel": mel}[args.kind](args)


if __name__ == "__main__":
    main()
