//! The one place where floating-point tolerances live.
//!
//! SimGrid 3.32 uses two precisions: `maxmin/precision` (1e-5, relative to a constraint's capacity
//! or absolute on usages) inside the solver, and `surf/precision` (1e-9 s, set by `smpirun`) for
//! dates: events less than 1e-9 s apart happen together. Remaining amounts snap to zero below
//! `maxmin/precision × surf/precision` (`src/surf/surf_interface.hpp`, `double_update`).

/// `maxmin/precision`: solver tolerance (dimensionless, or relative to a capacity).
pub const MAXMIN_PRECISION: f64 = 1e-5;
/// `surf/precision`: two dates closer than this many seconds are the same instant.
pub const SURF_PRECISION: f64 = 1e-9;

/// `*x -= delta`, snapping to exactly zero when the result falls below `precision`.
#[inline]
pub fn double_update(x: &mut f64, delta: f64, precision: f64) {
    *x -= delta;
    if *x < precision {
        *x = 0.0;
    }
}

/// `x > precision`.
#[inline]
pub fn double_positive(x: f64, precision: f64) -> bool {
    x > precision
}

/// `|a - b| < precision`.
#[inline]
pub fn double_equals(a: f64, b: f64, precision: f64) -> bool {
    (a - b).abs() < precision
}
