//! Cache hints for a caller about to change a variable: its record fetched ahead of the change
//! (see the engine's `prefetch_upcoming`, which stages it along the event heap). No effect on
//! any value.

use super::{System, Var, VarId};
use crate::prefetch::prefetch;

impl System {
    /// Prefetches variable `var`'s record (both its cache lines): a cache hint for a caller
    /// about to change it.
    #[inline]
    pub fn prefetch_var(&self, var: VarId) {
        if let Some(v) = self.vars.get(var.0 as usize) {
            let p = v as *const Var as *const u8;
            prefetch(p);
            prefetch(p.wrapping_add(64));
        }
    }
}
