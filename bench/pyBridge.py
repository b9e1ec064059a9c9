#!/usr/bin/env python3
"""A small AiControl bridge in plain Python 3 (standard library only), for the round-trip figure.

    python3 bench/pyBridge.py [--port N]

Like the public sample it serves one connection at a time on 127.0.0.1. It answers auth, ping,
status, observe, events and act; accepted commands complete on the next tick of a 10 ms loop.
Codes and the line limit come from protocol/AiControlProtocol.json. Prints
`AICONTROL_BRIDGE_READY {"host": ..., "port": ...}` once it listens.
"""

import collections
import json
import os
import select
import socket
import sys

CONTRACT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "protocol", "AiControlProtocol.json")
with open(CONTRACT, encoding="utf-8") as f:
    OUTPUTS = json.load(f)["outputs"]
JSONRPC = OUTPUTS["jsonrpc_version"]
MAX_LINE_BYTES = OUTPUTS["max_line_bytes"]
CODES = OUTPUTS["error_codes"]
HOST = "127.0.0.1"
MAX_COMMANDS = 64
MAX_EVENTS = 512
TICK_SECONDS = 0.01


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def no_constant(name):
    raise ValueError(f"{name} is not JSON")


def encode(response):
    """One response line; an id Python cannot write back as JSON (a number beyond a double) becomes null."""
    try:
        text = json.dumps(response, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps({**response, "id": None}, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8") + b"\n"


class Bridge:
    def __init__(self, port, token):
        self.token = token
        self.queue = collections.deque()
        self.events = collections.deque(maxlen=MAX_EVENTS)
        self.event_seq = 0
        self.command_seq = 0
        self.observation_seq = 0
        self.server = socket.create_server((HOST, port))
        self.port = self.server.getsockname()[1]

    def tick(self):
        self.observation_seq += 1
        while self.queue:
            seq, kind = self.queue.popleft()
            self.event_seq += 1
            self.events.append(
                {
                    "seq": self.event_seq,
                    "event": {"type": "command_completed", "commandSeq": seq, "success": True, "message": f"{kind} done"},
                }
            )

    def handle(self, line, session):
        """One request line to one response object."""
        request_id = None
        try:
            try:
                request = json.loads(line.decode("utf-8"), parse_constant=no_constant)
            except (ValueError, RecursionError):
                raise RpcError(CODES["parse"], "parse error")
            if not isinstance(request, dict):
                raise RpcError(CODES["invalid_request"], "the request is not an object")
            request_id = request.get("id")
            method = request.get("method")
            params = request.get("params", {})
            if request.get("jsonrpc") != JSONRPC or not isinstance(method, str) or not method or not isinstance(params, dict):
                raise RpcError(CODES["invalid_request"], "invalid request envelope")
            result = self.call(method, params, session)
            return {"jsonrpc": JSONRPC, "id": request_id, "result": result}
        except RpcError as err:
            return {"jsonrpc": JSONRPC, "id": request_id, "error": {"code": err.code, "message": str(err)}}

    def call(self, method, params, session):
        if method == "auth":
            session["authorized"] = not self.token or params.get("token") == self.token
            return {"authorized": session["authorized"]}
        if method not in ("ping", "status", "observe", "events", "act"):
            raise RpcError(CODES["method_not_found"], f"unknown method {method}")
        if not session["authorized"]:
            raise RpcError(CODES["unauthorized"], "unauthorized")
        if method == "ping":
            return {"ok": True}
        if method == "status":
            return {
                "running": True,
                "host": HOST,
                "port": self.port,
                "queuedCommands": len(self.queue),
                "maxQueuedCommands": MAX_COMMANDS,
                "events": len(self.events),
                "maxEvents": MAX_EVENTS,
                "observationSeq": self.observation_seq,
                "lastError": "",
            }
        if method == "observe":
            return {
                "observationSeq": self.observation_seq,
                "observation": {"schemaVersion": 1, "availableActions": ["noop"]},
            }
        if method == "events":
            after = params.get("afterSeq", 0)
            limit = params.get("limit", 100)
            if isinstance(after, bool) or not isinstance(after, int) or isinstance(limit, bool) or not isinstance(limit, int):
                raise RpcError(CODES["invalid_params"], "afterSeq and limit must be integers")
            limit = max(1, min(500, limit))
            newer = [e for e in self.events if e["seq"] > after][:limit]
            return {"latestSeq": self.event_seq, "events": newer}
        kind = params.get("type")
        if not isinstance(kind, str) or not kind:
            raise RpcError(CODES["invalid_params"], "act needs a non-empty string type")
        if len(self.queue) >= MAX_COMMANDS:
            raise RpcError(CODES["queue_full"], "the command queue is full")
        self.command_seq += 1
        self.queue.append((self.command_seq, kind))
        return {"accepted": True, "commandSeq": self.command_seq}

    def serve(self, conn):
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        session = {"authorized": not self.token}
        pending = bytearray()
        while True:
            readable, _, _ = select.select([conn], [], [], TICK_SECONDS)
            if not readable:
                self.tick()
                continue
            try:
                chunk = conn.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            pending += chunk
            out = []
            while True:
                at = pending.find(b"\n")
                if at == -1:
                    break
                line = bytes(pending[:at])
                del pending[: at + 1]
                if len(line) > MAX_LINE_BYTES:
                    response = {"jsonrpc": JSONRPC, "id": None, "error": {"code": CODES["invalid_request"], "message": "line too long"}}
                else:
                    response = self.handle(line, session)
                out.append(encode(response))
            if len(pending) > MAX_LINE_BYTES:
                error = {"code": CODES["invalid_request"], "message": "line too long"}
                out.append(encode({"jsonrpc": JSONRPC, "id": None, "error": error}))
                conn.sendall(b"".join(out))
                return
            if out:
                try:
                    conn.sendall(b"".join(out))
                except OSError:
                    return

    def run(self):
        print(f"AICONTROL_BRIDGE_READY {json.dumps({'host': HOST, 'port': self.port})}", flush=True)
        while True:
            conn, _ = self.server.accept()
            with conn:
                self.serve(conn)


def main(argv):
    port = 0
    if len(argv) == 2 and argv[0] == "--port":
        port = int(argv[1])
    elif argv:
        print("usage: pyBridge.py [--port N]", file=sys.stderr)
        return 2
    Bridge(port, os.environ.get("FONLINE_AI_TOKEN", "")).run()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(0)
