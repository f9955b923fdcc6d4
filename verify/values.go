package verify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// The source values an order check needs (the columns of a sort key
// template) are kept on disk with the items that must answer a Query.
// appendValue and readValue encode the values extract.Source.Stream
// decodes for a column read natively (extract's nativeTypes) or in its
// text form, so that PostgreSQL receives them back unchanged
// (extract.Source.Rank): a tag byte, then the value.
const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagInt16
	tagInt32
	tagInt64
	tagFloat32
	tagFloat64
	tagString
	tagBytes
	tagUUID
	tagTime
	tagNumeric
	tagInfinity // pgtype.InfinityModifier: an infinite date or timestamp
)

// errValueType is returned (wrapped) by appendValue for a Go type it does
// not encode.
var errValueType = errors.New("no encoding for the value's type")

// appendValue appends v's encoding to b. It fails, wrapping errValueType,
// for a type Stream does not return for a scalar column.
func appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, tagNil), nil
	case bool:
		if v {
			return append(b, tagTrue), nil
		}
		return append(b, tagFalse), nil
	case int16:
		return binary.AppendVarint(append(b, tagInt16), int64(v)), nil
	case int32:
		return binary.AppendVarint(append(b, tagInt32), int64(v)), nil
	case int64:
		return binary.AppendVarint(append(b, tagInt64), v), nil
	case float32:
		return binary.LittleEndian.AppendUint32(append(b, tagFloat32), math.Float32bits(v)), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagFloat64), math.Float64bits(v)), nil
	case string:
		return appendBytes(append(b, tagString), []byte(v)), nil
	case []byte:
		return appendBytes(append(b, tagBytes), v), nil
	case [16]byte:
		return append(append(b, tagUUID), v[:]...), nil
	case time.Time:
		// MarshalBinary keeps the instant, the wall clock and the zone
		// offset (not the zone's name): what pgx encodes a date,
		// timestamp or timestamptz from.
		t, err := v.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("time %v: %w", v, err)
		}
		return appendBytes(append(b, tagTime), t), nil
	case pgtype.InfinityModifier:
		return binary.AppendVarint(append(b, tagInfinity), int64(v)), nil
	case pgtype.Numeric:
		b = append(b, tagNumeric)
		var flags byte
		if v.Valid {
			flags |= 1
		}
		if v.NaN {
			flags |= 2
		}
		if v.Int != nil && v.Int.Sign() < 0 {
			flags |= 4
		}
		b = append(b, flags)
		b = binary.AppendVarint(b, int64(v.InfinityModifier))
		b = binary.AppendVarint(b, int64(v.Exp))
		var mag []byte
		if v.Int != nil {
			mag = v.Int.Bytes()
		}
		return appendBytes(b, mag), nil
	}
	return nil, fmt.Errorf("%T: %w", v, errValueType)
}

func appendBytes(b, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

// errValueData is returned for an encoding appendValue did not write.
var errValueData = errors.New("verify: corrupt value encoding")

// readValue decodes the value at the start of b and returns it with the
// rest of b.
func readValue(b []byte) (any, []byte, error) {
	if len(b) == 0 {
		return nil, nil, errValueData
	}
	tag, b := b[0], b[1:]
	varint := func() (int64, error) {
		v, n := binary.Varint(b)
		if n <= 0 {
			return 0, errValueData
		}
		b = b[n:]
		return v, nil
	}
	bytesField := func() ([]byte, error) {
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return nil, errValueData
		}
		v := b[n : n+int(l)]
		b = b[n+int(l):]
		return v, nil
	}
	switch tag {
	case tagNil:
		return nil, b, nil
	case tagFalse, tagTrue:
		return tag == tagTrue, b, nil
	case tagInt16, tagInt32, tagInt64, tagInfinity:
		v, err := varint()
		if err != nil {
			return nil, nil, err
		}
		switch tag {
		case tagInt16:
			return int16(v), b, nil
		case tagInt32:
			return int32(v), b, nil
		case tagInfinity:
			return pgtype.InfinityModifier(v), b, nil
		}
		return v, b, nil
	case tagFloat32:
		if len(b) < 4 {
			return nil, nil, errValueData
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b)), b[4:], nil
	case tagFloat64:
		if len(b) < 8 {
			return nil, nil, errValueData
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:], nil
	case tagString, tagBytes, tagTime:
		v, err := bytesField()
		if err != nil {
			return nil, nil, err
		}
		switch tag {
		case tagString:
			return string(v), b, nil
		case tagBytes:
			return append([]byte{}, v...), b, nil
		}
		var t time.Time
		if err := t.UnmarshalBinary(v); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", errValueData, err)
		}
		return t, b, nil
	case tagUUID:
		if len(b) < 16 {
			return nil, nil, errValueData
		}
		var u [16]byte
		copy(u[:], b)
		return u, b[16:], nil
	case tagNumeric:
		if len(b) < 1 {
			return nil, nil, errValueData
		}
		flags := b[0]
		b = b[1:]
		inf, err := varint()
		if err != nil {
			return nil, nil, err
		}
		exp, err := varint()
		if err != nil {
			return nil, nil, err
		}
		mag, err := bytesField()
		if err != nil {
			return nil, nil, err
		}
		n := pgtype.Numeric{Valid: flags&1 != 0, NaN: flags&2 != 0, InfinityModifier: pgtype.InfinityModifier(inf), Exp: int32(exp)}
		if n.Valid && !n.NaN && n.InfinityModifier == pgtype.Finite {
			n.Int = new(big.Int).SetBytes(mag)
			if flags&4 != 0 {
				n.Int.Neg(n.Int)
			}
		}
		return n, b, nil
	}
	return nil, nil, errValueData
}
