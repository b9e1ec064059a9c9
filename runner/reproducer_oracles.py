# The judgement of a reply: the assertions an oracle makes, and every oracle kind's judge in ORACLES.
import decimal
import json
import socket
from reproducer_wire import MISSING, Peer, at_path, describe, is_integer, is_number, judge, key, same
from reproducer_ledger import Ledger
from reproducer_events import judge_completes


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
