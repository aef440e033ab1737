"""The pharmacy's side of scenarios/pharmacy_refill.json: the `submit_refill` webhook receiver
(standard library only), which files each refill once per Idempotency-Key and answers its
reference; `make demo-pharmacy` starts it on a loopback port and runs the delivery path
through it (`python scenarios/pharmacy_refill.receiver.py --demo mgi ...`). Alone it listens
on $PORT (default 8091); serve the scenario with
`PHARMACY_WEBHOOK_URL=http://127.0.0.1:8091/refills`. The demo plumbing is
scenarios/order_lookup.receiver.py's.
"""

import importlib.util
import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "order_lookup_receiver", Path(__file__).with_name("order_lookup.receiver.py"))
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)

filed = {}  # Idempotency-Key -> the refill's reference: a retried call files nothing new


class RefillReceiver(BaseHTTPRequestHandler):
    log_message = lambda self, *args: None  # noqa: E731 - quiet: the demo prints the calls

    def do_POST(self):
        key = self.headers["Idempotency-Key"]
        call = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if key not in filed:  # the first time this action is seen: file the refill once
            filed[key] = f"RF-{len(filed) + 20417}"
            arguments = call["arguments"]
            print(f"(pharmacy: refill {arguments['rx_number']} for {arguments['method']} at "
                  f"{arguments['branch']} filed as {filed[key]})", flush=True)
            # `note` is written as conditional lines: its Deliver/Hold line depends on the method
            print(f"(pharmacy: note: {' / '.join(arguments.get('note', '').splitlines())})",
                  flush=True)
        body = json.dumps({"reference": filed[key]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    _shared.main(RefillReceiver, 8091, variable="PHARMACY_WEBHOOK_URL", path="/refills",
                 acted=filed)
