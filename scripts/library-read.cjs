#!/usr/bin/env node
// library-read.cjs: read a table pg2dynamo migrated with a library preset
// back through the real library, as an application using it would, and
// print what it got as JSON on stdout.
//
//   node scripts/library-read.cjs electrodb|dynamodb-toolbox ENDPOINT TABLE
//
// The table holds app/preset_test.go's shop data (customers and orders),
// migrated with that file's electrodb or dynamodb-toolbox mapping. The
// models below are written as each library's documentation says, for the
// keys those mappings declare; they are not generated from the mapping. It
// prints {"reads": {NAME: [item, ...]}}, one list per read, items as the
// library returns them (its own parsing: a read the library refuses fails
// the script): every entity's scan, a get of each item scanned, and each
// access pattern's query (ElectroDB: by tier on GSI1, by name on GSI2, the
// orders of each customer in their collection). It exits 1 on any error;
// the caller compares the items with PostgreSQL's rows.
'use strict';

const { DynamoDBClient } = require('@aws-sdk/client-dynamodb');
const { DynamoDBDocumentClient } = require('@aws-sdk/lib-dynamodb');

async function main() {
  const [library, endpoint, tableName] = process.argv.slice(2);
  if (!library || !endpoint || !tableName) {
    throw new Error('usage: library-read.cjs electrodb|dynamodb-toolbox ENDPOINT TABLE');
  }
  const client = new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION || 'us-east-1',
    credentials: { accessKeyId: 'dynalite', secretAccessKey: 'dynalite' },
  });
  const read = { electrodb: readElectroDB, 'dynamodb-toolbox': readToolbox }[library];
  if (!read) throw new Error(`unknown library ${library}`);
  const reads = await read(client, tableName);
  process.stdout.write(JSON.stringify({ reads }, null, 1) + '\n');
}

// readElectroDB reads with ElectroDB entities whose keys are the mapping's:
// service Shop, Customer and Order at version 1, Order in the collection
// orders with its id padded to 10 digits.
// https://electrodb.dev/en/modeling/indexes/
async function readElectroDB(client, table) {
  const { Entity } = require('electrodb');
  const opts = { client, table };
  const customer = new Entity({
    model: { entity: 'Customer', version: '1', service: 'Shop' },
    attributes: {
      id: { type: 'number', required: true },
      name: { type: 'string', required: true },
      tier: { type: 'string' },
    },
    indexes: {
      primary: { pk: { field: 'PK', composite: ['id'] }, sk: { field: 'SK', composite: [] } },
      byTier: { index: 'GSI1', pk: { field: 'GSI1PK', composite: ['tier'] }, sk: { field: 'GSI1SK', composite: ['name', 'id'] } },
      byName: { index: 'GSI2', pk: { field: 'GSI2PK', composite: ['name'] } },
    },
  }, opts);
  const order = new Entity({
    model: { entity: 'Order', version: '1', service: 'Shop' },
    attributes: {
      id: { type: 'number', required: true, padding: { length: 10, char: '0' } },
      customer_id: { type: 'number', required: true },
      total: { type: 'number', required: true },
    },
    indexes: {
      primary: { collection: 'orders', pk: { field: 'PK', composite: ['customer_id'] }, sk: { field: 'SK', composite: ['id'] } },
    },
  }, opts);
  const reads = {};
  const customers = (await customer.scan.go({ pages: 'all' })).data;
  const orders = (await order.scan.go({ pages: 'all' })).data;
  reads['Customer scan'] = customers;
  reads['Order scan'] = orders;
  reads['Customer get'] = [];
  for (const c of customers) {
    reads['Customer get'].push((await customer.get({ id: c.id }).go()).data);
    reads[`Customer byName ${c.name}`] = (await customer.query.byName({ name: c.name }).go({ pages: 'all' })).data;
    if (c.tier !== undefined) {
      reads[`Customer byTier ${c.tier}`] = (await customer.query.byTier({ tier: c.tier }).go({ pages: 'all' })).data;
    }
    reads[`Order primary ${c.id}`] = (await order.query.primary({ customer_id: c.id }).go({ pages: 'all' })).data;
  }
  reads['Order get'] = [];
  for (const o of orders) {
    reads['Order get'].push((await order.get({ customer_id: o.customer_id, id: o.id }).go()).data);
  }
  return reads;
}

// readToolbox reads with dynamodb-toolbox v2 entities whose keys are the
// mapping's (CUSTOMER#id and ORDER#id, ids padded to 10 digits), with the
// library's own entity attribute (_et) and timestamps (_ct, _md).
// https://www.dynamodbtoolbox.com/docs/entities/usage
async function readToolbox(client, name) {
  const { Table, Entity, item, number, string, GetItemCommand, ScanCommand } = require('dynamodb-toolbox');
  const documentClient = DynamoDBDocumentClient.from(client);
  const table = new Table({
    name, documentClient,
    partitionKey: { name: 'PK', type: 'string' },
    sortKey: { name: 'SK', type: 'string' },
  });
  const pad = (id) => String(id).padStart(10, '0');
  const customer = new Entity({
    name: 'Customer', table,
    schema: item({ id: number().key(), name: string() }),
    computeKey: ({ id }) => ({ PK: `CUSTOMER#${pad(id)}`, SK: 'PROFILE' }),
  });
  const order = new Entity({
    name: 'Order', table,
    schema: item({ id: number().key(), total: number() }),
    computeKey: ({ id }) => ({ PK: `ORDER#${pad(id)}`, SK: 'ORDER' }),
  });
  const reads = {};
  for (const [entity, e] of [['Customer', customer], ['Order', order]]) {
    // A scan for one entity filters on its entity attribute (_et).
    reads[`${entity} scan`] = (await table.build(ScanCommand).entities(e).options({ maxPages: Infinity }).send()).Items;
    reads[`${entity} get`] = [];
    for (const it of reads[`${entity} scan`]) {
      reads[`${entity} get`].push((await e.build(GetItemCommand).key({ id: it.id }).send()).Item);
    }
  }
  return reads;
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
