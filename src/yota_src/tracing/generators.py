"""Generator functions of the user's, unrolled lazily, as Python runs them.

A call of a function that `yield`s gives a generator object; its body runs a
step at a time, when the consumer asks for the next item (a `for` loop, `list`,
`zip`, `next`), so whatever the consumer does between items (rebinding a name
the body reads, breaking early) has the effect it has in Python.

The unroller's interpreter is recursive Python, which cannot stop in the
middle of a body and resume there; so the body runs in a thread of its own,
and the two take turns: the consumer waits while the body runs to its next
`yield`, the body waits while the consumer runs. Only one runs at any time
(the handover is strict), so the unroller needs no locking; what it tracks
about "where it is" (the source line, the depth of calls, the running
generator) is swapped at each handover. A generator the consumer leaves
unfinished is closed when the trace ends, as Python closes it when it is
collected.
"""

from __future__ import annotations

import threading


class _Closed(BaseException):
    """Raised at a `yield` whose generator was closed: unwinds its body."""


class UnrolledGenerator:
    """The generator object a call of a generator function gives."""

    def __init__(self, unroller, run):
        self.unroller = unroller
        self.run = run  # executes the body; returns when it ends
        self.state = None  # the unroller's position while the body is paused
        self.thread: threading.Thread | None = None
        self.to_body = threading.Semaphore(0)
        self.to_consumer = threading.Semaphore(0)
        self.item = None
        self.sent = None  # what `yield` evaluates to when the body resumes
        self.thrown: BaseException | None = None  # or the exception it raises
        self.result = None  # the body's `return` value, StopIteration's value
        self.error: BaseException | None = None
        self.done = False
        self.closing = False

    def __iter__(self):
        return self

    def __next__(self):
        return self.send(None)

    def send(self, value):
        """Resume the body; its `yield` evaluates to `value`."""
        if self.thread is None and value is not None:
            raise TypeError("can't send non-None value to a just-started generator")
        return self.resume(value, None)

    def throw(self, error, *legacy):
        """Raise `error` at the `yield` the body is paused at."""
        if isinstance(error, type):
            error = error(*legacy[:1])
        if self.thread is None:  # not started: the body never runs
            self.done = True
        if self.done:
            raise error
        return self.resume(None, error)

    def resume(self, sent, thrown):
        if self.done:
            raise StopIteration
        self.sent, self.thrown = sent, thrown
        consumer_state = self.unroller.swap_position(self.state)
        if self.thread is None:
            self.unroller.generators.append(self)
            self.thread = threading.Thread(target=self.body, daemon=True,
                                           name="yota-src generator")
            self.thread.start()
        else:
            self.to_body.release()
        self.to_consumer.acquire()
        self.state = self.unroller.swap_position(consumer_state)
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        if self.done:
            raise StopIteration(self.result)
        return self.item

    def body(self):
        self.unroller.generator = self
        try:
            self.result = self.run()
        except _Closed:
            pass
        except StopIteration:  # PEP 479: inside a generator it is an error
            self.error = RuntimeError("generator raised StopIteration")
        except BaseException as error:  # handed to the consumer, at its `next`
            self.error = error
        finally:
            self.done = True
            self.to_consumer.release()

    def give(self, value):
        """`yield value` in the body: hand it over, wait to be resumed; the
        value sent in, or the exception thrown in, is what the `yield` gives."""
        self.item = value
        self.to_consumer.release()
        self.to_body.acquire()
        if self.closing:
            raise _Closed
        if self.thrown is not None:
            error, self.thrown = self.thrown, None
            raise error
        return self.sent

    def close(self):
        """The consumer is gone: unwind the body (its `finally` blocks run)."""
        if self.thread is None or self.done:
            return
        self.closing = True
        self.to_body.release()
        self.to_consumer.acquire()
        self.thread.join()


def is_generator_function(node) -> bool:
    """Does this function's own body (not a nested function's) `yield`?"""
    import gast

    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        return False  # a lambda's body is one expression
    stack = list(node.body)
    while stack:
        child = stack.pop()
        if isinstance(child, (gast.Yield, gast.YieldFrom)):
            return True
        if isinstance(child, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda,
                              gast.ClassDef)):
            continue
        stack.extend(gast.iter_child_nodes(child))
    return False
