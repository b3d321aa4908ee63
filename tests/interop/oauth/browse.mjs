#!/usr/bin/env node
// The scripted browser of browser.mjs as a command, for clients that are
// not JavaScript (our own OAuth client's interop test):
//   node browse.mjs AUTHORIZATION_URL   # prints the redirect URL, with its query
import { browse, REDIRECT } from './browser.mjs';

const [start] = process.argv.slice(2);
if (!start) {
  console.error('usage: node browse.mjs AUTHORIZATION_URL');
  process.exit(2);
}
try {
  const query = await browse(new URL(start));
  console.log(`${REDIRECT}?${query}`);
} catch (e) {
  console.error(`browse.mjs: ${e?.message ?? e}`);
  process.exit(1);
}
