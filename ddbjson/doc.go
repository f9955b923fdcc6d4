// Package ddbjson is pg2dynamo's one codec for DynamoDB JSON, where every
// attribute value carries its type: {"name":{"S":"Ada"},"age":{"N":"36"}}.
// It has encoding (AppendLine, …: the S3 import format export writes, one
// {"Item":{…}} a line, allocation-free per attribute), decoding (DecodeLine,
// …) and the canonical form (Canonical), equal byte for byte exactly when
// items are equal. Neither form's bytes may change.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/S3DataImport.Format.html
package ddbjson
