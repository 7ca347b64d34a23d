"""SciPy's probability distributions as the unroller and codegen see them.

`scipy.stats.norm.logpdf` is a method of the distribution object
`scipy.stats.norm`: a primitive like any other, named by where SciPy
exports the distribution. A *frozen* distribution (`norm(mu, sigma)`,
`multivariate_normal(mean, cov)`) is an object holding parameters, which
generated code cannot carry as a value. The unroller makes one a `Frozen`
mirror instead, whose methods are the distribution's with the parameters
passed by keyword: `norm(mu, sigma).logpdf(x)` is recorded, and written, as
`scipy.stats.norm.logpdf(x, loc=mu, scale=sigma)`. A frozen distribution
made outside the function (a global prior) is mirrored where its method is
read.

yota-src never imports SciPy: where the user's code has not imported
scipy.stats, no object can be a distribution and nothing here applies.
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings

_public: dict = {}  # id(scipy.stats module) -> {id(distribution): (name, distribution)}


def _stats_module(name: str = "scipy.stats"):
    return sys.modules.get(name)


def _classes(module: str, *names: str) -> tuple:
    found = _stats_module(module)
    return tuple(getattr(found, name) for name in names if hasattr(found, name)) if found else ()


_bases: dict = {}  # kind -> classes, once scipy.stats is imported


def _bases_of(kind: str, univariate: str, multivariate: str) -> tuple:
    classes = _bases.get(kind)
    if classes is None:
        classes = (_classes("scipy.stats._distn_infrastructure", univariate)
                   + _classes("scipy.stats._multivariate", multivariate))
        if not classes:
            return ()  # not imported (yet): asked again next time
        _bases[kind] = classes
    return classes


def distribution_classes() -> tuple:
    """The base classes of SciPy's distribution objects (empty without scipy.stats)."""
    return _bases_of("distribution", "rv_generic", "multi_rv_generic")


def frozen_classes() -> tuple:
    """The classes of frozen distributions (empty without scipy.stats)."""
    return _bases_of("frozen", "rv_frozen", "multi_rv_frozen")


def is_distribution(obj) -> bool:
    classes = distribution_classes()
    return bool(classes) and isinstance(obj, classes)


def public_distributions() -> dict:
    """{id(distribution): (name, distribution)} for the distributions
    scipy.stats exports, each under its own name (`norm`, `multivariate_normal`)."""
    stats = _stats_module()
    if stats is None:
        return {}
    table = _public.get(id(stats))
    if table is None:
        table = {}
        classes = distribution_classes()
        with warnings.catch_warnings():  # deprecated names warn when looked up
            warnings.simplefilter("ignore")
            for name in sorted(dir(stats)):
                value = getattr(stats, name, None)
                if isinstance(value, classes) and id(value) not in table:
                    own = getattr(value, "name", name)
                    table[id(value)] = (own if getattr(stats, own, None) is value else name,
                                        value)
        _public[id(stats)] = table
    return table


def public_name(distribution) -> str | None:
    """`norm` for scipy.stats.norm; None for a distribution SciPy does not export."""
    found = public_distributions().get(id(distribution))
    return found[0] if found is not None and found[1] is distribution else None


def _public_like(distribution):
    """The exported distribution of the same kind: a frozen distribution holds
    a copy of the one it was made from."""
    if public_name(distribution) is not None:
        return distribution
    for _, public in public_distributions().values():
        if type(public) is type(distribution):
            return public
    return None


def parameter_names(distribution) -> list[str] | None:
    """The parameters a call of `distribution` binds, in order: its shapes,
    then loc (and scale, for continuous ones); for a multivariate one, its
    signature (`mean, cov, allow_singular`)."""
    univariate = _classes("scipy.stats._distn_infrastructure", "rv_generic")
    if univariate and isinstance(distribution, univariate):
        shapes = [s.strip() for s in (distribution.shapes or "").split(",") if s.strip()]
        discrete = _classes("scipy.stats._distn_infrastructure", "rv_discrete")
        return shapes + (["loc"] if discrete and isinstance(distribution, discrete)
                         else ["loc", "scale"])
    try:
        signature = inspect.signature(distribution.__call__)
    except (TypeError, ValueError):
        return None
    return [p.name for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


class Frozen:
    """A distribution with its parameters bound, as the unroller holds
    `norm(mu, sigma)`: each method is the distribution's, called with the
    parameters by keyword, so it is recorded as the primitive it stands for.
    `args` and `kwds` are the parameters as they were given, as SciPy keeps them."""

    def __init__(self, dist, args: tuple, kwds: dict, parameters: dict):
        self.dist = dist
        self.args = args
        self.kwds = kwds
        self.parameters = parameters

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        method = getattr(self.dist, name)
        if not callable(method):
            return method
        parameters = dict(self.parameters)
        seed = parameters.pop("seed", None)
        if name == "rvs" and seed is not None:
            parameters["random_state"] = seed
        return functools.partial(method, **parameters)

    def __repr__(self) -> str:
        name = public_name(self.dist) or type(self.dist).__name__
        return f"scipy.stats.{name}({', '.join(f'{k}=...' for k in self.parameters)})"


def freeze(distribution, args: tuple, kwargs: dict) -> Frozen:
    """`distribution(*args, **kwargs)` as a mirror: the parameters by name."""
    names = parameter_names(distribution) or []
    name = public_name(distribution) or type(distribution).__name__
    if len(args) > len(names):
        raise TypeError(f"scipy.stats.{name}() takes at most {len(names)} parameters "
                        f"({', '.join(names)}), given {len(args)}")
    parameters = dict(zip(names, args))
    for key, value in kwargs.items():
        if key in parameters:
            raise TypeError(f"scipy.stats.{name}() got multiple values for {key!r}")
        parameters[key] = value
    return Frozen(distribution, tuple(args), dict(kwargs), parameters)


def mirror(obj) -> Frozen | None:
    """A frozen distribution made by SciPy (outside the function), as a mirror;
    None for anything else, or one whose parameters cannot be read back."""
    classes = frozen_classes()
    if not classes or not isinstance(obj, classes):
        return None
    univariate = _classes("scipy.stats._distn_infrastructure", "rv_frozen")
    if univariate and isinstance(obj, univariate):
        public = _public_like(obj.dist)
        return None if public is None else freeze(public, tuple(obj.args), dict(obj.kwds))
    public = _public_like(getattr(obj, "_dist", None))
    names = [n for n in parameter_names(public) or () if n not in ("seed", "kwds")] \
        if public is not None else []
    if not names or not all(hasattr(obj, n) for n in names):
        return None
    parameters = {n: getattr(obj, n) for n in names}
    return Frozen(public, (), parameters, parameters)
