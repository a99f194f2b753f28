import { createServer } from 'node:http';

export function slug(s) {
  return s.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

export function serve() {
  return createServer((req, res) => res.end(slug(decodeURIComponent(req.url.slice(1)))));
}
