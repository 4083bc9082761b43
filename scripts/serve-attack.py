#!/usr/bin/env python3
"""Hostile clients against a running `yolo serve` on 127.0.0.1 (issue 37), one attack at a time.

While each attack runs for SECONDS, a prober asks GET /healthz every 50 ms and a client POSTs a real
detection (IMAGE) again as soon as the last is answered; the attack itself runs in its own process.
Printed per attack: /healthz p50/p99/max, detection p50/p99/max against the unloaded median, the statuses
the prober and the client got, the server's peak RSS, and what the attack itself saw. The bars: /healthz
always within 100 ms, detections within 2x the unloaded median (p99: the client shares two cores with the
server, the attacker and whatever else the machine runs; the `idle` row shows that noise floor), no 5xx
and no failure for the prober or the client; and the attack itself refused as it should be (connections
closed by the server, 4xx in time, 501 for gzip, 100 Continue within 100 ms, big images refused within
100 ms). Exit status 1 when a bar is missed.

Usage: serve-attack.py --port PORT --pid SERVER_PID --image IMAGE [--seconds 20] [--png36 PNG] [--only a,b]
                       [--rate 5]
Attacks: idle (none), multipart (forms of 100,000 empty fields), stalled (10 bodies announced as 1,000,000
bytes that send 1), slowloris (200 connections sending their headers at 1 byte/s), slowbody (10 bodies at
1 byte/s), gzip (Transfer-Encoding: gzip, chunked), expect (Expect: 100-continue, waiting up to 1 s for
100 Continue as curl does; one upload a second), bigpng (a 36 MP 16-bit RGBA PNG; --png36), tallpng (a
1 x 1,000,000 PNG with scale=stretch). The request attacks (multipart, gzip, bigpng, tallpng) send from two
threads, each at most --rate requests a second: what one request costs is the attack, not the rate.
"""
import argparse
import gzip
import multiprocessing
import select
import socket
import statistics
import struct
import sys
import threading
import time
import zlib

HOST = "127.0.0.1"


def request(port, method, path, headers=(), body=b"", timeout=30):
    """One request on a fresh connection; returns (status, seconds). status -1: no answer."""
    start = time.monotonic()
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as s:
            head = f"{method} {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nConnection: close\r\n"
            for name, value in headers:
                head += f"{name}: {value}\r\n"
            if method == "POST":
                head += f"Content-Length: {len(body)}\r\n"
            s.sendall(head.encode() + b"\r\n" + body)
            status = read_status(s)
            return status, time.monotonic() - start
    except OSError:
        return -1, time.monotonic() - start


def read_status(s):
    """Reads an answer to its end (the server closes: Connection: close) and returns its final status."""
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    status = -1
    for line in data.split(b"\r\n"):
        if line.startswith(b"HTTP/1.1 "):
            code = int(line.split()[1])
            if code >= 200:
                return code
            status = code
    return status


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, max(0, int(round(p / 100 * len(values) + 0.5)) - 1))]


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


# MARK: attacks (each runs in its own process until `stop` is set and puts one summary line on `out`)

def paced(stop, rate, send):
    """Calls `send` until `stop`, at most `rate` times a second (a flood of any request costs the two
    cores the attacker shares with the server; the attacks here are about what one request costs)."""
    while not stop.is_set():
        start = time.monotonic()
        send()
        time.sleep(max(0.0, 1 / rate - (time.monotonic() - start)))


def senders(stop, args, count, send):
    """`count` threads calling `send` (paced); returns their (status, seconds) results."""
    results = []
    lock = threading.Lock()

    def loop():
        def one():
            result = send()
            with lock:
                results.append(result)
        paced(stop, args.rate, one)

    threads = [threading.Thread(target=loop) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def multipart(port, stop, out, args):
    body = b"".join(b'--b\r\nContent-Disposition: form-data; name="conf"\r\n\r\n\r\n' for _ in range(100_000)) + b"--b--\r\n"
    results = senders(stop, args, 2, lambda: request(port, "POST", "/v1/detect", [("Content-Type", "multipart/form-data; boundary=b")],
                                                      body, timeout=120))
    times = [s for _, s in results]
    out.put((f"{len(body) / 1e6:.1f} MB forms of 100,000 fields: {len(results)} answered, statuses {counts(st for st, _ in results)}, "
             f"time to answer p50 {percentile(times, 50) * 1000:.0f} ms, max {max(times, default=0) * 1000:.0f} ms",
             bool(results) and all(400 <= st < 500 for st, _ in results) and percentile(times, 50) < 1))


def hold_connections(port, stop, out, count, opening, trickle, label):
    """`count` connections that send `opening`, then `trickle` one byte a second (or nothing); a connection
    the server closes is counted with how long it lived, and replaced."""
    conns = {}
    lifetimes = []
    answers = []
    opened = 0

    def open_one():
        nonlocal opened
        try:
            s = socket.create_connection((HOST, port), timeout=5)
            s.sendall(opening)
            s.setblocking(False)
            conns[s] = [time.monotonic(), 0]
            opened += 1
        except OSError:
            time.sleep(0.05)

    while len(conns) < count and not stop.is_set():
        open_one()
    last_tick = time.monotonic()
    while not stop.is_set():
        readable, _, _ = select.select(list(conns), [], [], 0.1)
        for s in readable:
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if data.startswith(b"HTTP/1.1 "):
                answers.append(int(data.split()[1]))
            if not data:
                lifetimes.append(time.monotonic() - conns.pop(s)[0])
                s.close()
        if trickle and time.monotonic() - last_tick >= 1:
            last_tick = time.monotonic()
            for s, state in list(conns.items()):
                try:
                    s.send(trickle[state[1] % len(trickle)].to_bytes(1, "big"))
                    state[1] += 1
                except OSError:
                    pass
        while len(conns) < count and not stop.is_set():
            open_one()
    now = time.monotonic()
    still = [now - state[0] for state in conns.values()]
    for s in conns:
        s.close()
    closed = f"{len(lifetimes)} closed by the server after {min(lifetimes):.1f}-{max(lifetimes):.1f} s" if lifetimes else "none closed by the server"
    out.put((f"{label}: {opened} opened, {closed}; {len(still)} open at the end (oldest {max(still, default=0):.1f} s); "
             f"answers {counts(answers) if answers else 'none'}", bool(lifetimes) and all(400 <= a < 500 for a in answers)))


def stalled(port, stop, out, args):
    head = (f"POST /v1/detect HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: image/jpeg\r\nContent-Length: 1000000\r\n\r\n").encode() + b"\xff"
    hold_connections(port, stop, out, 10, head, None, "10 bodies announced 1,000,000 bytes, sent 1")


def slowloris(port, stop, out, args):
    hold_connections(port, stop, out, 200, b"G", b"ET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000, "200 heads at 1 byte/s")


def slowbody(port, stop, out, args):
    head = (f"POST /v1/detect HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: image/jpeg\r\nContent-Length: 100000\r\n\r\n").encode()
    hold_connections(port, stop, out, 10, head, b"\xff\xd8" + b"\x00" * 1000, "10 bodies at 1 byte/s")


def gzip_chunked(port, stop, out, args):
    image = open(args.image, "rb").read()
    packed = gzip.compress(image)
    body = b"%x\r\n" % len(packed) + packed + b"\r\n0\r\n\r\n"
    results = []

    def send():
        start = time.monotonic()
        try:
            with socket.create_connection((HOST, port), timeout=30) as s:
                s.sendall((f"POST /v1/detect HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\nContent-Type: image/jpeg\r\n"
                           "Transfer-Encoding: gzip, chunked\r\n\r\n").encode() + body)
                results.append((read_status(s), time.monotonic() - start))
        except OSError:
            results.append((-1, time.monotonic() - start))

    paced(stop, args.rate, send)
    out.put((f"Transfer-Encoding: gzip, chunked: {len(results)} requests, statuses {counts(st for st, _ in results)}",
             bool(results) and all(st == 501 for st, _ in results)))


def expect(port, stop, out, args):
    image = open(args.image, "rb").read()
    waits, statuses = [], []

    def send():
        try:
            with socket.create_connection((HOST, port), timeout=30) as s:
                s.sendall((f"POST /v1/detect HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\nContent-Type: image/jpeg\r\n"
                           f"Content-Length: {len(image)}\r\nExpect: 100-continue\r\n\r\n").encode())
                start = time.monotonic()
                ready, _, _ = select.select([s], [], [], 1.0)  # curl waits 1 s for 100 Continue
                interim = s.recv(65536) if ready else b""
                waits.append(time.monotonic() - start)
                if interim and not interim.startswith(b"HTTP/1.1 100"):
                    statuses.append(int(interim.split()[1]))  # a final answer instead of 100 Continue
                    return
                s.sendall(image)
                statuses.append(read_status(s))
        except OSError:
            statuses.append(-1)

    paced(stop, 1, send)  # one upload a second: a client, not a flood
    out.put((f"Expect: 100-continue: {len(statuses)} requests, statuses {counts(statuses)}, wait for 100 Continue "
             f"p50 {percentile(waits, 50) * 1000:.1f} ms, max {max(waits, default=0) * 1000:.1f} ms",
             bool(waits) and max(waits) < 0.1 and all(st == 200 for st in statuses)))


def bigpng(port, stop, out, args):
    if not args.png36:
        out.put(("36 MP PNG: skipped (no --png36)", True))
        return
    png = open(args.png36, "rb").read()
    results = senders(stop, args, 2, lambda: request(port, "POST", "/v1/detect", [("Content-Type", "image/png")], png, timeout=120))
    times = [s for _, s in results]
    out.put((f"36 MP 16-bit RGBA PNG ({len(png) / 1e6:.1f} MB): {len(results)} answered, statuses {counts(st for st, _ in results)}, "
             f"time p50 {percentile(times, 50) * 1000:.0f} ms, max {max(times, default=0) * 1000:.0f} ms",
             bool(results) and all(st == 400 for st, _ in results) and percentile(times, 50) < 0.1))


def tall_png():
    """A 1 x 1,000,000 gray PNG (2 KB): stretched to the network's width, its resampling rows take 5 GB."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", 1, 1_000_000, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\x80" * 1_000_000, 9))
            + chunk(b"IEND", b""))


def tallpng(port, stop, out, args):
    png = tall_png()
    results = senders(stop, args, 2, lambda: request(port, "POST", "/v1/detect?scale=stretch", [("Content-Type", "image/png")], png,
                                                      timeout=120))
    times = [s for _, s in results]
    out.put((f"1x1,000,000 PNG ({len(png)} bytes) with scale=stretch: {len(results)} answered, statuses {counts(st for st, _ in results)}, "
             f"time p50 {percentile(times, 50) * 1000:.0f} ms, max {max(times, default=0) * 1000:.0f} ms",
             bool(results) and all(st == 400 for st, _ in results) and percentile(times, 50) < 0.1))


def sizes(port, stop, out, args):
    """Requests at input sizes from 1024x1024 to 2240x2240 in turn: each builds a network with its scratch.
    The detector's memory (--detector-mb) must bound them, sizes that do not fit alone get 400 before any
    memory is taken, and once the server is idle (--idle-release) only the model's own size stays."""
    sides = [1920, 2048, 2240, 1024, 1088, 1152, 1216, 1280, 1344]
    image = open(args.image, "rb").read()
    base = rss_kb(args.pid)
    results, peak, i = [], base, 0
    sampling = threading.Event()

    def sample():
        nonlocal peak
        while not sampling.is_set():
            peak = max(peak, rss_kb(args.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()

    def send():
        nonlocal i
        side = sides[i % len(sides)]
        i += 1
        status, _ = request(port, "POST", f"/v1/detect?size={side}x{side}", [("Content-Type", "image/jpeg")], image, timeout=120)
        results.append((side, status))

    paced(stop, 1, send)  # one large request a second at most: a client, not a flood
    sampling.set()
    sampler.join()
    time.sleep(args.idle_release + 3)
    idle_rss = rss_kb(args.pid)
    accepted = sorted({side for side, st in results if st == 200})
    refused = sorted({side for side, st in results if st == 400})
    limit = (args.detector_mb + args.margin_mb) * 1024
    out.put((f"{len(results)} requests at sizes {sides[0]}..{sides[-1]}: statuses {counts(st for _, st in results)}; accepted {accepted}, "
             f"refused {refused}; server RSS {base} kB before, peak {peak} kB (+{(peak - base) / 1024:.0f} MiB; allowed: the detector's part "
             f"{args.detector_mb:.0f} MiB + {args.margin_mb:.0f} MiB), {idle_rss} kB after {args.idle_release:.0f} s idle + 3 s",
             bool(accepted) and bool(refused) and all(st in (200, 400) for _, st in results)
             and peak - base <= limit and idle_rss - base <= 64 * 1024))


def idle(port, stop, out, args):
    stop.wait()
    out.put(("no attack: the noise floor of this machine", True))


ATTACKS = {"idle": idle, "multipart": multipart, "stalled": stalled, "slowloris": slowloris, "slowbody": slowbody,
           "gzip": gzip_chunked, "expect": expect, "bigpng": bigpng,
           "tallpng": tallpng, "sizes": sizes}


def counts(statuses):
    table = {}
    for s in statuses:
        table[s] = table.get(s, 0) + 1
    return ", ".join(f"{n}x{s}" for s, n in sorted(table.items()))


# MARK: measuring

def measure(port, pid, image, seconds, attack=None, args=None):
    """Runs the prober and the detection client for `seconds` (with `attack` in its own process)."""
    stop = threading.Event()
    health, detections, rss = [], [], []
    image_bytes = open(image, "rb").read()

    def prober():
        while not stop.is_set():
            status, s = request(port, "GET", "/healthz", timeout=10)
            health.append((status, s))
            time.sleep(0.05)

    def client():
        while not stop.is_set():
            detections.append(request(port, "POST", "/v1/detect", [("Content-Type", "image/jpeg")], image_bytes, timeout=60))

    def sampler():
        while not stop.is_set():
            rss.append(rss_kb(pid))
            time.sleep(0.1)

    attack_stop = multiprocessing.Event()
    out = multiprocessing.Queue()
    process = None
    if attack:
        process = multiprocessing.Process(target=ATTACKS[attack], args=(port, attack_stop, out, args))
        process.start()
        time.sleep(1)  # let it take hold
    threads = [threading.Thread(target=f) for f in (prober, client, sampler)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    summary = ("", True)
    if process:
        attack_stop.set()
        try:
            summary = out.get(timeout=150)
        except Exception:
            summary = ("(the attack did not report)", False)
        process.join(10)
        if process.is_alive():
            process.kill()
    return health, detections, max(rss, default=0), summary


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--image", required=True)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--png36")
    parser.add_argument("--only")
    parser.add_argument("--detector-mb", type=float, default=512, help="the server's memory for networks and scratch (default: yolo serve's)")
    parser.add_argument("--idle-release", type=float, default=10, help="the server's --idle-release")
    parser.add_argument("--margin-mb", type=float, default=96,
                        help="RSS allowed beyond the detector's part: what each running pass holds outside its workspace "
                             "(its resampled input, 22 MB at 1344x1344, and its candidates)")
    parser.add_argument("--rate", type=float, default=5, help="requests a second per sender of the request attacks")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(ATTACKS)

    health, detections, peak, _ = measure(args.port, args.pid, args.image, min(args.seconds, 10))
    unloaded = statistics.median(s for st, s in detections if st == 200)
    print(f"unloaded: /healthz p50 {percentile([s for _, s in health], 50) * 1000:.1f} ms, max {max(s for _, s in health) * 1000:.1f} ms; "
          f"detection p50 {unloaded * 1000:.1f} ms ({len(detections)} requests); RSS {peak} kB")
    failed = False
    for name in names:
        health, detections, peak, summary = measure(args.port, args.pid, args.image, args.seconds, name, args)
        h = [s for _, s in health]
        d = [s for st, s in detections if st == 200]
        bad = [st for st, _ in health + detections if st >= 500 or st < 0]
        ok_health = bool(h) and max(h) <= 0.100 and all(st == 200 for st, _ in health)
        ok_detect = bool(d) and percentile(d, 99) <= 2 * unloaded and len(d) == len(detections)
        text, held = summary
        verdict = "ok" if ok_health and ok_detect and not bad and held else "MISSED"
        if name == "idle":
            verdict += " (no attack: the machine's own noise, not counted)"
        else:
            failed = failed or verdict != "ok"
        print(f"== {name}: {verdict}")
        print(f"   /healthz: {len(h)} probes, p50 {percentile(h, 50) * 1000:.1f} ms, p99 {percentile(h, 99) * 1000:.1f} ms, "
              f"max {max(h, default=0) * 1000:.1f} ms, statuses {counts(st for st, _ in health)}")
        if d:
            print(f"   detection: {len(detections)} requests, p50 {percentile(d, 50) * 1000:.1f} ms ({percentile(d, 50) / unloaded:.2f}x), "
                  f"p99 {percentile(d, 99) * 1000:.1f} ms ({percentile(d, 99) / unloaded:.2f}x), max {max(d) * 1000:.1f} ms "
                  f"({max(d) / unloaded:.2f}x), statuses {counts(st for st, _ in detections)}")
        else:
            print(f"   detection: no 200 in {len(detections)} requests, statuses {counts(st for st, _ in detections)}")
        print(f"   server peak RSS {peak} kB; attack ({'refused as it should be' if held else 'NOT refused as it should be'}): {text}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
