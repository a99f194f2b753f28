'use strict';
const assert = require('assert');
const http = require('http');
const request = require('supertest');
const app = require('..');

describe('app', function () {
  it('answers /hello with JSON', function () {
    return request(app()).get('/hello').expect('Content-Type', /json/).expect(200, { hello: 'world' });
  });
  it('answers 404 elsewhere', function () {
    return request(app()).get('/nope').expect(404);
  });
  it('is reachable on localhost', function (done) {
    const srv = app().listen(0, 'localhost', () => {
      http.get({ host: 'localhost', port: srv.address().port, path: '/hello' }, (res) => {
        assert.strictEqual(res.statusCode, 200);
        res.resume();
        srv.close(done);
      }).on('error', done);
    });
  });
  it.skip('a pending case');
});
