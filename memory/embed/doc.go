// Package embed turns memory text into the vectors the memory core ranks by.
//
// The sparse side lives here now: [Tokenizer] produces the index and query terms of the
// memory's BM25 (SQLite FTS5 stores them space-joined, because unicode61 does not segment
// Chinese). Latin and other space-separated scripts go through a word path (lowercase, split
// on non-alphanumerics, English stop words dropped, Snowball English stemming, see [Stem]);
// runs of Han characters go through jieba (github.com/yanyiwu/gojieba, CutForSearch with HMM).
//
// jieba's dictionaries (≈ 12 MB) are data files, not embedded: [ResolveJiebaDir] finds them
// and the [Tokenizer] loads them lazily, once, on the first Han text or on an explicit
// [Tokenizer.Load] (≈ 1 s and ≈ 130 MB of C memory). A missing dictionary is an error,
// never a panic, and text without Han characters never needs the dictionaries.
//
// The dense side: [TextTokenizer] ([WordPiece], [Unigram]) feeds [TextEmbedder] and
// [ImageTextEmbedder] (ONNX Runtime, see [ORT]); vectors carry a [Space] whose [Space.Fingerprint]
// the store keeps; [Fuse] merges dense and sparse rankings; [Manager] installs the models of
// [Catalog].
//
// The API is internal to HologramAgent and may change; the token rules of [Tokenizer.Tokens]
// define the terms already stored in memory indexes, so changing them needs a reindex.
package embed
