#!/usr/bin/env python3
"""A conformant AiControl bridge in plain Python 3 (standard library only).

    python3 bridges/python/bridge.py [--host 127.0.0.1] [--port 43011] [--max-commands 64]
                                     [--max-events 512] [--tick-ms 2] [--token-env FONLINE_AI_TOKEN]

It is written apart from the Node reference bridge, on purpose: a second implementation that
the suite must pass, so its verdicts are not tuned to one code base. Each connection has a
thread that reads lines, validates requests and queues commands; one game-loop thread owns the
queue's far end and completes one command per tick. The token, if any, comes from an
environment variable (FONLINE_AI_TOKEN unless --token-env names another), never from a flag.
Once it listens it prints one line on stdout: {"host": "127.0.0.1", "port": N}.

Where Python's json reads a number into a double (a fraction of more digits than a double
keeps), the id is echoed as that double: RFC 8259 section 6 lets a parser limit precision.
A number beyond a double's range (1e400) is refused as a parse error.
"""

import argparse
import collections
import hmac
import json
import math
import os
import socket
import sys
import threading
import time

CONTRACT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "protocol", "AiControlProtocol.json")
with open(CONTRACT, encoding="utf-8") as handle:
    _OUTPUTS = json.load(handle)["outputs"]
JSONRPC = _OUTPUTS["jsonrpc_version"]
LINE_LIMIT = _OUTPUTS["max_line_bytes"]
METHODS = tuple(_OUTPUTS["methods"])
E = _OUTPUTS["error_codes"]
PAGE_MIN, PAGE_MAX = 1, 500  # the events limit is clamped to this range
MESSAGE_LIMIT = 4096  # bytes of a completion message's JSON text: every event fits in a reply line
ACTIONS = ["say", "walk", "wait"]
IDENTIFIERS = ("targetId", "itemId", "auxId")
INTEGERS = ("x", "y", "screenX", "screenY", "intArg")


class Refusal(Exception):
    """A request answered with a JSON-RPC error."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _finite(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("number out of a double's range")
    return value


def _not_json(name):
    raise ValueError(f"{name} is not JSON")


def read_json(raw):
    """Strict UTF-8, then RFC 8259 JSON (no NaN or Infinity, no raw controls); raises ValueError."""
    try:
        text = raw.decode("utf-8")
        return json.loads(text, parse_float=_finite, parse_constant=_not_json)
    except RecursionError as err:  # nesting deeper than the parser goes: RFC 8259 section 9 allows a limit
        raise ValueError("nested too deeply") from err


def write_json(value):
    # ASCII out: every character escaped, so lone surrogates a request carried are written back as escapes.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def is_int(value):
    return type(value) is int


def trimmed(message):
    """The message cut so that its JSON text stays within MESSAGE_LIMIT bytes."""
    if len(write_json(message)) <= MESSAGE_LIMIT:
        return message
    low, high = 0, len(message)
    while low < high:
        mid = (low + high + 1) // 2
        if len(write_json(message[:mid] + "...")) <= MESSAGE_LIMIT:
            low = mid
        else:
            high = mid - 1
    return message[:low] + "..."


class World:
    """The bridge's state: the command queue, the event history, the observation. One lock guards it."""

    def __init__(self, max_commands, max_events):
        self.lock = threading.Lock()
        self.wake = threading.Condition(self.lock)
        self.max_commands = max_commands
        self.max_events = max_events
        self.pending = collections.deque()
        self.history = collections.deque(maxlen=max_events)
        self.last_command = 0
        self.last_event = 0
        self.observation = 1
        self.position = [0, 0]
        self.said = ""
        self.last_error = ""

    def submit(self, command):
        with self.lock:
            if len(self.pending) >= self.max_commands:
                raise Refusal(E["queue_full"], "command queue full")
            self.last_command += 1
            self.pending.append((self.last_command, command))
            self.wake.notify()
            return self.last_command

    def run_one(self):
        """Completes the oldest queued command, if any: the game loop's one step."""
        with self.lock:
            while not self.pending:
                self.wake.wait()
            seq, command = self.pending[0]
            ok, message = self.perform(command)
            self.last_event += 1
            event = {"type": "command_completed", "commandSeq": seq, "success": ok, "message": trimmed(message)}
            self.history.append({"seq": self.last_event, "event": event})
            self.pending.popleft()  # counted as queued until its completion is recorded

    def perform(self, command):
        kind = command["type"]
        if kind == "walk":
            x, y = command.get("x"), command.get("y")
            if x is None and y is None:
                return False, "walk needs x or y"
            self.position = [x if x is not None else self.position[0], y if y is not None else self.position[1]]
            self.observation += 1
            return True, f"walked to {self.position[0]},{self.position[1]}"
        if kind == "say":
            self.said = trimmed(command.get("stringArg", ""))
            self.observation += 1
            return True, self.said
        if kind == "wait":
            return True, "waited"
        self.last_error = f"no such action: {kind}"
        return False, self.last_error


class Bridge:
    def __init__(self, host, port, token, world, tick):
        self.token = token.encode("utf-8", "surrogateescape")
        self.world = world
        self.tick = tick
        self.listener = socket.create_server((host, port))
        self.host, self.port = self.listener.getsockname()[:2]

    # ---- the game loop ----

    def game_loop(self):
        while True:
            self.world.run_one()
            time.sleep(self.tick)

    # ---- connections ----

    def accept_forever(self):
        while True:
            sock, _ = self.listener.accept()
            threading.Thread(target=self.connection, args=(sock,), daemon=True).start()

    def connection(self, sock):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        session = {"authorized": not self.token}
        buffered = bytearray()
        try:
            while True:
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break  # the peer's FIN: bytes without an LF are no request
                buffered += chunk
                replies = []
                start = 0
                while True:
                    end = buffered.find(b"\n", start)
                    if end == -1:
                        break
                    if end - start > LINE_LIMIT:
                        return self.refuse_oversized(sock, replies)
                    replies.append(self.answer(bytes(buffered[start:end]), session))
                    start = end + 1
                del buffered[:start]
                if len(buffered) > LINE_LIMIT:
                    return self.refuse_oversized(sock, replies)
                if replies:
                    sock.sendall("".join(line + "\n" for line in replies).encode("ascii"))
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        finally:
            sock.close()

    def refuse_oversized(self, sock, replies):
        """Answers what came before, refuses the oversized line, and closes: its bytes are never read as requests."""
        replies.append(self.error_line(None, E["invalid_request"], "request line over the limit"))
        sock.sendall("".join(line + "\n" for line in replies).encode("ascii"))
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(2.0)
        try:
            while sock.recv(1 << 16):
                pass  # read the rest away, so the close sends no reset over the reply
        except OSError:
            pass

    # ---- requests ----

    def answer(self, raw, session):
        try:
            request = read_json(raw)
        except ValueError:
            return self.error_line(None, E["parse"], "parse error")
        if not isinstance(request, dict):
            return self.error_line(None, E["invalid_request"], "a request is a JSON object")
        rid = request.get("id")
        problem = self.envelope_problem(request)
        if problem:
            return self.error_line(rid, E["invalid_request"], problem)
        try:
            result = self.call(request["method"], request["params"], session, rid)
        except Refusal as refusal:
            return self.error_line(rid, refusal.code, str(refusal))
        return self.result_line(rid, result)

    @staticmethod
    def envelope_problem(request):
        if request.get("jsonrpc") != JSONRPC or type(request.get("jsonrpc")) is not str:
            return f'jsonrpc must be "{JSONRPC}"'
        if "id" not in request:
            return "id is required"
        method = request.get("method")
        if type(method) is not str or method == "":
            return "method must be a non-empty string"
        if type(request.get("params")) is not dict:
            return "params must be an object"
        return None

    def result_line(self, rid, result):
        line = write_json({"jsonrpc": JSONRPC, "id": rid, "result": result})
        if len(line) > LINE_LIMIT:  # only an id of nearly a whole line gets here
            return self.error_line(rid, E["invalid_request"], "the reply would exceed the line limit")
        return line

    @staticmethod
    def error_line(rid, code, message):
        line = write_json({"jsonrpc": JSONRPC, "id": rid, "error": {"code": code, "message": message}})
        if len(line) > LINE_LIMIT:
            line = write_json({"jsonrpc": JSONRPC, "id": None, "error": {"code": code, "message": message}})
        return line

    def call(self, method, params, session, rid):
        if method == "auth":
            return self.auth(params, session)
        if not session["authorized"]:
            raise Refusal(E["unauthorized"], "unauthorized: call auth first")
        if method not in METHODS:
            raise Refusal(E["method_not_found"], "method not found")
        if method == "events":
            return self.m_events(params, rid)
        return getattr(self, "m_" + method)(params)

    def auth(self, params, session):
        token = params.get("token")
        if token is not None and type(token) is not str:
            raise Refusal(E["invalid_params"], "token must be a string")
        given = (token or "").encode("utf-8", "surrogatepass")
        session["authorized"] = not self.token or hmac.compare_digest(given, self.token)
        return {"authorized": session["authorized"]}

    def m_ping(self, params):
        return {"ok": True}

    def m_status(self, params):
        w = self.world
        with w.lock:
            return {
                "running": True,
                "host": self.host,
                "port": self.port,
                "queuedCommands": len(w.pending),
                "maxQueuedCommands": w.max_commands,
                "events": len(w.history),
                "maxEvents": w.max_events,
                "observationSeq": w.observation,
                "lastError": w.last_error,
            }

    def m_observe(self, params):
        w = self.world
        with w.lock:
            return {
                "observationSeq": w.observation,
                "observation": {
                    "schemaVersion": 1,
                    "position": list(w.position),
                    "said": w.said,
                    "availableActions": list(ACTIONS),
                },
            }

    def m_events(self, params, rid):
        after = params.get("afterSeq", 0)
        limit = params.get("limit", 100)
        if not is_int(after) or not is_int(limit):
            raise Refusal(E["invalid_params"], "afterSeq and limit must be integers")
        limit = max(PAGE_MIN, min(PAGE_MAX, limit))
        w = self.world
        with w.lock:
            latest = w.last_event
            retained = [entry for entry in w.history if entry["seq"] > after]
        # A page holds as many of the first events as fit in one reply line, this request's id included.
        used = len(write_json({"jsonrpc": JSONRPC, "id": rid, "result": {"latestSeq": latest, "events": []}}))
        page = []
        for entry in retained[:limit]:
            used += len(write_json(entry)) + (1 if page else 0)
            if page and used > LINE_LIMIT:
                break
            page.append(entry)
        return {"latestSeq": latest, "events": page}

    def m_act(self, params):
        kind = params.get("type")
        if type(kind) is not str or kind == "":
            raise Refusal(E["invalid_params"], "type must be a non-empty string")
        for name in IDENTIFIERS:
            if name in params and type(params[name]) not in (str, int):
                raise Refusal(E["invalid_params"], f"{name} must be a string or an integer")
        for name in INTEGERS:
            if name in params and not is_int(params[name]):
                raise Refusal(E["invalid_params"], f"{name} must be an integer")
        if "stringArg" in params and type(params["stringArg"]) is not str:
            raise Refusal(E["invalid_params"], "stringArg must be a string")
        if "append" in params and type(params["append"]) is not bool:
            raise Refusal(E["invalid_params"], "append must be a boolean")
        return {"accepted": True, "commandSeq": self.world.submit(dict(params))}


def main(argv):
    parser = argparse.ArgumentParser(description="A conformant AiControl bridge in plain Python 3.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=43011)
    parser.add_argument("--max-commands", type=int, default=64)
    parser.add_argument("--max-events", type=int, default=512)
    parser.add_argument("--tick-ms", type=float, default=2.0)
    parser.add_argument("--token-env", default="FONLINE_AI_TOKEN")
    parser.add_argument("--allow-remote", action="store_true")
    args = parser.parse_args(argv)
    if args.max_commands < 1 or args.max_events < 1:
        parser.error("--max-commands and --max-events must be at least 1")
    token = os.environ.get(args.token_env, "")
    if args.host not in ("127.0.0.1", "::1", "localhost"):
        if not args.allow_remote:
            parser.error(f"{args.host} is not loopback: pass --allow-remote to listen there")
        if not token:
            parser.error(f"a listener beyond loopback needs a token in {args.token_env}")
    world = World(args.max_commands, args.max_events)
    bridge = Bridge(args.host, args.port, token, world, args.tick_ms / 1000)
    threading.Thread(target=bridge.game_loop, daemon=True).start()
    print(json.dumps({"host": bridge.host, "port": bridge.port}), flush=True)
    bridge.accept_forever()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(0)
