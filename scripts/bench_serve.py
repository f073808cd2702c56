"""The measuring half of scripts/bench-serve (which builds dedog and installs wrk first)."""
import argparse, os, re, shutil, signal, subprocess, sys, tempfile, time
from pathlib import Path

root = Path(__file__).resolve().parent.parent
parser = argparse.ArgumentParser()
parser.add_argument("--bin", type=Path, required=True)
parser.add_argument("--model", default="default")
parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
parser.add_argument("--queue", type=int, default=16)
parser.add_argument("--seconds", type=int, default=15)
parser.add_argument("--connections", default="1,2,8,32")
parser.add_argument("--memory-requests", type=int, default=10_000)
args = parser.parse_args()
photo = root / "datasets/samples/beagle.jpg"
work = Path(tempfile.mkdtemp(prefix="dedog-bench-serve-"))

# The CLI over a folder of 40 copies of the photo (decoding included), --threads = the server's workers.
folder = work / "photos"
folder.mkdir()
for i in range(40):
    shutil.copy(photo, folder / f"photo-{i:02d}.jpg")

def cli_rate():
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([str(args.bin), "classify", "--threads", str(args.workers), "--model", args.model, str(folder)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return 40 / sorted(times)[1]

lua = work / "post.lua"
lua.write_text(f"""
wrk.method = "POST"
wrk.headers["Content-Type"] = "image/jpeg"
local f = io.open("{photo}", "rb"); wrk.body = f:read("*all"); f:close()
local limit = tonumber(os.getenv("DEDOG_BENCH_LIMIT") or "0")
local count = 0
local wait = 0
-- A client that honours Retry-After, as the API asks (one that retries at once measures the load generator).
function delay()
  local ms = wait
  wait = 0
  return ms
end
function response(status, headers, body)
  count = count + 1
  if status == 503 then wait = 1000 * tonumber(headers["Retry-After"] or headers["retry-after"] or "1") end
  if limit > 0 and count >= limit then wrk.thread:stop() end
end
function done(summary, latency, requests)
  io.write(string.format("RESULT requests=%d non2xx=%d errors=%d duration_us=%d p50_us=%d p99_us=%d\\n",
    summary.requests, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration, latency:percentile(50), latency:percentile(99)))
end
""")

log = open(work / "serve.log", "w+")
server = subprocess.Popen([str(args.bin), "serve", "--port", "0", "--model", args.model, "--workers", str(args.workers),
                           "--queue", str(args.queue)], stderr=log, stdout=log)
port = None
for _ in range(600):
    log.seek(0)
    m = re.search(r"on http://127\.0\.0\.1:(\d+)", log.read())
    if m:
        port = int(m.group(1)); break
    time.sleep(0.1)
if port is None:
    server.kill(); sys.exit("bench-serve: the server did not start")
url = f"http://127.0.0.1:{port}/predictions/dedog"

def rss():
    for line in Path(f"/proc/{server.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return 0

def wrk(connections, seconds, limit=0):
    env = dict(os.environ, DEDOG_BENCH_LIMIT=str(limit))
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "30s", "-s", str(lua), url],
                         env=env, check=True, capture_output=True, text=True).stdout
    m = re.search(r"RESULT requests=(\d+) non2xx=(\d+) errors=(\d+) duration_us=(\d+) p50_us=(\d+) p99_us=(\d+)", out)
    requests, non2xx, errors, duration, p50, p99 = map(int, m.groups())
    return dict(ok=requests - non2xx, rejected=non2xx, errors=errors, seconds=duration / 1e6, p50=p50 / 1e3, p99=p99 / 1e3)

wrk(2, 3)  # warm-up
cli_before = cli_rate()
rows = []
for c in [int(x) for x in args.connections.split(",")]:
    r = wrk(c, args.seconds)
    rows.append((c, r))
cli_after = cli_rate()
cli = (cli_before + cli_after) / 2

print(f"\n`dedog serve --model {args.model} --workers {args.workers} --queue {args.queue}` under wrk ({args.seconds} s a row); "
      f"the CLI over 40 photos with --threads {args.workers} in the same run: {cli:.1f} photos/s "
      f"({cli_before:.1f} before, {cli_after:.1f} after the load).\n")
print("Clients honour Retry-After (wrk's delay()); p50/p99 are over every answer, the quick 503s included.\n")
print("| connections | photos/s | ratio to CLI | p50 ms | p99 ms | 503s | other errors |")
print("|---|---|---|---|---|---|---|")
for c, r in rows:
    rate = r["ok"] / r["seconds"]
    print(f"| {c} | {rate:.1f} | {rate / cli:.2f} | {r['p50']:.0f} | {r['p99']:.0f} | {r['rejected']} | {r['errors']} |")

before = rss()
# wrk's threads stop at the count, but its main thread waits out -d: give it just enough at the rate measured above.
rate8 = max(1.0, dict(rows).get(8, rows[-1][1])["ok"] / dict(rows).get(8, rows[-1][1])["seconds"])
m = wrk(8, int(args.memory_requests / rate8 * 1.3) + 5, limit=args.memory_requests)
after = rss()
print(f"\nResident memory: {before} MB before, {after} MB after {m['ok'] + m['rejected']} more requests at 8 connections.")
server.send_signal(signal.SIGTERM)
status = server.wait(timeout=60)
print(f"SIGTERM: the server exited with status {status}.")
shutil.rmtree(work, ignore_errors=True)
