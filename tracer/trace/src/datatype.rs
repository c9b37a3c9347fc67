//! MPI datatype ids of SimGrid's TI format (`simgrid::smpi::Datatype::decode`, SimGrid 3.32
//! `src/smpi/mpi/smpi_datatype.cpp`) and their sizes in bytes on x86-64.

/// A datatype id as written in a TI trace (0 = MPI_DOUBLE, 6 = MPI_BYTE, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Datatype(pub u8);

/// (name, size in bytes) by id, reference §3. Sizes are those of x86-64 C types; `MPI_INTEGER1`
/// is 4 bytes because SimGrid 3.32 declares it with a C `int`.
const TABLE: [(&str, u32); 60] = [
    ("MPI_DOUBLE", 8),
    ("MPI_INT", 4),
    ("MPI_CHAR", 1),
    ("MPI_SHORT", 2),
    ("MPI_LONG", 8),
    ("MPI_FLOAT", 4),
    ("MPI_BYTE", 1),
    ("MPI_LONG_LONG", 8),
    ("MPI_SIGNED_CHAR", 1),
    ("MPI_UNSIGNED_CHAR", 1),
    ("MPI_UNSIGNED_SHORT", 2),
    ("MPI_UNSIGNED", 4),
    ("MPI_UNSIGNED_LONG", 8),
    ("MPI_UNSIGNED_LONG_LONG", 8),
    ("MPI_LONG_DOUBLE", 16),
    ("MPI_WCHAR", 4),
    ("MPI_C_BOOL", 1),
    ("MPI_INT8_T", 1),
    ("MPI_INT16_T", 2),
    ("MPI_INT32_T", 4),
    ("MPI_INT64_T", 8),
    ("MPI_UINT8_T", 1),
    ("MPI_UINT16_T", 2),
    ("MPI_UINT32_T", 4),
    ("MPI_UINT64_T", 8),
    ("MPI_C_FLOAT_COMPLEX", 8),
    ("MPI_C_DOUBLE_COMPLEX", 16),
    ("MPI_C_LONG_DOUBLE_COMPLEX", 32),
    ("MPI_AINT", 8),
    ("MPI_OFFSET", 8),
    ("MPI_FLOAT_INT", 8),
    ("MPI_LONG_INT", 16),
    ("MPI_DOUBLE_INT", 16),
    ("MPI_SHORT_INT", 8),
    ("MPI_2INT", 8),
    ("MPI_2FLOAT", 8),
    ("MPI_2DOUBLE", 16),
    ("MPI_2LONG", 16),
    ("MPI_REAL", 4),
    ("MPI_REAL4", 4),
    ("MPI_REAL8", 8),
    ("MPI_REAL16", 16),
    ("MPI_COMPLEX8", 8),
    ("MPI_COMPLEX16", 16),
    ("MPI_COMPLEX32", 16),
    ("MPI_INTEGER1", 4),
    ("MPI_INTEGER2", 2),
    ("MPI_INTEGER4", 4),
    ("MPI_INTEGER8", 8),
    ("MPI_INTEGER16", 16),
    ("MPI_LONG_DOUBLE_INT", 32),
    ("MPI_CXX_BOOL", 1),
    ("MPI_CXX_FLOAT_COMPLEX", 8),
    ("MPI_CXX_DOUBLE_COMPLEX", 16),
    ("MPI_CXX_LONG_DOUBLE_COMPLEX", 32),
    ("MPI_UB", 0),
    ("MPI_LB", 0),
    ("MPI_PACKED", 1),
    ("MPI_PTR", 8),
    ("MPI_COUNT", 8),
];

impl Datatype {
    /// `MPI_DOUBLE` (id 0): the default datatype after an `init` with an argument.
    pub const DOUBLE: Datatype = Datatype(0);
    /// `MPI_BYTE` (id 6): the default datatype after a bare `init`.
    pub const BYTE: Datatype = Datatype(6);

    /// Decodes a trace id; `None` for an id SimGrid 3.32 does not know (it is undefined behaviour there).
    pub fn from_id(id: u32) -> Option<Datatype> {
        (id < TABLE.len() as u32).then_some(Datatype(id as u8))
    }

    /// Size of one element in bytes.
    pub fn size_bytes(self) -> u32 {
        TABLE[self.0 as usize].1
    }

    /// MPI name, e.g. `"MPI_DOUBLE"`.
    pub fn name(self) -> &'static str {
        TABLE[self.0 as usize].0
    }

    /// Number of known ids (valid ids are `0..count()`).
    pub fn count() -> u32 {
        TABLE.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sizes SimGrid 3.32 was run with (reference §3, [V]): ids 0 1 2 3 4 5 6 14 33 36 45 50 57.
    #[test]
    fn sizes_verified_against_simgrid() {
        let verified = [
            (0, 8),
            (1, 4),
            (2, 1),
            (3, 2),
            (4, 8),
            (5, 4),
            (6, 1),
            (14, 16),
            (33, 8),
            (36, 16),
            (45, 4),
            (50, 32),
            (57, 1),
        ];
        for (id, size) in verified {
            assert_eq!(Datatype::from_id(id).unwrap().size_bytes(), size, "id {id}");
        }
        assert_eq!(Datatype::from_id(59).unwrap().name(), "MPI_COUNT");
        assert_eq!(Datatype::from_id(60), None);
    }
}
