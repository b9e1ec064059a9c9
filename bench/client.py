#!/usr/bin/env python3
"""A small AiControl client in plain Python 3 (standard library only): one request, one response.

    python3 bench/client.py --host HOST --port PORT --timeout SECONDS [--allow-remote] METHOD [PARAMS]

It refuses an invalid timeout and a non-loopback host before connecting, bounds the whole request
(connect, send and every read) with one deadline, and rejects every reply that is not exactly one
valid response to its request: strict UTF-8 without a byte order mark, at most 1 MiB before the
LF, one RFC 8259 JSON object (no NaN or Infinity), jsonrpc "2.0", the request's id in value and
JSON type, exactly one of result and error, an error with an integer code and a string message.

Prints `AICONTROL_OUTCOME {"kind": ...}` on stdout (result, remote-error or rejected), then the
result or error as JSON. Exit status: 0 result, 1 remote error, 2 bad usage (nothing sent),
3 the reply was rejected or none came in time.
"""

import ipaddress
import json
import math
import re
import socket
import sys
import time

JSONRPC = "2.0"
MAX_LINE_BYTES = 1024 * 1024
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 43011
REQUEST_ID = 1
DECIMAL = re.compile(r"\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
BOM = b"\xef\xbb\xbf"


class Usage(Exception):
    """Bad usage, found before any connection."""


class Rejected(Exception):
    """The reply is not one valid response to the request, or none came in time."""


def parse_timeout(text):
    """A finite positive number of seconds."""
    seconds = float(text) if DECIMAL.fullmatch(text) else math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise Usage(f'the timeout must be a finite positive number of seconds, not "{text}"')
    return seconds


def check_host(host, allow_remote):
    """Loopback only, unless the operator opted in."""
    if host == "localhost" or allow_remote:
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise Usage(f"{host} is not a loopback address; connecting to it needs an explicit --allow-remote")


def parse_args(argv):
    flags = {}
    rest = []
    allow_remote = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--allow-remote":
            allow_remote = True
        elif arg in ("--host", "--port", "--timeout"):
            if i + 1 >= len(argv):
                raise Usage(f"{arg} needs a value")
            i += 1
            flags[arg[2:]] = argv[i]
        elif arg.startswith("--"):
            raise Usage(f"unknown option {arg}")
        else:
            rest.append(arg)
        i += 1
    if not rest:
        raise Usage("give the method to call, e.g. ping")
    method = rest[0]
    try:
        params = json.loads(rest[1]) if len(rest) > 1 else {}
    except ValueError:
        params = None
    if not isinstance(params, dict):
        raise Usage("the params must be a JSON object")
    port_text = flags.get("port", str(DEFAULT_PORT))
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise Usage(f"the port must be 1..65535, not {port_text}")
    return {
        "host": flags.get("host", DEFAULT_HOST),
        "port": int(port_text),
        "timeout": parse_timeout(flags.get("timeout", "5")),
        "method": method,
        "params": params,
        "allow_remote": allow_remote,
    }


def no_constant(name):
    raise ValueError(f"{name} is not JSON")


def same_id(got, sent):
    """The same JSON value of the same JSON type: 1 is not "1", true, or [1]."""
    if isinstance(sent, bool) or isinstance(got, bool):
        return type(got) is type(sent) and got == sent
    if isinstance(sent, (int, float)):
        return isinstance(got, (int, float)) and got == sent
    return type(got) is type(sent) and got == sent


def judge(line):
    """One reply line (without its LF) as the response to the request: ("result"|"remote-error", value)."""
    if len(line) > MAX_LINE_BYTES:
        raise Rejected(f"the reply line is over {MAX_LINE_BYTES} bytes")
    if line.startswith(BOM):
        raise Rejected("the reply starts with a byte order mark")
    try:
        text = line.decode("utf-8", errors="strict")
    except UnicodeDecodeError as err:
        raise Rejected(f"the reply is not strict UTF-8: {err}") from None
    try:
        reply = json.loads(text, parse_constant=no_constant)
    except ValueError as err:
        raise Rejected(f"the reply is not JSON: {err}") from None
    if not isinstance(reply, dict):
        raise Rejected("the reply is not a JSON object")
    if reply.get("jsonrpc") != JSONRPC:
        raise Rejected(f'the reply\'s jsonrpc is not "{JSONRPC}"')
    if "id" not in reply:
        raise Rejected("the reply carries no id")
    if not same_id(reply["id"], REQUEST_ID):
        raise Rejected(f"the reply's id {json.dumps(reply['id'])} is not the request's")
    if ("result" in reply) == ("error" in reply):
        raise Rejected("the reply must carry exactly one of result and error")
    if "result" in reply:
        return "result", reply["result"]
    error = reply["error"]
    if not isinstance(error, dict):
        raise Rejected("the reply's error is not an object")
    code = error.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        raise Rejected("the reply's error code is not an integer")
    if not isinstance(error.get("message"), str):
        raise Rejected("the reply's error message is not a string")
    return "remote-error", error


def call(args):
    """Connects, sends one request, reads one line within one deadline for the whole request."""
    deadline = time.monotonic() + args["timeout"]

    def remaining():
        left = deadline - time.monotonic()
        if left <= 0:
            raise Rejected(f"no complete response within the timeout of {args['timeout']} s")
        return left

    request = {"jsonrpc": JSONRPC, "id": REQUEST_ID, "method": args["method"], "params": args["params"]}
    data = (json.dumps(request, separators=(",", ":")) + "\n").encode("utf-8")
    try:
        sock = socket.create_connection((args["host"], args["port"]), timeout=remaining())
    except socket.timeout:
        raise Rejected(f"no complete response within the timeout of {args['timeout']} s") from None
    except OSError as err:
        raise Rejected(f"connection failed: {err}") from None
    with sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buffered = bytearray()
        try:
            sock.settimeout(remaining())
            sock.sendall(data)
            while True:
                sock.settimeout(remaining())
                chunk = sock.recv(65536)
                if not chunk:
                    if buffered:
                        raise Rejected(f"the connection ended after {len(buffered)} bytes without LF")
                    raise Rejected("the connection ended without a reply")
                lf = chunk.find(b"\n")
                if lf != -1:
                    return judge(bytes(buffered + chunk[:lf]))
                buffered += chunk
                # Never buffer past the limit: a peer that never sends LF is rejected once it is over.
                if len(buffered) > MAX_LINE_BYTES:
                    raise Rejected(f"the reply line is over {MAX_LINE_BYTES} bytes")
        except socket.timeout:
            raise Rejected(f"no complete response within the timeout of {args['timeout']} s") from None
        except OSError as err:
            raise Rejected(f"connection failed: {err}") from None


def main(argv):
    try:
        args = parse_args(argv)
        check_host(args["host"], args["allow_remote"])
    except Usage as err:
        print(f"client.py: {err}", file=sys.stderr)
        return 2
    try:
        kind, value = call(args)
    except Rejected as err:
        print('AICONTROL_OUTCOME {"kind":"rejected"}', flush=True)
        print(f"client.py: rejected: {err}", file=sys.stderr)
        return 3
    print(f"AICONTROL_OUTCOME {json.dumps({'kind': kind})}")
    print(json.dumps(value), flush=True)
    return 0 if kind == "result" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
