//! Datatypes as written in records: element counts are kept in the program's datatype when it
//! is a predefined one SimGrid 3.32 knows (its id is written), and converted to bytes (id 6,
//! `MPI_BYTE`) otherwise: count × `MPI_Type_size`.

use std::collections::HashMap;
use std::ffi::c_int;

use rustc_hash::FxHashMap;
use timeless_trace::Datatype;

use super::{Fail, Tracer};
use crate::mpi::{self, handle_key, MPI_Datatype};

/// Predefined datatypes SimGrid 3.32 knows, by handle.
pub struct TypeTable {
    ids: FxHashMap<u64, u8>,
}

/// Fortran and alias names mapped onto an id of the same size (only sizes matter in replay).
const ALIASES: &[(&str, &str)] = &[
    ("MPI_LONG_LONG_INT", "MPI_LONG_LONG"),
    ("MPI_C_COMPLEX", "MPI_C_FLOAT_COMPLEX"),
    ("MPI_CHARACTER", "MPI_CHAR"),
    ("MPI_LOGICAL", "MPI_INTEGER4"),
    ("MPI_INTEGER", "MPI_INTEGER4"),
    ("MPI_DOUBLE_PRECISION", "MPI_REAL8"),
    ("MPI_COMPLEX", "MPI_COMPLEX8"),
    ("MPI_DOUBLE_COMPLEX", "MPI_COMPLEX16"),
    ("MPI_2REAL", "MPI_2FLOAT"),
    ("MPI_2DOUBLE_PRECISION", "MPI_2DOUBLE"),
    ("MPI_2INTEGER", "MPI_2INT"),
];

impl TypeTable {
    /// Maps each predefined type of the library to a SimGrid id of the same name (or alias)
    /// whose size SimGrid agrees with; any other type is written in bytes.
    pub fn from_library() -> TypeTable {
        let mut by_name: HashMap<&'static str, u8> = HashMap::new();
        for id in 0..Datatype::count() {
            let d = Datatype(id as u8);
            by_name.insert(d.name(), d.0);
        }
        let mut ids = FxHashMap::default();
        for t in mpi::predefined_types() {
            // SAFETY: the shim's names are static NUL-terminated strings.
            let name = unsafe { std::ffi::CStr::from_ptr(t.name) }.to_string_lossy();
            let target = ALIASES
                .iter()
                .find(|(a, _)| *a == name)
                .map(|(_, b)| *b)
                .unwrap_or(&name);
            let Some(&id) = by_name.get(target) else {
                continue;
            };
            if mpi::type_size(t.handle) == Some(u64::from(Datatype(id).size_bytes())) {
                ids.entry(handle_key(t.handle)).or_insert(id);
            }
        }
        TypeTable { ids }
    }

    pub fn simgrid_id(&self, dt: MPI_Datatype) -> Option<u8> {
        self.ids.get(&handle_key(dt)).copied()
    }
}

/// The datatype id written for bytes.
pub const BYTE_ID: u8 = 6;

impl Tracer {
    /// Element count and datatype id of `count` elements of `dt`.
    pub fn volume(&self, count: c_int, dt: MPI_Datatype) -> Result<(u64, u8), Fail> {
        let count = count.max(0) as u64;
        if let Some(id) = self.types.simgrid_id(dt) {
            return Ok((count, id));
        }
        let size = mpi::type_size(dt).ok_or_else(|| Fail::new("MPI_Type_size failed"))?;
        Ok((count * size, BYTE_ID))
    }

    /// Volumes of an array of `n` element counts of `dt` (`None`: zeros).
    pub fn volumes(
        &self,
        counts: Option<&[c_int]>,
        n: usize,
        dt: MPI_Datatype,
    ) -> Result<(Vec<u64>, u8), Fail> {
        let Some(raw) = counts else {
            return Ok((vec![0; n], BYTE_ID));
        };
        let mut out = Vec::with_capacity(n);
        let mut id = self.volume(0, dt)?.1;
        for &c in raw {
            let (v, i) = self.volume(c, dt)?;
            out.push(v);
            id = i;
        }
        Ok((out, id))
    }
}
