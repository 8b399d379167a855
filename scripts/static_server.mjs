// Minimal static file server for the built site (also used by the browser tests).
// Usage: node scripts/static_server.mjs ROOT PORT. Serves only files under ROOT, with the
// MIME types browsers need for ES modules and WebAssembly streaming.
//
// Guarantees (tests/web/static_server.test.mjs checks each one):
// - only regular files whose real path (symlinks resolved) is inside ROOT's real path are served;
//   the comparison is on whole path components, so a sibling directory whose name starts with
//   ROOT's name (site-secret next to site) is outside;
// - a path that does not decode (malformed percent-encoding, invalid UTF-8) or that holds NUL or
//   a backslash is answered 400; a path leaving ROOT 403; anything else not servable 404;
// - only GET and HEAD (405 otherwise);
// - every error is caught per request (500 at worst): no request can stop the server.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm', '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.txt': 'text/plain; charset=utf-8',
};

class HttpError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

// True when `file` is `base` or lies below it (component-wise, not a string prefix).
export function isInside(base, file) {
  const rel = path.relative(base, file);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

// The request target's path, decoded; throws HttpError(400) for anything that does not decode
// to a plain path.
export function decodeRequestPath(target) {
  if (typeof target !== 'string' || !target.startsWith('/')) throw new HttpError(400, 'bad request target');
  const raw = target.split(/[?#]/, 1)[0];
  let decoded;
  try { decoded = decodeURIComponent(raw); } catch { throw new HttpError(400, 'malformed percent-encoding'); }
  if (decoded.includes('\0')) throw new HttpError(400, 'NUL in path');
  if (decoded.includes('\\')) throw new HttpError(400, 'backslash in path');
  return decoded;
}

// Resolves a request target to a file under root (real paths compared), or throws HttpError.
async function resolveFile(root, target) {
  const decoded = decodeRequestPath(target);
  const base = await fs.promises.realpath(root);
  const wanted = path.resolve(base, `.${decoded}`);
  if (!isInside(base, wanted)) throw new HttpError(403, 'outside the site root');
  const real = async (p) => {
    try { return await fs.promises.realpath(p); } catch { throw new HttpError(404, 'not found'); }
  };
  let file = await real(wanted);
  if (!isInside(base, file)) throw new HttpError(403, 'outside the site root');
  let stat = await fs.promises.stat(file);
  if (stat.isDirectory()) {
    file = await real(path.join(file, 'index.html'));
    if (!isInside(base, file)) throw new HttpError(403, 'outside the site root');
    stat = await fs.promises.stat(file);
  }
  if (!stat.isFile()) throw new HttpError(404, 'not found');
  return { file, size: stat.size };
}

function plain(res, status, text) {
  if (res.headersSent) { res.destroy(); return; }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
  res.end(`${text}\n`);
}

// The request handler alone (the browser tests wrap it to add a Hub stub).
export function staticHandler(root) {
  return async (req, res) => {
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
        return;
      }
      const { file, size } = await resolveFile(root, req.url);
      const data = req.method === 'HEAD' ? null : await fs.promises.readFile(file);
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file)] || 'application/octet-stream',
        'content-length': data ? data.length : size,
        'cache-control': 'no-cache', 'x-content-type-options': 'nosniff',
      });
      res.end(data ?? undefined);
    } catch (e) {
      if (e instanceof HttpError) plain(res, e.status, e.message);
      else plain(res, 500, 'internal error');
    }
  };
}

// Links carry the scenario in the query string, an inline config.json included (docs/web.md,
// "Limits": up to about 350,000 characters), and Chromium accepts URLs up to 2 MB, so the request
// head may be far larger than Node's default 16 KiB.
const MAX_REQUEST_HEAD_BYTES = 2 * 1024 * 1024 + 16 * 1024;

export function createStaticServer(root) {
  const server = http.createServer({ maxHeaderSize: MAX_REQUEST_HEAD_BYTES }, staticHandler(root));
  // Unparseable HTTP: answer 400 and close that connection only.
  server.on('clientError', (err, socket) => {
    if (socket.writable && !socket.writableEnded) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  return server;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [root = 'build-wasm/site', port = '8000'] = process.argv.slice(2);
  createStaticServer(root).listen(Number(port), '127.0.0.1');
}
