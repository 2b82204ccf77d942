package embed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"unicode/utf8"
)

// Unigram is a SentencePiece Unigram tokenizer read from a SentencePiece model file (the
// "sentencepiece.bpe.model" of XLM-RoBERTa and multilingual-e5, despite its name a Unigram
// model). It reproduces SentencePiece's own encoding:
//
//   - normalisation as the model's normalizer_spec says: its precompiled character map (the
//     NFKC, nmt_nfkc or case-folding rules compiled at training time; identity when empty),
//     user-defined symbols passed through whole, a dummy "▁" prefix, extra whitespace removed
//     and spaces escaped as "▁" (U+2581), each as the spec's flags say;
//   - the Viterbi segmentation over the pieces' scores, with an unknown node (the lowest
//     score minus 10) for a character no piece covers and SentencePiece's tie-breaking;
//   - a run of unknown characters as one unknown id, or, with byte fallback, each byte of an
//     unknown character as its <0xXX> piece.
//
// Build one with [LoadSentencePiece]. A Unigram is immutable and safe for concurrent use.
type Unigram struct {
	pieces   map[string]int32 // normal and user-defined pieces, the ones segmentation uses
	scores   []float32
	user     []bool // user-defined pieces
	maxPiece int    // longest piece in bytes
	unk      int32
	minScore float32
	maxScore float32

	byteFallback bool
	bytePieces   [256]int32

	norm spmNormalizer
	// chunked is set when no piece has "▁" after its first character, so the segmentation
	// splits exactly before every "▁" and a truncated encoding can stop early.
	chunked bool

	fairseq        bool
	prefix, suffix []int64
	pad            int64
	names          []string // piece strings by id, for Pieces
}

// SentencePieceOptions configures [LoadSentencePiece].
type SentencePieceOptions struct {
	// Fairseq numbers the ids as Hugging Face's XLM-RoBERTa tokenizers do (multilingual-e5):
	// <s>=0, <pad>=1, </s>=2, <unk>=3 and every other piece its SentencePiece id + 1; Encode
	// then puts <s> … </s> around the text and pads with <pad>.
	Fairseq bool
	// AddBOS and AddEOS put the model's own <s> and </s> (SentencePiece ids) around the text.
	// They are errors with Fairseq, which always adds both, and when the model has none.
	AddBOS, AddEOS bool
}

// SentencePiece piece types (sentencepiece_model.proto).
const (
	spmNormal      = 1
	spmUnknown     = 2
	spmControl     = 3
	spmUserDefined = 4
	spmUnused      = 5
	spmByte        = 6
)

// spmUnkPenalty is SentencePiece's kUnkPenalty: an unknown node scores min score - 10.
const spmUnkPenalty = 10

// fltMin is C's FLT_MIN, the smallest normal positive float32.
const fltMin = 0x1p-126

// LoadSentencePiece reads a SentencePiece model file. Only Unigram models are supported; a
// BPE, word or char model, or a model whose whitespace is a suffix, is an error.
func LoadSentencePiece(path string, opts SentencePieceOptions) (*Unigram, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("embed: read sentencepiece model: %w", err)
	}
	u, err := ParseSentencePiece(data, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return u, nil
}

// ParseSentencePiece is [LoadSentencePiece] on the file's contents.
func ParseSentencePiece(data []byte, opts SentencePieceOptions) (*Unigram, error) {
	m, err := parseModelProto(data)
	if err != nil {
		return nil, fmt.Errorf("embed: sentencepiece model: %w", err)
	}
	switch m.modelType {
	case 1:
	case 2:
		return nil, errors.New("embed: sentencepiece model is BPE; only Unigram models are supported")
	default:
		return nil, fmt.Errorf("embed: sentencepiece model type %d is not supported (want Unigram)", m.modelType)
	}
	if m.treatWhitespaceAsSuffix {
		return nil, errors.New("embed: sentencepiece model treats whitespace as a suffix; not supported")
	}
	if len(m.pieces) == 0 {
		return nil, errors.New("embed: sentencepiece model has no pieces")
	}
	u := &Unigram{
		pieces:       make(map[string]int32, len(m.pieces)),
		scores:       make([]float32, len(m.pieces)),
		user:         make([]bool, len(m.pieces)),
		unk:          -1,
		byteFallback: m.byteFallback,
		chunked:      true,
		names:        make([]string, len(m.pieces)),
	}
	for i := range u.bytePieces {
		u.bytePieces[i] = -1
	}
	// SentencePiece starts the extremes at FLT_MAX and FLT_MIN (the smallest positive float)
	// and resets an untouched one to 0; with the usual negative scores max_score is 0.
	minScore, maxScore := float32(math.MaxFloat32), float32(fltMin)
	var userSymbols []string
	for i, p := range m.pieces {
		id := int32(i)
		u.scores[i], u.names[i] = p.score, p.piece
		if p.piece == "" {
			return nil, fmt.Errorf("embed: sentencepiece model: piece %d is empty", i)
		}
		switch p.typ {
		case spmNormal, spmUserDefined:
			if _, dup := u.pieces[p.piece]; dup {
				return nil, fmt.Errorf("embed: sentencepiece model: piece %q appears twice", p.piece)
			}
			u.pieces[p.piece] = id
			u.maxPiece = max(u.maxPiece, len(p.piece))
			if _, first := utf8.DecodeRuneInString(p.piece); strings.Contains(p.piece[first:], "▁") {
				u.chunked = false
			}
			if p.typ == spmUserDefined {
				u.user[i] = true
				userSymbols = append(userSymbols, p.piece)
			} else {
				minScore, maxScore = min(minScore, p.score), max(maxScore, p.score)
			}
		case spmUnknown:
			if u.unk >= 0 {
				return nil, errors.New("embed: sentencepiece model has two unknown pieces")
			}
			u.unk = id
		case spmByte:
			if !m.byteFallback {
				return nil, fmt.Errorf("embed: sentencepiece model has byte piece %q but byte_fallback is off", p.piece)
			}
			var b byte
			if _, err := fmt.Sscanf(p.piece, "<0x%02X>", &b); err != nil || len(p.piece) != 6 {
				return nil, fmt.Errorf("embed: sentencepiece model: malformed byte piece %q", p.piece)
			}
			u.bytePieces[b] = id
		case spmControl, spmUnused:
		default:
			return nil, fmt.Errorf("embed: sentencepiece model: piece %q has unknown type %d", p.piece, p.typ)
		}
	}
	if u.unk < 0 {
		return nil, errors.New("embed: sentencepiece model has no unknown piece")
	}
	if minScore == math.MaxFloat32 {
		minScore = 0
	}
	if maxScore == fltMin {
		maxScore = 0
	}
	u.minScore, u.maxScore = minScore, maxScore
	if u.byteFallback {
		for b, id := range u.bytePieces {
			if id < 0 {
				return nil, fmt.Errorf("embed: sentencepiece model has byte_fallback but no piece <0x%02X>", b)
			}
		}
	}
	norm, err := newSPMNormalizer(m.normalizer, userSymbols)
	if err != nil {
		return nil, err
	}
	u.norm = norm
	if err := u.setSpecials(m, opts); err != nil {
		return nil, err
	}
	return u, nil
}

func (u *Unigram) setSpecials(m *modelProto, opts SentencePieceOptions) error {
	if opts.Fairseq {
		if opts.AddBOS || opts.AddEOS {
			return errors.New("embed: sentencepiece options: AddBOS/AddEOS with Fairseq (which adds <s> and </s> itself)")
		}
		u.fairseq = true
		u.prefix, u.suffix, u.pad = []int64{0}, []int64{2}, 1
		return nil
	}
	control := func(id int32, option string) (int64, error) {
		if id < 0 || int(id) >= len(m.pieces) || m.pieces[id].typ != spmControl {
			return 0, fmt.Errorf("embed: sentencepiece options: %s, but the model has no such control piece (id %d)", option, id)
		}
		return int64(id), nil
	}
	if opts.AddBOS {
		id, err := control(m.bosID, "AddBOS")
		if err != nil {
			return err
		}
		u.prefix = []int64{id}
	}
	if opts.AddEOS {
		id, err := control(m.eosID, "AddEOS")
		if err != nil {
			return err
		}
		u.suffix = []int64{id}
	}
	u.pad = int64(u.unk)
	if m.padID >= 0 && int(m.padID) < len(m.pieces) {
		u.pad = int64(m.padID)
	}
	return nil
}

// PadID implements [TextTokenizer]: <pad> (1) with Fairseq ids, else the model's pad piece,
// or its unknown piece when it has none (padding is masked out).
func (u *Unigram) PadID() int64 { return u.pad }

// Encode implements [TextTokenizer].
func (u *Unigram) Encode(text string, maxLen int) []int64 {
	budget := -1
	if maxLen > 0 {
		budget = max(maxLen-len(u.prefix)-len(u.suffix), 0)
	}
	ids := append(make([]int64, 0, len(u.prefix)+len(u.suffix)+min(len(text)/2+2, 1024)), u.prefix...)
	ids = u.encode(ids, text, budget, nil)
	return append(ids, u.suffix...)
}

// Pieces returns SentencePiece's pieces for text (a merged run of unknown characters is one
// piece, their surface): the tokenizer's view of the text, for tests and explanations.
func (u *Unigram) Pieces(text string) []string {
	var pieces []string
	u.encode(nil, text, -1, &pieces)
	return pieces
}

// encode appends the (mapped) ids of text to dst, at most budget of them (< 0: no limit).
func (u *Unigram) encode(dst []int64, text string, budget int, pieces *[]string) []int64 {
	normalized := u.norm.normalize(text)
	start := len(dst)
	prevUnk := false
	var nodes []spmNode
	emit := func(id int32, surface string) {
		if pieces != nil {
			*pieces = append(*pieces, surface)
		}
		dst = append(dst, u.mapID(id))
	}
	for rest := normalized; rest != ""; {
		chunk := rest
		if u.chunked {
			if i := strings.Index(rest[1:], "▁"); i >= 0 {
				chunk = rest[:i+1]
			}
		}
		rest = rest[len(chunk):]
		nodes = u.viterbi(nodes[:0], chunk)
		for _, n := range nodes {
			surface := chunk[n.start:n.end]
			if n.id != u.unk {
				emit(n.id, surface)
				prevUnk = false
				continue
			}
			switch {
			case u.byteFallback:
				for i := 0; i < len(surface); i++ {
					emit(u.bytePieces[surface[i]], u.names[u.bytePieces[surface[i]]])
				}
			case prevUnk:
				// A run of unknown characters is one unknown piece.
				if pieces != nil {
					(*pieces)[len(*pieces)-1] += surface
				}
			default:
				emit(u.unk, surface)
			}
			prevUnk = true
		}
		if budget >= 0 && len(dst)-start >= budget {
			break
		}
	}
	if budget >= 0 && len(dst)-start > budget {
		dst = dst[:start+budget]
	}
	return dst
}

func (u *Unigram) mapID(id int32) int64 {
	if !u.fairseq {
		return int64(id)
	}
	if id == u.unk {
		return 3
	}
	return int64(id) + 1
}

// spmNode is one piece of the best segmentation: bytes [start, end) of the normalised text.
type spmNode struct {
	id         int32
	start, end int
}

// bestPath is SentencePiece's BestPathNode: the best segmentation ending at a position.
type bestPath struct {
	id       int32
	score    float32
	startsAt int
}

// viterbi appends the best segmentation of s to nodes, as SentencePiece's EncodeOptimized
// computes it (scores in float32, candidates compared in double, the first best kept).
func (u *Unigram) viterbi(nodes []spmNode, s string) []spmNode {
	best := make([]bestPath, len(s)+1)
	for i := range best {
		best[i].startsAt = -1
	}
	unkScore := u.minScore - spmUnkPenalty
	for start := 0; start < len(s); {
		_, charLen := utf8.DecodeRuneInString(s[start:])
		till := best[start].score
		hasSingle := false
		limit := min(len(s), start+u.maxPiece)
		for end := start + charLen; end <= limit; {
			if id, ok := u.pieces[s[start:end]]; ok {
				var score float64
				if u.user[id] {
					score = float64(float32(end-start)*u.maxScore) - 0.1
				} else {
					score = float64(u.scores[id])
				}
				cand := score + float64(till)
				if t := &best[end]; t.startsAt < 0 || cand > float64(t.score) {
					*t = bestPath{id: id, score: float32(cand), startsAt: start}
				}
				if end-start == charLen {
					hasSingle = true
				}
			}
			if end == len(s) {
				break
			}
			_, n := utf8.DecodeRuneInString(s[end:])
			end += n
		}
		if !hasSingle {
			cand := unkScore + till
			if t := &best[start+charLen]; t.startsAt < 0 || cand > t.score {
				*t = bestPath{id: u.unk, score: cand, startsAt: start}
			}
		}
		start += charLen
	}
	mark := len(nodes)
	for end := len(s); end > 0; {
		b := best[end]
		nodes = append(nodes, spmNode{id: b.id, start: b.startsAt, end: end})
		end = b.startsAt
	}
	for i, j := mark, len(nodes)-1; i < j; i, j = i+1, j-1 {
		nodes[i], nodes[j] = nodes[j], nodes[i]
	}
	return nodes
}

// spmNormalizer is SentencePiece's Normalizer with a precompiled character map.
type spmNormalizer struct {
	trie       []uint32 // darts-clone double array; empty: identity
	normalized string   // NUL-terminated replacement strings the trie values point into

	addDummyPrefix, removeExtraWhitespaces, escapeWhitespaces bool
	userSymbols                                               []string // longest first
}

func newSPMNormalizer(spec normalizerSpec, userSymbols []string) (spmNormalizer, error) {
	n := spmNormalizer{
		addDummyPrefix:         spec.addDummyPrefix,
		removeExtraWhitespaces: spec.removeExtraWhitespaces,
		escapeWhitespaces:      spec.escapeWhitespaces,
		userSymbols:            userSymbols,
	}
	sort.SliceStable(n.userSymbols, func(i, j int) bool { return len(n.userSymbols[i]) > len(n.userSymbols[j]) })
	if len(spec.charsmap) == 0 {
		return n, nil
	}
	blob := spec.charsmap
	if len(blob) <= 4 {
		return n, errors.New("embed: sentencepiece model: precompiled charsmap is truncated")
	}
	size := binary.LittleEndian.Uint32(blob)
	if uint64(size) >= uint64(len(blob)-4) || size%4 != 0 || size == 0 {
		return n, fmt.Errorf("embed: sentencepiece model: precompiled charsmap trie size %d does not fit its %d bytes", size, len(blob))
	}
	n.trie = make([]uint32, size/4)
	for i := range n.trie {
		n.trie[i] = binary.LittleEndian.Uint32(blob[4+4*i:])
	}
	n.normalized = string(blob[4+size:])
	return n, nil
}

// longestRule is darts-clone's commonPrefixSearch keeping the longest match: the offset of
// its replacement in n.normalized and the length of the matched prefix (0: no rule).
func (n *spmNormalizer) longestRule(s string) (value uint32, length int) {
	if len(n.trie) == 0 {
		return 0, 0
	}
	offset := func(unit uint32) uint32 { return (unit >> 10) << ((unit & (1 << 9)) >> 6) }
	pos := offset(n.trie[0])
	for i := 0; i < len(s); i++ {
		pos ^= uint32(s[i])
		if int(pos) >= len(n.trie) {
			return value, length
		}
		unit := n.trie[pos]
		if unit&(1<<31|0xFF) != uint32(s[i]) {
			return value, length
		}
		pos ^= offset(unit)
		if (unit>>8)&1 == 1 {
			if int(pos) >= len(n.trie) {
				return value, length
			}
			value, length = n.trie[pos]&(1<<31-1), i+1
		}
	}
	return value, length
}

// normalizePrefix returns the normalised form of the start of s and how many bytes it
// consumed: a user-defined symbol as is, else the longest charsmap rule, else one character
// unchanged (a malformed byte becomes U+FFFD).
func (n *spmNormalizer) normalizePrefix(s string) (string, int) {
	for _, sym := range n.userSymbols {
		if strings.HasPrefix(s, sym) {
			return sym, len(sym)
		}
	}
	if value, length := n.longestRule(s); length > 0 {
		if int(value) < len(n.normalized) {
			rep := n.normalized[value:]
			if end := strings.IndexByte(rep, 0); end >= 0 {
				rep = rep[:end]
			}
			return rep, length
		}
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size <= 1 {
		return "\uFFFD", 1
	}
	return s[:size], size
}

// normalize is SentencePiece's Normalizer::Normalize.
func (n *spmNormalizer) normalize(input string) string {
	if input == "" {
		return ""
	}
	var b strings.Builder
	b.Grow(len(input) + len(input)/2 + 3)
	ws := " "
	if n.escapeWhitespaces {
		ws = "▁"
	}
	if n.addDummyPrefix {
		b.WriteString(ws)
	}
	prevSpace := n.removeExtraWhitespaces
	for input != "" {
		sp, consumed := n.normalizePrefix(input)
		if prevSpace {
			sp = strings.TrimLeft(sp, " ")
		}
		if sp != "" {
			if n.escapeWhitespaces {
				b.WriteString(strings.ReplaceAll(sp, " ", "▁"))
			} else {
				b.WriteString(sp)
			}
			prevSpace = sp[len(sp)-1] == ' '
		}
		input = input[consumed:]
		if !n.removeExtraWhitespaces {
			prevSpace = false
		}
	}
	out := b.String()
	if n.removeExtraWhitespaces {
		for strings.HasSuffix(out, ws) {
			out = out[:len(out)-len(ws)]
		}
	}
	return out
}
