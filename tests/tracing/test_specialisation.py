"""What a gradient folded from outside its arguments is part of its
specialisation: rebinding it never gives a stale answer (issue: right or
refused). Each test changes one kind of outside fact between two calls and
checks the second answer against finite differences."""

import functools
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import yota_src as ys
from yota_src.api import numerical_gradient
from yota_src.errors import ControlFlowChanged, MutationError, SignatureMismatch

SCALE = 2.0
WEIGHTS = np.array([1.0, -2.0, 3.0])
CONFIG = {"power": 2, "offset": 0.5}
SETTINGS = types.SimpleNamespace(gain=1.5)
LOG = []


def assert_right(f, *args):
    """ys.grad's value and gradients equal f's value and finite differences."""
    value, g = ys.grad(f, *args)
    assert np.allclose(value, f(*args))
    for index, arg in enumerate(args):
        if isinstance(arg, (float, np.ndarray)):
            assert np.allclose(g[index], numerical_gradient(f, args, index), atol=1e-6)


@pytest.fixture
def restore_globals():
    saved = dict(SCALE=SCALE, WEIGHTS=WEIGHTS.copy(), CONFIG=dict(CONFIG),
                 gain=SETTINGS.gain, helper=helper)
    yield
    globals().update(SCALE=saved["SCALE"], CONFIG=saved["CONFIG"], helper=saved["helper"])
    WEIGHTS[...] = saved["WEIGHTS"]
    SETTINGS.gain = saved["gain"]


def scaled(x):
    return np.sum(SCALE * x ** 2)


def weighted(x):
    return np.sum(WEIGHTS * np.sin(x))


def configured(x):
    return np.sum((x + CONFIG["offset"]) ** CONFIG["power"])


def gained(x):
    return np.sum(SETTINGS.gain * np.tanh(x))


def helper(v):
    return v * 2.0


def uses_helper(x):
    return np.sum(helper(x) ** 2)


def with_default(x, power=2.0):
    return np.sum(np.abs(x) ** power)


INDEX = np.array([0, 2])


def picks(x):
    if INDEX[0] == 0:
        return np.sum(x[INDEX] ** 2)
    return np.sum(x[INDEX] ** 3)


def test_an_index_array_changed_in_place_retraces():
    x = np.array([0.5, -1.0, 2.0])
    ys.grad(picks, x)
    saved = INDEX.copy()
    try:
        INDEX[...] = [1, 1]
        assert_right(picks, x)
    finally:
        INDEX[...] = saved


def branch_on_global_array(x):
    if np.sum(WEIGHTS) > 0:
        return np.sum(x * 2.0)
    return np.sum(x ** 3)


def test_rebinding_a_global_float_retraces(restore_globals):
    x = np.array([0.5, -1.0, 2.0])
    ys.grad(scaled, x)
    globals()["SCALE"] = 3.0
    assert_right(scaled, x)


def test_rebinding_a_global_array_retraces(restore_globals):
    x = np.array([0.5, -1.0, 2.0])
    ys.grad(weighted, x)
    globals()["WEIGHTS"] = np.array([4.0, 5.0, 6.0])
    assert_right(weighted, x)


def test_a_global_array_changed_in_place_is_read_live(restore_globals):
    x = np.array([0.5, -1.0, 2.0])
    ys.grad(weighted, x)
    WEIGHTS[...] = [7.0, 8.0, -9.0]
    assert_right(weighted, x)


def test_a_branch_on_a_global_array_changed_in_place_is_guarded(restore_globals):
    x = np.array([0.5, -1.0, 2.0])
    ys.grad(branch_on_global_array, x)
    WEIGHTS[...] = -WEIGHTS
    with pytest.raises(ControlFlowChanged, match="np.sum"):
        ys.grad(branch_on_global_array, x)
    _, g = ys.grad(branch_on_global_array, x, dynamic=True)
    assert np.allclose(g[0], 3 * x ** 2)


def test_changing_a_global_container_retraces(restore_globals):
    x = np.array([0.5, 1.0, 2.0])
    ys.grad(configured, x)
    CONFIG["power"] = 3
    assert_right(configured, x)


def test_changing_an_attribute_of_a_global_object_retraces(restore_globals):
    x = np.array([0.5, 1.0, 2.0])
    ys.grad(gained, x)
    SETTINGS.gain = -4.0
    assert_right(gained, x)


def test_rebinding_an_inlined_helper_retraces(restore_globals):
    x = np.array([0.5, 1.0, 2.0])
    ys.grad(uses_helper, x)
    globals()["helper"] = lambda v: v ** 3
    assert_right(uses_helper, x)


def test_rebinding_a_default_retraces():
    x = np.array([0.5, -1.0, 2.0])
    ys.grad(with_default, x)
    saved = with_default.__defaults__
    try:
        with_default.__defaults__ = (3.0,)
        assert_right(with_default, x)
    finally:
        with_default.__defaults__ = saved


def make_counter_loss():
    factor = 1.0

    def loss(x):
        return np.sum(factor * x ** 2)

    def bump():
        nonlocal factor
        factor += 1.0

    return loss, bump


def make_closure_over_function():
    activation = np.tanh

    def loss(x):
        return np.sum(activation(x))

    def swap():
        nonlocal activation
        activation = np.sin

    return loss, swap


@pytest.mark.parametrize("make", [make_counter_loss, make_closure_over_function],
                         ids=["float", "function"])
def test_rebinding_a_closure_cell_retraces(make):
    loss, rebind = make()
    x = np.array([0.5, -1.0, 2.0])
    ys.grad(loss, x)
    rebind()
    assert_right(loss, x)


def test_a_generated_function_refuses_to_run_after_a_rebinding(restore_globals):
    x = np.array([0.5, -1.0, 2.0])
    df = ys.simplegrad(scaled, x)
    df(x)
    globals()["SCALE"] = 5.0
    with pytest.raises(SignatureMismatch, match="global SCALE of .* was 2.0"):
        df(x)


def test_the_docstring_says_what_was_frozen(restore_globals):
    source = ys.simplegrad(configured, np.ones(2)).source
    docstring = source.split('"""')[1]
    assert "global CONFIG of" in docstring and "'power': 2" in docstring


def appends_to_a_global(x):
    LOG.append(1.0)
    return np.sum(x)


def sets_a_global_attribute(x):
    SETTINGS.gain = 2.0
    return np.sum(x)


@pytest.mark.parametrize("f", [appends_to_a_global, sets_a_global_attribute])
def test_changing_outside_state_is_refused(f, restore_globals):
    with pytest.raises(MutationError, match="defined outside the function"):
        ys.grad(f, np.ones(2))
    assert LOG == []


def imports_the_module(x):
    import helpers_constants
    return np.sum(helpers_constants.GAIN * x ** 2)


def imports_the_name(x):
    from helpers_constants import GAIN
    return np.sum(GAIN * x ** 2)


@pytest.mark.parametrize("f", [imports_the_module, imports_the_name])
def test_rebinding_a_value_the_function_imports_retraces(f):
    import helpers_constants
    x = np.array([0.5, 1.0, 2.0])
    ys.grad(f, x)
    try:
        helpers_constants.GAIN = -3.0
        assert_right(f, x)
    finally:
        helpers_constants.GAIN = 2.0


# --- source drift ------------------------------------------------------------

def _import_from(path, name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("edit", [
    lambda text: text.replace("x ** 2", "x ** 3"),  # the function's own line
    lambda text: "# a new first line\n" + text,  # lines shifted under it
])
def test_a_source_file_edited_after_import_is_refused(tmp_path, edit):
    path = tmp_path / "drifting.py"
    path.write_text("import numpy as np\n\n\ndef loss(x):\n    return np.sum(x ** 2)\n")
    module = _import_from(path, f"drifting_{abs(hash(edit))}")
    path.write_text(edit(path.read_text()))
    with pytest.raises(ys.errors.SourceUnavailableError, match="changed after it was imported"):
        ys.grad(module.loss, np.ones(3))


def test_an_unedited_file_is_not_refused(tmp_path):
    path = tmp_path / "steady.py"
    path.write_text(textwrap.dedent("""
        from __future__ import annotations
        import numpy as np

        class Model:
            def __init__(self):
                self.__scale = 2.0

            def loss(self, x: np.ndarray) -> float:
                def inner(v):
                    return v * self.__scale
                return np.sum(inner(x) ** 2)
    """))
    module = _import_from(path, "steady")
    assert_right(module.Model().loss, np.ones(3))


# --- decorators --------------------------------------------------------------

def doubles_result(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)
    return wrapper


def squares_input(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return fn(x * x)
    return wrapper


@doubles_result
def doubled(x):
    return np.sum(np.sin(x))


@squares_input
def on_squares(x):
    return np.sum(np.sin(x))


@pytest.mark.parametrize("f", [doubled, on_squares])
def test_a_decorator_that_changes_the_result_is_differentiated(f):
    assert_right(f, np.array([0.3, -0.7, 1.1]))


def test_generated_parameters_keep_the_wrapped_names():
    assert "def grad_doubled(x):" in ys.simplegrad(doubled, np.ones(2)).source


# --- randomness --------------------------------------------------------------

def noisy(x):
    unused = np.random.randn(2)  # noqa: F841 - consumed all the same
    return np.sum(x * np.random.rand(3)) + np.random.rand()


RNG = np.random.RandomState(7)


def noisy_generator(x):
    return np.sum(x * RNG.normal(size=3))


def test_the_first_call_draws_as_one_call_of_f():
    x = np.ones(3)
    np.random.seed(0)
    expected, after = noisy(x), np.random.rand()
    np.random.seed(0)
    value, _ = ys.grad(noisy, x)
    assert value == expected and np.random.rand() == after


def test_a_global_generator_is_drawn_from_in_process_and_named_when_saving_is_refused():
    RNG.seed(3)
    expected = noisy_generator(np.ones(3))
    RNG.seed(3)
    value, g = ys.grad(noisy_generator, np.ones(3))
    assert value == expected  # the first call draws as one call of f
    with pytest.raises(ys.errors.UnsaveableError, match="the random generator RNG"):
        ys.simplegrad(noisy_generator, np.ones(3)).save("never_written.py")


def test_trace_draws_as_one_call_of_f():
    x = np.ones(3)
    np.random.seed(1)
    expected, after = noisy(x), np.random.rand()
    np.random.seed(1)
    value, _ = ys.trace(noisy, x)
    assert value == expected and np.random.rand() == after


def scalar_noise(x):
    return np.sum(x) + np.random.rand()


def test_a_scalar_draw_is_drawn_at_every_call():
    x = np.ones(3)
    values = {ys.grad(scalar_noise, x)[0] for _ in range(3)}
    assert len(values) == 3


# --- threads -----------------------------------------------------------------

def test_concurrent_first_calls_in_a_fresh_process(tmp_path):
    script = tmp_path / "threads.py"
    script.write_text(textwrap.dedent("""
        import threading
        import numpy as np
        import yota_src as ys
        from yota_src.api import gradients

        def loss(x):
            return np.sum(np.tanh(x) ** 2)

        errors, results = [], []
        def call():
            try:
                results.append(ys.grad(loss, np.ones(4))[0])
            except Exception as error:
                errors.append(repr(error))
        threads = [threading.Thread(target=call) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(errors, len(results), sum(len(v) for v in gradients._cache.values()))
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "[] 8 1", out.stdout + out.stderr


def _branches_then_draws(x):
    noise = np.random.normal(size=2)
    if x[0] > 0:
        return np.sum(x * noise)
    return np.sum(x * noise * np.random.uniform(size=2))


def test_a_branch_change_under_dynamic_draws_as_one_call_of_f():
    ys.grad(_branches_then_draws, np.array([1.0, 2.0]))
    x = np.array([-1.0, 2.0])
    np.random.seed(5)
    expected = _branches_then_draws(x)
    np.random.seed(5)
    assert ys.grad(_branches_then_draws, x, dynamic=True)[0] == expected


# --- outside state reached through classes, objects, defaults and imports ----

class Scaled:
    scale = 2.0

    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return np.sum(self.w * x) * self.scale

    def by_type(self, x):
        return np.sum(self.w * x) * type(self).scale


class Table:
    def __init__(self):
        self.entries = {"k": 2.0}

    def __getitem__(self, key):
        return self.entries[key]


class Gain:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return np.sum(x) * self.k


CFG_OBJECT = types.SimpleNamespace(k=2.0)
TABLE = Table()
GAIN = Gain(2.0)
BOUND = Gain(2.0).__call__
PARTIAL = functools.partial(np.power, 2.0)
CFG_MODULE = types.ModuleType("yota_src_test_cfg")
CFG_MODULE.K = 2.0
sys.modules[CFG_MODULE.__name__] = CFG_MODULE


def through_method(x):
    return Scaled(np.ones(3)).forward(x)


def through_type(x):
    return Scaled(np.ones(3)).by_type(x)


def default_object(x, cfg=CFG_OBJECT):
    return np.sum(x) * cfg.k


def imports_inside(x):
    import yota_src_test_cfg
    return np.sum(x) * yota_src_test_cfg.K


def imports_a_name_inside(x):
    from yota_src_test_cfg import K
    return np.sum(x) * K


def item_of_an_object(x):
    return np.sum(x) * TABLE["k"]


def callable_object(x):
    return GAIN(x)


def bound_method(x):
    return BOUND(x)


def function_attribute(x):
    return np.sum(x) * function_attribute.scale


function_attribute.scale = 2.0


def replaced_code(x):
    return np.sum(x) * 2.0


def partial_global(x):
    return np.sum(PARTIAL(x))


def _replace_code():
    saved = replaced_code.__code__
    replaced_code.__code__ = (lambda x: np.sum(x) * 3.0).__code__
    return lambda: setattr(replaced_code, "__code__", saved)


def _set(obj, name, value):
    saved = getattr(obj, name)
    setattr(obj, name, value)
    return lambda: setattr(obj, name, saved)


def _set_item(mapping, key, value):
    saved = mapping[key]
    mapping[key] = value
    return lambda: mapping.__setitem__(key, saved)


OUTSIDE_CHANGES = {  # f, then a change that returns its undo
    "class attribute": (through_method, lambda: _set(Scaled, "scale", 5.0)),
    "class attribute by type()": (through_type, lambda: _set(Scaled, "scale", 5.0)),
    "method rebound": (through_method, lambda: _set(
        Scaled, "forward", lambda self, x: -np.sum(self.w * x ** 2))),
    "default's attribute": (default_object, lambda: _set(CFG_OBJECT, "k", 4.0)),
    "module imported inside": (imports_inside, lambda: _set(CFG_MODULE, "K", 6.0)),
    "name imported inside": (imports_a_name_inside, lambda: _set(CFG_MODULE, "K", 6.0)),
    "__getitem__ of an object": (item_of_an_object, lambda: _set_item(TABLE.entries, "k", 5.0)),
    "callable object": (callable_object, lambda: _set(GAIN, "k", 3.0)),
    "bound method's object": (bound_method, lambda: _set(BOUND.__self__, "k", 3.0)),
    "function attribute": (function_attribute, lambda: _set(function_attribute, "scale", 5.0)),
    "code replaced": (replaced_code, _replace_code),
    "partial's arguments": (partial_global, lambda: _undo_partial()),
}


def _undo_partial():
    state = PARTIAL.__reduce__()[2]
    PARTIAL.__setstate__((np.power, (3.0,), None, None))
    return lambda: PARTIAL.__setstate__(state)


@pytest.mark.parametrize("f, change", OUTSIDE_CHANGES.values(), ids=OUTSIDE_CHANGES.keys())
def test_outside_state_read_any_way_is_part_of_the_specialisation(f, change):
    x = np.array([0.5, -1.0, 2.0])
    assert_right(f, x)
    df = ys.simplegrad(f, x)
    undo = change()
    try:
        assert_right(f, x)
        with pytest.raises(SignatureMismatch, match="has changed since|changed"):
            df(x)
    finally:
        undo()


def test_outside_state_that_does_not_change_keeps_the_cached_gradient():
    x = np.array([0.5, -1.0, 2.0])
    for f, _ in OUTSIDE_CHANGES.values():
        ys.grad(f, x)
        ys.grad(f, x)
    assert all(len(variants) == 1 for variants in ys.api.gradients._cache.values())


def scaled_by_argument(x, settings):
    return np.sum(x) * settings.k


def scaled_by_first(x, queue):
    return np.sum(x) * queue[0] + sum(queue)


@pytest.mark.parametrize("f, holder, change", [
    (scaled_by_argument, types.SimpleNamespace(k=2.0), lambda ns: setattr(ns, "k", 7.0)),
    (scaled_by_first, __import__("collections").deque([2.0, 1.0]),
     lambda q: q.__setitem__(0, 9.0)),
    (scaled_by_first, __import__("collections").deque([2.0, 1.0]), lambda q: q.append(4.0)),
], ids=["SimpleNamespace attribute", "deque item", "deque appended"])
def test_an_argument_object_changed_in_place_retraces(f, holder, change):
    x = np.array([0.5, -1.0, 2.0])
    assert_right(f, x, holder)
    change(holder)
    assert_right(f, x, holder)


def test_an_edit_that_only_flips_the_sign_of_a_zero_is_refused(tmp_path):
    path = tmp_path / "signed_zero.py"
    path.write_text("import numpy as np\n\n\ndef loss(x):\n    return np.sum(np.arctan2(0.0, x))\n")
    module = _import_from(path, "signed_zero")
    path.write_text(path.read_text().replace("0.0", "-0.0"))
    with pytest.raises(ys.errors.SourceUnavailableError, match="changed after it was imported"):
        ys.grad(module.loss, -np.ones(3))


def scaled_by_environment(x):
    import os
    return np.sum(x) * float(os.environ["YOTA_SRC_TEST_SCALE"])


def test_an_environment_variable_read_is_a_dependency(monkeypatch):
    x = np.array([0.5, -1.0, 2.0])
    monkeypatch.setenv("YOTA_SRC_TEST_SCALE", "2")
    assert_right(scaled_by_environment, x)
    monkeypatch.setenv("YOTA_SRC_TEST_SCALE", "5")
    assert_right(scaled_by_environment, x)


COUNTER = __import__("itertools").count(1)
ITEMS = iter([1.0, 2.0, 3.0])


@pytest.mark.parametrize("f", [lambda x: np.sum(x) * next(COUNTER),
                               lambda x: np.sum(x) * next(ITEMS)], ids=["count", "iterator"])
def test_advancing_an_outside_iterator_is_refused(f):
    with pytest.raises(MutationError, match="defined outside the function"):
        ys.grad(f, np.ones(2))


def test_python_random_draws_are_drawn_at_every_call():
    import random

    def f(x):
        return np.sum(x) * random.random() + random.gauss(0.0, 1.0)

    x = np.array([1.0, 2.0])
    random.seed(1)
    native = [f(x) for _ in range(3)]
    random.seed(1)
    assert [ys.grad(f, x)[0] for _ in range(3)] == native
    assert "import random" in ys.simplegrad(f, x).source


class Options:
    pass


OPTIONS = Options()
PROXY_SOURCE = {"k": 2.0}
PROXY = types.MappingProxyType(PROXY_SOURCE)
BYTES = bytearray([2])
QUEUE = __import__("collections").deque([3.0])


def optional_attribute(x):
    return np.sum(x) * getattr(OPTIONS, "scale", 1.0)


def attribute_present(x):
    return np.sum(x) * (2.0 if hasattr(OPTIONS, "scale") else 1.0)


def through_proxy(x):
    return np.sum(x) * PROXY["k"]


def through_bytes(x):
    return np.sum(x) * BYTES[0]


def membership_in_queue(x):
    return np.sum(x) * (3.0 if 3.0 in QUEUE else 2.0)


def environment_get(x):
    import os
    return np.sum(x) * float(os.environ.get("YOTA_SRC_TEST_GAIN", "1"))


def environment_getenv(x):
    import os
    return np.sum(x) * (3.0 if os.getenv("YOTA_SRC_TEST_FLAG") else 2.0)


class Parent:
    k = 2.0

    def forward(self, x):
        return x * 2.0


class Heir(Parent):
    def forward(self, x):
        return super().forward(x) + x * super().k


def through_super(x):
    return np.sum(Heir().forward(x))


def _set_env(name, value):
    import os
    saved = os.environ.get(name)
    os.environ[name] = value
    return lambda: os.environ.pop(name) if saved is None else os.environ.__setitem__(name, saved)


MORE_OUTSIDE_CHANGES = {
    "getattr default": (optional_attribute, lambda: _undo_setattr(OPTIONS, "scale", 5.0)),
    "hasattr": (attribute_present, lambda: _undo_setattr(OPTIONS, "scale", 5.0)),
    "mapping proxy": (through_proxy, lambda: _set_item(PROXY_SOURCE, "k", 5.0)),
    "bytearray": (through_bytes, lambda: _set_item(BYTES, 0, 9)),
    "membership in a deque": (membership_in_queue, lambda: _set_item(QUEUE, 0, 4.0)),
    "os.environ.get": (environment_get, lambda: _set_env("YOTA_SRC_TEST_GAIN", "4")),
    "os.getenv": (environment_getenv, lambda: _set_env("YOTA_SRC_TEST_FLAG", "1")),
    "super() method": (through_super, lambda: _set(Parent, "forward", lambda self, x: x * 9.0)),
    "super() attribute": (through_super, lambda: _set(Parent, "k", 7.0)),
}


def _undo_setattr(obj, name, value):
    setattr(obj, name, value)
    return lambda: delattr(obj, name)


@pytest.mark.parametrize("f, change", MORE_OUTSIDE_CHANGES.values(),
                         ids=MORE_OUTSIDE_CHANGES.keys())
def test_outside_state_read_through_library_objects_is_part_of_the_specialisation(f, change):
    x = np.array([0.5, -1.0, 2.0])
    assert_right(f, x)
    undo = change()
    try:
        assert_right(f, x)
    finally:
        undo()


CACHED_SCALE = 1.0


@functools.cache
def cached_weights(n):
    return tuple(CACHED_SCALE * (k + 1) for k in range(n))


def uses_cached_weights(x):
    return sum(w * v for w, v in zip(cached_weights(3), x))


def test_a_cached_helper_returns_what_its_cache_holds():
    global CACHED_SCALE
    x = np.array([1.0, 2.0, 3.0])
    assert_right(uses_cached_weights, x)
    CACHED_SCALE = 10.0  # the cache keeps the weights it made
    try:
        assert_right(uses_cached_weights, x)
    finally:
        CACHED_SCALE = 1.0


def test_a_cached_helper_given_traced_values_is_refused():
    @functools.cache
    def square(v):
        return v * v

    with pytest.raises(ys.errors.UnsupportedSyntaxError, match="cached function square"):
        ys.grad(lambda x: square(x[0]), np.array([1.0, 2.0]))


def reads_a_declared_global(x):
    global SCALE
    return np.sum(x) * SCALE


def test_a_global_statement_for_reading_works(restore_globals):
    assert_right(reads_a_declared_global, np.array([0.5, 1.5]))
