// dynalite-guard.cjs is preloaded into dynalite (node --require) wherever
// pg2dynamo starts it: the Go tests (internal/testenv), make bench and
// make demo (scripts/dynalite.sh).
//
// dynalite 4.0.0 rethrows the error of a request whose client went away
// mid-body (index.js: req.on('error', function (err) { throw err })), and the
// uncaught exception ends the server: one test that SIGKILLs pg2dynamo during
// a BatchWriteItem then fails every later test that shares the server. This
// is https://github.com/architect/dynalite/issues/183 (open). DynamoDB drops
// such a request and goes on serving; with this guard, so does dynalite. Any
// other uncaught exception still ends the process, as it would without it.
'use strict'

process.on('uncaughtException', (err) => {
  if (err && (err.code === 'ECONNRESET' || err.message === 'aborted')) {
    console.error('dynalite-guard: a client went away mid-request (' + err.message + '); serving on')
    return
  }
  console.error(err)
  process.exit(7)
})
