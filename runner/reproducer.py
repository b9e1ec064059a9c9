# The runtime of every reproducer that `aicontrol-conformance --export DIR` writes: it replays one
# failing check's minimal case, byte for byte, and judges the reply by the check's machine oracle.
# The exporter writes DIR/<check>.py as one script: the modules this one imports (reproducer_wire,
# _ledger, _events, _oracles, in that order, their imports of one another dropped), then this file,
# with the check's plan (the names in capitals: CHECK, STEPS, ORACLE, ...) put in place of the
# marker near its end, so each script stands alone: Python 3 and its standard library, nothing else.
#
# Exit codes: 0 the bridge now behaves, 1 it still breaks the rule, 2 the case cannot be run (the
# token is missing or refused, bad usage, or the replay never brought the bridge to the state the case
# judges: COULD NOT REPLAY), 3 a check without a machine oracle got a reply other than the one recorded
# (judge it yourself), 4 the bridge could not be reached.
import argparse
import base64
import decimal
import json
import os
import sys
import time
from reproducer_wire import BEHAVES, BREAKS, CANNOT, CHANGED, Peer, UNREACHABLE, at_path, describe, is_integer, is_loopback, judge, key, recorded_outcome, request_ids, same_outcome, strict_json
from reproducer_ledger import NotReplayed
from reproducer_events import await_completions, make_events, seen_completions
from reproducer_oracles import apply_oracle, check_all


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
        # Read the clock once: the time left can run out between a check and the sleep.
        time.sleep(max(0.0, due - time.monotonic()))
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
