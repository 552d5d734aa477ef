"""make bench: how long a download takes to start, at a given concurrency.

Each of CONNECTIONS threads asks for URL with HEADER over and over for SECONDS: it times the
request from its sending to the first byte of the body, then closes the connection (a cancelled
download). HEADER may hold several "Name: value" lines, one per member of a team signed in on
their own: thread i sends line i modulo their number. Prints one JSON object: requests, requests
per second, p50 and p99 in ms, and the answers other than 200.

python3 scripts/bench_first_byte.py URL "Name: value" CONNECTIONS SECONDS
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse

url, header, connections, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
parsed = urllib.parse.urlsplit(url)
path = parsed.path + ("?" + parsed.query if parsed.query else "")
headers = [tuple(part.strip() for part in line.split(":", 1)) for line in header.splitlines() if line.strip()]
latencies, failures = [], []
lock = threading.Lock()
deadline = time.monotonic() + seconds


def client(name, value):
    while time.monotonic() < deadline:
        connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        started = time.monotonic()
        try:
            connection.request("GET", path, headers={name: value})
            response = connection.getresponse()
            first = response.read(1)
            elapsed = time.monotonic() - started
            with lock:
                if response.status == 200 and first:
                    latencies.append(elapsed)
                else:
                    failures.append(response.status)
        except OSError as error:
            with lock:
                failures.append(str(error))
        finally:
            connection.close()


began = time.monotonic()
threads = [threading.Thread(target=client, args=headers[index % len(headers)]) for index in range(connections)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
elapsed = time.monotonic() - began
if not latencies:
    sys.exit(f"no download started: {failures[:5]}")
latencies.sort()


def percentile(fraction):
    return latencies[min(len(latencies) - 1, int(fraction * len(latencies)))] * 1000


print(json.dumps({"connections": connections, "requests": len(latencies), "requestsPerSecond": len(latencies) / elapsed,
                  "p50": percentile(0.50), "p99": percentile(0.99), "errors": len(failures)}))
