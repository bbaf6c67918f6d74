// The box's event stream (GET /api/events) for the sections that show
// what happens now. EventSource reconnects by itself and sends
// Last-Event-ID; while it cannot reach the box the page says so (the
// banner of api.js), and the section is drawn anew once the box answers.
import { wentOffline } from './api.js';

// follow opens the stream and calls handlers[event](data) for each event;
// the returned function closes it.
export function follow(handlers) {
  const es = new EventSource('/api/events');
  for (const [name, f] of Object.entries(handlers)) {
    es.addEventListener(name, (e) => {
      let data;
      try { data = JSON.parse(e.data); } catch { return; }
      f(data);
    });
  }
  // An error while connecting or after the stream dropped: the box (or
  // the network to it) is gone; EventSource keeps trying meanwhile.
  es.addEventListener('error', () => { if (es.readyState !== EventSource.OPEN) wentOffline(); });
  return () => es.close();
}
