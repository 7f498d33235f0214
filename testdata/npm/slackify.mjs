// slackify.mjs runs the pinned slackify-markdown over Markdown documents, for
// blockkit's differential test and the speed comparison in bench/.
//
//   node slackify.mjs FILE...             prints a JSON array: slackify's output per file
//   node slackify.mjs --bench N FILE...   converts every file N times (after a warm-up)
//                                         and prints {"docs":…, "iterations":…,
//                                         "ns_per_doc":…, "bytes":…} as JSON
//
// Reading files (not stdin) keeps bytes exact: Go passes the corpus paths.
import { readFileSync } from 'node:fs';
import { slackifyMarkdown } from 'slackify-markdown';

const args = process.argv.slice(2);
let iterations = 0;
if (args[0] === '--bench') {
  iterations = Number(args[1]);
  args.splice(0, 2);
  if (!Number.isInteger(iterations) || iterations < 1) {
    console.error('slackify.mjs: --bench needs a positive iteration count');
    process.exit(2);
  }
}
if (args.length === 0) {
  console.error('usage: node slackify.mjs [--bench N] FILE...');
  process.exit(2);
}
const docs = args.map((f) => readFileSync(f, 'utf8'));

if (iterations === 0) {
  process.stdout.write(JSON.stringify(docs.map((d) => slackifyMarkdown(d))) + '\n');
} else {
  let sink = 0;
  for (const d of docs) sink += slackifyMarkdown(d).length; // warm-up: JIT and module init
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    for (const d of docs) sink += slackifyMarkdown(d).length;
  }
  const ns = Number(process.hrtime.bigint() - start);
  const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d), 0);
  process.stdout.write(JSON.stringify({
    docs: docs.length,
    iterations,
    ns_per_doc: Math.round(ns / (iterations * docs.length)),
    bytes,
    sink,
  }) + '\n');
}
