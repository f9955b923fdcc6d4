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

// appendValue and readValue encode to disk the source values an order check
// needs, as extract.Source.Stream decodes them, so PostgreSQL gets them back
// unchanged (extract.Source.Rank): a tag byte, then the value.
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

// errValueType is wrapped by appendValue for a Go type it does not encode.
var errValueType = errors.New("no encoding for the value's type")

// appendValue appends v's encoding to b, failing with errValueType for a type
// Stream does not return for a scalar column.
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
		// MarshalBinary keeps the instant, wall clock and zone offset (not
		// name): what pgx encodes dates and timestamps from.
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

// readValue decodes the value at b's start and returns it with the rest;
// errValueData (wrapped for a bad time) on an unknown tag or short or corrupt
// encoding.
func readValue(b []byte) (any, []byte, error) {
	if len(b) == 0 {
		return nil, nil, errValueData
	}
	r := valueReader{b: b[1:]}
	v, err := r.value(b[0])
	if err != nil {
		return nil, nil, err
	}
	return v, r.b, nil
}

type valueReader struct{ b []byte }

func (r *valueReader) value(tag byte) (any, error) {
	switch tag {
	case tagNil:
		return nil, nil
	case tagFalse, tagTrue:
		return tag == tagTrue, nil
	case tagInt16, tagInt32, tagInt64, tagInfinity:
		return r.integer(tag)
	case tagFloat32:
		f, err := r.fixed(4)
		if err != nil {
			return nil, err
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(f)), nil
	case tagFloat64:
		f, err := r.fixed(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(f)), nil
	case tagString, tagBytes, tagTime:
		return r.byteString(tag)
	case tagUUID:
		f, err := r.fixed(16)
		if err != nil {
			return nil, err
		}
		return [16]byte(f), nil
	case tagNumeric:
		return r.numeric()
	}
	return nil, errValueData
}

// integer decodes a varint as tag's type: int16, int32, int64 or
// pgtype.InfinityModifier.
func (r *valueReader) integer(tag byte) (any, error) {
	v, err := r.varint()
	if err != nil {
		return nil, err
	}
	switch tag {
	case tagInt16:
		return int16(v), nil
	case tagInt32:
		return int32(v), nil
	case tagInfinity:
		return pgtype.InfinityModifier(v), nil
	}
	return v, nil
}

// byteString decodes a length-prefixed field as tag's type: string, []byte (a
// copy) or time.Time.
func (r *valueReader) byteString(tag byte) (any, error) {
	v, err := r.bytesField()
	if err != nil {
		return nil, err
	}
	switch tag {
	case tagString:
		return string(v), nil
	case tagBytes:
		return append([]byte{}, v...), nil
	}
	var t time.Time
	if err := t.UnmarshalBinary(v); err != nil {
		return nil, fmt.Errorf("%w: %w", errValueData, err)
	}
	return t, nil
}

// numeric decodes a pgtype.Numeric: flags (valid, NaN, negative), infinity
// modifier and exponent varints, magnitude bytes.
func (r *valueReader) numeric() (any, error) {
	f, err := r.fixed(1)
	if err != nil {
		return nil, err
	}
	flags := f[0]
	inf, err := r.varint()
	if err != nil {
		return nil, err
	}
	exp, err := r.varint()
	if err != nil {
		return nil, err
	}
	mag, err := r.bytesField()
	if err != nil {
		return nil, err
	}
	n := pgtype.Numeric{Valid: flags&1 != 0, NaN: flags&2 != 0, InfinityModifier: pgtype.InfinityModifier(inf), Exp: int32(exp)}
	if n.Valid && !n.NaN && n.InfinityModifier == pgtype.Finite {
		n.Int = new(big.Int).SetBytes(mag)
		if flags&4 != 0 {
			n.Int.Neg(n.Int)
		}
	}
	return n, nil
}

func (r *valueReader) varint() (int64, error) {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		return 0, errValueData
	}
	r.b = r.b[n:]
	return v, nil
}

// bytesField consumes a uvarint length and that many bytes.
func (r *valueReader) bytesField() ([]byte, error) {
	l, n := binary.Uvarint(r.b)
	if n <= 0 || uint64(len(r.b)-n) < l {
		return nil, errValueData
	}
	v := r.b[n : n+int(l)]
	r.b = r.b[n+int(l):]
	return v, nil
}

func (r *valueReader) fixed(n int) ([]byte, error) {
	if len(r.b) < n {
		return nil, errValueData
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v, nil
}
