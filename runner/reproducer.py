# The runtime of every reproducer that `aicontrol-conformance --export DIR` writes: it replays one
# failing check's minimal case, byte for byte, and judges the reply by the check's machine oracle.
# The exporter writes DIR/<check>.py as this file with the check's plan (the names below in
# capitals: CHECK, STEPS, ORACLE, ...) put in place of the marker near its end, so each script
# stands alone: Python 3 and its standard library, nothing else.
#
# Exit codes: 0 the bridge now behaves, 1 it still breaks the rule, 2 the case cannot be run (the
# token is missing or refused, bad usage, or the replay never brought the bridge to the state the case
# judges: COULD NOT REPLAY), 3 a check without a machine oracle got a reply other than the one recorded
# (judge it yourself), 4 the bridge could not be reached.
import argparse
import base64
import decimal
import errno
import ipaddress
import json
import os
import socket
import sys
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

TYPES = {
    "integer": is_integer,
    "number": is_number,
    "boolean": lambda v: isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "present": lambda v: v is not MISSING,
    "absent": lambda v: v is MISSING,
}

COMPARE = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def shown(path):
    return ".".join(str(p) for p in path) or "the reply"


def check_all(assertions, value, ctx):
    """None where value meets every assertion, else what is wrong (the first)."""
    for a in assertions:
        wrong = check_one(a, value, ctx)
        if wrong:
            return wrong
    return None


def check_one(a, value, ctx):
    path = a.get("path", [])
    if "of" in a:
        value = ctx["earlier"].get(key(a["of"]))
        if value is None:
            return "no reply to the request %s" % json.dumps(a["of"], default=str)
    here = at_path(value, path)
    if "is" in a:
        if a["is"] == "absent":
            return None if here is MISSING else "%s is present" % shown(path)
        if here is MISSING or not TYPES[a["is"]](here):
            return "%s is not %s" % (shown(path), "there" if a["is"] == "present" else "a JSON " + a["is"])
        return None
    if "equals" in a:
        if here is MISSING or not same(here, a["equals"]):
            return "%s is not %s" % (shown(path), json.dumps(a["equals"]))
        return None
    if "op" in a:
        other = operand(a["than"], ctx)
        if other is MISSING:
            return "what %s is compared with is missing (%s)" % (shown(path), json.dumps(a["than"], default=str))
        if a["op"] in ("==", "!=") and not (is_number(here) and is_number(other)):
            if (here is not MISSING and same(here, other)) == (a["op"] == "=="):
                return None
            return "%s is %s, not %s %s" % (shown(path), json.dumps(None if here is MISSING else here, default=str),
                                            a["op"], json.dumps(other, default=str))
        if not (is_number(here) and is_number(other)):
            return "%s is not a number to compare with %s" % (shown(path), other)
        other = decimal.Decimal(other) + decimal.Decimal(a.get("plus", 0))
        if not COMPARE[a["op"]](decimal.Decimal(here), other):
            return "%s is %s, not %s %s" % (shown(path), here, a["op"], other)
        return None
    if "every" in a:
        if not isinstance(here, list):
            return "%s is not an array" % shown(path)
        for i, item in enumerate(here):
            wrong = check_all(a["every"], item, ctx)
            if wrong:
                return "%s[%d]: %s" % (shown(path), i, wrong)
        return None
    if "ascending" in a:
        if not isinstance(here, list):
            return "%s is not an array" % shown(path)
        values = [at_path(item, a["ascending"]) for item in here]
        if not all(is_number(v) for v in values) or any(x >= y for x, y in zip(values, values[1:])):
            return "%s is not in ascending order of %s" % (shown(path), shown(a["ascending"]))
        return None
    if "prefixOf" in a:
        whole = operand(a["prefixOf"], ctx)
        if not isinstance(here, list) or not isinstance(whole, list):
            return "%s is not an array to compare" % shown(path)
        by = a.get("by", [])
        if len(here) > len(whole) or not all(same(at_path(x, by), at_path(y, by)) for x, y in zip(here, whole)):
            return "%s is not the start of %s" % (shown(path), json.dumps(whole, default=str)[:300])
        return None
    if "namesPeer" in a:
        if not isinstance(here, str) or not names_address(here, ctx["peer"].name[0]):
            return "%s is not the address connected to (%s)" % (shown(path), ctx["peer"].name[0])
        return None
    if "anyOf" in a:
        reasons = [check_all(alt, value, ctx) for alt in a["anyOf"]]
        if all(reasons):
            return " and ".join(reasons)
        return None
    return None


WILDCARDS = ("0.0.0.0", "::", "::0", "0:0:0:0:0:0:0:0")


def plain(address):
    address = address.lower()
    return address[7:] if address.startswith("::ffff:") and address.count(".") == 3 else address


def names_address(host, address):
    """Whether host is the address connected to, a wildcard bind address, or a name resolving to it."""
    if host.lower() in WILDCARDS or plain(host) == plain(address):
        return True
    if host == "":
        return False
    try:
        return any(plain(info[4][0]) == plain(address) for info in socket.getaddrinfo(host, None))
    except (OSError, UnicodeError):
        return False


def operand(o, ctx):
    """An assertion's right-hand side: a value, a value in a reply, or the address or port connected to."""
    if "value" in o:
        return o["value"]
    if "peer" in o:
        return ctx["peer"].name[0 if o["peer"] == "address" else 1]
    if "here" in o:
        return at_path(ctx["response"], o["here"])
    if "fresh" in o:
        # Asked now, on the judged connection: what the bridge says at the moment of the judgement.
        fresh = o["fresh"]
        request = {"jsonrpc": JSONRPC, "id": "fresh", "method": fresh["method"], "params": fresh.get("params", {})}
        ctx["peer"].write((json.dumps(request) + "\n").encode("utf-8"), [], 0)
        outcome = ctx["peer"].read(ctx["args"].timeout)
        response = judge(outcome[1], ["fresh"])[0] if outcome[0] == "line" else None
        return MISSING if response is None else at_path(response, o.get("path", []))
    found = ctx["earlier"].get(key(o["ref"]))
    return MISSING if found is None else at_path(found, o.get("path", []))


def apply_oracle(oracle, outcome, response, ctx):
    """None where the judged reply meets the oracle, else what is wrong: its kind's judge in ORACLES says."""
    judge_kind = ORACLES.get(oracle["kind"])
    if judge_kind is None:
        return "this script does not know the oracle " + oracle["kind"]
    return judge_kind(oracle, outcome, response, ctx)


def judge_alive(oracle, outcome, response, ctx):
    """The liveness probe after the case (PROBE) is the judgement: the reply itself asks nothing."""
    return None


def judge_error(oracle, outcome, response, ctx):
    if oracle.get("orClose") and outcome[0] in ("closed", "reset"):
        return None
    if oracle.get("orSilence") and outcome[0] == "timeout":
        return None
    error = response.get("error") if isinstance(response, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if code is not None and (not oracle["codes"] or any(same(code, c) for c in oracle["codes"])):
        return None
    return "the reply is not " + ORACLE_TEXT


def judge_result(oracle, outcome, response, ctx):
    if oracle.get("orClose") and outcome[0] in ("closed", "reset"):
        return None
    if not isinstance((response or {}).get("result"), dict):
        return "the reply is not a result object"
    return judge_reply(oracle, outcome, response, ctx)


def judge_reply(oracle, outcome, response, ctx):
    if oracle.get("orClose") and outcome[0] in ("closed", "reset"):
        return None
    if response is None:
        return "no reply: " + describe(outcome, ctx["args"].timeout)
    result = response.get("result") if isinstance(response.get("result"), dict) else {}
    for name, value in (oracle.get("equals") or {}).items():
        if name not in result or not same(result[name], value):
            return "the result's %s is not %s" % (name, json.dumps(value))
    for name in oracle.get("positiveIntegers") or []:
        if not (is_integer(result.get(name)) and result[name] > 0):
            return "the result's %s is not an integer above 0" % name
    return check_all(oracle.get("expect") or [], response, ctx)


def judge_answered(oracle, outcome, response, ctx):
    return None if response is not None else "no reply: " + describe(outcome, ctx["args"].timeout)


def judge_order(oracle, outcome, response, ctx):
    got = [r.get("id") for r in ctx["judged_responses"]]
    want = oracle["ids"]
    if len(got) == len(want) and all(same(g, w) for g, w in zip(got, want)):
        if oracle.get("nothingMore"):
            stray = ctx["peer"].read(min(0.2, ctx["args"].timeout))
            if stray[0] == "line":
                return "a line arrived that answers no request: " + describe(stray, ctx["args"].timeout)
        return None
    return "the replies' ids are %s, not %s" % (json.dumps(got, default=str), json.dumps(want))


def judge_never(oracle, outcome, response, ctx):
    if any(same(r.get("id"), oracle["id"]) for r in ctx["all_responses"]):
        return "a reply answers the request with id %s, which must not be run" % json.dumps(oracle["id"])
    return None


def judge_ledger(oracle, outcome, response, ctx):
    return Ledger(oracle, ctx).judge()


def judge_reconnects(oracle, outcome, response, ctx):
    return reconnects(oracle["count"], ctx)


class NotReplayed(Exception):
    """The replay could not bring the bridge to the state the case judges: no verdict either way."""


def not_filled(rejections, accepted, most, limit):
    """None once the queue rejected an act; else, as the check skips then, no verdict: a queue that never filled
    says nothing of what a full one does."""
    if rejections:
        return None
    raise NotReplayed(
        "the queue never filled: %d acts were all accepted with at most %d outstanding at once, below "
        "maxQueuedCommands %s (the bridge completed them as fast as this script acted), so whether it rejects at "
        "the limit was not seen; run it again on a less busy machine" % (accepted, most, limit))


class Ledger:
    """
    What was outstanding when the bridge served the judged act or status, as the check's ledger
    counts it; then, as the check went on, `more` acts (each followed by a status where a status is
    judged), each judged alike: a queue's edge shows only while commands are outstanding.
    """

    def __init__(self, oracle, ctx):
        self.oracle, self.ctx = oracle, ctx
        self.peer, self.timeout = ctx["peer"], ctx["args"].timeout
        self.flood = oracle["judge"] == "flood"

    def judge(self):
        oracle, timeline, response = self.oracle, self.ctx["timeline"], self.ctx["response"]
        if response is None:
            return "no reply: " + describe(self.ctx["outcome"], self.timeout)
        # From the start: the judged reply is the latestSeq counted from, and every act that follows is the reproducer's.
        fresh = self.flood or oracle.get("fromStart")
        opened = [len(timeline) - 1] if fresh else [
            i for i, (_, r) in enumerate(timeline[:-1]) if same(r.get("id"), oracle["start"])]
        self.limit = limit = at_path(self.ctx["earlier"].get(key(oracle["limitFrom"])), ["result", "maxQueuedCommands"])
        if not opened or not is_integer(limit):
            return "the case holds no latestSeq to count from, or no maxQueuedCommands"
        self.start = start = at_path(timeline[opened[-1]][1], ["result", "latestSeq"])
        self.book = {"accepted": set(), "done": set(), "seen": set(), "foreign": 0, "latest": start, "cursor": start}
        for method, r in timeline[opened[-1] + 1:-1]:
            if method == "act":
                self.accept(r)
            elif method == "events":
                self.read_page(r)
        try:
            return self.replay(response, fresh)
        except LookupError as err:
            return str(err)

    def read_page(self, page):
        book, start = self.book, self.start
        events = at_path(page, ["result", "events"])
        for item in events if isinstance(events, list) else []:
            seq, event = at_path(item, ["seq"]), at_path(item, ["event"])
            if not is_number(seq) or seq <= start:
                continue
            book["seen"].add(decimal.Decimal(seq))
            book["cursor"] = max(book["cursor"], seq)
            if isinstance(event, dict) and event.get("type") == "command_completed" and is_number(event.get("commandSeq")):
                number = decimal.Decimal(event["commandSeq"])
                if number not in book["accepted"]:
                    book["foreign"] += 1
                else:
                    book["done"].add(number)
        latest = at_path(page, ["result", "latestSeq"])
        if is_number(latest):
            book["latest"] = max(book["latest"], latest)

    def accept(self, r):
        if at_path(r, ["result", "accepted"]) is True and is_integer(at_path(r, ["result", "commandSeq"])):
            self.book["accepted"].add(decimal.Decimal(r["result"]["commandSeq"]))
            return True
        return False

    def call(self, method, params, rid):
        request = {"jsonrpc": JSONRPC, "id": rid, "method": method, "params": params}
        self.peer.write((json.dumps(request) + "\n").encode("utf-8"), [], 0)
        outcome = self.peer.read(self.timeout)
        if outcome[0] != "line":
            raise LookupError("%s got no reply: %s" % (method, describe(outcome, self.timeout)))
        r, wrong = judge(outcome[1], [rid])
        if wrong:
            raise LookupError(wrong)
        return r

    def poll(self):
        # From the first seq not seen yet: the replayed polls asked after cursors of their own run, and may have
        # passed over completions this replay had not made yet.
        cursor = self.start
        while decimal.Decimal(cursor) + 1 in self.book["seen"]:
            cursor += 1
        while True:
            page = self.call("events", {"afterSeq": int(cursor), "limit": EVENTS_PAGE}, "ledger")
            self.read_page(page)
            events = at_path(page, ["result", "events"]) or []
            if len(events) < EVENTS_PAGE or not is_number(at_path(events[-1], ["seq"])):
                return
            cursor = events[-1]["seq"]

    def outstanding(self):
        """The accepted commands now, and at most how many of them are outstanding."""
        among = set(self.book["accepted"])
        return among, len(among) - len(self.book["done"] & among)

    def judged(self, r, among, at_most, accepted):
        oracle, book, limit = self.oracle, self.book, self.limit
        # The poll after the reply: what completed by then bounds what was still outstanding when it was served.
        self.poll()
        unseen = max(0, book["latest"] - self.start - len(book["seen"]))
        at_least = len(among) - min(len(among), len(book["done"] & among) + unseen)
        book["at_least"] = at_least
        if oracle["judge"] in ("act", "flood"):
            if accepted:
                if at_least >= limit:
                    return "act was accepted while at least %d accepted commands were outstanding (maxQueuedCommands %s)" % (
                        at_least, limit)
                return None
            if not any(same(at_path(r, ["error", "code"]), c) for c in oracle["codes"]):
                return "act got neither an acceptance nor %s" % " or ".join(str(c) for c in oracle["codes"])
            if VERBOSE:
                print("  ledger: act rejected with at most %d outstanding, %d foreign" % (at_most, book["foreign"]))
            if at_most < limit and book["foreign"] == 0:
                return "act was rejected while at most %d accepted commands were outstanding, below maxQueuedCommands %s" % (
                    at_most, limit)
            return None
        queued = at_path(r, ["result", "queuedCommands"])
        if not is_integer(queued):
            return "status gives no integer queuedCommands"
        if book["foreign"]:
            return None
        if queued > limit:
            return "queuedCommands %s is over maxQueuedCommands %s" % (queued, limit)
        if queued > at_most:
            return "queuedCommands %s, but at most %d accepted commands had not completed" % (queued, at_most)
        if queued < at_least:
            return "queuedCommands %s, but at least %d accepted commands had not completed" % (queued, at_least)
        return None

    def queued_state(self, wrong, held):
        """
        A status shows a wrong count only while a command is queued, and a fast game loop may complete each
        command before the status after it is served. So, as the check does, act (up to `more` outstanding,
        never more than maxQueuedCommands) and read status, until `more` readings were served with a command
        of this script provably still queued; where none was, the state was never observed: no verdict.
        """
        oracle, book, limit = self.oracle, self.book, self.limit
        want, held, n, acts = max(1, oracle.get("more", 0)), 1 if held else 0, 0, 0
        until = time.monotonic() + 4 * self.timeout
        while not wrong and held < want and (n < want or time.monotonic() < until):
            outstanding = len(book["accepted"]) - len(book["done"])
            while outstanding < min(limit, want) and self.accept(self.call("act", oracle["act"], "more-%d" % acts)):
                outstanding, acts = outstanding + 1, acts + 1
            among, at_most = self.outstanding()
            wrong = self.judged(self.call("status", {}, "more-status-%d" % n), among, at_most, False)
            held += 1 if book["at_least"] > 0 else 0
            n += 1
        if wrong or held:
            return wrong
        raise NotReplayed(
            "no status of %d was served while a command of this script was provably still queued (the bridge "
            "completed each before the status after it), so whether queuedCommands counts queued commands was "
            "not seen; run it again on a less busy machine" % n)

    def replay(self, response, fresh):
        oracle, book = self.oracle, self.book
        among, at_most = self.outstanding()
        wrong, rejections, most = None, 0, 0
        if not fresh:
            accepted = oracle["judge"] == "act" and self.accept(response)
            wrong = self.judged(response, among, at_most, accepted)
            if oracle["judge"] == "act":
                rejections, most = (0, at_most) if accepted else (1, 0)
        if oracle["judge"] == "status":
            return self.queued_state(wrong, book.get("at_least", 0) > 0)
        wrong, rejections, most = self.more_acts(wrong, rejections, most)
        if wrong:
            return wrong
        if self.flood:
            lost = self.drain()
            if lost:
                return lost
        return not_filled(rejections, len(book["accepted"]), most, self.limit)

    def more_acts(self, wrong, rejections, most):
        """The acts that followed in the check, each judged; returns (what is wrong, rejections, most outstanding)."""
        book = self.book
        for n in range(self.oracle.get("more", 0)):
            if wrong:
                break
            among, at_most = self.outstanding()
            r = self.call("act", self.oracle["act"], "more-%d" % n)
            accepted = self.accept(r)
            rejections += 0 if accepted else 1
            most = max(most, at_most) if accepted else most
            wrong = self.judged(r, among, at_most, accepted)
            # Rejections at the edge, each after one completion: twice the check's four, as a replay's pace differs.
            if rejections >= 8:
                break
            if not accepted and not wrong:
                # As the check does: wait for one completion, so the next act lands with exactly one slot free.
                done, until = len(book["done"]), time.monotonic() + 2 * self.timeout
                while len(book["done"]) == done and book["accepted"] - book["done"] and time.monotonic() < until:
                    self.poll()
                    time.sleep(0.001)
        return wrong, rejections, most

    def drain(self):
        """Then every accepted command completes: a full queue rejects, it never drops or overwrites."""
        book = self.book
        until = time.monotonic() + 2 * self.timeout
        while book["accepted"] - book["done"] and time.monotonic() < until:
            done = len(book["done"])
            self.poll()
            if len(book["done"]) > done:
                until = time.monotonic() + 2 * self.timeout
            else:
                time.sleep(0.002)
        unseen = max(0, book["latest"] - self.start - len(book["seen"]))
        lost = len(book["accepted"]) - min(len(book["accepted"]), len(book["done"]) + unseen)
        if lost:
            return "%d of %d accepted commands never completed: the queue dropped or overwrote them" % (
                lost, len(book["accepted"]))
        return None


def reconnects(count, ctx):
    """Connections one after another, each authorized where a token is set, each served a ping."""
    args, fill = ctx["args"], ctx["fill"]
    for n in range(1, count + 1):
        try:
            peer = Peer(args.host, args.port, args.timeout)
        except OSError as err:
            return "connection %d of %d was refused: %s" % (n, count, err)
        try:
            for request in SESSION:
                peer.write(fill(request.encode("utf-8")), [], 0)
                outcome = peer.read(args.timeout)
                response = judge(outcome[1], None)[0] if outcome[0] == "line" else None
                if response is None or not isinstance(response.get("result"), dict):
                    return "connection %d of %d was not served: %s" % (n, count, describe(outcome, args.timeout))
            if response["result"].get("ok") is not True:
                return "connection %d of %d: ping was not answered {\"ok\": true}" % (n, count)
        finally:
            peer.close()
    return None


def judge_completes(oracle, outcome, response, ctx):
    """Each accepted act of the case completes exactly once, as {commandSeq, success, message}."""
    seqs = []
    for act in oracle["acts"]:
        response = ctx["with_judged"].get(key(act))
        if response is None:
            return "no reply to the act request %s" % json.dumps(act)
        error = response.get("error")
        if isinstance(error, dict) and any(same(error.get("code"), c) for c in oracle.get("orCodes") or []):
            continue
        result = response.get("result")
        if not (isinstance(result, dict) and result.get("accepted") is True and is_integer(result.get("commandSeq"))):
            return "act %s was not accepted as {accepted: true, commandSeq: integer}" % json.dumps(act)
        seqs.append(decimal.Decimal(result["commandSeq"]))
    if not seqs:
        return None
    cursor = at_path(ctx["earlier"].get(key(oracle["after"])), ["result", "latestSeq"]) if "after" in oracle else 0
    if not is_integer(cursor):
        return "no latestSeq to read the completions after"
    seen = {s: [] for s in seqs}
    peer, timeout = ctx["peer"], ctx["args"].timeout
    until = time.monotonic() + 2 * timeout
    settle = None
    # With a step: once every completion is seen, one more act, and the look for a second completion lasts until
    # it completes (one step of the game loop), then one more read.
    step, stepped, marker, marked, final = oracle.get("step"), False, None, False, False
    while True:
        request = {"jsonrpc": JSONRPC, "id": "completions", "method": "events",
                   "params": {"afterSeq": int(cursor), "limit": EVENTS_PAGE}}
        peer.write((json.dumps(request) + "\n").encode("utf-8"), [], 0)
        outcome = peer.read(timeout)
        if outcome[0] != "line":
            return "events did not answer while waiting for the completions: " + describe(outcome, timeout)
        page, wrong = judge(outcome[1], ["completions"])
        if wrong:
            return wrong
        events = at_path(page, ["result", "events"])
        if not isinstance(events, list):
            return "events gave no list of events"
        for item in events:
            seq = at_path(item, ["seq"])
            event = at_path(item, ["event"])
            if is_number(seq):
                cursor = max(decimal.Decimal(cursor), decimal.Decimal(seq))
            if not isinstance(event, dict) or event.get("type") != "command_completed":
                continue
            number = event.get("commandSeq")
            try:
                number = decimal.Decimal(number) if not isinstance(number, bool) else None
            except (decimal.InvalidOperation, TypeError, ValueError):
                number = None
            if number in seen:
                # A command completing again is no sign the loop moved on: only a first completion keeps the wait.
                if not seen[number]:
                    until = time.monotonic() + 2 * timeout
                seen[number].append(event)
            elif marker is not None and number == marker:
                marked = True
        if all(seen.values()) and step is not None and not stepped:
            stepped = True
            marker, problem = act_step(peer, step, timeout)
            if problem:
                return problem
            if marker is not None:
                # The marker's own deadline: a bridge that keeps completing the case's command never moves it.
                until = time.monotonic() + 2 * timeout
                continue
        if all(seen.values()):
            if marked:
                if final:
                    break
                final = True
                continue
            if marker is None:
                settle = settle or time.monotonic() + 0.05
                if time.monotonic() >= settle:
                    break
            elif time.monotonic() >= until:
                break
        elif time.monotonic() >= until:
            break
        if not events:
            time.sleep(0.005)
    for seq, found in seen.items():
        if not found:
            return "the accepted command %s never completed within the wait" % seq
        if len(found) > 1:
            return "the command %s completed %d times" % (seq, len(found))
        event = found[0]
        if not (is_integer(event.get("commandSeq")) and isinstance(event.get("success"), bool)
                and isinstance(event.get("message"), str)):
            return "the completion of %s is not {commandSeq: integer, success: boolean, message: string}: %s" % (
                seq, json.dumps(event, default=str))
    return None

def act_step(peer, params, timeout):
    """Acts the command that marks one step of the game loop: (its commandSeq where accepted, else None; a problem)."""
    request = {"jsonrpc": JSONRPC, "id": "step", "method": "act", "params": params}
    peer.write((json.dumps(request) + "\n").encode("utf-8"), [], 0)
    outcome = peer.read(timeout)
    if outcome[0] != "line":
        return None, "act %s was not answered: %s" % (json.dumps(params), describe(outcome, timeout))
    reply, wrong = judge(outcome[1], ["step"])
    if wrong:
        return None, wrong
    result = at_path(reply, ["result"])
    if isinstance(result, dict) and result.get("accepted") is True and is_integer(result.get("commandSeq")):
        return decimal.Decimal(result["commandSeq"]), None
    return None, None


def seen_completions(response, completed):
    """Adds the commands whose completions an events reply shows to completed; returns its newest seq (or 0)."""
    events = at_path(response, ["result", "events"])
    newest = 0
    for item in events if isinstance(events, list) else []:
        seq, event = at_path(item, ["seq"]), at_path(item, ["event"])
        if is_number(seq):
            newest = max(newest, seq)
        if isinstance(event, dict) and event.get("type") == "command_completed" and is_integer(event.get("commandSeq")):
            completed.add(decimal.Decimal(event["commandSeq"]))
    latest = at_path(response, ["result", "latestSeq"])
    return max(newest, latest) if is_number(latest) else newest


def await_completions(peer, args, waited, completed):
    """
    Polls events on peer, as the check did, until the completions of the acts waited for are there
    (each act: its commandSeq and the newest seq seen before it was accepted) or twice the timeout
    has passed. It only keeps the replay from running ahead of the bridge: what it reads judges nothing.
    """
    cursor = min(floor for _, floor in waited)
    start = time.monotonic()
    until = start + 2 * args.timeout
    # A late reply to one of the case's own requests is not this wait's: it is kept for the step that reads it.
    held = []
    while any(seq not in completed for seq, _ in waited) and time.monotonic() < until:
        request = {"jsonrpc": JSONRPC, "id": "replay-wait", "method": "events",
                   "params": {"afterSeq": int(cursor), "limit": EVENTS_PAGE}}
        peer.write((json.dumps(request) + "\n").encode("utf-8"), [], 0)
        page = None
        while page is None:
            outcome = peer.read(args.timeout)
            if outcome[0] != "line":
                break
            page = judge(outcome[1], ["replay-wait"])[0]
            if page is None:
                held.append(outcome[1])
        if page is None:
            break
        seen_completions(page, completed)
        events = at_path(page, ["result", "events"])
        if isinstance(events, list) and events and is_number(at_path(events[-1], ["seq"])):
            cursor = max(cursor, events[-1]["seq"])
        else:
            time.sleep(0.005)
    peer.buffer = b"".join(line + b"\n" for line in held) + peer.buffer
    if VERBOSE:
        print("  waited   %d ms for the completion of command %s, as the check did" % (
            (time.monotonic() - start) * 1000, ", ".join(str(seq) for seq, _ in waited)))


# Every oracle kind's judge, by kind: the tool's registry of kinds (protocol/oracles.ts) holds the same
# kinds, and a test fails where one side knows a kind the other does not.
ORACLES = {
    "error": judge_error,
    "result": judge_result,
    "reply": judge_reply,
    "answered": judge_answered,
    "order": judge_order,
    "never": judge_never,
    "completes": judge_completes,
    "ledger": judge_ledger,
    "reconnects": judge_reconnects,
    "alive": judge_alive,
}


def is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def step_bytes(step):
    """The bytes of a send step: text or base64, then a long send's repeated runs and tail."""
    data = base64.b64decode(step["base64"]) if "base64" in step else step["text"].encode("utf-8")
    for run in step.get("runs", []):
        data += base64.b64decode(run["run"]) * run["times"]
    if "runs" in step:
        data += base64.b64decode(step["tail"])
    return data


def parse_args():
    parser = argparse.ArgumentParser(description="Re-sends the minimal case of the failing check " + CHECK + ".")
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds to wait for each reply")
    parser.add_argument("--allow-remote", action="store_true", help="connect to a host that is not loopback")
    parser.add_argument("--verbose", "-v", action="store_true", help="show every step of the exchange")
    args = parser.parse_args()
    if not (args.timeout > 0):
        parser.error("--timeout must be a positive number of seconds")
    return args


class Stop(Exception):
    """The replay ends here with this exit code (what it printed says why)."""

    def __init__(self, code):
        Exception.__init__(self, code)
        self.code = code


class Replay:
    """The recorded exchange, step by step, with what the bridge answered and what is wrong with it."""

    def __init__(self, args, token):
        self.args, self.token = args, token
        self.token_forms = sorted({json.dumps(token, ensure_ascii=False)[1:-1].encode("utf-8"), token.encode("utf-8")},
                                  key=len, reverse=True) if token else []
        self.peers, self.peer, self.problems = [], None, []
        self.judged_send, self.judged_ids, self.judged, self.recorded = None, None, [], []
        # Replies by id: those before the judged one (what an oracle compares with), and every one.
        self.earlier, self.judged_responses, self.all_responses = {}, [], []
        # Every reply in order, with the method of the request it answers (what a ledger of commands counts).
        self.timeline, self.methods = [], {}
        self.judged_response, self.unreplayed = None, None
        self.last_send, self.lost, self.opened = None, False, 0
        # What the bridge said of its commands: the acts it accepted (by the step and line of the reply, with the
        # newest seq seen before it), and the commands whose completions its replies showed.
        self.accepted_at, self.completed, self.newest = {}, set(), 0
        self.started = self.wrote = time.monotonic()

    def fill(self, data):
        return data.replace(REDACTED.encode("utf-8"), self.token_forms[0]) if self.token_forms else data

    def hide(self, data):
        for form in self.token_forms:
            data = data.replace(form, REDACTED.encode("utf-8"))
        return data

    def show(self, outcome):
        hidden = (outcome[0], self.hide(outcome[1])) + tuple(outcome[2:]) if outcome[0] == "line" else outcome
        return describe(hidden, self.args.timeout)

    def make_events(self):
        """The events the case reads, made first where the check made them before the case."""
        if not (ORACLE and ORACLE.get("needsEvents")):
            return
        try:
            why = make_events(self.args, self.fill, ORACLE["needsEvents"])
        except OSError as err:
            print("cannot connect to %s:%d: %s" % (self.args.host, self.args.port, err))
            raise Stop(UNREACHABLE)
        if why:
            print("STILL BROKEN: " + why)
            raise Stop(BREAKS)
        if self.args.verbose:
            print("  made the events the case reads (latestSeq %d)" % ORACLE["needsEvents"])

    def run(self):
        """Every step of the exchange, then the liveness probe where the check ended with one."""
        for index, step in enumerate(STEPS):
            op = step["op"]
            if op == "open":
                self.open(step)
                if self.lost:
                    break
            elif self.peer is None:
                continue
            elif op == "send":
                self.send(step)
            elif op == "half_close":
                self.peer.half_close()
                if self.args.verbose:
                    print("  half-closed (FIN)")
            elif op == "read":
                self.read(index, step)
        for p in self.peers:
            p.close()
        if PROBE and not self.lost:
            alive, why = probe(self.args, self.fill)
            if self.args.verbose:
                print("  liveness probe: " + ("answered" if alive else why))
            if not alive:
                self.problems.append(why)

    def open(self, step):
        if not step.get("alongside"):
            for p in self.peers:
                p.close()
            self.peers = []
        try:
            self.peer = Peer(self.args.host, self.args.port, self.args.timeout)
        except OSError as err:
            if self.opened == 0:
                print("cannot connect to %s:%d: %s" % (self.args.host, self.args.port, err))
                raise Stop(UNREACHABLE)
            self.problems.append("the bridge stopped accepting connections (%s)" % err)
            self.lost = True
            return
        self.peers.append(self.peer)
        self.opened += 1
        if self.args.verbose:
            print("  connection %d opened" % self.opened)

    def send(self, step):
        # Never sooner after the case began than the run sent it: what the bridge did meanwhile (completing
        # commands) is part of the case.
        # Back-to-back writes keep at least the pause between them.
        due = max(self.started + step.get("at_ms", 0) / 1000.0, self.wrote + step.get("gap_ms", 0) / 1000.0)
        if due > time.monotonic():
            time.sleep(due - time.monotonic())
        data = step_bytes(step)
        wire = self.fill(data) if "near_miss" not in step else near_miss_request(
            data, self.token, ORACLE["nearMisses"][step["near_miss"]])
        line = self.peer.write(wire, step.get("cuts", []), step.get("pause_ms", 0))
        self.wrote = time.monotonic()
        self.last_send = step
        if self.args.verbose:
            print("  sent     " + describe(("line", data.rstrip(b"\n")), self.args.timeout))
        for sent_line in data.split(b"\n")[:-1]:
            try:
                request = strict_json(sent_line.decode("utf-8"))
                self.methods[key(request.get("id"))] = request.get("method")
            except (ValueError, RecursionError, AttributeError, UnicodeDecodeError):
                pass
        if step.get("judged"):
            self.judged_send, self.judged_ids = data, request_ids(line)

    def read(self, index, step):
        results = []
        for _ in range(step["count"]):
            outcome = self.peer.read(self.args.timeout)
            results.append(outcome)
            if self.args.verbose:
                print("  received " + self.show(outcome))
            if outcome[0] != "line":
                break
        for i, outcome in enumerate(results):
            self.take(index, step, i, outcome)
        waited = [self.accepted_at[tuple(w)] for w in step.get("waits", []) if tuple(w) in self.accepted_at]
        if any(seq not in self.completed for seq, _ in waited):
            await_completions(self.peer, self.args, waited, self.completed)
        if step.get("judged"):
            self.judge_step(step, self.poll_until(results))

    def take(self, index, step, i, outcome):
        """One reply read: judged as every reply is, then kept where the oracle looks for it."""
        if outcome[0] == "oversized":
            self.problems.append("wire.line-limit: a response line is longer than %d bytes" % MAX_LINE_BYTES)
        if outcome[0] != "line":
            return
        response, wrong = judge(outcome[1], self.judged_ids if step.get("judged") and i == 0 else None)
        if wrong:
            self.problems.append(wrong)
            return
        self.all_responses.append(response)
        self.timeline.append((self.methods.get(key(response.get("id"))), response))
        if at_path(response, ["result", "accepted"]) is True and is_integer(at_path(response, ["result", "commandSeq"])):
            self.accepted_at[(index, i)] = (decimal.Decimal(response["result"]["commandSeq"]), self.newest)
        self.newest = max(self.newest, seen_completions(response, self.completed))
        if step.get("judged"):
            self.judged_responses.append(response)
            if i == 0:
                self.judged_response = response
        else:
            self.earlier[key(response.get("id"))] = response
        if not step.get("judged") and self.last_send and self.last_send.get("auth") and i == 0:
            if not (isinstance(response.get("result"), dict) and response["result"].get("authorized") is True):
                print("the bridge did not authorize the token in " + TOKEN_ENV + ": set it to the bridge's token")
                raise Stop(CANNOT)

    def poll_until(self, results):
        """The case waited for the bridge (events it polled for): ask again, as it did, until they are there."""
        until = time.monotonic() + 2 * self.args.timeout
        while (ORACLE and ORACLE.get("until") and self.judged_response is not None and time.monotonic() < until
               and check_all(ORACLE["until"], self.judged_response,
                             {"earlier": self.earlier, "response": self.judged_response})):
            time.sleep(0.005)
            self.peer.write(self.fill(self.judged_send), [], 0)
            outcome = self.peer.read(self.args.timeout)
            response, wrong = judge(outcome[1], self.judged_ids) if outcome[0] == "line" else (None, None)
            if response is None:
                break
            results, self.judged_responses[-1:], self.judged_response = [outcome], [response], response
            self.all_responses[-1:] = [response]
        return results

    def judge_step(self, step, results):
        """The judged request's replies, by the oracle where the check gave one."""
        self.judged, self.recorded = results, [recorded_outcome(r) for r in step["recorded"]]
        first = results[0] if results else ("timeout",)
        # A reply the framing judge already refused needs no oracle to be wrong.
        if not ORACLE or (first[0] == "line" and self.judged_response is None):
            return
        mine = dict(self.earlier)
        for r in self.judged_responses:
            mine[key(r.get("id"))] = r
        context = {"args": self.args, "earlier": self.earlier, "with_judged": mine, "peer": self.peer,
                   "response": self.judged_response, "timeline": self.timeline, "outcome": first, "fill": self.fill,
                   "judged_responses": self.judged_responses, "all_responses": self.all_responses}
        try:
            wrong = apply_oracle(ORACLE, first, self.judged_response, context)
        except NotReplayed as err:
            wrong, self.unreplayed = None, str(err)
        if wrong:
            self.problems.append(wrong)

    def verdict(self):
        """What was sent, expected and answered, then the verdict as the exit code."""
        timeout = self.args.timeout
        print("sent:     " + (describe(("line", self.judged_send.rstrip(b"\n")), timeout)
                              if self.judged_send is not None else "-"))
        print("expected: " + (EXPECTED or "-"))
        print("oracle:   " + ORACLE_TEXT)
        print("now:      " + ("; ".join(self.show(o) for o in self.judged) if self.judged else "-"))
        print("recorded: " + ("; ".join(describe(o, timeout) for o in self.recorded) if self.recorded else "-"))
        if self.problems:
            print("STILL BROKEN: " + "; ".join(self.problems))
            return BREAKS
        if self.unreplayed:
            print("COULD NOT REPLAY: " + self.unreplayed)
            return CANNOT
        if ORACLE:
            print("BEHAVES: the reply meets the rule")
            return BEHAVES
        now = [(o[0], self.hide(o[1])) if o[0] == "line" else o for o in self.judged]
        if len(now) == len(self.recorded) and all(same_outcome(n, r) for n, r in zip(now, self.recorded)):
            print("STILL BROKEN: the same reply as when the check failed")
            return BREAKS
        print("CHANGED: the reply differs from the one recorded when the check failed; judge it yourself")
        return CHANGED


def main():
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    args = parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    print("check:    " + CHECK + " (" + ", ".join(RULES) + ")")
    token = os.environ.get(TOKEN_ENV, "")
    if NEEDS_TOKEN and not token:
        print("set " + TOKEN_ENV + " to the bridge's token, as the run did (it is not in this file)")
        return CANNOT
    if not is_loopback(args.host) and not args.allow_remote:
        print("refusing to connect to " + args.host + ", which is not loopback: add --allow-remote")
        return CANNOT
    replay = Replay(args, token)
    try:
        replay.make_events()
        replay.run()
    except Stop as stop:
        return stop.code
    return replay.verdict()


NEAR_MISS_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."


def near_miss_params(token, miss):
    """The auth params for a near miss of token, as the tool made them (its near misses are descriptions)."""
    kind = miss["kind"]
    if kind == "prefix":
        return {"token": token[: miss["keep"] % len(token)]}
    if kind == "extended":
        return {"token": token + miss["suffix"]}
    if kind == "case":
        if miss["change"] == "swap":
            return {"token": "".join(c.lower() if c == c.upper() else c.upper() for c in token)}
        return {"token": token.upper() if miss["change"] == "upper" else token.lower()}
    if kind == "padded":
        return {"token": miss["pad"] + token if miss["where"] == "leading" else token + miss["pad"]}
    if kind == "empty":
        return {"token": ""}
    if kind == "changed":
        chars, at = list(token), miss["at"] % len(token)
        pick = NEAR_MISS_CHARS[miss["to"] % len(NEAR_MISS_CHARS)]
        chars[at] = NEAR_MISS_CHARS[(miss["to"] + 1) % len(NEAR_MISS_CHARS)] if chars[at] == pick else pick
        return {"token": "".join(chars)}
    if kind == "wrapped":
        return {"token": [token]}
    return {}


def near_miss_request(data, token, miss):
    """The auth request the report shows with its near miss hidden, with the near miss of token put back."""
    request = json.loads(data.decode("utf-8"))
    request["params"] = near_miss_params(token, miss)
    return (json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def make_events(args, fill, wanted):
    """Acts {"type": "conformance.noop"} until latestSeq reaches wanted, as the check made its events before the case."""
    peer = Peer(args.host, args.port, args.timeout)
    try:
        def call(method, params, rid):
            request = {"jsonrpc": JSONRPC, "id": rid, "method": method, "params": params}
            peer.write(fill((json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8")), [], 0)
            outcome = peer.read(args.timeout)
            response = judge(outcome[1], None)[0] if outcome[0] == "line" else None
            return response.get("result") if isinstance(response, dict) and isinstance(response.get("result"), dict) else None

        if NEEDS_TOKEN:
            call("auth", {"token": REDACTED}, "make-auth")
        until = time.monotonic() + max(10 * args.timeout, wanted / 100.0)
        acted, start = 0, None
        while time.monotonic() < until:
            latest = (call("events", {"afterSeq": 0, "limit": 1}, "make-cursor") or {}).get("latestSeq")
            if is_integer(latest) and latest >= wanted:
                return None
            start = latest if start is None else start
            # Only accepted commands count: a full queue is waited out.
            if is_integer(start) and acted < wanted - start and (
                    call("act", {"type": "conformance.noop"}, "make-%d" % acted) or {}).get("accepted") is True:
                acted += 1
            else:
                time.sleep(0.002)
        return "the bridge's event history did not reach seq %d, which the case reads" % wanted
    finally:
        peer.close()


def probe(args, fill):
    """Whether the bridge still answers ping on a fresh connection (authorized first where a token is set)."""
    try:
        peer = Peer(args.host, args.port, args.timeout)
    except OSError as err:
        return False, "after the case the bridge stopped accepting connections (%s)" % err
    try:
        outcome = ("timeout",)
        for request in SESSION:
            data = fill(request.encode("utf-8"))
            peer.write(data, [], 0)
            outcome = peer.read(args.timeout)
            if outcome[0] != "line":
                break
        if outcome[0] == "line":
            response, wrong = judge(outcome[1], None)
            if response and isinstance(response.get("result"), dict) and response["result"].get("ok") is True:
                return True, None
        return False, "after the case the bridge no longer answers ping on a fresh connection: " + describe(outcome, args.timeout)
    finally:
        peer.close()


# The plan of one check goes here.


if __name__ == "__main__":
    sys.exit(main())
