//! Cache hints for a caller about to change a variable: its record and its elements fetched
//! ahead of the change (see the engine's `prefetch_upcoming`, which stages them along the event
//! heap). No effect on any value.

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

    /// Prefetches the elements of variable `var` (whose record should be in the cache: see
    /// [`System::prefetch_var`]).
    #[inline]
    pub fn prefetch_elems(&self, var: VarId) {
        if let Some(v) = self.vars.get(var.0 as usize) {
            for &e in v.elems.iter() {
                if let Some(el) = self.elems.get(e as usize) {
                    prefetch(el);
                }
            }
        }
    }
}
