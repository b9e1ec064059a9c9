# Completions: the `completes` oracle, the waits a replay keeps with the check, and the events a case
# reads that the check made before it.
import decimal
import json
import time
from reproducer_wire import Peer, VERBOSE, at_path, describe, is_integer, is_number, judge, key, same


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
