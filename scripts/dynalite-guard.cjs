// dynalite-guard.cjs is preloaded into dynalite (node --require) wherever
// pg2dynamo starts it: the Go tests (tools/testenv), make bench and
// make demo (scripts/dynalite.sh).
//
// dynalite 4.0.0 rethrows the error of a request whose client went away
// mid-body (index.js: req.on('error', function (err) { throw err })), and the
// uncaught exception ends the server: one test that SIGKILLs pg2dynamo during
// a BatchWriteItem then fails every later test that shares the server. This
// is https://github.com/architect/dynalite/issues/183 (open). DynamoDB drops
// such a request and goes on serving; with this guard, so does dynalite. Any
// other uncaught exception still ends the process, as it would without it.
// It also replaces one action, ListTagsOfResource, and ends the server with
// the process that started it, as said below.
'use strict'

// With DYNALITE_GUARD_PARENT set to the starter's pid (the Go tests and make
// bench set it, tools/testenv.DynaliteEnv), the server exits once its
// parent is another process: the starter died without stopping it, as a test
// binary does at go test's -timeout, and nothing else would end it.
{
  const parent = Number(process.env.DYNALITE_GUARD_PARENT || 0)
  if (parent > 0) {
    setInterval(function () {
      if (process.ppid !== parent) {
        console.error('dynalite-guard: the process that started this server (pid ' + parent + ') is gone; exiting')
        process.exit(0)
      }
    }, 500).unref()
  }
}

process.on('uncaughtException', (err) => {
  if (err && (err.code === 'ECONNRESET' || err.message === 'aborted')) {
    console.error('dynalite-guard: a client went away mid-request (' + err.message + '); serving on')
    return
  }
  console.error(err)
  process.exit(7)
})

// dynalite 4.0.0's ListTagsOfResource reads every key of the whole database
// to find one table's tags (db/index.js: the prefixed sub-database's
// createKeyStream is given no range and filters by prefix), so on one thread
// it takes seconds once the tables are large: 6.5 s at 1.1 million items,
// during which no other request is answered. A follow's lease heartbeat
// lists the table's tags every 30 s, and the server then stalled its writes.
// DynamoDB reads a table's tags alone. This action does what dynalite's does,
// with the key stream bounded to the table's tags. dynalite requires each
// action by path (index.js), so the module cache answers with this one.
{
  const path = require('path')
  const Module = require('module')
  let action
  try {
    action = require.resolve('dynalite/actions/listTagsOfResource.js', { paths: [process.cwd(), path.join(__dirname, '..')] })
  }
  catch (err) {
    action = null // no dynalite beside this script: nothing to replace
  }
  if (action) {
    const dynaliteRequire = Module.createRequire(action)
    const once = dynaliteRequire('once')
    const db = dynaliteRequire('../db')
    const m = new Module(action)
    m.filename = action
    m.loaded = true
    m.exports = function listTagsOfResource (store, data, cb) {
      cb = once(cb)
      const tableName = data.ResourceArn.split('/').pop()
      store.getTable(tableName, false, function (err) {
        if (err && err.name == 'NotFoundError') {
          err.body.message = 'Requested resource not found: ResourcArn: ' + data.ResourceArn + ' not found'
        }
        if (err) return cb(err)
        const tagDb = store.getTagDb(tableName)
        const prefix = 'tag-' + tableName + '~'
        db.lazy(tagDb.createKeyStream({ gte: prefix, lt: prefix + '\xFF' }), cb).join(function (keys) {
          db.lazy(tagDb.createValueStream(), cb).join(function (values) {
            cb(null, { Tags: keys.map(function (key, i) { return { Key: key, Value: values[i] } }) })
          })
        })
      })
    }
    require.cache[action] = m
  }
}
