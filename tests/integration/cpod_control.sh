#!/bin/bash
# cpod's control channel against careless clients: 100 clients that send a
# complete `flush` and at once half-close their socket (shutdown(SHUT_WR))
# all get their answer; so do 100 that connect at the same moment; a
# client that closes without a request costs nothing.  (Before: 73 of 100
# half-closing clients got no reply, and the listen backlog was 16.)
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CPOD=$BUILD/bin/cpod CPO=$BUILD/bin/cpo
[ -x "$CPOD" ] && [ -x "$CPO" ] || { echo "cpod or cpo not built (make)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
. tests/integration/lib/cpod.sh

"$CPOD" --db "$DB" --flush 1h || { echo "FAIL cpod did not start"; exit 1; }
sock=$(ls "$DB"/.cpod/*/control)
python3 - "$sock" > "$T/out" <<'PY'
import socket, sys, threading
path = sys.argv[1]
def client(results, i, half):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    try:
        s.connect(path)
        s.sendall(b"flush\n")
        if half:
            s.shutdown(socket.SHUT_WR)
        data = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            data += b
        results[i] = data.decode(errors="replace")
    except Exception as e:
        results[i] = "exception " + str(e)
    finally:
        s.close()
for half in (True, False):
    results = [None] * 100
    ts = [threading.Thread(target=client, args=(results, i, half)) for i in range(100)]
    for t in ts: t.start()
    for t in ts: t.join()
    ok = sum(1 for r in results if r and ("flushed" in r or r.startswith("ok") or "merged" in r))
    print("half" if half else "whole", ok, len(results))
    bad = [r for r in results if not (r and ("flushed" in r or r.startswith("ok") or "merged" in r))]
    for r in bad[:3]: print("  bad reply:", repr(r))
# one that closes without a word
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(path); s.close()
PY
cat "$T/out"
check "100 half-closing clients all answered" grep -qx "half 100 100" "$T/out"
check "100 clients at once all answered" grep -qx "whole 100 100" "$T/out"
out=$("$CPO" flush --db "$DB" 2>&1)
check "the daemon still serves ($(head -1 <<< "$out"))" grep -q "^flushed" <<< "$out"
exit $status
