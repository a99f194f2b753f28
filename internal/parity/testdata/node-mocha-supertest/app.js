'use strict';
const http = require('http');

// A tiny web app: what a framework's tests drive through supertest.
module.exports = function app() {
  return http.createServer((req, res) => {
    if (req.url === '/hello') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ hello: 'world' }));
      return;
    }
    res.statusCode = 404;
    res.end('not found');
  });
};
