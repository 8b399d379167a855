// The dev server (scripts/static_server.mjs), without a browser: path traversal in every spelling
// stays inside the site root (a sibling directory whose name starts with the root's is outside),
// symlinks cannot leave it, bad encodings are answered 400, and no request stops the server.
// Requests are written raw on a socket, so that no client normalizes the path first.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createStaticServer } from '../../scripts/static_server.mjs';

const SECRET = 'SECRET-7f3c9a';
let tmp; let server; let port;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vramplan-static-'));
  const site = path.join(tmp, 'site');
  const secret = path.join(tmp, 'site-secret');
  fs.mkdirSync(path.join(site, 'sub'), { recursive: true });
  fs.mkdirSync(secret);
  fs.writeFileSync(path.join(site, 'index.html'), '<p>home</p>');
  fs.writeFileSync(path.join(site, 'sub', 'index.html'), '<p>sub</p>');
  fs.writeFileSync(path.join(site, 'app.js'), 'export {};');
  fs.writeFileSync(path.join(site, '..notes.txt'), 'dots in a name are fine');
  fs.writeFileSync(path.join(secret, 'secret.txt'), SECRET);
  fs.writeFileSync(path.join(tmp, 'secret.txt'), SECRET);
  fs.symlinkSync(path.join(secret, 'secret.txt'), path.join(site, 'link-out.txt'));
  fs.symlinkSync(secret, path.join(site, 'linkdir'));
  fs.symlinkSync(path.join(site, 'app.js'), path.join(site, 'link-in.js'));
  server = createStaticServer(site);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
});

after(async () => {
  await new Promise((r) => { server.closeAllConnections?.(); server.close(r); });
  fs.rmSync(tmp, { recursive: true, force: true });
});

// Sends `head` verbatim (request line + headers) and returns {status, headers, body}.
function raw(requestLine, { extra = '' } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    socket.setTimeout(5000, () => { socket.destroy(); reject(new Error(`timeout: ${requestLine}`)); });
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: m ? Number(m[1]) : 0, head: text.slice(0, split), body: split < 0 ? '' : text.slice(split + 4), text });
    });
    socket.write(`${requestLine}\r\nhost: 127.0.0.1\r\nconnection: close\r\n${extra}\r\n`);
  });
}
const get = (target) => raw(`GET ${target} HTTP/1.1`);

test('serves files, directory indexes and symlinks that stay inside the root', async () => {
  let r = await get('/');
  assert.equal(r.status, 200);
  assert.match(r.body, /home/);
  r = await get('/sub/');
  assert.equal(r.status, 200);
  assert.match(r.body, /sub/);
  r = await get('/app.js?x=1#frag');
  assert.equal(r.status, 200);
  assert.match(r.head, /content-type: text\/javascript/i);
  assert.equal((await get('/link-in.js')).status, 200);
  assert.equal((await get('/..notes.txt')).status, 200, 'a name starting with ".." inside the root is not a traversal');
  assert.equal((await get('/%2e%2enotes.txt')).status, 200);
  assert.equal((await get('/missing.txt')).status, 404);
});

test('traversal in every spelling never reaches the sibling directory or the parent', async () => {
  const targets = [
    '/../site-secret/secret.txt',
    '/../secret.txt',
    '/..%2fsite-secret%2fsecret.txt',
    '/..%2Fsite-secret%2Fsecret.txt',
    '/%2e%2e/site-secret/secret.txt',
    '/%2e%2e%2fsite-secret%2fsecret.txt',
    '/%2E%2E%2Fsecret.txt',
    '/.%2e/secret.txt',
    '/sub/../../site-secret/secret.txt',
    '/sub/..%2f..%2fsite-secret%2fsecret.txt',
    '/%252e%252e%252fsite-secret%252fsecret.txt',
    '/%25%32%65%25%32%65%25%32%66secret.txt',
    '/..\\site-secret\\secret.txt',
    '/..%5csite-secret%5csecret.txt',
    '/..%5Csecret.txt',
    '/%c0%ae%c0%ae/secret.txt',
    '/..%c0%afsecret.txt',
    `/${encodeURIComponent(path.join(tmp, 'site-secret', 'secret.txt'))}`,
    `//${tmp.slice(1)}/site-secret/secret.txt`,
    '/link-out.txt',
    '/linkdir/secret.txt',
    '/linkdir/',
    '/%2e%2e',
    '/..',
  ];
  for (const t of targets) {
    const r = await get(t);
    assert.ok([400, 403, 404].includes(r.status), `${t}: status ${r.status}`);
    assert.ok(!r.text.includes(SECRET), `${t}: the secret leaked`);
  }
  assert.equal((await get('/..%2fsite-secret%2fsecret.txt')).status, 403);
  assert.equal((await get('/link-out.txt')).status, 403, 'a symlink out of the root is refused');
});

test('NUL and malformed percent-encodings are answered 400, and the server keeps serving', async () => {
  for (const t of ['/%00', '/index.html%00', '/index.html%00.txt', '/%', '/%zz', '/a%', '/%e0%a4%a', '/%ff', '/%c3%28']) {
    const r = await get(t);
    assert.equal(r.status, 400, `${t}: status ${r.status}`);
  }
  assert.equal((await get('/')).status, 200, 'still answering after bad requests');
});

test('only GET and HEAD; unparseable HTTP gets 400; the server survives all of it', async () => {
  for (const m of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE']) {
    const r = await raw(`${m} / HTTP/1.1`, { extra: 'content-length: 0\r\n' });
    assert.equal(r.status, 405, `${m}: status ${r.status}`);
    assert.match(r.head, /allow: GET, HEAD/i);
  }
  const head = await raw('HEAD /app.js HTTP/1.1');
  assert.equal(head.status, 200);
  assert.match(head.head, /content-length: 10/i);
  assert.equal(head.body, '');
  assert.equal((await raw('GARBAGE')).status, 400);
  assert.equal((await raw('GET http://elsewhere/secret.txt HTTP/1.1')).status, 400, 'absolute-form targets are refused');
  assert.equal((await raw('GET * HTTP/1.1')).status, 400);
  // Many bad requests at once, then a good one.
  await Promise.all(['/%', '/%00', '/..%2fsecret.txt', '/%zz'].flatMap((t) => [get(t), get(t)]));
  const r = await get('/');
  assert.equal(r.status, 200);
  assert.match(r.body, /home/);
});

test('long links (an inline config in the query) are served; an oversized head is refused and survived', async () => {
  const r = await get(`/index.html?v=1&cfg=${'A'.repeat(400000)}`);
  assert.equal(r.status, 200);
  assert.match(r.body, /home/);
  const huge = await raw(`GET /?q=${'A'.repeat(3 * 1024 * 1024)} HTTP/1.1`).catch(() => ({ status: 'closed' }));
  assert.ok([431, 400, 'closed'].includes(huge.status), `oversized request head: ${huge.status}`);
  assert.equal((await get('/')).status, 200);
});
