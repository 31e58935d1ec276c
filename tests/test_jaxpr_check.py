"""The jaxpr type checker (``core.check_jaxpr``, JAX's), which the ``jax_enable_checks``
flag runs on every jaxpr a trace or transform stages (issue 19, item 8)."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import errors
from tinyxla._src import core


@pytest.fixture
def checks_on():
    old = jax.config.jax_enable_checks
    jax.config.update("jax_enable_checks", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_checks", old)


def _nested_vmap(m):
    inner = lambda s: jnp.sum(jax.vmap(lambda x, sc: (x / sc) ** 2)(s, m))
    return jnp.sum(jax.vmap(inner)(jnp.ones((4, 2))))


PROGRAMS = {
    "nested_vmap_grad": (lambda m: jax.grad(_nested_vmap)(m), (jnp.array([1.0, 2.0]),)),
    "hessian": (jax.hessian(lambda x: jnp.sum(jnp.sin(x) ** 2 * x)), (jnp.arange(3.0),)),
    "vmap_matmul_grad": (jax.grad(lambda w, x: jnp.sum(jax.vmap(lambda r: jnp.tanh(w @ r))(x))),
                         (jnp.ones((2, 3)), jnp.ones((5, 3)))),
    "nested_jit": (lambda x: jax.jit(lambda y: jnp.sin(y) * 2)(x) + 1, (jnp.arange(3.0),)),
    "grad_nested_jit": (jax.grad(lambda x: jnp.sum(jax.jit(jnp.tanh)(x) ** 2)),
                        (jnp.arange(3.0),)),
    "jacfwd_vmap": (jax.vmap(jax.jacfwd(lambda x: jnp.logaddexp(x, 0.4) * x)),
                    (jnp.array([0.4, 1.0]),)),
    "sort_take_grad": (jax.grad(lambda x: jnp.sum(jnp.sort(x)[:2] * x[::-1][:2])),
                       (jnp.array([3.0, 1.0, 2.0]),)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_transform_jaxprs_type_check(name, checks_on):
    f, args = PROGRAMS[name]
    closed = jax.make_jaxpr(f)(*args)
    core.check_jaxpr(closed.jaxpr)
    jit_out = jax.jit(f)(*args)
    with jax.disable_jit():
        eager = f(*args)
    np.testing.assert_allclose(np.asarray(jit_out), np.asarray(eager), rtol=1e-5)


def test_checker_rejects_mismatched_elementwise_shapes():
    closed = jax.make_jaxpr(lambda x, y: x * y)(jnp.ones(3), jnp.ones(3))
    eqn = closed.jaxpr.eqns[0]
    bad_in = core.Var(core.ShapedArray((2,), np.float32))
    broken = core.Jaxpr([], [closed.jaxpr.invars[0], bad_in], closed.jaxpr.outvars,
                        [core.JaxprEqn(eqn.primitive, [closed.jaxpr.invars[0], bad_in],
                                       eqn.outvars, eqn.params)])
    with pytest.raises(errors.JaxprTypeError, match="mul rejects its operands"):
        core.check_jaxpr(broken)


def test_checker_rejects_params_inconsistent_with_avals():
    closed = jax.make_jaxpr(lambda x: jnp.sum(x, axis=1))(jnp.ones((2, 3)))
    eqn = closed.jaxpr.eqns[0]
    wrong = core.JaxprEqn(eqn.primitive, eqn.invars, eqn.outvars, dict(eqn.params, axes=(0,)))
    broken = core.Jaxpr([], closed.jaxpr.invars, closed.jaxpr.outvars, [wrong])
    with pytest.raises(errors.JaxprTypeError, match="does not match its rule"):
        core.check_jaxpr(broken)


def test_checker_descends_into_sub_jaxprs():
    closed = jax.make_jaxpr(lambda x: jax.jit(lambda y: jnp.sin(y) * 2)(x) + 1)(1.0)
    outer = next(e for e in closed.jaxpr.eqns if core._sub_jaxprs(e.params))
    key, sub = next((k, v) for k, v in outer.params.items()
                    if isinstance(v, (core.Jaxpr, core.ClosedJaxpr)))
    inner = sub.jaxpr if isinstance(sub, core.ClosedJaxpr) else sub
    broken_inner = core.Jaxpr(inner.constvars, inner.invars,
                              [core.Var(inner.outvars[0].aval)], inner.eqns)
    new_sub = (core.ClosedJaxpr(broken_inner, sub.consts) if isinstance(sub, core.ClosedJaxpr)
               else broken_inner)
    eqn = core.JaxprEqn(outer.primitive, outer.invars, outer.outvars,
                        dict(outer.params, **{key: new_sub}))
    eqns = [eqn if e is outer else e for e in closed.jaxpr.eqns]
    broken = core.Jaxpr(closed.jaxpr.constvars, closed.jaxpr.invars, closed.jaxpr.outvars, eqns)
    with pytest.raises(errors.JaxprTypeError, match="used before it is defined"):
        core.check_jaxpr(broken)
