"""What a learner's function does, as facts an exercise's ``checks.py`` can report: the toolkit.

A hidden test may be a *probe* (``"probe": "name"`` in tests.py): instead of the function's
value, the child reports what ``checks.py``'s function ``name(submission, entry, *args,
**kwargs)`` returns — plain data about the learner's code, such as "the traced program maps
over the batch with jax.vmap" or "no Python loop: the same program for every batch size". The
worker compares those facts with the expected ones as it compares values, so the expected facts
never enter the container either.

For JAX the facts come from the program itself, not the source text: ``JaxTools.trace`` traces
the function with ``jax.make_jaxpr``, removes dead code (a ``jax.grad`` whose result is thrown
away does not count) and flattens the program, nested ``jit``/``shard_map``/``pallas_call``
bodies included, into equations that carry their primitive's name and the transformations
(``vmap``, ``jvp``, ``transpose`` — reverse-mode autodiff) that produced them. Those names come
from JAX's own name stack, which ``jax.named_scope`` cannot write into.

Trust: ``child.py`` loads this module and ``checks.py`` BEFORE it imports the submission, so the
functions captured here (``jax.make_jaxpr``, the dead-code pass, the name-stack classes) are the
real ones even if the submission later replaces ``jax.make_jaxpr`` or ``jax.vmap``, and neither
module is left in ``sys.modules`` for it to find. Code in the same process can still patch
JAX's internals or write fake result lines, so a probe catches honest mistakes and shortcuts
(a loop where ``vmap`` was asked, ``x + y`` instead of a kernel), not a determined forger.

Standard library only at import: JAX is imported by ``jax_tools()``, which only the checks of a
JAX exercise call, so a plain-Python exercise's process stays free of it.
"""

import sys

_baseline = frozenset(sys.modules)

# Primitives that compute (as opposed to moving, reshaping or converting data).
ARITHMETIC = frozenset(
    {
        "abs", "add", "add_any", "cos", "cumsum", "div", "dot_general", "exp", "integer_pow", "log",
        "logistic", "max", "min", "mul", "neg", "pow", "reduce_max", "reduce_min", "reduce_prod",
        "reduce_sum", "rem", "rsqrt", "sign", "sin", "sqrt", "square", "sub", "tanh",
    }
)  # fmt: skip
# Cross-device communication inside a mapped program (pmean is psum then a division).
COLLECTIVES = frozenset(
    {
        "all_gather", "all_gather_invariant", "all_to_all", "pmax", "pmin", "ppermute", "psum",
        "psum2", "psum_invariant", "psum_scatter", "reduce_scatter",
    }
)  # fmt: skip
DEVICE_MAPS = frozenset({"shard_map", "xla_pmap"})


class ProbeError(Exception):
    """A probe could not examine the learner's function; the message says why, in plain words."""


def mark_baseline():
    """Called by child.py just before it imports the submission."""
    global _baseline
    _baseline = frozenset(sys.modules)


def third_party_modules():
    """Top-level packages outside the standard library imported since the submission started to
    load (by it, or by the harness for array arguments)."""
    names = {name.split(".")[0] for name in set(sys.modules) - _baseline}
    return sorted(n for n in names if n not in sys.stdlib_module_names and n != "submission")


class Eqn:
    """One equation of a traced program: its primitive, the transformations that produced it and
    the higher-order primitives it sits inside (``("jit", "shard_map")``)."""

    __slots__ = ("blocks", "devices", "grid", "name", "transforms", "within")

    def __init__(self, name, transforms, within):
        self.name = name
        self.transforms = transforms
        self.within = within
        self.grid = None  # pallas_call: the grid
        self.blocks = None  # pallas_call: the block shape of each operand
        self.devices = None  # shard_map / xla_pmap: how many devices it maps over

    def __repr__(self):
        return f"Eqn({self.name}, {sorted(self.transforms)}, within={list(self.within)})"


class Program:
    """A traced program, flattened; ``calls`` counts the spied API calls made while tracing."""

    def __init__(self, eqns, calls):
        self.eqns = eqns
        self.calls = calls

    def __len__(self):
        return len(self.eqns)

    def where(self, names=None, *, transforms=(), without=(), within=(), not_within=()):
        """The equations whose primitive is in ``names`` (any, if None), produced under every one
        of ``transforms`` and none of ``without``, inside one of ``within`` (higher-order
        primitives; any depth) and inside none of ``not_within``."""
        out = []
        for e in self.eqns:
            if names is not None and e.name not in names:
                continue
            if not set(transforms) <= e.transforms or set(without) & e.transforms:
                continue
            if within and not set(within) & set(e.within):
                continue
            if set(not_within) & set(e.within):
                continue
            out.append(e)
        return out

    def names(self, names=None, **filters):
        """The distinct primitive names of ``where(names, **filters)``, sorted."""
        return sorted({e.name for e in self.where(names, **filters)})


class JaxTools:
    """JAX's tracing machinery, captured at construction (before the submission is imported)."""

    SPIED = (("jax.tree", "map"), ("jax.tree_util", "tree_map"))

    def __init__(self):
        import jax
        import jax.numpy as jnp
        import numpy as np
        from jax._src import source_info_util
        from jax._src.interpreters import partial_eval

        self.np = np
        self.jnp = jnp
        self._make_jaxpr = jax.make_jaxpr
        self._clear_caches = jax.clear_caches
        self._dce = partial_eval.dce_jaxpr
        self._transform_type = source_info_util.Transform
        errors = jax.errors
        self._untraceable = (
            errors.ConcretizationTypeError,
            errors.TracerArrayConversionError,
            errors.TracerBoolConversionError,
            errors.TracerIntegerConversionError,
        )
        self._counts = {}
        self._counting = False
        for module_name, attr in self.SPIED:
            module = sys.modules[module_name]
            setattr(module, attr, self._spy(f"{module_name}.{attr}", getattr(module, attr)))

    def _spy(self, label, real):
        """A pass-through that counts calls while a probe traces. Installed before the submission
        is imported, so ``from jax.tree_util import tree_map`` there gets it too."""
        counts = self._counts
        tools = self

        def spied(*args, **kwargs):
            if tools._counting:
                counts[label] = counts.get(label, 0) + 1
            return real(*args, **kwargs)

        spied.__name__, spied.__qualname__, spied.__doc__ = real.__name__, real.__qualname__, real.__doc__
        spied.__wrapped__ = real
        return spied

    def arrays(self, tree, dtype="float32"):
        """Lists and numbers (the JSON a test case holds) as NumPy arrays, dicts kept."""
        if isinstance(tree, dict):
            return {k: self.arrays(v, dtype) for k, v in tree.items()}
        return self.np.asarray(tree, dtype=dtype)

    def trace(self, fn, *args):
        """``fn(*args)`` traced with every argument abstract (close over the static ones)."""
        self._clear_caches()  # so that jitted bodies run again (and the spies see their calls)
        self._counts.clear()
        self._counting = True
        try:
            closed = self._make_jaxpr(fn)(*args)
        except self._untraceable as exc:
            raise ProbeError(
                "tracing it with jax.make_jaxpr failed: it turns a traced value into a Python or NumPy value "
                f"({type(exc).__name__}: float(), int(), .item(), np.asarray or an `if` on an array). Keep the "
                "values inside the function as JAX arrays."
            ) from exc
        finally:
            self._counting = False
        jaxpr, _ = self._dce(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
        eqns = []
        self._flatten(jaxpr, frozenset(), (), eqns)
        return Program(eqns, dict(self._counts))

    def _transforms(self, eqn):
        stack = getattr(getattr(eqn.source_info, "name_stack", None), "stack", ())
        return frozenset(s.name for s in stack if isinstance(s, self._transform_type))

    def _flatten(self, jaxpr, transforms, within, out):
        for eqn in jaxpr.eqns:
            own = transforms | self._transforms(eqn)
            item = Eqn(eqn.primitive.name, own, within)
            if item.name == "pallas_call":
                grid_mapping = eqn.params.get("grid_mapping")
                item.grid = [int(g) for g in getattr(grid_mapping, "grid", ())]
                item.blocks = [
                    [_block_size(b) for b in bm.block_shape] for bm in getattr(grid_mapping, "block_mappings", ())
                ]
            elif item.name in DEVICE_MAPS:
                mesh = eqn.params.get("mesh")
                size = getattr(mesh, "size", None) if mesh is not None else eqn.params.get("axis_size")
                item.devices = int(size) if size is not None else None
            out.append(item)
            for inner in self._subjaxprs(eqn.params):
                self._flatten(inner, own, (*within, item.name), out)

    @staticmethod
    def _subjaxprs(params):
        for value in params.values():
            for v in value if isinstance(value, (tuple, list)) else (value,):
                if hasattr(v, "eqns"):
                    yield v
                elif hasattr(getattr(v, "jaxpr", None), "eqns"):
                    yield v.jaxpr

    def over_batch_sizes(self, fn, make_args, sizes):
        """The program traced at each batch size. A Python loop over the batch makes it grow with
        the batch; ``jax.vmap`` (or a matmul) gives one program whatever the size."""
        return [self.trace(fn, *make_args(size)) for size in sizes]


def _block_size(dim):
    """One dimension of a BlockSpec's block: ``Blocked(block_size=8)`` (or a bare int) as 8;
    a squeezed or otherwise indexed dimension as None."""
    size = dim if isinstance(dim, int) else getattr(dim, "block_size", None)
    return size if isinstance(size, int) else None


_JAX = None


def jax_tools():
    """The JAX toolkit, created once; call it when ``checks.py`` is imported."""
    global _JAX
    if _JAX is None:
        _JAX = JaxTools()
    return _JAX
