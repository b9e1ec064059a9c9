# The reproducer's wire: one TCP connection (writes cut into segments, bounded line reads), the
# framing and envelope judge every reply passes, and how an outcome is described.
import base64
import decimal
import errno
import ipaddress
import json
import socket
import time


BEHAVES, BREAKS, CANNOT, CHANGED, UNREACHABLE = 0, 1, 2, 3, 4


def reject_constant(name):
    raise ValueError("not JSON: " + name)


def strict_json(text, **hooks):
    """RFC 8259 JSON: no NaN or Infinity; numbers kept exact."""
    return json.loads(
        text, parse_constant=reject_constant, parse_float=decimal.Decimal, parse_int=decimal.Decimal, **hooks
    )


def is_number(v):
    return isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool)


def is_integer(v):
    return is_number(v) and decimal.Decimal(v).is_finite() and decimal.Decimal(v) == decimal.Decimal(v).to_integral_value()


def same(a, b):
    """The same JSON value and type (numbers compared exactly by value: 1.0 is 1)."""
    if is_number(a) and is_number(b):
        return decimal.Decimal(a) == decimal.Decimal(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def request_ids(line):
    """The ids a request line may be read as holding (a name given twice: either); None: any id (not JSON)."""
    if line is None:
        return None
    seen = []

    def keep(pairs):
        seen.append(pairs)
        return dict(pairs)

    try:
        value = strict_json(line.decode("utf-8"), object_pairs_hook=keep)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return [None]
    return [v for k, v in seen[-1] if k == "id"] or [None]


def judge(line, ids):
    """Judges a reply line as every reply is judged: (response, None), or (None, what is wrong)."""
    if len(line) > MAX_LINE_BYTES:
        return None, "wire.line-limit: the response line is longer than %d bytes" % MAX_LINE_BYTES
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None, "wire.utf8: the response is not strict UTF-8"
    if text.startswith("\ufeff"):
        return None, "wire.ndjson: the response line starts with a byte order mark, which is not JSON"
    try:
        value = strict_json(text)
    except (ValueError, RecursionError):
        return None, "wire.ndjson: the response line is not JSON (RFC 8259: no NaN, comments, trailing commas)"
    if not isinstance(value, dict):
        return None, "wire.ndjson: the response line is not a JSON object"
    if not (isinstance(value.get("jsonrpc"), str) and value["jsonrpc"] == JSONRPC):
        return None, 'wire.response-envelope: the response\'s jsonrpc is not "%s"' % JSONRPC
    if "id" not in value:
        return None, "wire.response-envelope: the response has no id"
    if ("result" in value) == ("error" in value):
        return None, "wire.response-envelope: the response must hold exactly one of result and error"
    error = value.get("error")
    if "error" in value and not (
        isinstance(error, dict) and is_integer(error.get("code")) and isinstance(error.get("message"), str)
    ):
        return None, "wire.response-envelope: error must be an object with an integer code and a string message"
    unreadable = isinstance(error, dict) and value["id"] is None and error.get("code") in (PARSE_ERROR, INVALID_REQUEST)
    if ids is not None and not unreadable and not any(same(value["id"], i) for i in ids):
        return None, "wire.response-envelope: the response does not echo the request id as the same JSON value and type"
    return value, None


class Peer:
    """One TCP connection: writes cut into segments, line reads bounded by a timeout."""

    def __init__(self, host, port, timeout):
        self.timeout = timeout
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.name = self.sock.getpeername()
        self.buffer = b""
        self.end = None
        self.discarding = False
        self.unterminated = b""

    def write(self, data, cuts, pause_ms):
        """Sends data, cut at cuts into writes of their own; returns the first complete line now sent."""
        line = None
        if b"\n" in data:
            line = (self.unterminated + data).split(b"\n", 1)[0]
            self.unterminated = data.rsplit(b"\n", 1)[1]
        else:
            self.unterminated += data
        points = [c for c in cuts if 0 < c < len(data)] + [len(data)]
        start = 0
        # A peer that stops reading holds a write up for one timeout at most; one that reads slowly (a bridge busy
        # elsewhere) is written to as long as it takes some of the bytes within each timeout.
        self.sock.settimeout(self.timeout)
        for i, stop in enumerate(points):
            if i:
                # A pause of a few milliseconds is given some room: a peer busy elsewhere would read the segments
                # as one, and the case would not show what it showed; a longer pause is kept as recorded.
                time.sleep(max(pause_ms, 50) / 1000.0)
            segment = memoryview(data)[start:stop]
            try:
                while segment:
                    segment = segment[self.sock.send(segment):]
            except OSError:
                break
            start = stop
        return line

    def half_close(self):
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def read(self, timeout):
        """("line", bytes), ("oversized", n), ("closed",), ("reset", code) or ("timeout",)."""
        deadline = time.monotonic() + timeout
        while True:
            at = self.buffer.find(b"\n")
            if at >= 0:
                line, self.buffer = self.buffer[:at], self.buffer[at + 1 :]
                if self.discarding:
                    self.discarding = False
                    continue
                if len(line) > MAX_LINE_BYTES:
                    return ("oversized", len(line))
                return ("line", line)
            if self.discarding:
                self.buffer = b""
            elif len(self.buffer) > MAX_LINE_BYTES:
                n, self.buffer, self.discarding = len(self.buffer), b"", True
                return ("oversized", n)
            if self.end:
                return self.end
            left = deadline - time.monotonic()
            if left <= 0:
                return ("timeout",)
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return ("timeout",)
            except OSError as err:
                self.end = ("reset", errno.errorcode.get(err.errno, str(err)))
                continue
            if not chunk:
                self.end = ("closed",)
            self.buffer += chunk

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def recorded_outcome(r):
    if r["kind"] != "line":
        return (r["kind"],)
    data = base64.b64decode(r["base64"]) if "base64" in r else r["text"].encode("utf-8")
    return ("line", data, r["length"], r.get("truncated", False))


def same_outcome(new, old):
    """Whether a reply now is the one recorded (closed and reset alike; a recorded line cut short by its prefix)."""
    family = lambda kind: "closed" if kind in ("closed", "reset") else kind
    if family(new[0]) != family(old[0]):
        return False
    if new[0] != "line":
        return True
    if old[3]:
        return new[1][: len(old[1])] == old[1] and len(new[1]) + 1 == old[2]
    return new[1] == old[1]


def printable(text):
    """Text on one line: control characters as escapes."""
    return "".join(
        {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c, "\\x%02x" % ord(c)) if ord(c) < 0x20 or ord(c) == 0x7F else c
        for c in text
    )


def describe(outcome, timeout):
    kind = outcome[0]
    if kind == "line":
        data = outcome[1]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = "bytes (base64) " + base64.b64encode(data).decode("ascii")
        return printable(text) if len(text) <= 400 else "%s... (%d chars)" % (printable(text[:400]), len(text))
    if kind == "closed":
        return "connection closed"
    if kind == "reset":
        return "connection reset (%s)" % outcome[1] if len(outcome) > 1 else "connection reset"
    if kind == "oversized":
        return "a response line over the limit (%d bytes without LF)" % outcome[1] if len(outcome) > 1 else "a response line over the limit"
    return "no response within %gs" % timeout


def key(value):
    """A dict key for a JSON value (an id): numbers by their exact value."""
    if is_number(value):
        return "n:" + str(decimal.Decimal(value).normalize())
    return "j:" + json.dumps(value, sort_keys=True, default=str)


def at_path(value, path):
    """The value at path (names and indexes; "#" is an array's length), or MISSING."""
    for step in path:
        if step == "#" and isinstance(value, list):
            value = len(value)
        elif isinstance(value, dict) and isinstance(step, str) and step in value:
            value = value[step]
        elif isinstance(value, list) and isinstance(step, int) and -len(value) <= step < len(value):
            value = value[step]
        else:
            return MISSING
    return value


MISSING = object()


VERBOSE = False


def is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
