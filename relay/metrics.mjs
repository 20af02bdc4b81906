// Metrics in the Prometheus text format (GET /metrics): this process's counters and gauges, and the
// store's totals (rooms, bytes, messages) as the store last counted them. No room ids, no contents.

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export class Metrics {
  constructor() {
    this.requests = new Map(); // "route status" -> n
    this.refusals = new Map(); // reason -> n
    this.posted = 0;
    this.postedBytes = 0;
    this.waiters = 0;
    this.hist = new Map(); // route -> { counts, sum, n }
  }

  request(route, status, seconds) {
    const k = `${route} ${status}`;
    this.requests.set(k, (this.requests.get(k) ?? 0) + 1);
    if (route === 'wait') return; // a long poll's time is the wait, not the relay's
    let h = this.hist.get(route);
    if (!h) this.hist.set(route, (h = { counts: BUCKETS.map(() => 0), sum: 0, n: 0 }));
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]) h.counts[i]++;
    h.sum += seconds;
    h.n++;
  }

  refused(reason) {
    this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1);
  }

  /** The text for /metrics; `totals` from the store: { rooms, bytes, messages }. */
  render(totals) {
    const out = [];
    const gauge = (name, help, value) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${value}`);
    gauge('tealeaf_relay_rooms', 'Rooms in the store.', totals.rooms);
    gauge('tealeaf_relay_stored_bytes', 'Bytes of messages in the store.', totals.bytes);
    gauge('tealeaf_relay_stored_messages', 'Messages in the store.', totals.messages);
    gauge('tealeaf_relay_poll_waiters', 'Long polls open on this process.', this.waiters);
    gauge('tealeaf_relay_resident_bytes', 'Resident memory of this process.', process.memoryUsage().rss);
    out.push('# HELP tealeaf_relay_posts_total Messages stored by this process.', '# TYPE tealeaf_relay_posts_total counter');
    out.push(`tealeaf_relay_posts_total ${this.posted}`);
    out.push('# HELP tealeaf_relay_posted_bytes_total Bytes stored by this process.', '# TYPE tealeaf_relay_posted_bytes_total counter');
    out.push(`tealeaf_relay_posted_bytes_total ${this.postedBytes}`);
    out.push('# HELP tealeaf_relay_requests_total Requests answered, by route and status.', '# TYPE tealeaf_relay_requests_total counter');
    for (const [k, n] of this.requests) {
      const [route, status] = k.split(' ');
      out.push(`tealeaf_relay_requests_total{route="${route}",status="${status}"} ${n}`);
    }
    out.push('# HELP tealeaf_relay_refusals_total Requests refused, by reason.', '# TYPE tealeaf_relay_refusals_total counter');
    for (const [reason, n] of this.refusals) out.push(`tealeaf_relay_refusals_total{reason="${reason}"} ${n}`);
    out.push('# HELP tealeaf_relay_request_seconds Time to answer, by route (long polls left out).');
    out.push('# TYPE tealeaf_relay_request_seconds histogram');
    for (const [route, h] of this.hist) {
      BUCKETS.forEach((b, i) => out.push(`tealeaf_relay_request_seconds_bucket{route="${route}",le="${b}"} ${h.counts[i]}`));
      out.push(`tealeaf_relay_request_seconds_bucket{route="${route}",le="+Inf"} ${h.n}`);
      out.push(`tealeaf_relay_request_seconds_sum{route="${route}"} ${h.sum.toFixed(6)}`);
      out.push(`tealeaf_relay_request_seconds_count{route="${route}"} ${h.n}`);
    }
    return out.join('\n') + '\n';
  }
}
