# The queue's ledger oracle: what was outstanding when the bridge served the judged act or status.
import decimal
import json
import time
from reproducer_wire import VERBOSE, at_path, describe, is_integer, is_number, judge, key, same


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
