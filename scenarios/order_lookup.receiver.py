"""The shop's side of scenarios/order_lookup.json: a webhook receiver (standard library only)
that honours the Idempotency-Key, and `make demo-webhook`, which starts it on a loopback port
and talks to the bot through it (`python scenarios/order_lookup.receiver.py --demo mgi ...`).
"""

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ORDERS = {"AB-12345": {"status": "on its way", "eta_days": 2}}
done = {}  # Idempotency-Key -> the answer already given: a retried call acts only once


class Receiver(BaseHTTPRequestHandler):
    log_message = lambda self, *args: None  # noqa: E731 - quiet: the demo prints the calls
    def do_POST(self):
        key = self.headers["Idempotency-Key"]
        call = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if key not in done:  # the first time this action is seen: do the work once
            order = ORDERS.get(call["arguments"]["order_id"].upper())
            done[key] = (200, order) if order else (404, {"error": "no such order"})
        status, answer = done[key]
        body = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def demo(command, handler=Receiver, variable="ORDER_WEBHOOK_URL", path="/orders/status",
         acted=done):
    """Serve `handler` on a free loopback port, run `command` with `variable` set to its url,
    report the keys it acted on (`acted`). scenarios/pharmacy_refill.receiver.py uses it too."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}{path}"
    print(f"(receiver listening at {url})", flush=True)
    try:
        code = subprocess.run(command, env={**os.environ, variable: url}).returncode
    finally:
        server.shutdown()
    print(f"\n(the receiver acted on {len(acted)} call(s): {', '.join(acted)})")
    return code


def main(handler=Receiver, port=8090, **options):
    """`--demo COMMAND...`, or serve on $PORT (default `port`) until stopped."""
    if sys.argv[1:2] == ["--demo"]:
        sys.exit(demo(sys.argv[2:], handler, **options))
    ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", port))), handler).serve_forever()


if __name__ == "__main__":
    main()
