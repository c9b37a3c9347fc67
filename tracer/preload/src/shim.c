/* The few things of mpi.h that Rust cannot see through bindgen or mpi-sys's own shim: constants
 * that are C macros (MPI_IN_PLACE, MPI_BOTTOM, and the predefined datatypes with their names,
 * which mpi-sys exports only in part). The reference kernel is not here: it is the
 * timeless-refkernel crate's, shared with `timeless calibrate compute`. Compiled with mpicc by
 * build.rs; portable to any MPI whose mpi.h defines the names. */
#include <mpi.h>
#include <stddef.h>

const void *timeless_in_place(void) { return MPI_IN_PLACE; }
const void *timeless_bottom(void) { return MPI_BOTTOM; }

/* A predefined datatype and its MPI name. The Rust side maps names to SimGrid 3.32 ids with the
 * table of the timeless-trace crate and checks each size with MPI_Type_size. */
struct timeless_named_type {
    const char *name;
    MPI_Datatype handle;
};

#define T(x) {#x, x},
static const struct timeless_named_type TYPES[] = {
    T(MPI_DOUBLE) T(MPI_INT) T(MPI_CHAR) T(MPI_SHORT) T(MPI_LONG) T(MPI_FLOAT) T(MPI_BYTE)
    T(MPI_LONG_LONG) T(MPI_LONG_LONG_INT) T(MPI_SIGNED_CHAR) T(MPI_UNSIGNED_CHAR)
    T(MPI_UNSIGNED_SHORT) T(MPI_UNSIGNED) T(MPI_UNSIGNED_LONG) T(MPI_UNSIGNED_LONG_LONG)
    T(MPI_LONG_DOUBLE) T(MPI_WCHAR) T(MPI_C_BOOL) T(MPI_INT8_T) T(MPI_INT16_T) T(MPI_INT32_T)
    T(MPI_INT64_T) T(MPI_UINT8_T) T(MPI_UINT16_T) T(MPI_UINT32_T) T(MPI_UINT64_T)
    T(MPI_C_FLOAT_COMPLEX) T(MPI_C_COMPLEX) T(MPI_C_DOUBLE_COMPLEX) T(MPI_C_LONG_DOUBLE_COMPLEX)
    T(MPI_AINT) T(MPI_OFFSET) T(MPI_FLOAT_INT) T(MPI_LONG_INT) T(MPI_DOUBLE_INT) T(MPI_SHORT_INT)
    T(MPI_2INT) T(MPI_LONG_DOUBLE_INT) T(MPI_PACKED) T(MPI_COUNT)
#ifdef MPI_CXX_BOOL
    T(MPI_CXX_BOOL) T(MPI_CXX_FLOAT_COMPLEX) T(MPI_CXX_DOUBLE_COMPLEX) T(MPI_CXX_LONG_DOUBLE_COMPLEX)
#endif
    /* Fortran types, present in mpi.h whether or not the program is Fortran. */
    T(MPI_CHARACTER) T(MPI_LOGICAL) T(MPI_INTEGER) T(MPI_REAL) T(MPI_DOUBLE_PRECISION)
    T(MPI_COMPLEX) T(MPI_DOUBLE_COMPLEX) T(MPI_2REAL) T(MPI_2DOUBLE_PRECISION) T(MPI_2INTEGER)
#ifdef MPI_REAL4
    T(MPI_REAL4)
#endif
#ifdef MPI_REAL8
    T(MPI_REAL8)
#endif
#ifdef MPI_REAL16
    T(MPI_REAL16)
#endif
#ifdef MPI_COMPLEX8
    T(MPI_COMPLEX8)
#endif
#ifdef MPI_COMPLEX16
    T(MPI_COMPLEX16)
#endif
#ifdef MPI_COMPLEX32
    T(MPI_COMPLEX32)
#endif
#ifdef MPI_INTEGER1
    T(MPI_INTEGER1)
#endif
#ifdef MPI_INTEGER2
    T(MPI_INTEGER2)
#endif
#ifdef MPI_INTEGER4
    T(MPI_INTEGER4)
#endif
#ifdef MPI_INTEGER8
    T(MPI_INTEGER8)
#endif
#ifdef MPI_INTEGER16
    T(MPI_INTEGER16)
#endif
};
#undef T

const struct timeless_named_type *timeless_predefined_types(size_t *n) {
    *n = sizeof(TYPES) / sizeof(TYPES[0]);
    return TYPES;
}
