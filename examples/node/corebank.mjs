// The glue a JavaScript test suite needs to use corebank's sandbox
// workspaces: create a workspace, call the API with its key, receive its
// webhooks and verify their signatures. Node's standard library only
// (global fetch, node:https, node:crypto); copy it into your own suite.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:https';
import { readFileSync } from 'node:fs';

// The server: `go run ./examples/server -workspaces -webhook-ca cert.pem`.
export const BASE_URL = process.env.COREBANK_URL ?? 'http://127.0.0.1:8080';

// createWorkspace asks the server for a bank of one's own (no API key
// needed) and answers {id, api_key, read_only_api_key, root_entity_id,
// clock: {now, now_ms, fake}, expires_at, ...}. options: {fake_clock?,
// clock_start?} (RFC 3339 or Unix ms).
export async function createWorkspace(options = {}) {
  const res = await fetch(`${BASE_URL}/sandbox/workspaces`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(options),
  });
  const body = await res.json();
  if (res.status !== 201) {
    throw new Error(`POST /sandbox/workspaces answered ${res.status}: ${JSON.stringify(body)}`);
  }
  return body;
}

// connect returns a client that calls the API with apiKey (a workspace's
// key acts on that workspace alone).
//   request(method, path, body?) answers {status, body} whatever the status;
//   get(path), post(path, body) and del(path) answer the JSON body and throw
//   unless the status is 2xx.
export function connect(apiKey) {
  async function request(method, path, body) {
    const res = await fetch(BASE_URL + path, {
      method,
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }
  async function ok(method, path, body) {
    const res = await request(method, path, body);
    if (res.status < 200 || res.status > 299) {
      throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    return res.body;
  }
  return {
    request,
    get: (path) => ok('GET', path),
    post: (path, body) => ok('POST', path, body ?? {}),
    del: (path) => ok('DELETE', path),
  };
}

// readReceiverTLS reads the receiver's certificate and key. The server
// delivers webhooks over https only, so the receiver needs a certificate
// for 127.0.0.1 that the server trusts: give it to the server with
// -webhook-ca, and its paths to this suite in COREBANK_WEBHOOK_CERT and
// COREBANK_WEBHOOK_KEY (README.md shows the openssl line that makes them).
export function readReceiverTLS() {
  const certFile = process.env.COREBANK_WEBHOOK_CERT;
  const keyFile = process.env.COREBANK_WEBHOOK_KEY;
  if (!certFile || !keyFile) {
    throw new Error('set COREBANK_WEBHOOK_CERT and COREBANK_WEBHOOK_KEY to the PEM files of a certificate ' +
      'for 127.0.0.1, and start the server with -webhook-ca on that certificate (see README.md)');
  }
  return { cert: readFileSync(certFile), key: readFileSync(keyFile) };
}

// startReceiver listens on 127.0.0.1, on a port of its own, over https,
// answers 204 to every POST and keeps what it got in deliveries:
// [{headers, body}], body the raw bytes (a Buffer), as signed.
// waitFor(match, timeoutMs) answers the first delivery whose parsed body
// ({event, data}) match accepts, waiting for it up to timeoutMs.
export async function startReceiver(tls) {
  const deliveries = [];
  const server = createServer(tls, (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${server.address().port}/webhooks`,
    deliveries,
    async waitFor(match, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = deliveries.find((d) => match(JSON.parse(d.body)));
        if (found) {
          return found;
        }
        if (Date.now() > deadline) {
          throw new Error(`no matching webhook delivery within ${timeoutMs} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close() {
      server.close();
      server.closeAllConnections(); // the server keeps its connections alive
    },
  };
}

// verifySignature checks a delivery as CONTRACT.md says: the
// x-service-event-signature header is the lowercase hex HMAC-SHA256, keyed
// with the webhook's whole secret, of "{timestamp}.{body}", timestamp being
// the x-service-event-timestamp header (Unix ms). The server signs with the
// real time of sending even on a fake clock, so the timestamp is checked
// against this machine's clock, with a tolerance against replays.
export function verifySignature(secret, headers, body, toleranceMs = 5 * 60 * 1000) {
  const timestamp = headers['x-service-event-timestamp'];
  const signature = headers['x-service-event-signature'];
  if (typeof timestamp !== 'string' || typeof signature !== 'string') {
    return false;
  }
  if (!(Math.abs(Date.now() - Number(timestamp)) <= toleranceMs)) {
    return false;
  }
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
  const a = Buffer.from(expected);
  const b = Buffer.from(signature);
  return a.length === b.length && timingSafeEqual(a, b);
}
