//! The wrapper table: every traced MPI function, once.
//!
//! Each line names the function (its C name without `MPI_`), its arguments with their kind
//! (`args`), and its record kind (`hooks`). `mpi_functions!` turns each line into:
//! * the C entry point `MPI_X`, which calls `PMPI_X` (declared by `mpi-sys` from the real
//!   `mpi.h`, so a line that disagrees with the C binding does not compile);
//! * the Fortran entry points `mpi_x_`, `mpi_x__`, `MPI_X` and `mpi_x` (`mpif.h`, `use mpi`),
//!   and `ompi_x_f`, the implementation Open MPI's `use mpi_f08` bindings call, all of which
//!   call the library's `pmpi_x_` (found with `dlsym`) with the program's arguments, the C
//!   view of which the hooks record;
//! * both going through `runtime` (re-entrancy guard, `catch_unwind`, burst clock), and both
//!   returning exactly what the library returned (in `ierr` for Fortran).
//!
//! `Kind[len]` marks an array argument whose length is the argument `len`, `Kind[@size comm]`
//! one with an entry per rank of the communicator argument `comm`.
//! `MPI_Init` and `MPI_Init_thread` are outside the table (`init`): their Fortran bindings
//! do not take the C arguments; so is `MPI_Finalize` (`finalize`), which every rank must go
//! through, traced or not.

use std::ffi::c_void;

/// Length of an array argument in the C binding (`[@size comm]`: not needed in C, the C
/// arrays are passed through).
#[macro_export]
#[doc(hidden)]
macro_rules! c_len {
    () => {
        0usize
    };
    ($l:ident) => {
        ($l).max(0) as usize
    };
    (@size $c:ident) => {
        0usize
    };
}

/// Length of an array argument in the Fortran binding (the length argument is a pointer;
/// `[@size comm]`: the size of the communicator argument, the remote group's for an
/// intercommunicator).
#[macro_export]
#[doc(hidden)]
macro_rules! f_len {
    () => {
        0usize
    };
    ($l:ident) => {
        (*($l as *const $crate::mpi::Fint)).max(0) as usize
    };
    (@size $c:ident) => {
        $crate::args::fortran_comm_size($c)
    };
}

/// A Fortran argument: always a pointer.
#[macro_export]
#[doc(hidden)]
macro_rules! f_ptr {
    ($x:ident) => {
        *mut ::std::ffi::c_void
    };
}

macro_rules! mpi_functions {
    ($( $name:ident ( $( $arg:ident : $kind:ident $([$($len:tt)+])? ),* ) => $hook:ident; )*) => {
        paste::paste! { $(
            #[allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]
            pub mod [<$name:lower>] {
                use super::*;
                #[allow(unused_imports)]
                use $crate::args::Arg;

                /// C entry point.
                #[no_mangle]
                pub unsafe extern "C" fn [<MPI_ $name>](
                    $( $arg: <$crate::args::$kind as Arg>::C ),*
                ) -> ::std::ffi::c_int {
                    let Some(entry) = $crate::runtime::enter() else {
                        return mpi_sys::[<PMPI_ $name>]( $($arg),* );
                    };
                    $( let mut [<st_ $arg>] = <$crate::args::$kind as Arg>::store(); )*
                    $( let $arg = <$crate::args::$kind as Arg>::c_in(
                        $arg, &mut [<st_ $arg>], $crate::c_len!($($($len)+)?)); )*
                    let args = ( $($arg,)* );
                    let stash = $crate::runtime::pre::<$crate::hooks::$hook, _>(&entry, &args);
                    let ret = mpi_sys::[<PMPI_ $name>]( $($arg),* );
                    $crate::runtime::post::<$crate::hooks::$hook, _>(
                        &entry, &args, stash, ret, concat!("MPI_", stringify!($name)));
                    ret
                }

                static REAL: ::std::sync::atomic::AtomicPtr<c_void> =
                    ::std::sync::atomic::AtomicPtr::new(::std::ptr::null_mut());

                type Real = unsafe extern "C" fn( $( $crate::f_ptr!($arg), )* *mut $crate::mpi::Fint );

                /// Fortran binding, shared by the four manglings.
                unsafe fn fortran( $( $arg: *mut c_void, )* ierr: *mut $crate::mpi::Fint ) {
                    let name = stringify!([<pmpi_ $name:lower>]);
                    let Some(real) = $crate::fortran::resolve(&REAL, name) else {
                        $crate::runtime::disable(&format!("no Fortran routine {name}_ in the MPI library"));
                        if !ierr.is_null() {
                            *ierr = mpi_sys::MPI_ERR_INTERN as $crate::mpi::Fint;
                        }
                        return;
                    };
                    // SAFETY: the library's Fortran routine has this by-reference signature.
                    let real: Real = ::std::mem::transmute::<*mut c_void, Real>(real);
                    let Some(entry) = $crate::runtime::enter() else {
                        return real( $($arg,)* ierr );
                    };
                    $( let mut [<st_ $arg>] = <$crate::args::$kind as Arg>::store(); )*
                    $( let mut [<c_ $arg>] = <$crate::args::$kind as Arg>::f_in(
                        $arg, &mut [<st_ $arg>], $crate::f_len!($($($len)+)?)); )*
                    let stash = $crate::runtime::pre::<$crate::hooks::$hook, _>(
                        &entry, &( $([<c_ $arg>],)* ));
                    real( $( <$crate::args::$kind as Arg>::f_pass(
                        $arg, &mut [<st_ $arg>], $crate::f_len!($($($len)+)?)), )* ierr );
                    $( <$crate::args::$kind as Arg>::f_out(
                        $arg, &mut [<st_ $arg>], &mut [<c_ $arg>], $crate::f_len!($($($len)+)?)); )*
                    let ret = if ierr.is_null() { 0 } else { *ierr };
                    $crate::runtime::post::<$crate::hooks::$hook, _>(
                        &entry, &( $([<c_ $arg>],)* ), stash, ret,
                        concat!("MPI_", stringify!($name)));
                }

                #[no_mangle]
                pub unsafe extern "C" fn [<mpi_ $name:lower _>]( $( $arg: *mut c_void, )* ierr: *mut $crate::mpi::Fint ) {
                    fortran( $($arg,)* ierr )
                }
                #[no_mangle]
                pub unsafe extern "C" fn [<mpi_ $name:lower __>]( $( $arg: *mut c_void, )* ierr: *mut $crate::mpi::Fint ) {
                    fortran( $($arg,)* ierr )
                }
                #[no_mangle]
                pub unsafe extern "C" fn [<MPI_ $name:upper>]( $( $arg: *mut c_void, )* ierr: *mut $crate::mpi::Fint ) {
                    fortran( $($arg,)* ierr )
                }
                #[no_mangle]
                pub unsafe extern "C" fn [<mpi_ $name:lower>]( $( $arg: *mut c_void, )* ierr: *mut $crate::mpi::Fint ) {
                    fortran( $($arg,)* ierr )
                }
                /// Open MPI's common Fortran implementation, which its `use mpi_f08` bindings
                /// call by this name.
                #[no_mangle]
                pub unsafe extern "C" fn [<ompi_ $name:lower _f>]( $( $arg: *mut c_void, )* ierr: *mut $crate::mpi::Fint ) {
                    fortran( $($arg,)* ierr )
                }
            }
        )* }
    };
}

mpi_functions! {
    // Point-to-point.
    Send(buf: SBuf, count: Int, datatype: Type, dest: Int, tag: Int, comm: Comm) => Send;
    Ssend(buf: SBuf, count: Int, datatype: Type, dest: Int, tag: Int, comm: Comm) => Send;
    Rsend(buf: SBuf, count: Int, datatype: Type, dest: Int, tag: Int, comm: Comm) => Send;
    Bsend(buf: SBuf, count: Int, datatype: Type, dest: Int, tag: Int, comm: Comm) => Send;
    Isend(buf: SBuf, count: Int, datatype: Type, dest: Int, tag: Int, comm: Comm, request: ReqOut) => Isend;
    Issend(buf: SBuf, count: Int, datatype: Type, dest: Int, tag: Int, comm: Comm, request: ReqOut) => Isend;
    Irsend(buf: SBuf, count: Int, datatype: Type, dest: Int, tag: Int, comm: Comm, request: ReqOut) => Isend;
    Ibsend(buf: SBuf, count: Int, datatype: Type, dest: Int, tag: Int, comm: Comm, request: ReqOut) => Isend;
    Recv(buf: RBuf, count: Int, datatype: Type, source: Int, tag: Int, comm: Comm, status: Status) => Recv;
    Irecv(buf: RBuf, count: Int, datatype: Type, source: Int, tag: Int, comm: Comm, request: ReqOut) => Irecv;
    Sendrecv(sendbuf: SBuf, sendcount: Int, sendtype: Type, dest: Int, sendtag: Int,
             recvbuf: RBuf, recvcount: Int, recvtype: Type, source: Int, recvtag: Int,
             comm: Comm, status: Status) => Sendrecv;
    Sendrecv_replace(buf: RBuf, count: Int, datatype: Type, dest: Int, sendtag: Int,
             source: Int, recvtag: Int, comm: Comm, status: Status) => SendrecvReplace;
    Probe(source: Int, tag: Int, comm: Comm, status: Status) => Probe;
    Mprobe(source: Int, tag: Int, comm: Comm, message: MsgOut, status: Status) => Mprobe;
    Improbe(source: Int, tag: Int, comm: Comm, flag: IntOut, message: MsgOut, status: Status) => Mprobe;
    Mrecv(buf: RBuf, count: Int, datatype: Type, message: MsgInOut, status: Status) => Mrecv;
    Imrecv(buf: RBuf, count: Int, datatype: Type, message: MsgInOut, request: ReqOut) => Mrecv;
    Iprobe(source: Int, tag: Int, comm: Comm, flag: IntOut, status: Status) => Probe;

    // Persistent requests.
    Send_init(buf: SBuf, count: Int, datatype: Type, dest: Int, tag: Int, comm: Comm, request: ReqOut) => SendInit;
    Ssend_init(buf: SBuf, count: Int, datatype: Type, dest: Int, tag: Int, comm: Comm, request: ReqOut) => SendInit;
    Rsend_init(buf: SBuf, count: Int, datatype: Type, dest: Int, tag: Int, comm: Comm, request: ReqOut) => SendInit;
    Bsend_init(buf: SBuf, count: Int, datatype: Type, dest: Int, tag: Int, comm: Comm, request: ReqOut) => SendInit;
    Recv_init(buf: RBuf, count: Int, datatype: Type, source: Int, tag: Int, comm: Comm, request: ReqOut) => RecvInit;
    Start(request: Req) => Start;
    Startall(count: Int, requests: Reqs[count]) => StartAll;

    // Completion.
    Wait(request: Req, status: Status) => Wait;
    Test(request: Req, flag: IntOut, status: Status) => Test;
    Waitall(count: Int, requests: Reqs[count], statuses: Statuses[count]) => WaitAll;
    Testall(count: Int, requests: Reqs[count], flag: IntOut, statuses: Statuses[count]) => WaitAll;
    Waitany(count: Int, requests: Reqs[count], index: Index, status: Status) => WaitAny;
    Testany(count: Int, requests: Reqs[count], index: Index, flag: IntOut, status: Status) => WaitAny;
    Waitsome(incount: Int, requests: Reqs[incount], outcount: IntOut, indices: Indices[incount],
             statuses: Statuses[incount]) => WaitSome;
    Testsome(incount: Int, requests: Reqs[incount], outcount: IntOut, indices: Indices[incount],
             statuses: Statuses[incount]) => WaitSome;
    Request_free(request: Req) => RequestFree;

    // Collectives, blocking then nonblocking.
    Barrier(comm: Comm) => Barrier;
    Bcast(buf: RBuf, count: Int, datatype: Type, root: Int, comm: Comm) => Bcast;
    Reduce(sendbuf: SBuf, recvbuf: RBuf, count: Int, datatype: Type, op: Op, root: Int, comm: Comm) => Reduce;
    Allreduce(sendbuf: SBuf, recvbuf: RBuf, count: Int, datatype: Type, op: Op, comm: Comm) => AllReduce;
    Scan(sendbuf: SBuf, recvbuf: RBuf, count: Int, datatype: Type, op: Op, comm: Comm) => Scan;
    Exscan(sendbuf: SBuf, recvbuf: RBuf, count: Int, datatype: Type, op: Op, comm: Comm) => ExScan;
    Reduce_scatter_block(sendbuf: SBuf, recvbuf: RBuf, recvcount: Int, datatype: Type, op: Op,
             comm: Comm) => ReduceScatterBlock;
    Reduce_scatter(sendbuf: SBuf, recvbuf: RBuf, recvcounts: Ints, datatype: Type, op: Op,
             comm: Comm) => ReduceScatter;
    Gather(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf, recvcount: Int,
             recvtype: Type, root: Int, comm: Comm) => Gather;
    Gatherv(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf, recvcounts: Ints,
             displs: Ints, recvtype: Type, root: Int, comm: Comm) => GatherV;
    Scatter(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf, recvcount: Int,
             recvtype: Type, root: Int, comm: Comm) => Scatter;
    Scatterv(sendbuf: SBuf, sendcounts: Ints, displs: Ints, sendtype: Type, recvbuf: RBuf,
             recvcount: Int, recvtype: Type, root: Int, comm: Comm) => ScatterV;
    Allgather(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf, recvcount: Int,
             recvtype: Type, comm: Comm) => AllGather;
    Allgatherv(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf, recvcounts: Ints,
             displs: Ints, recvtype: Type, comm: Comm) => AllGatherV;
    Alltoall(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf, recvcount: Int,
             recvtype: Type, comm: Comm) => AllToAll;
    Alltoallv(sendbuf: SBuf, sendcounts: Ints, sdispls: Ints, sendtype: Type, recvbuf: RBuf,
             recvcounts: Ints, rdispls: Ints, recvtype: Type, comm: Comm) => AllToAllV;
    Ibarrier(comm: Comm, request: ReqOut) => Barrier;
    Ibcast(buf: RBuf, count: Int, datatype: Type, root: Int, comm: Comm, request: ReqOut) => Bcast;
    Ireduce(sendbuf: SBuf, recvbuf: RBuf, count: Int, datatype: Type, op: Op, root: Int, comm: Comm,
             request: ReqOut) => Reduce;
    Iallreduce(sendbuf: SBuf, recvbuf: RBuf, count: Int, datatype: Type, op: Op, comm: Comm,
             request: ReqOut) => AllReduce;
    Iscan(sendbuf: SBuf, recvbuf: RBuf, count: Int, datatype: Type, op: Op, comm: Comm,
             request: ReqOut) => Scan;
    Iexscan(sendbuf: SBuf, recvbuf: RBuf, count: Int, datatype: Type, op: Op, comm: Comm,
             request: ReqOut) => ExScan;
    Ireduce_scatter_block(sendbuf: SBuf, recvbuf: RBuf, recvcount: Int, datatype: Type, op: Op,
             comm: Comm, request: ReqOut) => ReduceScatterBlock;
    Ireduce_scatter(sendbuf: SBuf, recvbuf: RBuf, recvcounts: Ints, datatype: Type, op: Op,
             comm: Comm, request: ReqOut) => ReduceScatter;
    Igather(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf, recvcount: Int,
             recvtype: Type, root: Int, comm: Comm, request: ReqOut) => Gather;
    Igatherv(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf, recvcounts: Ints,
             displs: Ints, recvtype: Type, root: Int, comm: Comm, request: ReqOut) => GatherV;
    Iscatter(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf, recvcount: Int,
             recvtype: Type, root: Int, comm: Comm, request: ReqOut) => Scatter;
    Iscatterv(sendbuf: SBuf, sendcounts: Ints, displs: Ints, sendtype: Type, recvbuf: RBuf,
             recvcount: Int, recvtype: Type, root: Int, comm: Comm, request: ReqOut) => ScatterV;
    Iallgather(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf, recvcount: Int,
             recvtype: Type, comm: Comm, request: ReqOut) => AllGather;
    Iallgatherv(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf, recvcounts: Ints,
             displs: Ints, recvtype: Type, comm: Comm, request: ReqOut) => AllGatherV;
    Ialltoall(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf, recvcount: Int,
             recvtype: Type, comm: Comm, request: ReqOut) => AllToAll;
    Ialltoallv(sendbuf: SBuf, sendcounts: Ints, sdispls: Ints, sendtype: Type, recvbuf: RBuf,
             recvcounts: Ints, rdispls: Ints, recvtype: Type, comm: Comm, request: ReqOut) => AllToAllV;
    Alltoallw(sendbuf: SBuf, sendcounts: Ints, sdispls: Ints, sendtypes: Types[@size comm],
             recvbuf: RBuf, recvcounts: Ints, rdispls: Ints, recvtypes: Types[@size comm],
             comm: Comm) => AllToAllW;
    Ialltoallw(sendbuf: SBuf, sendcounts: Ints, sdispls: Ints, sendtypes: Types[@size comm],
             recvbuf: RBuf, recvcounts: Ints, rdispls: Ints, recvtypes: Types[@size comm],
             comm: Comm, request: ReqOut) => AllToAllW;

    // Neighbourhood collectives, written as point-to-point actions (`hooks::neighbor`).
    Neighbor_allgather(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf,
             recvcount: Int, recvtype: Type, comm: Comm) => NeighborAllGather;
    Neighbor_alltoall(sendbuf: SBuf, sendcount: Int, sendtype: Type, recvbuf: RBuf,
             recvcount: Int, recvtype: Type, comm: Comm) => NeighborAllToAll;

    // Communicators.
    Comm_split(comm: Comm, color: Int, key: Int, newcomm: CommOut) => CommSplit;
    Comm_split_type(comm: Comm, split_type: Int, key: Int, info: Info, newcomm: CommOut) => CommSplitType;
    Comm_dup(comm: Comm, newcomm: CommOut) => CommDup;
    Comm_idup(comm: Comm, newcomm: CommOut, request: ReqOut) => CommIdup;
    Comm_dup_with_info(comm: Comm, info: Info, newcomm: CommOut) => CommDupWithInfo;
    Comm_create_group(comm: Comm, group: Group, tag: Int, newcomm: CommOut) => CommCreateGroup;
    Intercomm_merge(intercomm: Comm, high: Int, newintracomm: CommOut) => IntercommMerge;
    Intercomm_create(local_comm: Comm, local_leader: Int, peer_comm: Comm, remote_leader: Int,
             tag: Int, newintercomm: CommOut) => IntercommCreate;
    Comm_create(comm: Comm, group: Group, newcomm: CommOut) => CommCreate;
    Cart_create(comm_old: Comm, ndims: Int, dims: Ints, periods: Ints, reorder: Int,
             comm_cart: CommOut) => CartCreate;
    Cart_sub(comm: Comm, remain_dims: Ints, newcomm: CommOut) => CartSub;
    Graph_create(comm_old: Comm, nnodes: Int, index: Ints, edges: Ints, reorder: Int,
             comm_graph: CommOut) => GraphCreate;
    Dist_graph_create_adjacent(comm_old: Comm, indegree: Int, sources: Ints, sourceweights: Ints,
             outdegree: Int, destinations: Ints, destweights: Ints, info: Info, reorder: Int,
             comm_dist_graph: CommOut) => DistGraphCreateAdjacent;
    Dist_graph_create(comm_old: Comm, n: Int, sources: Ints, degrees: Ints, destinations: Ints,
             weights: Ints, info: Info, reorder: Int, comm_dist_graph: CommOut) => DistGraphCreate;
    Comm_free(comm: CommInOut) => CommFree;

    // End of the run (`MPI_Finalize` is in `finalize`: it also runs collective steps).
    Abort(comm: Comm, errorcode: Int) => Abort;
}
