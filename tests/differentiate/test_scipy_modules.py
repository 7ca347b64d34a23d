"""SciPy in generated modules: how its functions are named, user rules that
call SciPy, saved modules that run in a fresh interpreter, and a core that
never imports SciPy itself."""

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

scipy_special = pytest.importorskip(
    "scipy.special", reason="SciPy is not installed: pip install yota-src[scipy]")

import helpers_scipy_rules as h  # noqa: E402
import scipy.linalg  # noqa: E402
import scipy.signal  # noqa: E402
import scipy.stats  # noqa: E402
from conftest import ROOT, TESTS  # noqa: E402
from scipy.stats import multivariate_normal, norm  # noqa: E402

import yota_src as ys  # noqa: E402
from yota_src.errors import NoDiffRuleError  # noqa: E402

sc = scipy_special

ys.diffrule(h.log_gamma, "x", "dy * scipy.special.digamma(x)")
ys.diffrule(sc.erfi, "x", "dy * 2.0 / np.sqrt(np.pi) * np.exp(x * x)")


# --- names --------------------------------------------------------------------------------

def named(x, mu):
    return np.sum(sc.psi(x)) + np.sum(norm(mu, 2.0).logpdf(x)) + np.sum(scipy.stats.t.cdf(x, 3))


def test_tape_and_code_spell_scipy_as_the_user_does():
    value, tape = ys.trace(named, np.array([0.5, 1.5]), 0.3)
    listing = str(tape)
    assert "scipy.special.digamma(" in listing  # psi and digamma are one function
    assert "scipy.stats.norm.logpdf(" in listing and "scipy.stats.t.cdf(" in listing
    assert "rv_continuous" not in listing
    source = ys.simplegrad(named, np.array([0.5, 1.5]), 0.3).source
    assert "import scipy.special\nimport scipy.stats\n" in source
    assert "scipy.stats.norm.logpdf(x, loc=mu, scale=2.0)" in source


def no_rule_special(x):
    return np.sum(sc.zeta(x, 2.0))


def no_rule_stats(x):
    return np.sum(scipy.stats.laplace.logpdf(x, 0.5))


@pytest.mark.parametrize("fn, name", [(no_rule_special, "scipy.special.zeta"),
                                      (no_rule_stats, "scipy.stats.laplace.logpdf")])
def test_missing_rules_are_named_as_the_user_calls_them(fn, name):
    with pytest.raises(NoDiffRuleError) as error:
        ys.grad(fn, np.array([1.5, 2.5]))
    message = str(error.value)
    assert f"no gradient rule for {name}" in message
    assert f"ys.diffrule({name}, \"x\"" in message
    assert "test_scipy_modules.py:" in message


# --- user rules that call SciPy ---------------------------------------------------------

def test_user_rule_expression_may_call_scipy(rng):
    """helpers_scipy_rules imports no SciPy: the rule's expression names it."""
    ys.check_grad(h.log_gamma_loss, rng.uniform(0.5, 3.0, 4))
    source = ys.simplegrad(h.log_gamma_loss, np.ones(3)).source
    assert "import scipy.special" in source and "scipy.special.digamma(x)" in source


def imaginary_error(x):
    return np.sum(sc.erfi(x) * x)


def test_user_rule_for_a_scipy_function(rng):
    ys.check_grad(imaginary_error, rng.uniform(-1.0, 1.0, 4))
    assert "scipy.special.erfi(x)" in ys.simplegrad(imaginary_error, np.ones(2)).source


def test_user_rule_names_its_parameters_for_a_ufunc():
    with pytest.raises(TypeError, match=r"scipy.special.erfi has no parameter 'z' \(it has x\)"):
        ys.diffrule(sc.erfi, "z", "dy")


# --- every family in a saved module, run by a fresh interpreter --------------------------

ON_UNIT = [sc.gammaln, sc.loggamma, sc.gamma, sc.rgamma, sc.digamma, sc.erf, sc.erfc, sc.erfcx,
           sc.erfinv, sc.erfcinv, sc.ndtr, sc.log_ndtr, sc.ndtri, sc.expit, sc.log_expit,
           sc.logit, sc.entr, sc.i0, sc.i1, sc.i0e, sc.i1e, sc.j0, sc.j1, sc.y0, sc.y1]
PAIRED = [sc.beta, sc.betaln, sc.xlogy, sc.xlog1py, sc.rel_entr, sc.kl_div]
ORDERED = [sc.polygamma, sc.jv, sc.yv, sc.yn, sc.iv, sc.ive, sc.kv, sc.kve]


def every_special(x, w):
    total = 0.0
    for fn in ON_UNIT:
        total = total + np.sum(fn(x) * w)
    for fn in PAIRED:
        total = total + np.sum(fn(x, 1.0 - 0.5 * x) * w)
    for fn in ORDERED:
        total = total + np.sum(fn(2, x) * w)
    total = total + np.sum(sc.gammainc(1.7, x) + sc.gammaincc(1.7, x) * w)
    total = total + np.sum(sc.betainc(1.7, 2.5, x) + sc.betaincc(1.7, 2.5, x) * w)
    total = total + np.sum(sc.multigammaln(x + 2.0, 2) * w)
    total = total + np.sum(sc.logsumexp(x, axis=1, b=w * w)) + sc.logsumexp(x, b=w,
                                                                           return_sign=True)[0]
    return total + np.sum(sc.softmax(x, axis=0) * w) + np.sum(sc.log_softmax(x) * w)


SHAPES = {"norm": (), "t": (4.5,), "beta": (2.5, 1.7), "gamma": (2.3,), "chi2": (3.3,)}
COVARIANCE = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.8]])
PRIOR = norm(0.1, 1.5)


def every_stats(x, mu, sigma):
    total = 0.0
    for name, shapes in SHAPES.items():
        distribution = getattr(scipy.stats, name)
        for method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
            total = total + np.sum(getattr(distribution, method)(x, *shapes))
    total = total + np.sum(norm(mu, sigma).logpdf(x) + norm(loc=mu, scale=sigma).cdf(x))
    total = total + np.sum(norm.ppf(x, mu, sigma) + norm.isf(x, loc=mu, scale=sigma))
    total = total + np.sum(scipy.stats.t(4.5, mu, sigma).logpdf(x) + PRIOR.logsf(x))
    total = total + np.sum(scipy.stats.gamma.logpdf(x, 2.3, scale=sigma))
    total = total + np.sum(scipy.stats.poisson(mu + 2.0).logpmf(np.array([0.0, 3.0])))
    total = total + np.sum(scipy.stats.dirichlet.logpdf(sc.softmax(x, axis=0), np.ones(3) * 2))
    cov = COVARIANCE * sigma
    total = total + np.sum(multivariate_normal.logpdf(x.T, np.zeros(3) + mu, cov))
    return total + np.sum(multivariate_normal(cov=cov).pdf(x.T)) + multivariate_normal.entropy(
        cov=cov)


def every_signal(a, b):
    total = 0.0
    for mode in ("full", "same", "valid"):
        total = total + np.sum(np.sin(scipy.signal.convolve(a, b, mode)))
        total = total + np.sum(np.sin(scipy.signal.correlate(a, b, mode=mode)))
        total = total + np.sum(np.sin(scipy.signal.convolve2d(a, b, mode)))
        total = total + np.sum(np.sin(scipy.signal.correlate2d(a, b, mode)))
        total = total + np.sum(np.sin(scipy.signal.fftconvolve(a, b[:1], mode, axes=1)))
        total = total + np.sum(np.sin(scipy.signal.oaconvolve(a, b, mode)))
    return total


def every_linalg(a, b):
    spd = a @ a.T + 4.0 * np.eye(4)
    lower = scipy.linalg.cholesky(spd, lower=True)
    total = np.sum(scipy.linalg.sqrtm(spd)) + np.sum(scipy.linalg.cholesky(spd))
    total = total + np.sum(np.sin(scipy.linalg.solve_triangular(lower, b, lower=True)))
    total = total + np.sum(np.sin(scipy.linalg.cho_solve((lower, True), b)))
    total = total + np.sum(scipy.linalg.solve_sylvester(spd, spd, a))
    bands = np.stack([a[0], a[1] + 6.0, a[2]])
    return total + np.sum(np.sin(scipy.linalg.solve_banded((1, 1), bands, b)))


def user_rules(x):
    return h.log_gamma_loss(x) + imaginary_error(x)


def families(rng):
    x = rng.uniform(0.2, 0.8, (3, 4))
    return [
        (every_special, (x, rng.uniform(0.5, 1.0, (3, 4)))),
        (every_stats, (x, 0.2, 1.3)),
        (every_signal, (rng.standard_normal((4, 6)), rng.standard_normal((2, 3)))),
        (every_linalg, (rng.standard_normal((4, 4)), rng.standard_normal(4))),
        (user_rules, (rng.uniform(0.5, 2.0, 4),)),
    ]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.slow
def test_every_family_matches_finite_differences(rng):
    for fn, args in families(rng):
        ys.check_grad(fn, *args)


@pytest.mark.slow
def test_saved_modules_run_in_a_fresh_interpreter(tmp_path, rng):
    expected, calls = {}, {}
    for fn, args in families(rng):
        df = ys.simplegrad(fn, *args)
        df.save(tmp_path / f"grad_{fn.__name__}.py")
        assert "import scipy." in df.source and "yota_src" not in df.source
        expected[fn.__name__], calls[fn.__name__] = df(*args), args
    (tmp_path / "calls.pkl").write_bytes(pickle.dumps(calls))
    script = textwrap.dedent(f"""
        import importlib, pickle, sys
        sys.path[:0] = [{str(tmp_path)!r}, {str(TESTS)!r}]
        calls = pickle.loads(open({str(tmp_path / "calls.pkl")!r}, "rb").read())
        results = {{}}
        for name, args in calls.items():
            module = importlib.import_module("grad_" + name)
            results[name] = getattr(module, "grad_" + name)(*args)
        assert not any(m.startswith("yota_src") for m in sys.modules)
        open({str(tmp_path / "results.pkl")!r}, "wb").write(pickle.dumps(results))
    """)
    subprocess.run([sys.executable, "-I", "-c", script], check=True, capture_output=True,
                   text=True)
    results = pickle.loads((tmp_path / "results.pkl").read_bytes())
    for name, outputs in expected.items():
        for mine, theirs in zip(outputs, results[name], strict=True):
            assert np.allclose(mine, theirs, rtol=1e-12, atol=1e-12), name


# --- the core without SciPy ---------------------------------------------------------------

def run_python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout


def test_the_core_never_imports_scipy():
    """Rules for SciPy load once the user's code imports it, not before."""
    out = run_python("""
        import sys
        import numpy as np
        import yota_src as ys
        from yota_src import rules
        from yota_src.core import registry
        sys.path.insert(0, "tests")
        import helpers_scipy_rules
        ys.check_grad(helpers_scipy_rules.numpy_only, np.linspace(-1.0, 1.0, 5))
        print("scipy" in sys.modules, registry._waiting == rules.OPTIONAL_FAMILIES)
        import scipy.special
        print(rules.template_for(scipy.special.gammaln) is not None)
    """)
    assert out.split() == ["False", "True", "True"]


def test_without_scipy_the_core_works_and_lists_no_scipy_rules():
    out = run_python("""
        import sys
        sys.modules["scipy"] = None  # as if SciPy were not installed
        import numpy as np
        import yota_src as ys
        from yota_src import rules
        from yota_src.core import registry
        sys.path.insert(0, "tests")
        import helpers_scipy_rules
        ys.check_grad(helpers_scipy_rules.numpy_only, np.linspace(-1.0, 1.0, 5))
        print(len(rules.registered()[0]),
              sorted(rules.OPTIONAL_FAMILIES) == sorted(registry._waiting))
    """)
    count, waiting = out.split()
    assert int(count) > 115 and waiting == "True"
