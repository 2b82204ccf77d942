package embed

// Reading SentencePiece's model file: the parts of its ModelProto (pieces, trainer and
// normalizer specs) the Unigram tokenizer uses, decoded field by field with protowire.

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// modelProto is the part of SentencePiece's ModelProto the tokenizer reads.
type modelProto struct {
	pieces []struct {
		piece string
		score float32
		typ   int32
	}
	modelType               int32
	byteFallback            bool
	treatWhitespaceAsSuffix bool
	bosID, eosID, padID     int32
	normalizer              normalizerSpec
}

// normalizerSpec is SentencePiece's NormalizerSpec.
type normalizerSpec struct {
	name                                                      string
	charsmap                                                  []byte
	addDummyPrefix, removeExtraWhitespaces, escapeWhitespaces bool
}

// parseModelProto decodes the fields of sentencepiece_model.proto the tokenizer needs, with
// the proto2 defaults of the others.
func parseModelProto(b []byte) (*modelProto, error) {
	m := &modelProto{modelType: 1, bosID: 1, eosID: 2, padID: -1,
		normalizer: normalizerSpec{addDummyPrefix: true, removeExtraWhitespaces: true, escapeWhitespaces: true}}
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			var p struct {
				piece string
				score float32
				typ   int32
			}
			p.typ = spmNormal
			err := eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				switch {
				case num == 1 && typ == protowire.BytesType:
					p.piece = string(v)
				case num == 2 && typ == protowire.Fixed32Type:
					p.score = math.Float32frombits(uint32(x))
				case num == 3 && typ == protowire.VarintType:
					p.typ = int32(x)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("piece %d: %w", len(m.pieces), err)
			}
			m.pieces = append(m.pieces, p)
		case num == 2 && typ == protowire.BytesType:
			return eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				if typ != protowire.VarintType {
					return nil
				}
				switch num {
				case 3:
					m.modelType = int32(x)
				case 24:
					m.treatWhitespaceAsSuffix = x != 0
				case 35:
					m.byteFallback = x != 0
				case 41:
					m.bosID = int32(x)
				case 42:
					m.eosID = int32(x)
				case 43:
					m.padID = int32(x)
				}
				return nil
			})
		case num == 3 && typ == protowire.BytesType:
			return eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				switch {
				case num == 1 && typ == protowire.BytesType:
					m.normalizer.name = string(v)
				case num == 2 && typ == protowire.BytesType:
					m.normalizer.charsmap = v
				case num == 3 && typ == protowire.VarintType:
					m.normalizer.addDummyPrefix = x != 0
				case num == 4 && typ == protowire.VarintType:
					m.normalizer.removeExtraWhitespaces = x != 0
				case num == 5 && typ == protowire.VarintType:
					m.normalizer.escapeWhitespaces = x != 0
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// eachField calls fn for each field of a protobuf message: the bytes of a length-delimited
// field in v, the value of a varint or fixed field in x.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("not a sentencepiece model (bad protobuf: %w)", protowire.ParseError(n))
		}
		b = b[n:]
		var (
			v []byte
			x uint64
		)
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x32 uint32
			x32, n = protowire.ConsumeFixed32(b)
			x = uint64(x32)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("not a sentencepiece model (bad protobuf field %d: %w)", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

var _ TextTokenizer = (*Unigram)(nil)
