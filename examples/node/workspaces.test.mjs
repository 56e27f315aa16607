// Twenty payouts, each in a sandbox workspace of its own: a whole bank with
// its own keys, clock and webhooks inside one corebank server, so the tests
// run in parallel without seeing each other. Run with `node --test` in this
// folder (README.md says how to start the server).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  connect, createWorkspace, readReceiverTLS, startReceiver, verifySignature,
} from './corebank.mjs';

const TESTS = 20;
const CONCURRENCY = Number(process.env.COREBANK_CONCURRENCY ?? 20);
// Every workspace starts at the same time on a fake clock, which moves only
// when the test that owns it advances it.
const CLOCK_START = '2026-01-05T09:00:00Z';
const START_MS = Date.parse(CLOCK_START);

const tls = readReceiverTLS();

// openFundedAccount opens a USD account in the workspace and pays 1,000.00
// into it through the sandbox.
async function openFundedAccount(api, name) {
  const account = (await api.post('/accounts', { type: 'checking', currency: 'USD', display_name: name })).data;
  const inflow = await api.post('/sandbox/inflows', { account_id: account.id, amount: 100000, narration: 'seed' });
  assert.equal(inflow.status, 'completed');
  return account;
}

// payOut registers a counterparty with US bank details and sends it amount
// from account; the transfer answers pending.
async function payOut(api, account, amount, reference) {
  const counterparty = (await api.post('/counterparties', {
    type: 'individual',
    profile: {
      first_name: 'Ada', last_name: 'Lovelace', relationship: 'vendor', email: `ada+${reference}@example.com`,
      address: { line1: '1 Main St', city: 'Austin', country: 'US' },
    },
  })).data;
  // POST /payment-details answers the object bare, not in an envelope.
  const detail = await api.post('/payment-details', {
    payment_method: 'bank-transfer', currency: 'USD', account_holder_name: 'Ada Lovelace',
    counterparty_id: counterparty.id, country: 'US', scheme: 'ach',
    routing_number: '021000021', account_number: '123456789', account_type: 'checking',
  });
  const transfer = (await api.post('/transfers', {
    account_id: account.id, payment_detail_id: detail.id, currency: 'USD', amount,
    payment_type: 'bank-transfer', narration: `invoice ${reference}`, unique_reference: reference,
  })).data;
  assert.equal(transfer.status, 'pending');
  return transfer;
}

describe('payouts in sandbox workspaces', { concurrency: CONCURRENCY }, () => {
  // A workspace whose clock never moves, holding a transfer no test may see.
  let neighbour;
  // Each test's clock once it is done, to check that no two moved together.
  const clocks = [];

  before(async () => {
    const ws = await createWorkspace({ fake_clock: true, clock_start: CLOCK_START });
    const api = connect(ws.api_key);
    const account = await openFundedAccount(api, 'Neighbour');
    const transfer = await payOut(api, account, 700, 'neighbour');
    neighbour = { ws, api, account, transfer };
  });

  after(async () => {
    // Twenty clocks advanced at once, each by its own amount, and this
    // one not at all: its transfer still waits for the rail.
    assert.equal(new Set(clocks).size, clocks.length, `clocks moved together: ${clocks}`);
    const clock = await neighbour.api.get('/sandbox/clock');
    assert.equal(clock.now_ms, START_MS);
    const transfer = (await neighbour.api.get(`/transfers/${neighbour.transfer.id}`)).data;
    assert.equal(transfer.status, 'pending');
    const gone = await neighbour.api.request('DELETE', `/sandbox/workspaces/${neighbour.ws.id}`);
    assert.equal(gone.status, 204);
  });

  for (let n = 1; n <= TESTS; n++) {
    it(`payout ${n} settles in a workspace of its own`, async (t) => {
      // A workspace: a new bank with an approved root entity and its keys.
      const ws = await createWorkspace({ fake_clock: true, clock_start: CLOCK_START });
      assert.deepEqual(ws.clock, { now: CLOCK_START, now_ms: START_MS, fake: true });
      const api = connect(ws.api_key);

      // A webhook endpoint on a receiver of this test's own.
      const receiver = await startReceiver(tls);
      t.after(() => receiver.close());
      const webhook = (await api.post('/entity-webhooks', {
        url: receiver.url, expires_in: 86400, enabled_events: { all: true },
      })).data;

      // Pay out: fund an account, then send a transfer of an amount of this
      // test's own.
      const account = await openFundedAccount(api, `Operating ${n}`);
      const amount = 1000 + n;
      const transfer = await payOut(api, account, amount, `payout-${n}`);

      // A webhook's first attempt goes out right after the commit, whatever
      // the clock says (CONTRACT.md, "Webhooks"): outflows.created arrives
      // before this workspace's clock moves.
      await receiver.waitFor((d) => d.event === 'outflows.created' && d.data.id === transfer.id);

      // The sandbox rail settles a transfer 5 s after it is made, on the
      // workspace's clock: advance it a second at a time until it does.
      let advanced = 0;
      let status = transfer.status;
      while (status !== 'successful' && advanced < 30) {
        await api.post('/sandbox/clock/advance', { seconds: 1 });
        advanced += 1;
        status = (await api.get(`/transfers/${transfer.id}`)).data.status;
      }
      assert.equal(status, 'successful');
      assert.equal(advanced, 5);
      const balance = (await api.get(`/accounts/${account.id}`)).data.balance;
      assert.equal(balance.available, 100000 - amount);

      // Then a further n seconds, so that every test's clock ends apart.
      await api.post('/sandbox/clock/advance', { seconds: n });
      advanced += n;
      const clock = await api.get('/sandbox/clock');
      assert.equal(clock.now_ms, START_MS + advanced * 1000, 'another test moved this clock');
      clocks.push(clock.now_ms);

      // Webhooks: an advance runs the workspace's due work and waits for
      // its deliveries, so they are all in by now. Each is signed with
      // this webhook's secret and reports this workspace's objects.
      assert.ok(receiver.deliveries.length > 0, 'no webhook delivered');
      const events = new Map(); // type -> data, of the deliveries about this transfer
      for (const { headers, body } of receiver.deliveries) {
        assert.ok(verifySignature(webhook.secret, headers, body), `bad signature on ${body}`);
        const delivery = JSON.parse(body);
        assert.equal(delivery.data.entity_id ?? delivery.data.entity?.id, ws.root_entity_id);
        if (delivery.data.id === transfer.id) {
          events.set(delivery.event, delivery.data);
        }
      }
      assert.deepEqual([...events.keys()].sort(), ['outflows.completed', 'outflows.created']);
      assert.equal(events.get('outflows.completed').status, 'successful');
      assert.equal(events.get('outflows.completed').amount, amount);
      // A changed body no longer verifies.
      const { headers, body } = receiver.deliveries[0];
      assert.equal(verifySignature(webhook.secret, headers, Buffer.concat([body, Buffer.from(' ')])), false);

      // Nothing of the other workspaces shows: the lists hold this
      // workspace's objects alone, and the neighbour's are not found.
      const transfers = (await api.get('/transfers')).data;
      assert.deepEqual(transfers.map((tr) => tr.id), [transfer.id]);
      const listed = (await api.get('/events?limit=100')).data;
      for (const event of listed) {
        assert.equal(event.entity_id, ws.root_entity_id);
      }
      const listedIds = new Set(listed.map((event) => event.id));
      for (const { headers } of receiver.deliveries) {
        assert.ok(listedIds.has(headers['x-service-event-id']), 'a delivered event is not in GET /events');
      }
      const aboutTransfer = listed.filter((event) => event.data.id === transfer.id).map((event) => event.type);
      assert.deepEqual(aboutTransfer.sort(), ['outflows.completed', 'outflows.created']);
      assert.equal((await api.request('GET', `/transfers/${neighbour.transfer.id}`)).status, 404);
      assert.equal((await api.request('GET', `/accounts/${neighbour.account.id}`)).status, 404);
      assert.equal((await neighbour.api.request('GET', `/transfers/${transfer.id}`)).status, 404);

      // Done: delete the workspace; its key no longer opens anything.
      const gone = await api.request('DELETE', `/sandbox/workspaces/${ws.id}`);
      assert.equal(gone.status, 204);
      assert.equal((await api.request('GET', '/transfers')).status, 401);
    });
  }
});
