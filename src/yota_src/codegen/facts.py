"""Data-dependent decisions as a reader should see them: each stated once.

A `while` test is guarded at every iteration and a branch inside a loop at
every pass; written out guard by guard, a 50-step loop repeats the same
200-character message 50 times. Guards that decide the same expression at
the same place are one fact: "the loop at f.py:97 ran 4 times (`err > tol`
was True 4 times, then False)", named once in the module and raised by
every guard of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from yota_src.ir.tape import Guard

_MOST_RUNS = 8  # runs of equal outcomes spelled out before the rest is summed up


@dataclass(frozen=True)
class Fact:
    text: str  # what was true for the example, and where
    repeated: bool  # decided by more than one guard
    loop: bool  # a while loop's trip count
    line: int | None  # the source line, for a name


def facts(guards: list[Guard], every_time: set = frozenset()) -> dict[Guard, Fact]:
    """Each guard's fact, guards of one decision sharing theirs; a guard in
    `every_time` (in a loop's body, a branch's arm) states what held each
    time it was tested, not how many times."""
    groups: dict[tuple, list[Guard]] = {}
    for guard in guards:
        loops = tuple(entry for entry, _ in guard.loc.loops) if guard.loc else ()
        key = (guard.loc.short if guard.loc else None, guard.text, guard.convert, guard.within,
               loops)  # one run of each loop: an inner loop started again is another
        groups.setdefault(key, []).append(guard)
    stated = {}
    for group in groups.values():
        fact = _every_time(group[0]) if group[0] in every_time else _fact(group)
        for guard in group:
            stated[guard] = fact
    return stated


def _fact(group: list[Guard]) -> Fact:
    first = group[0]
    line = first.loc.lineno if first.loc else None
    if len(group) == 1:
        return Fact(first.described(), False, False, line)
    outcomes = [guard.expected for guard in group]
    runs = _runs([first.shown(outcome) for outcome in outcomes])
    if _is_while(first) and all(outcomes[:-1]) and outcomes[-1] is False:
        last = group[-1].loc.loops
        # the iteration whose test failed: tests on values known before the loop
        # (`err = 1.0`) were never guarded, so the guards alone undercount
        trips = last[-1][1] if last else len(group) - 1
        text = (f"the loop at {first.loc.short} ran {trips} time{'s' * (trips != 1)} "
                f"({first.expression()} was {runs})")
        return Fact(text, True, True, line)
    return Fact(f"{first.expression()}{first.where()} was {runs}", True, False, line)


def _every_time(guard: Guard) -> Fact:
    line = guard.loc.lineno if guard.loc else None
    return Fact(f"{guard.expression()}{guard.where()} was {guard.shown(guard.expected)} "
                "every time it was tested", True, False, line)


def _is_while(guard: Guard) -> bool:
    return guard.convert is bool and guard.loc is not None \
        and guard.loc.line.strip().startswith("while")


def _runs(shown: list[str]) -> str:
    """"True 3 times, then False": outcomes in order, equal neighbours counted."""
    runs: list[list] = []
    for text in shown:
        if runs and runs[-1][0] == text:
            runs[-1][1] += 1
        else:
            runs.append([text, 1])
    parts = [text if count == 1 else f"{text} {count} times" for text, count in runs]
    if len(parts) > _MOST_RUNS:
        parts = parts[:_MOST_RUNS] + [f"... ({len(shown)} decisions in all)"]
    return ", then ".join(parts)
