#!/usr/bin/env node
// onetable-read.cjs: read a table back with the real dynamodb-onetable, as
// an application would, and print what it got as JSON on stdout.
//
//   node scripts/onetable-read.cjs ENDPOINT TABLE SCHEMA.json
//
// SCHEMA.json is `pg2dynamo plan --format onetable`'s output. For each model
// of the schema it reads every item of that type with Model.scan (which
// filters on the schema's typeField), then, for each item read:
//   - get: Model.get(item), which renders the primary key again from the
//     item's own attributes through the model's value templates, must give
//     back the same item;
//   - find: Model.find with only the properties the partition key's value
//     template names (a Query of the item collection; the sort key's
//     template becomes begins_with of its literal prefix) must return it.
// It prints {"models": {NAME: {"items": [...], "get": N, "find": N,
// "misses": [...]}}}: the items as OneTable returns them (binary values as
// {"$binary": base64}, sets as sorted lists), and how many items each
// check found. It exits 1 on a failure to read, never on a miss: the
// caller compares.
'use strict';

const fs = require('fs');
const { DynamoDBClient } = require('@aws-sdk/client-dynamodb');
const { Table } = require('dynamodb-onetable');

async function main() {
  const [endpoint, tableName, schemaPath] = process.argv.slice(2);
  if (!endpoint || !tableName || !schemaPath) {
    throw new Error('usage: onetable-read.cjs ENDPOINT TABLE SCHEMA.json');
  }
  const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
  const client = new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION || 'us-east-1',
    credentials: { accessKeyId: 'dynalite', secretAccessKey: 'dynalite' },
  });
  const table = new Table({ client, name: tableName, schema, partial: false });
  const out = { models: {} };
  for (const name of Object.keys(schema.models)) {
    out.models[name] = await readModel(table.getModel(name), schema.models[name], schema.indexes.primary);
  }
  process.stdout.write(JSON.stringify(out, null, 1) + '\n');
}

// readModel scans every item of model, then gets and finds each again.
async function readModel(model, fields, primary) {
  const items = await model.scan({});
  const pkVars = templateVars(fields[primary.hash] && fields[primary.hash].value);
  const result = { items: items.map(plain), get: 0, find: 0, misses: [] };
  for (const item of items) {
    const want = JSON.stringify(plain(item));
    const got = await model.get(item);
    if (got && JSON.stringify(plain(got)) === want) {
      result.get++;
    } else if (result.misses.length < 5) {
      result.misses.push({ check: 'get', item: plain(item), got: got ? plain(got) : null });
    }
    const props = {};
    for (const v of pkVars) props[v] = item[v];
    const found = await model.find(props);
    if (found.some((f) => JSON.stringify(plain(f)) === want)) {
      result.find++;
    } else if (result.misses.length < 5) {
      result.misses.push({ check: 'find', item: plain(item), props: plain(props), found: found.length });
    }
  }
  return result;
}

// templateVars returns the property names a OneTable value template uses.
function templateVars(template) {
  if (!template) return [];
  return [...template.matchAll(/\$\{(.*?)\}/g)].map((m) => m[1].split(':')[0]);
}

// plain makes a value JSON-friendly and canonical: binary as base64,
// sets as sorted lists, BigInt as a number string, object keys sorted.
function plain(v) {
  if (v === null || v === undefined) return v;
  if (typeof v === 'bigint') return { $bigint: v.toString() };
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return { $binary: Buffer.from(v).toString('base64') };
  if (v instanceof Set) return { $set: [...v].map(plain).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)) };
  if (v instanceof Date) return { $date: v.toISOString() };
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = plain(v[k]);
    return o;
  }
  return v;
}

main().catch((err) => {
  process.stderr.write(`onetable-read: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
