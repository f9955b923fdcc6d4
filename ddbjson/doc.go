// Package ddbjson is pg2dynamo's one codec for DynamoDB JSON, the text
// form of an item in which every attribute value carries its type
// descriptor: {"name":{"S":"Ada"},"age":{"N":"36"},"tags":{"SS":["a"]}}.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/S3DataImport.Format.html
//
// It has three parts, over the SDK's types.AttributeValue and nothing else
// of the module (every stage, the reports and the tests may import it):
//
//   - Encoding (AppendLine, AppendItem, AppendValue, LineBytes): the S3
//     import format that export writes, one {"Item":{…}} object a line.
//     Attribute names and map keys come in byte order; set members and
//     list elements in the order given. It is on export's hot path, so it
//     allocates nothing per attribute.
//   - Decoding (DecodeLine, DecodeItem, DecodeValue): the inverse, for
//     import's reports of failed items, verify's spilled items and the
//     reports; errors are *DecodeError, naming where in the item.
//   - The canonical form (Canonical, CanonicalValue): DynamoDB JSON in
//     which two items are equal exactly when their forms are equal byte
//     for byte, what verify compares, hashes and reports.
//
// The canonical form differs from the line on purpose, and neither may
// change byte for byte (see Canonical): it sorts set members (DynamoDB
// sets have no order) and escapes strings as encoding/json does, where the
// line escapes only what JSON requires. Both decode back to the same
// values.
package ddbjson
